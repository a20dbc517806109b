"""What the Python runtime launches, against cuDNN on the same GPU in the same run.

For every row of a CK problem table and every direction and dtype asked for: cuDNN, timed as
bench/compare_cudnn.py times it (PyTorch, channels_last, cudnn.benchmark, CUDA events, L2 flushed between
repeats, the best of two rounds' medians), and three launches of ``tiledispatch.Registry`` (no Python
selector: the C library's own choices) timed the same way:

- ``select, 1``: ``Registry.select``'s kernel at split-K 1 (what ``Registry.run`` launched before it planned
  a factor);
- ``select, preferred``: that kernel at its own preferred factor (``Registry.split_k``: the largest
  candidate whose work units fit one round on the SMs);
- ``plan``: ``Registry.plan``, what ``Registry.run`` launches given no kernel or factor: the (kernel,
  split-K) pair the library's compiled-in models rank first among every supported kernel's own candidates.

The three coincide outside bwd_weight, the one direction that splits K (each distinct launch is timed once).
Each launch's plan is made once;
``Registry.run`` with that kernel and factor (what a run given none launches, without re-planning every call)
is captured in a CUDA graph and the replays are timed, so the GPU's time is measured, not the host's; the host
time of one ``Registry.run`` call is reported beside it. Prints a Markdown table (kernel tile, factor,
TFLOP/s, ratio to cuDNN) and the geometric mean of each launch's ratio per direction and dtype, and writes it
to --out-dir.

Usage: python bench/runtime_vs_cudnn.py PROBLEMS.csv --library PATH/libtiledispatch_<ruleset>.so
       [--directions fwd,bwd_data,bwd_weight (default: all three)] [--dtypes fp16,bf16,fp32] [--ndims 2,3]
       [--warmup 5] [--repeat 20] [--out-dir DIR]
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]
for entry in (REPO_ROOT, REPO_ROOT / "dispatcher", REPO_ROOT / "bench"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))  # run as a script from anywhere: the repository's own packages
from compare_cudnn import (  # noqa: E402
    Problem,
    UsageError,
    UsageParser,
    add_table_options,
    check_out_dir,
    event_timed,
    selection,
    time_cudnn,
)

from generators.atomic_files import write_atomic  # noqa: E402

if TYPE_CHECKING:
    from tiledispatch import Launch, Registry
    from tiledispatch import Problem as RuntimeProblem

LAUNCHES = ("select, 1", "select, preferred", "plan")


class Timed(BaseModel):
    model_config = ConfigDict(frozen=True)

    kernel: str
    split_k: int
    tflops: float
    run_us: float


class Row(BaseModel):
    model_config = ConfigDict(frozen=True)

    problem: str
    direction: str
    dtype: str
    cudnn_tflops: float
    launches: dict[str, Timed]


def runtime_problem(problem: Problem, direction: str, dtype: str) -> RuntimeProblem:
    from tiledispatch import Problem as RuntimeProblem

    fields = problem.model_dump(exclude={"index", "name"})
    return RuntimeProblem(**fields, direction=direction, dtype=dtype, spatial_dims=problem.ndim)


def tile_of(kernel: str) -> str:
    """A kernel name after its layout and rank: pipeline, tile, warps (enough to tell kernels apart)."""
    return kernel.split("_2d_", 1)[-1].split("_3d_", 1)[-1]


def measure(
    registry: Registry, problem: Problem, direction: str, dtype: str, warmup: int, repeat: int
) -> dict[str, Timed]:
    import torch

    from tiledispatch import UnsupportedProblemError

    p = runtime_problem(problem, direction, dtype)
    sms = registry.device_sm_count()
    try:
        selected = registry.select(p).name
        plans = {
            "select, 1": (selected, 1),
            "select, preferred": (selected, registry.split_k(p, selected, sms=sms).preferred),
            "plan": astuple(registry.plan(p, sms=sms)),
        }
    except UnsupportedProblemError:
        return {}
    torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    fmt = torch.channels_last_3d if problem.ndim == 3 else torch.channels_last
    spatial = slice(3 - problem.ndim, 3)
    out = problem.output()[spatial]
    inputs = (problem.Di, problem.Hi, problem.Wi)[spatial]
    filters = (problem.Z, problem.Y, problem.X)[spatial]

    def tensor(*shape: int) -> torch.Tensor:
        return torch.empty(shape, device="cuda", dtype=torch_dtype).uniform_(-1, 1).to(memory_format=fmt)

    x, y = tensor(problem.N, problem.C, *inputs), tensor(problem.N, problem.K, *out)
    w = tensor(problem.K, problem.C // problem.G, *filters)
    by_pair: dict[
        tuple[str, int], Timed
    ] = {}  # the launches coincide outside bwd_weight: time each pair once
    for kernel, split_k in dict.fromkeys(plans.values()):
        step = functools.partial(registry.run, x, w, y, p, kernel=kernel, split_k=split_k)
        ms = event_timed(graph_of(step).replay, warmup, repeat)
        by_pair[kernel, split_k] = Timed(
            kernel=kernel, split_k=split_k, tflops=problem.flops() / ms / 1e9, run_us=host_microseconds(step)
        )
    return {launch: by_pair[pair] for launch, pair in plans.items()}


def graph_of(step: Callable[[], object]) -> Callable[[], object]:
    """`step` captured in a CUDA graph (after three warm-up calls on a side stream, as PyTorch requires), so
    that replays time the GPU's work without ``Registry.run``'s host overhead, which small layers would
    otherwise measure instead of the kernel."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph


def host_microseconds(step: Callable[[], object], calls: int = 50) -> float:
    """The median host time of one `step` call (launch included, no synchronisation), in microseconds."""
    import torch

    times = []
    for _ in range(calls):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    torch.cuda.synchronize()
    return 1e6 * statistics.median(times)


def astuple(launch: Launch) -> tuple[str, int]:
    return launch.kernel.name, launch.split_k


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def format_table(rows: Sequence[Row]) -> str:
    head = "| problem | direction | dtype | cuDNN TFLOP/s | " + " | ".join(
        f"{name}: kernel, k, TFLOP/s, ratio" for name in LAUNCHES
    )
    lines = [head + " | run() host µs |", "|---|---|---|---:|" + "---|" * len(LAUNCHES) + "---:|"]
    for row in rows:
        cells = [
            f"{tile_of(t.kernel)}, {t.split_k}, {t.tflops:.1f}, **{t.tflops / row.cudnn_tflops:.2f}**"
            for t in (row.launches[name] for name in LAUNCHES)
        ]
        host = row.launches[LAUNCHES[-1]].run_us
        lines.append(
            f"| {row.problem} | {row.direction} | {row.dtype} | {row.cudnn_tflops:.1f} | {' | '.join(cells)} "
            f"| {host:.0f} |"
        )
    lines.append("")
    for direction, dtype in dict.fromkeys((row.direction, row.dtype) for row in rows):
        ratios = {
            name: [
                r.launches[name].tflops / r.cudnn_tflops
                for r in rows
                if (r.direction, r.dtype) == (direction, dtype)
            ]
            for name in LAUNCHES
        }
        means = [f"{name} {geomean(values):.2f}" for name, values in ratios.items()]
        lines.append(f"geometric mean of ours / cuDNN, {direction} {dtype}: " + ", ".join(means))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = UsageParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problems", type=Path, help="CK problem table (CSV, optional name column)")
    parser.add_argument("--library", type=Path, required=True, help="a built libtiledispatch_<ruleset>.so")
    add_table_options(parser, dtypes="fp16", out_dir="build/runtime_vs_cudnn")
    try:
        args = parser.parse_args(argv)
        chosen = selection(args)
        if not args.library.is_file():
            raise UsageError(f"--library '{args.library}': no such file (scons ruleset=NAME lib builds one)")
        check_out_dir(args.out_dir)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from tiledispatch import Registry

    registry = Registry.load(args.library)
    rows = []
    for problem in chosen.problems:
        for direction in chosen.directions:
            for dtype in chosen.dtypes:
                launches = measure(registry, problem, direction, dtype, args.warmup, args.repeat)
                label = f"{problem.label} {direction} {dtype}"
                if not launches:
                    print(f"{label}: no kernel of {args.library.name} supports it", file=sys.stderr)
                    continue
                cudnn_ms = time_cudnn(problem, direction, dtype, args.warmup, args.repeat)
                cudnn_tflops = problem.flops() / cudnn_ms / 1e9
                rows.append(
                    Row(
                        problem=problem.label,
                        direction=direction,
                        dtype=dtype,
                        cudnn_tflops=cudnn_tflops,
                        launches=launches,
                    )
                )
                print(f"{label}: done", file=sys.stderr)
    table = format_table(rows)
    print(table)
    write_atomic(args.out_dir / "runtime_vs_cudnn.md", table.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
