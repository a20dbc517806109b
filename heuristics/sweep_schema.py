"""The sweep's result rows: CK's tile-engine CSV schema plus direction, dtype, split-K and instance string.

Columns, in order: ``kernel, problem_idx, N, C, K, G, Di, Hi, Wi, Z, Y, X, stride_d, stride_h, stride_w,
pad_d, pad_h, pad_w, dilation_d, dilation_h, dilation_w, latency_ms, tflops, non_zero`` (CK's result schema
with the 3D and dilation columns of its problem schema), then ``direction, dtype, split_k, instance_string,
status, reason``. ``status`` is the profiler's (valid, failed, not_supported) or ``batch_failed`` for a
problem whose batch crashed or hung twice (then ``kernel`` is empty and ``reason`` says what happened)."""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, NonNegativeInt, PositiveInt, ValidationError

from generators.problem import CSV_COLUMNS as PROBLEM_COLUMNS
from generators.problem import ConvProblem

Status = Literal["valid", "failed", "not_supported", "batch_failed"]
DirectionName = Literal["fwd", "bwd_data", "bwd_weight"]
DtypeName = Literal["fp16", "bf16", "fp32"]

SWEEP_COLUMNS: tuple[str, ...] = (
    "kernel",
    "problem_idx",
    *PROBLEM_COLUMNS,
    "latency_ms",
    "tflops",
    "non_zero",
    "direction",
    "dtype",
    "split_k",
    "instance_string",
    "status",
    "reason",
)


class SweepFileError(ValueError):
    """A sweep CSV that cannot be read; the message is one line naming the file and line."""


class SweepRow(BaseModel):
    """One (kernel, problem, direction, dtype, split-K) measurement."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kernel: str
    problem_idx: NonNegativeInt
    N: PositiveInt
    C: PositiveInt
    K: PositiveInt
    G: PositiveInt
    Di: PositiveInt
    Hi: PositiveInt
    Wi: PositiveInt
    Z: PositiveInt
    Y: PositiveInt
    X: PositiveInt
    stride_d: PositiveInt
    stride_h: PositiveInt
    stride_w: PositiveInt
    pad_d: NonNegativeInt
    pad_h: NonNegativeInt
    pad_w: NonNegativeInt
    dilation_d: PositiveInt
    dilation_h: PositiveInt
    dilation_w: PositiveInt
    latency_ms: float | None = None
    tflops: float | None = None
    non_zero: bool = False
    direction: DirectionName
    dtype: DtypeName
    split_k: PositiveInt = 1
    instance_string: str = ""
    status: Status
    reason: str = ""

    @property
    def problem(self) -> ConvProblem:
        return ConvProblem(**{c: getattr(self, c) for c in PROBLEM_COLUMNS})

    @property
    def shape_key(self) -> tuple[int, ...]:
        """The problem's sizes: the grouping key of the held-out evaluation."""
        return tuple(getattr(self, c) for c in PROBLEM_COLUMNS)

    def to_cells(self) -> list[str]:
        def cell(value: object) -> str:
            if value is None:
                return ""
            if isinstance(value, bool):
                return "1" if value else "0"
            return str(value)

        return [cell(getattr(self, c)) for c in SWEEP_COLUMNS]


def parse_row(values: dict[str, str], where: str) -> SweepRow:
    """One CSV record (strings) into a row; ``SweepFileError`` names the first bad column."""
    cleaned: dict[str, object] = {k: (v.strip() if v.strip() != "" else None) for k, v in values.items()}
    for optional_text in ("kernel", "instance_string", "reason"):
        cleaned[optional_text] = cleaned.get(optional_text) or ""
    try:
        return SweepRow(
            **{k: v for k, v in cleaned.items() if v is not None or k in ("latency_ms", "tflops")}
        )
    except ValidationError as error:
        first = error.errors()[0]
        column = ".".join(str(p) for p in first["loc"]) or "row"
        raise SweepFileError(f"{where}: column {column} ({values.get(column)!r}): {first['msg']}") from None


def format_rows(rows: Iterable[SweepRow], header: bool) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(SWEEP_COLUMNS)
    for row in rows:
        writer.writerow(row.to_cells())
    return out.getvalue()


def iter_sweep_rows(text: str, source: str) -> Iterator[SweepRow]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in SWEEP_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise SweepFileError(
            f"{source}:1: missing columns {','.join(missing)} (sweep schema: {','.join(SWEEP_COLUMNS)})"
        )
    for record in reader:
        if None in record or any(v is None for v in record.values()):
            raise SweepFileError(
                f"{source}:{reader.line_num}: {len(record)} cells, the header has {len(SWEEP_COLUMNS)}"
            )
        yield parse_row({k: record[k] for k in SWEEP_COLUMNS}, f"{source}:{reader.line_num}")


def read_sweep(paths: Iterable[str | Path]) -> list[SweepRow]:
    """Every row of the sweep files (plain or .gz)."""
    rows: list[SweepRow] = []
    for path in paths:
        rows.extend(iter_sweep_rows(read_text(path), str(path)))
    return rows


def read_text(path: str | Path) -> str:
    """A file's text, gunzipped when it is gzip data."""
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError as error:
        raise SweepFileError(f"{source}: cannot read: {error.strerror}") from None
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8")
