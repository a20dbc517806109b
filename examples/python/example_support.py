"""Shared by the Python examples: command-line options, the registry (loaded or built), device tensors, the
PyTorch reference of each direction and CUDA-event timing. Bad input ends with a one-line message, not a
traceback."""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "dispatcher")]  # runnable from a clone without installing

from tiledispatch import Problem, Registry, TiledispatchError  # noqa: E402

TORCH_DTYPES = ("fp16", "bf16", "fp32")


def parse_args(
    description: str, extra: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--library", type=Path, help="a built libtiledispatch_<ruleset>.so (default: build --ruleset)"
    )
    parser.add_argument("--ruleset", default="tiny", help="rule set to build when --library is not given")
    parser.add_argument("--jobs", type=int, default=None, help="parallel build jobs (default: cores)")
    parser.add_argument("--dtype", choices=TORCH_DTYPES, default="fp16")
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def registry_from(args: argparse.Namespace) -> Registry:
    if args.library is not None:
        return Registry.load(args.library)
    return Registry.build(ruleset=args.ruleset, max_workers=args.jobs)


def main_guard(main: Callable[[], int]) -> None:
    """Runs `main`; a tiledispatch or value error prints one line and exits with status 2."""
    try:
        sys.exit(main())
    except ImportError as error:
        print(f"error: {error} (the Python examples need PyTorch with CUDA)", file=sys.stderr)
        sys.exit(2)
    except (TiledispatchError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


def require_cuda() -> None:
    import torch

    if not torch.cuda.is_available():
        raise ValueError("no CUDA device visible to PyTorch: the examples run the kernels on a GPU")


def torch_dtype(name: str):
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[name]


def median_ms(fn: Callable[[], object], repeats: int = 20) -> float:
    """Median time of `fn` on the current stream, after two warm-up calls."""
    import torch

    for _ in range(2):
        fn()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def run_direction(direction: str) -> int:
    """One direction of a ResNeXt-style grouped 3x3 layer: select, run, compare with PyTorch, time both."""
    args = parse_args(f"Run the {direction} kernel of a grouped 3x3 layer and compare with PyTorch.")
    import torch
    from torch.nn import functional, grad

    require_cuda()
    registry = registry_from(args)
    problem = Problem(
        N=16,
        C=256,
        K=256,
        G=32,
        Hi=28,
        Wi=28,
        Y=3,
        X=3,
        pad_h=1,
        pad_w=1,
        direction=direction,
        dtype=args.dtype,
    )
    kernel = registry.select(problem)
    print(f"{len(registry.kernels)} kernels; selected {kernel.name}\n  {kernel.instance_string}")
    dtype, cl = torch_dtype(args.dtype), torch.channels_last
    x = (
        torch.randn(problem.N, problem.C, problem.Hi, problem.Wi, device="cuda")
        .to(dtype)
        .contiguous(memory_format=cl)
    )
    w = (
        torch.randn(problem.K, problem.C // problem.G, 3, 3, device="cuda")
        .to(dtype)
        .contiguous(memory_format=cl)
    )
    y = torch.randn(problem.N, problem.K, 28, 28, device="cuda").to(dtype).contiguous(memory_format=cl)
    conv = {"stride": 1, "padding": 1, "groups": problem.G}
    if direction == "fwd":
        written, ref = y, lambda: functional.conv2d(x, w, **conv)
        expected = functional.conv2d(x.double(), w.double(), **conv)
    elif direction == "bwd_data":
        written, ref = x, lambda: grad.conv2d_input(x.shape, w, y, **conv)
        expected = grad.conv2d_input(x.shape, w.double(), y.double(), **conv)
    else:
        written, ref = w, lambda: grad.conv2d_weight(x, w.shape, y, **conv)
        expected = grad.conv2d_weight(x.double(), w.shape, y.double(), **conv)
    written.fill_(float("nan"))
    registry.run(x, w, y, problem, kernel=kernel.name)
    torch.cuda.synchronize()
    error = float((written.double() - expected).norm() / expected.norm())
    ours = median_ms(lambda: registry.run(x, w, y, problem, kernel=kernel.name))
    theirs = median_ms(ref)
    tflops = problem.flops / 1e9
    print(f"relative L2 error vs float64 PyTorch: {error:.2e}")
    print(
        f"tiledispatch {ours:.4f} ms ({tflops / ours:.1f} TFLOP/s), PyTorch/cuDNN {theirs:.4f} ms "
        f"({tflops / theirs:.1f} TFLOP/s)"
    )
    return 0 if error <= (2e-3 if args.dtype == "fp32" else 1e-2) else 1
