"""Our best kernel against cuDNN (through PyTorch) on the same GPU in the same run.

For every problem of a CK problem table and every direction and dtype: our best verified TFLOP/s from
one profiler sweep (``--problems --json``), cuDNN's (channels_last, ``cudnn.benchmark = True``, TF32
allowed for fp32, the better of two rounds' medians of CUDA-event-timed repeats after warm-up, so that one
outlier round cannot make a ratio; L2 flushed between repeats as the profiler does), their ratio, and the
geometric mean of the ratio per category (dense; grouped with C/G >= 16; small_cg, grouped with C/G < 16;
depthwise, G = C = K, 2D or 3D; 3d, every other 3D layer: the categories of issues 9 and 10), and per
category, dtype and direction, as those issues set their targets. Beside our TFLOP/s, our GB/s (each
tensor the direction touches moved once: input + weights + output) and its fraction of the HBM roofline
(ROOFLINE_GBPS), which is what a bandwidth-bound kernel (depthwise) is measured by, and beside it the GB/s of
a device-to-device copy that moves the same bytes (half read, half written) in the same run, timed the same
way: what this GPU reaches at that size, the practical ceiling of a bandwidth-bound kernel. Prints a Markdown
table and writes it (.md), a CSV and a PNG chart.

PyTorch is imported only when cuDNN is timed, so this module loads on machines without it.

Usage: python bench/compare_cudnn.py PROBLEMS.csv --profiler PATH/tiledispatch_profiler
       [--directions fwd,bwd_data,bwd_weight] [--dtypes fp16,bf16,fp32] [--ndims 2,3] [--out-dir DIR]
       [--warmup 5] [--repeat 20] [--instances REGEX] [--split-k K[,K..]]
(``--ndims``: only the table's rows of those spatial dimensions, e.g. for a profiler built with ``ndims=2``.)
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # run as a script from anywhere: the repository's own packages
from generators.atomic_files import write_atomic  # noqa: E402
from generators.enums import DataType  # noqa: E402

Direction = Literal["fwd", "bwd_data", "bwd_weight"]
DType = Literal["fp16", "bf16", "fp32"]
Category = Literal["dense", "grouped", "small_cg", "depthwise", "3d"]
ROOFLINE_GBPS = 3000.0
"""The HBM roofline the bandwidth fractions are taken of: of the H100 SXM's 3.35 TB/s peak, the 3.0 TB/s that
issue 10 counts as reachable."""
CATEGORIES: tuple[Category, ...] = ("dense", "grouped", "small_cg", "depthwise", "3d")
SMALL_CG = 16
"""Grouped layers with fewer input channels per group are "small C/G" (HOPPER_KERNELS.md's family F3, issue
10); from it up they are "grouped" (issue 9's C/G >= 16)."""
DIRECTIONS: tuple[Direction, ...] = ("fwd", "bwd_data", "bwd_weight")
DTYPES: tuple[DType, ...] = ("fp16", "bf16", "fp32")
L2_FLUSH_BYTES = 256 << 20
# Tensors of 2^62 elements or more, or extents of 2^31 or more, are rejected, as the profiler's
# problem.hpp validate() does (its element counts are int64).
MAX_ELEMENTS = 1 << 62
MAX_EXTENT = (1 << 31) - 1


class UsageError(Exception):
    """A bad command line or input file: one message, exit code 2."""


class SweepError(Exception):
    """The profiler failed: one message; the exit code is the profiler's (2 usage, 3 no GPU) or 1."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status if status in (1, 2, 3) else 1


class Problem(BaseModel):
    """One row of the CK problem table (pads symmetric, as upstream)."""

    model_config = ConfigDict(frozen=True)

    index: int
    name: str
    N: int
    C: int
    K: int
    G: int
    Di: int
    Hi: int
    Wi: int
    Z: int
    Y: int
    X: int
    stride_d: int
    stride_h: int
    stride_w: int
    pad_d: int
    pad_h: int
    pad_w: int
    dilation_d: int
    dilation_h: int
    dilation_w: int

    @model_validator(mode="after")
    def _valid(self) -> Problem:
        """The profiler's rules: positive extents, strides and dilations, pads >= 0, G dividing C and K, an
        output of at least one element per dimension, no tensor of 2^62 elements or more."""
        positive = ("N", "C", "K", "G", "Di", "Hi", "Wi", "Z", "Y", "X")
        positive += ("stride_d", "stride_h", "stride_w", "dilation_d", "dilation_h", "dilation_w")
        for field in positive:
            value = getattr(self, field)
            if not 1 <= value <= MAX_EXTENT:
                raise ValueError(f"{field} = {value}: accepted 1 to {MAX_EXTENT}")
        for field in ("pad_d", "pad_h", "pad_w"):
            value = getattr(self, field)
            if not 0 <= value <= MAX_EXTENT:
                raise ValueError(f"{field} = {value}: accepted 0 to {MAX_EXTENT}")
        if self.C % self.G or self.K % self.G:
            raise ValueError(f"G = {self.G} must divide C = {self.C} and K = {self.K}")
        out = self.output()
        if min(out) < 1:
            shape = "x".join(map(str, out))
            raise ValueError(f"output {shape} is empty (filter larger than the padded input)")
        for tensor, elements in self.tensor_elements().items():
            if elements >= MAX_ELEMENTS:
                raise ValueError(f"{tensor} tensor of {elements} elements: accepted fewer than 2^62")
        return self

    @property
    def ndim(self) -> int:
        flat = (self.Di, self.Z, self.stride_d, self.pad_d, self.dilation_d) == (1, 1, 1, 0, 1)
        return 2 if flat else 3

    @property
    def label(self) -> str:
        return self.name or f"#{self.index}"

    def output(self) -> tuple[int, int, int]:
        def size(i: int, f: int, s: int, p: int, d: int) -> int:
            return (i + 2 * p - d * (f - 1) - 1) // s + 1

        return (
            size(self.Di, self.Z, self.stride_d, self.pad_d, self.dilation_d),
            size(self.Hi, self.Y, self.stride_h, self.pad_h, self.dilation_h),
            size(self.Wi, self.X, self.stride_w, self.pad_w, self.dilation_w),
        )

    def tensor_elements(self) -> dict[str, int]:
        """Elements of the input (NDHWGC), weight (GKZYXC) and output (NDHWGK) tensors."""
        return {
            "input": self.N * self.C * self.Di * self.Hi * self.Wi,
            "weight": self.K * (self.C // self.G) * self.Z * self.Y * self.X,
            "output": self.N * self.K * math.prod(self.output()),
        }

    def min_bytes(self, dtype: DType) -> float:
        """The fewest bytes any direction moves: each of the three tensors once (two read, one written)."""
        return float(DataType(dtype).size_bytes * sum(self.tensor_elements().values()))

    def flops(self) -> float:
        """2*N*K*(Do*Ho*Wo)*(C/G)*(Z*Y*X), the same for all three directions (DESIGN.md)."""
        do, ho, wo = self.output()
        return 2.0 * self.N * self.K * do * ho * wo * (self.C // self.G) * self.Z * self.Y * self.X


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    problem: str
    problem_idx: int
    category: Category
    direction: Direction
    dtype: DType
    ours_tflops: float | None
    ours_kernel: str
    cudnn_tflops: float | None
    ours_gbps: float | None = None
    """Our GB/s: the problem's min_bytes in our time."""
    copy_gbps: float | None = None
    """GB/s of a device-to-device copy of the problem's min_bytes (half read, half written), same run."""

    @property
    def ratio(self) -> float | None:
        if not self.ours_tflops or not self.cudnn_tflops:
            return None
        return self.ours_tflops / self.cudnn_tflops

    @property
    def roofline_fraction(self) -> float | None:
        return None if self.ours_gbps is None else self.ours_gbps / ROOFLINE_GBPS

    @property
    def copy_fraction(self) -> float | None:
        """Our GB/s as a fraction of the copy's: 1.0 is as fast as copying the same bytes."""
        if self.ours_gbps is None or not self.copy_gbps:
            return None
        return self.ours_gbps / self.copy_gbps


def achieved_gbps(problem: Problem, dtype: DType, tflops: float) -> float:
    """GB/s of a run at `tflops`: the problem's min_bytes in the time its flops take at that rate."""
    return problem.min_bytes(dtype) * tflops * 1e3 / problem.flops()


def copy_gbps(problem: Problem, dtype: DType, copy_ms: float) -> float:
    """GB/s of the reference copy of `problem`'s min_bytes that took `copy_ms`."""
    return problem.min_bytes(dtype) / (copy_ms * 1e6)


def copy_buffer_bytes(problem: Problem, dtype: DType) -> int:
    """Bytes of each of the copy's two buffers: half of min_bytes, so that the copy moves all of it."""
    return math.ceil(problem.min_bytes(dtype) / 2)


def category_of(problem: Problem) -> Category:
    """depthwise first (G = C = K > 1: one input and one output channel per group, 2D or 3D; issue 10's
    category), then 3d (any other 3D layer, whatever its groups; issue 9's), small_cg (C/G below SMALL_CG),
    grouped, dense."""
    if problem.G > 1 and problem.C == problem.G and problem.K == problem.G:
        return "depthwise"
    if problem.ndim == 3:
        return "3d"
    if problem.G > 1:
        return "small_cg" if problem.C // problem.G < SMALL_CG else "grouped"
    return "dense"


PROBLEM_COLUMNS = tuple(name for name in Problem.model_fields if name not in ("index", "name"))


def _table_text(path: Path) -> str:
    if not path.exists():
        raise UsageError(f"problem table '{path}' does not exist")
    if not path.is_file():
        raise UsageError(f"problem table '{path}' is not a regular file")
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as e:
        raise UsageError(f"problem table '{path}': cannot read it: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"problem table '{path}': byte {e.start} is not UTF-8") from None


def read_problems(path: Path) -> list[Problem]:
    """The rows of a CK problem table; UsageError naming the file, row and value for anything else."""
    text = _table_text(path)
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        raise UsageError(f"{path}: line {line}: a NUL byte")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [column for column in PROBLEM_COLUMNS if column not in header]
    unknown = [column for column in header if column not in (*PROBLEM_COLUMNS, "name")]
    if missing or unknown or len(set(header)) != len(header):
        raise UsageError(
            f"{path}: row 1: header {','.join(header)!r}; accepted: optional name, then "
            f"{','.join(PROBLEM_COLUMNS)} (each once)"
        )
    problems = []
    try:
        for index, row in enumerate(reader):
            where = f"{path}: row {reader.line_num}"
            if None in row or None in row.values():
                raise UsageError(f"{where}: {len(header)} cells expected")
            cells = {k: v for k, v in row.items() if k != "name"}
            try:
                problems.append(Problem(index=index, name=row.get("name") or "", **cells))
            except ValidationError as e:
                first = e.errors()[0]
                field = ".".join(str(part) for part in first["loc"])
                message = str(first.get("ctx", {}).get("error", first["msg"]))
                shown = f"{field}: " if field else ""
                raise UsageError(f"{where}: {shown}{message}") from None
    except csv.Error as e:
        raise UsageError(f"{path}: row {reader.line_num}: {e}") from None
    if not problems:
        raise UsageError(f"{path}: no problem rows")
    return problems


NDIMS = ("2", "3")


def select_ndims(problems: Sequence[Problem], ndims: Sequence[int], path: Path) -> list[Problem]:
    """The problems of the given spatial dimensions, renumbered in table order (the profiler sweeps a table of
    just these); UsageError when none is left."""
    kept = [p for p in problems if p.ndim in ndims]
    if not kept:
        shown = ", ".join(f"{n}D" for n in ndims)
        raise UsageError(f"{path}: no {shown} problem rows (--ndims {','.join(str(n) for n in ndims)})")
    return [p.model_copy(update={"index": i}) for i, p in enumerate(kept)]


def problem_table_text(problems: Sequence[Problem]) -> str:
    """A CK problem table (name column first) holding `problems` in order."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", *PROBLEM_COLUMNS])
    for p in problems:
        writer.writerow([p.name, *(getattr(p, column) for column in PROBLEM_COLUMNS)])
    return out.getvalue()


def verified_valid(record: dict[str, object]) -> bool:
    """A profiler result that ran and was not found wrong (unchecked counts as right, as --verify 0 asks)."""
    return record.get("status") == "valid" and record.get("verified") is not False


def best_ours(records: Iterable[dict[str, object]]) -> dict[tuple[int, str, str], tuple[float, str]]:
    """Fastest verified valid result per (problem_idx, direction, dtype): (TFLOP/s, kernel)."""
    best: dict[tuple[int, str, str], tuple[float, str]] = {}
    for r in records:
        if not verified_valid(r) or r.get("tflops") is None:
            continue
        key = (int(r["problem_idx"]), str(r["direction"]), str(r["dtype"]))
        tflops = float(r["tflops"])
        if key not in best or tflops > best[key][0]:
            best[key] = (tflops, str(r["kernel"]))
    return best


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in values) / len(values))


def geomean_by_category(rows: Sequence[Comparison]) -> dict[Category, float]:
    """Geometric mean of ours/cuDNN per category, over the rows where both ran."""
    means: dict[Category, float] = {}
    for cat in CATEGORIES:
        ratios = [r.ratio for r in rows if r.category == cat and r.ratio]
        if ratios:
            means[cat] = geomean(ratios)
    return means


def geomean_by_direction(rows: Sequence[Comparison]) -> dict[tuple[Category, str, str], tuple[float, int]]:
    """(geometric mean of ours/cuDNN, rows) per (category, dtype, direction), over the rows where both ran:
    the figure issues 9 and 10 set their targets on."""
    groups: dict[tuple[Category, str, str], list[float]] = {}
    for r in rows:
        if r.ratio:
            groups.setdefault((r.category, r.dtype, r.direction), []).append(r.ratio)
    return {key: (geomean(ratios), len(ratios)) for key, ratios in groups.items()}


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_table(rows: Sequence[Comparison], means: dict[Category, float]) -> str:
    lines = [
        "| problem | category | direction | dtype | ours TFLOP/s | ours GB/s "
        f"| of {ROOFLINE_GBPS / 1000:.1f} TB/s | copy GB/s | of copy | cuDNN TFLOP/s | ours / cuDNN |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.problem} | {r.category} | {r.direction} | {r.dtype} | {_fmt(r.ours_tflops)} | "
            f"{_fmt(r.ours_gbps, 0)} | {_fmt(r.roofline_fraction, 2)} | {_fmt(r.copy_gbps, 0)} | "
            f"{_fmt(r.copy_fraction, 2)} | {_fmt(r.cudnn_tflops)} | "
            f"{_fmt(r.ratio, 2)} |"
        )
    lines += ["", "| category | geometric mean ours / cuDNN |", "|---|---:|"]
    lines += [f"| {cat} | {means[cat]:.2f} |" for cat in CATEGORIES if cat in means]
    by_direction = geomean_by_direction(rows)
    if by_direction:
        header = "| category | dtype | " + " | ".join(DIRECTIONS) + " |"
        lines += ["", header, "|---|---|" + "---:|" * len(DIRECTIONS)]
        for cat in CATEGORIES:
            for dtype in DTYPES:
                cells = [by_direction.get((cat, dtype, d)) for d in DIRECTIONS]
                if any(cells):
                    shown = [f"{c[0]:.2f} ({c[1]})" if c else "-" for c in cells]
                    lines.append(f"| {cat} | {dtype} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, rows: Sequence[Comparison]) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "problem",
            "problem_idx",
            "category",
            "direction",
            "dtype",
            "ours_tflops",
            "ours_kernel",
            "cudnn_tflops",
            "ratio",
            "ours_gbps",
            "roofline_fraction",
            "copy_gbps",
            "copy_fraction",
        ]
    )
    for r in rows:
        writer.writerow(
            [
                r.problem,
                r.problem_idx,
                r.category,
                r.direction,
                r.dtype,
                _fmt(r.ours_tflops, 3),
                r.ours_kernel,
                _fmt(r.cudnn_tflops, 3),
                _fmt(r.ratio, 4),
                _fmt(r.ours_gbps, 1),
                _fmt(r.roofline_fraction, 4),
                _fmt(r.copy_gbps, 1),
                _fmt(r.copy_fraction, 4),
            ]
        )
    write_atomic(path, out.getvalue().encode())


def plot_png(path: Path, rows: Sequence[Comparison], means: dict[Category, float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r.ratio]
    colors = {
        "dense": "tab:blue",
        "grouped": "tab:orange",
        "small_cg": "tab:red",
        "depthwise": "tab:green",
        "3d": "tab:purple",
    }
    fig, ax = plt.subplots(figsize=(max(8.0, 0.35 * len(shown)), 5.0))
    ax.bar(range(len(shown)), [r.ratio for r in shown], color=[colors[r.category] for r in shown])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([f"{r.problem} {r.direction} {r.dtype}" for r in shown], rotation=90, fontsize=7)
    ax.set_ylabel("ours / cuDNN (TFLOP/s ratio, log)")
    legend = [f"{cat} (geomean {means[cat]:.2f})" for cat in CATEGORIES if cat in means]
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[cat]) for cat in CATEGORIES if cat in means]
    ax.legend(handles, legend, fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    plt.close(fig)
    write_atomic(path, buffer.getvalue())


def run_profiler_sweep(
    profiler: Path,
    table: Path,
    directions: Sequence[str],
    dtypes: Sequence[str],
    json_path: Path,
    extra: Sequence[str],
) -> list[dict[str, object]]:
    """One profiler process over the whole table; returns its JSON records. Instance failures (exit 1) still
    yield records; usage or environment errors (2, 3) stop the comparison."""
    command = [
        str(profiler),
        "--direction",
        ",".join(directions),
        "--dtype",
        ",".join(dtypes),
        "--problems",
        str(table),
        "--json",
        str(json_path),
        *extra,
    ]
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=sys.stderr, check=False)
    if result.returncode not in (0, 1) or not json_path.is_file():
        raise SweepError(f"profiler {profiler} exited with {result.returncode}", result.returncode)
    try:
        return list(json.loads(json_path.read_text(encoding="utf-8"))["results"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SweepError(f"profiler {profiler} wrote an unreadable {json_path.name}: {e}", 1) from None


CUDNN_ROUNDS = 2
"""Timed rounds per cuDNN measurement; the faster round's median counts (issue 9: one outlier round must not
make a ratio)."""


def best_of_rounds(round_medians: Sequence[float]) -> float:
    """The measurement of several timed rounds: the smallest median."""
    if not round_medians:
        raise ValueError("no timed round")
    return min(round_medians)


def time_cudnn(problem: Problem, direction: Direction, dtype: DType, warmup: int, repeat: int) -> float:
    """Milliseconds of cuDNN for one problem (PyTorch, channels_last, cudnn.benchmark): the best of
    CUDNN_ROUNDS rounds' medians."""
    import torch

    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    nd = problem.ndim
    fmt = torch.channels_last_3d if nd == 3 else torch.channels_last
    spatial_in = (problem.Di, problem.Hi, problem.Wi)[3 - nd :]
    spatial_f = (problem.Z, problem.Y, problem.X)[3 - nd :]
    stride = (problem.stride_d, problem.stride_h, problem.stride_w)[3 - nd :]
    pad = (problem.pad_d, problem.pad_h, problem.pad_w)[3 - nd :]
    dilation = (problem.dilation_d, problem.dilation_h, problem.dilation_w)[3 - nd :]
    spatial_out = problem.output()[3 - nd :]
    dev = torch.device("cuda")

    def tensor(*shape: int) -> torch.Tensor:
        return torch.empty(shape, device=dev, dtype=torch_dtype).uniform_(-1, 1).to(memory_format=fmt)

    x = tensor(problem.N, problem.C, *spatial_in)
    w = tensor(problem.K, problem.C // problem.G, *spatial_f)
    dy = tensor(problem.N, problem.K, *spatial_out)
    conv = torch.nn.functional.conv3d if nd == 3 else torch.nn.functional.conv2d
    mask = {"bwd_data": [True, False, False], "bwd_weight": [False, True, False]}

    def step() -> object:
        if direction == "fwd":
            return conv(x, w, None, stride, pad, dilation, problem.G)
        return torch.ops.aten.convolution_backward(
            dy, x, w, None, stride, pad, dilation, False, [0] * nd, problem.G, mask[direction]
        )

    return event_timed(step, warmup, repeat)


def time_copy(nbytes: int, warmup: int, repeat: int) -> float:
    """Milliseconds of a device-to-device copy of `nbytes` (so 2 x nbytes moved), timed as cuDNN is."""
    import torch

    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_(0, 256)
    dst = torch.empty_like(src)
    return event_timed(lambda: dst.copy_(src), warmup, repeat)


def event_timed(step: Callable[[], object], warmup: int, repeat: int) -> float:
    """Milliseconds of `step`: after `warmup` untimed calls, CUDNN_ROUNDS rounds of `repeat` CUDA-event-timed
    calls, each after an L2 flush; the best round's median."""
    import torch

    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        step()
    medians = []
    for _ in range(CUDNN_ROUNDS):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeat)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(repeat)]
        for start, stop in zip(starts, stops, strict=True):
            flush.zero_()
            start.record()
            step()
            stop.record()
        torch.cuda.synchronize()
        medians.append(statistics.median(s.elapsed_time(e) for s, e in zip(starts, stops, strict=True)))
    return best_of_rounds(medians)


def compare(
    problems: Sequence[Problem],
    ours: dict[tuple[int, str, str], tuple[float, str]],
    directions: Sequence[Direction],
    dtypes: Sequence[DType],
    warmup: int,
    repeat: int,
) -> list[Comparison]:
    rows = []
    for p in problems:
        copy_ms = {dtype: time_copy(copy_buffer_bytes(p, dtype), warmup, repeat) for dtype in dtypes}
        for direction in directions:
            for dtype in dtypes:
                mine = ours.get((p.index, direction, dtype))
                ms = time_cudnn(p, direction, dtype, warmup, repeat)
                rows.append(
                    Comparison(
                        problem=p.label,
                        problem_idx=p.index,
                        category=category_of(p),
                        direction=direction,
                        dtype=dtype,
                        ours_tflops=mine[0] if mine else None,
                        ours_kernel=mine[1] if mine else "",
                        cudnn_tflops=p.flops() / (ms * 1e9),
                        ours_gbps=achieved_gbps(p, dtype, mine[0]) if mine else None,
                        copy_gbps=copy_gbps(p, dtype, copy_ms[dtype]),
                    )
                )
                print(
                    f"[progress] {p.label} {direction} {dtype}: cuDNN {ms:.4f} ms",
                    file=sys.stderr,
                    flush=True,
                )
    return rows


def list_arg(text: str, accepted: Sequence[str], what: str) -> list[str]:
    values = text.split(",")
    for index, v in enumerate(values):
        if v not in accepted:
            raise UsageError(f"unknown {what} '{v}' (accepted: {', '.join(accepted)})")
        if v in values[:index]:
            raise UsageError(f"{what} '{v}' given twice (accepted: each once)")
    return values


def split_k_factors(text: str) -> list[int]:
    """``--split-k``: distinct positive integers, comma-separated (empty: none given)."""
    if not text:
        return []
    factors = []
    for token in text.split(","):
        if not token.strip().isdigit() or int(token) < 1:
            raise UsageError(f"--split-k: '{token}' is not a positive integer")
        if int(token) in factors:
            raise UsageError(f"--split-k: {int(token)} is given twice")
        factors.append(int(token))
    return factors


def check_out_dir(out_dir: Path) -> None:
    """The output folder must be a folder or creatable; nothing is created until there is a result."""
    probe = out_dir
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise UsageError(f"--out-dir '{out_dir}': '{probe}' is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"--out-dir '{out_dir}': '{probe}' is not writable")


class UsageParser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit 2, as for every other bad input
        raise UsageError(message)


def add_table_options(parser: argparse.ArgumentParser, dtypes: str, out_dir: str) -> None:
    """The options of every comparison over a problem table: which directions, dtypes and rows, how each
    measurement is timed, where the results go (the table itself is the first positional argument)."""
    parser.add_argument("--directions", default="fwd,bwd_data,bwd_weight")
    parser.add_argument("--dtypes", default=dtypes)
    parser.add_argument("--ndims", default="2,3", help="spatial dimensions of the rows to compare")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out-dir", type=Path, default=Path(out_dir))


class Selection(BaseModel):
    """What add_table_options chose: directions, dtypes, the rows of the asked dimensions (renumbered) and
    whether they are the whole table."""

    model_config = ConfigDict(frozen=True)

    directions: list[str]
    dtypes: list[str]
    problems: list[Problem]
    whole_table: bool


def selection(args: argparse.Namespace) -> Selection:
    """The table's rows and the lists add_table_options parsed; UsageError for a bad value or table."""
    directions = list_arg(args.directions, DIRECTIONS, "direction")
    dtypes = list_arg(args.dtypes, DTYPES, "dtype")
    ndims = [int(n) for n in list_arg(args.ndims, NDIMS, "ndim")]
    if args.warmup < 0 or args.repeat < 1:
        raise UsageError(f"--warmup {args.warmup} / --repeat {args.repeat}: accepted >= 0 / >= 1")
    table = read_problems(args.problems)
    problems = select_ndims(table, ndims, args.problems)
    whole = len(problems) == len(table)
    return Selection(directions=directions, dtypes=dtypes, problems=problems, whole_table=whole)


def main(argv: Sequence[str] | None = None) -> int:
    parser = UsageParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problems", type=Path, help="CK problem table (CSV, optional name column)")
    parser.add_argument(
        "--profiler",
        type=Path,
        required=True,
        action="append",
        help="a tiledispatch_profiler executable; repeat to take our best over several instance sets",
    )
    add_table_options(parser, dtypes="fp16,bf16,fp32", out_dir="build/compare_cudnn")
    parser.add_argument("--instances", default="", help="regex passed to the profiler's --instances")
    parser.add_argument(
        "--split-k",
        default="",
        help="split-K factors passed to the profiler's --split-k (bwd_weight); default: its automatic list",
    )
    try:
        args = parser.parse_args(argv)
        chosen = selection(args)
        for profiler in args.profiler:
            if not profiler.exists():
                raise UsageError(f"profiler '{profiler}' does not exist")
            if not profiler.is_file() or not os.access(profiler, os.X_OK):
                raise UsageError(f"profiler '{profiler}' is not an executable file")
        split_k_factors(args.split_k)
        check_out_dir(args.out_dir)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        parser.print_usage(sys.stderr)
        return 2
    return exit_status_of(lambda: _run(args, chosen), args.out_dir)


def exit_status_of(run: Callable[[], int], out_dir: Path) -> int:
    """What `run()` returns, or one line on stderr and the status of what stopped it: the profiler's
    (SweepError), 3 where PyTorch (cuDNN timing) or matplotlib (chart) is missing, 2 for an unwritable
    --out-dir, 130 for Ctrl-C."""
    try:
        return run()
    except SweepError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.status
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    except OSError as e:
        print(f"error: cannot write to --out-dir '{out_dir}': {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace, chosen: Selection) -> int:
    problems, directions, dtypes = chosen.problems, chosen.directions, chosen.dtypes
    extra = ["--warmup", str(args.warmup), "--repeat", str(args.repeat)]
    if args.instances:
        extra += ["--instances", args.instances]
    if args.split_k and "bwd_weight" in directions:
        extra += ["--split-k", ",".join(str(k) for k in split_k_factors(args.split_k))]
    records = []
    # The sweeps write into a scratch folder; the output folder appears only once there are results.
    with tempfile.TemporaryDirectory(prefix="compare_cudnn.") as scratch:
        swept = args.problems
        if not chosen.whole_table:  # --ndims left rows out: the profiler sweeps the rest, renumbered
            swept = Path(scratch) / "problems.csv"
            swept.write_text(problem_table_text(problems), encoding="utf-8")
        sweeps = []
        for index, profiler in enumerate(args.profiler):
            json_path = Path(scratch) / f"ours_{index}.json"
            records += run_profiler_sweep(profiler, swept, directions, dtypes, json_path, extra)
            sweeps.append(json_path)
        rows = compare(problems, best_ours(records), directions, dtypes, args.warmup, args.repeat)
        for json_path in sweeps:
            write_atomic(args.out_dir / json_path.name, json_path.read_bytes())
    means = geomean_by_category(rows)
    table = format_table(rows, means)
    print(table)
    write_atomic(args.out_dir / "compare_cudnn.md", table.encode())
    write_csv(args.out_dir / "compare_cudnn.csv", rows)
    plot_png(args.out_dir / "compare_cudnn.png", rows, means)
    print(f"wrote {args.out_dir / 'compare_cudnn.csv'} and {args.out_dir / 'compare_cudnn.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
