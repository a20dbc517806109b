"""Problems for the GPU tests of the runtime, and the float64 PyTorch references they are compared with."""

from __future__ import annotations

from typing import Any

from tiledispatch import Problem

# Candidates per rank; each kernel is tested on the first one it supports (of its direction and dtype).
PROBLEMS_2D: tuple[dict[str, int], ...] = (
    {"N": 2, "C": 64, "K": 64, "G": 2, "Hi": 14, "Wi": 14, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1},
    {
        "N": 2,
        "C": 256,
        "K": 256,
        "G": 32,
        "Hi": 13,
        "Wi": 15,
        "Y": 3,
        "X": 3,
        "pad_h": 1,
        "pad_w": 1,
        "stride_h": 2,
        "stride_w": 2,
    },
    {"N": 3, "C": 128, "K": 128, "G": 16, "Hi": 9, "Wi": 9, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1},
    {"N": 2, "C": 64, "K": 128, "G": 1, "Hi": 14, "Wi": 14, "Y": 1, "X": 1},
    {"N": 2, "C": 16, "K": 16, "G": 4, "Hi": 10, "Wi": 10, "Y": 1, "X": 1},
    {
        "N": 2,
        "C": 32,
        "K": 32,
        "G": 32,
        "Hi": 28,
        "Wi": 28,
        "Y": 5,
        "X": 5,
        "pad_h": 2,
        "pad_w": 2,
        "stride_h": 2,
        "stride_w": 2,
    },
    {"N": 2, "C": 32, "K": 32, "G": 32, "Hi": 16, "Wi": 16, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1},
)
PROBLEMS_3D: tuple[dict[str, int], ...] = (
    {
        "N": 2,
        "C": 64,
        "K": 64,
        "G": 2,
        "Di": 6,
        "Hi": 10,
        "Wi": 10,
        "Z": 3,
        "Y": 3,
        "X": 3,
        "pad_d": 1,
        "pad_h": 1,
        "pad_w": 1,
    },
    {
        "N": 2,
        "C": 128,
        "K": 128,
        "G": 16,
        "Di": 4,
        "Hi": 7,
        "Wi": 7,
        "Z": 3,
        "Y": 3,
        "X": 3,
        "pad_d": 1,
        "pad_h": 1,
        "pad_w": 1,
    },
    {"N": 2, "C": 64, "K": 64, "G": 8, "Di": 4, "Hi": 6, "Wi": 6, "Z": 1, "Y": 1, "X": 1},
    {"N": 2, "C": 64, "K": 128, "G": 1, "Di": 4, "Hi": 6, "Wi": 6, "Z": 1, "Y": 1, "X": 1},
)


def candidates(ndim: int, direction: str, dtype: str) -> list[Problem]:
    table = PROBLEMS_3D if ndim == 3 else PROBLEMS_2D
    return [Problem(**sizes, direction=direction, dtype=dtype, spatial_dims=ndim) for sizes in table]


def torch_args(problem: Problem) -> dict[str, Any]:
    three = problem.ndim_spatial == 3
    pick = (lambda d, h, w: [d, h, w]) if three else (lambda d, h, w: [h, w])
    return {
        "stride": pick(problem.stride_d, problem.stride_h, problem.stride_w),
        "padding": pick(problem.pad_d, problem.pad_h, problem.pad_w),
        "dilation": pick(problem.dilation_d, problem.dilation_h, problem.dilation_w),
        "groups": problem.G,
    }
