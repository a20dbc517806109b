"""cuDNN's time and bandwidth on a depthwise problem table, every direction and dtype, measured exactly as
``bench/compare_cudnn.py`` measures cuDNN (``time_cudnn``: PyTorch, channels_last, cudnn.benchmark, L2
flushed, best of two rounds' medians). For comparing with ``hand_depthwise_check``'s GB/s on the same
layers (its large battery entries are the rows of ``bench/problems/depthwise_mobilenet.csv``) without
building a rule set's profiler. GB/s counts each tensor once (input + weight + output), as
``ConvProblem::bytes`` does.

Usage: python bench/gpu_check/depthwise_cudnn.py PROBLEMS.csv [--warmup 5] [--repeat 20]
Exit status: 0, 2 for bad input (one message), 3 without a GPU or PyTorch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
from bench.compare_cudnn import (  # noqa: E402
    DIRECTIONS,
    DTYPES,
    Problem,
    UsageError,
    read_problems,
    time_cudnn,
)

ELEMENT_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def tensor_bytes(problem: Problem, dtype: str) -> int:
    """Input + weight + output once (ConvProblem::bytes)."""
    do, ho, wo = problem.output()
    inputs = problem.N * problem.Di * problem.Hi * problem.Wi * problem.C
    weights = problem.K * problem.Z * problem.Y * problem.X * (problem.C // problem.G)
    outputs = problem.N * do * ho * wo * problem.K
    return ELEMENT_BYTES[dtype] * (inputs + weights + outputs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", type=Path)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    if args.warmup < 0 or args.repeat < 1:
        print(
            f"depthwise_cudnn: --warmup {args.warmup} --repeat {args.repeat}; accepted: >= 0, >= 1",
            file=sys.stderr,
        )
        return 2
    try:
        problems = read_problems(args.problems)
    except UsageError as error:
        print(f"depthwise_cudnn: {error}", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("depthwise_cudnn: PyTorch is not installed", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("depthwise_cudnn: no CUDA device", file=sys.stderr)
        return 3
    print(f"device: {torch.cuda.get_device_name()}  cuDNN {torch.backends.cudnn.version()}")
    for problem in problems:
        for direction in DIRECTIONS:
            for dtype in DTYPES:
                ms = time_cudnn(problem, direction, dtype, args.warmup, args.repeat)
                gbs = tensor_bytes(problem, dtype) / (ms * 1e6)
                print(
                    f"CUDNN {direction:<10} {dtype:<4} {problem.name:<24} {ms * 1e3:9.1f} us {gbs:8.1f} GB/s"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
