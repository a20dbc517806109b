"""PyTorch convolution arguments -> tiledispatch Problem (NCHW logical shapes; channels_last memory)."""

from __future__ import annotations

from collections.abc import Sequence

from generators.enums import DataType, Direction

from ..problem import Problem

TORCH_DTYPES = {
    "torch.float16": DataType.FP16,
    "torch.bfloat16": DataType.BF16,
    "torch.float32": DataType.FP32,
}


def expand(value: int | Sequence[int], ndim: int, name: str) -> list[int]:
    """An int or an ndim-long sequence of ints as a list of ndim ints; ValueError naming the bad value."""
    if isinstance(value, int):
        return [value] * ndim
    values = list(value)
    if len(values) != ndim or not all(isinstance(v, int) for v in values):
        raise ValueError(f"{name}={value!r}: expected an int or {ndim} ints")
    return values


def conv_problem(
    input_shape: Sequence[int],
    weight_shape: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    direction: Direction,
    dtype: DataType,
) -> Problem:
    """The problem of ``torch.nn.functional.conv{2,3}d(input, weight, stride, padding, dilation, groups)``."""
    ndim = len(input_shape) - 2
    n, c, *spatial = input_shape
    k, _, *filt = weight_shape
    depth = ndim == 3
    return Problem(
        N=n,
        C=c,
        K=k,
        G=groups,
        Di=spatial[0] if depth else 1,
        Hi=spatial[-2],
        Wi=spatial[-1],
        Z=filt[0] if depth else 1,
        Y=filt[-2],
        X=filt[-1],
        stride_d=stride[0] if depth else 1,
        stride_h=stride[-2],
        stride_w=stride[-1],
        pad_d=padding[0] if depth else 0,
        pad_h=padding[-2],
        pad_w=padding[-1],
        dilation_d=dilation[0] if depth else 1,
        dilation_h=dilation[-2],
        dilation_w=dilation[-1],
        direction=direction,
        dtype=dtype,
        spatial_dims=ndim,
    )


def output_shape(problem: Problem) -> list[int]:
    do, ho, wo = problem.output_spatial
    spatial = [do, ho, wo] if problem.ndim_spatial == 3 else [ho, wo]
    return [problem.N, problem.K, *spatial]
