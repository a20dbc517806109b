"""A grouped-convolution problem: sizes, derived output sizes, the GEMM view per direction, FLOPs and bytes.

Field names follow the CK problem CSV schema (ck_conventions §6):
``N,C,K,G,Di,Hi,Wi,Z,Y,X,stride_d,stride_h,stride_w,pad_d,pad_h,pad_w,dilation_d,dilation_h,dilation_w``
(pads are symmetric: left = right). A 2D problem has ``Di = Z = 1``, ``stride_d = dilation_d = 1`` and
``pad_d = 0``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, NonNegativeInt, PositiveInt, ValidationError, model_validator

from generators.enums import DataType, Direction

CSV_COLUMNS: tuple[str, ...] = (
    *("N", "C", "K", "G", "Di", "Hi", "Wi", "Z", "Y", "X"),
    *(
        "stride_d",
        "stride_h",
        "stride_w",
        "pad_d",
        "pad_h",
        "pad_w",
        "dilation_d",
        "dilation_h",
        "dilation_w",
    ),
)


class GemmShape(NamedTuple):
    m: int
    n: int
    k: int


def _output_size(size: int, filt: int, stride: int, pad: int, dilation: int) -> int:
    return (size + 2 * pad - dilation * (filt - 1) - 1) // stride + 1


class ConvProblem(BaseModel):
    """One grouped convolution; invalid sizes (C or K not divisible by G, empty output) are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = ""
    N: PositiveInt
    C: PositiveInt
    K: PositiveInt
    G: PositiveInt = 1
    Di: PositiveInt = 1
    Hi: PositiveInt
    Wi: PositiveInt
    Z: PositiveInt = 1
    Y: PositiveInt
    X: PositiveInt
    stride_d: PositiveInt = 1
    stride_h: PositiveInt = 1
    stride_w: PositiveInt = 1
    pad_d: NonNegativeInt = 0
    pad_h: NonNegativeInt = 0
    pad_w: NonNegativeInt = 0
    dilation_d: PositiveInt = 1
    dilation_h: PositiveInt = 1
    dilation_w: PositiveInt = 1

    @model_validator(mode="after")
    def _check(self) -> ConvProblem:
        if self.C % self.G:
            raise ValueError(f"C {self.C} is not divisible by G {self.G}")
        if self.K % self.G:
            raise ValueError(f"K {self.K} is not divisible by G {self.G}")
        for axis, size in zip("DHW", self.output_spatial, strict=True):
            if size < 1:
                raise ValueError(
                    f"output size {axis}o {size} is not positive (filter larger than padded input)"
                )
        return self

    @property
    def ndim_spatial(self) -> int:
        """3 when the depth dimension does anything, else 2."""
        depth_used = (self.Di, self.Z, self.stride_d, self.pad_d, self.dilation_d) != (1, 1, 1, 0, 1)
        return 3 if depth_used else 2

    @property
    def output_spatial(self) -> tuple[int, int, int]:
        """(Do, Ho, Wo)."""
        return (
            _output_size(self.Di, self.Z, self.stride_d, self.pad_d, self.dilation_d),
            _output_size(self.Hi, self.Y, self.stride_h, self.pad_h, self.dilation_h),
            _output_size(self.Wi, self.X, self.stride_w, self.pad_w, self.dilation_w),
        )

    @property
    def filter_volume(self) -> int:
        return self.Z * self.Y * self.X

    @property
    def output_volume(self) -> int:
        do, ho, wo = self.output_spatial
        return do * ho * wo

    @property
    def input_volume(self) -> int:
        return self.Di * self.Hi * self.Wi

    def gemm(self, direction: Direction | str) -> GemmShape:
        """The implicit-GEMM view of one group (ck_conventions §1)."""
        d = Direction(direction)
        c_per_group, k_per_group = self.C // self.G, self.K // self.G
        if d is Direction.FWD:
            return GemmShape(self.N * self.output_volume, k_per_group, c_per_group * self.filter_volume)
        if d is Direction.BWD_DATA:
            return GemmShape(self.N * self.input_volume, c_per_group, k_per_group * self.filter_volume)
        return GemmShape(k_per_group, c_per_group * self.filter_volume, self.N * self.output_volume)

    @property
    def flops(self) -> int:
        """2 * N * K * (Do*Ho*Wo) * (C/G) * (Z*Y*X), the same for all three directions (DESIGN)."""
        return 2 * self.N * self.K * self.output_volume * (self.C // self.G) * self.filter_volume

    def bytes(self, dtype: DataType | str) -> int:
        """Bytes of input, weight and output tensors, each touched once."""
        elements = (
            self.N * self.input_volume * self.C
            + self.K * (self.C // self.G) * self.filter_volume
            + self.N * self.output_volume * self.K
        )
        return elements * DataType(dtype).size_bytes


class ProblemFileError(ValueError):
    """A problem CSV with bad rows; ``errors`` holds one line per bad row (or one for a bad header)."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


def load_problems(path: str | Path) -> list[ConvProblem]:
    """Read a CK problem CSV (optional ``name`` column); ``ProblemFileError`` lists every bad row."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise ProblemFileError([f"{source}: cannot read: {error.strerror}"]) from None
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise ProblemFileError([f"{source}: empty file; expected a header with {','.join(CSV_COLUMNS)}"])
    header = [h.strip() for h in rows[0]]
    missing = [c for c in CSV_COLUMNS if c not in header]
    unknown = [h for h in header if h not in CSV_COLUMNS and h != "name"]
    if missing or unknown:
        parts = ([f"missing columns {','.join(missing)}"] if missing else []) + (
            [f"unknown columns {','.join(unknown)}"] if unknown else []
        )
        accepted = ",".join(("name", *CSV_COLUMNS))
        raise ProblemFileError([f"{source}:1: {'; '.join(parts)}; accepted: {accepted}"])
    problems, errors = [], []
    for line_no, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            errors.append(f"{source}:{line_no}: {len(row)} values for {len(header)} columns")
            continue
        values = {h: cell.strip() for h, cell in zip(header, row, strict=True)}
        try:
            problems.append(ConvProblem(**values))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            bad = f"column {where} value {values.get(where)!r}: " if where in values else ""
            errors.append(f"{source}:{line_no}: {bad}{first['msg']}")
    if errors:
        raise ProblemFileError(errors)
    return problems
