"""Feature vectors of (problem, direction, dtype, kernel, split-K): problem, kernel and interaction features.

CK's list (ck_conventions §7) where it applies, plus what a tile machine needs: tile counts per GEMM
dimension, wave quantisation over the H100's 132 SMs, padding waste of M/N/K against the tile, arithmetic
intensity. ``selection/features.hpp`` computes the same vector in the same order; a CPU test compares the
two. Every value is a float64 computed from integers with +, -, *, /, ceil-division and log2 only."""

from __future__ import annotations

import math

from generators import hopper
from generators.enums import DataType, Direction
from generators.problem import ConvProblem
from heuristics.kernel_traits import KernelTraits

SM_COUNT = 132  # H100 SXM; wave-quantisation features assume it (and stay monotone on other parts)

FEATURE_NAMES: tuple[str, ...] = (
    # problem
    "N",
    "C",
    "K",
    "G",
    "c_per_group",
    "k_per_group",
    "Di",
    "Hi",
    "Wi",
    "Z",
    "Y",
    "X",
    "stride_h",
    "stride_w",
    "stride_d",
    "pad_h",
    "pad_w",
    "pad_d",
    "dilation_h",
    "dilation_w",
    "Do",
    "Ho",
    "Wo",
    "ndim",
    "is_1x1",
    "is_3x3",
    "is_depthwise",
    "dtype_bytes",
    "is_fp32",
    "log2_N",
    "log2_c_per_group",
    "log2_k_per_group",
    "log2_G",
    "log2_in_spatial",
    "log2_out_spatial",
    "log2_flops",
    "arithmetic_intensity",
    "gemm_m",
    "gemm_n",
    "gemm_k",
    "log2_gemm_m",
    "log2_gemm_n",
    "log2_gemm_k",
    # kernel
    "tile_m",
    "tile_n",
    "tile_k",
    "wave_m",
    "wave_n",
    "wave_k",
    "warp_tile_m",
    "warp_tile_n",
    "warp_tile_k",
    "vector_a",
    "vector_b",
    "vector_c",
    "block_threads",
    "pipeline",
    "interwave",
    "double_smem_buffer",
    "groups_to_merge",
    "two_stage",
    "specialization",
    "explicit_gemm",
    "streamk",
    "streamk_persistent",
    "split_image",
    "kernel_depthwise",
    "tile_mn",
    "smem_bytes",
    "split_k",
    # interaction
    "tiles_m",
    "tiles_n",
    "k_iterations",
    "log2_blocks",
    "waves",
    "wave_efficiency",
    "waste_m",
    "waste_n",
    "waste_k",
    "tile_utilisation",
    "vector_a_fits",
    "vector_c_fits",
    "k_iterations_per_split",
    "accumulators_per_thread",
    "merged_group_pairing",
    "bwd_data_zero_fraction",
    "dw_tile_h",
    "dw_tile_w",
    "dw_waste_h",
    "dw_waste_w",
    "dw_slice_waste",
)
_PAIRING_FACTORS = (1, 2, 4)
_FP32_DIRECT_WIDTHS = (2, 4, 8, 16, 32)
"""C/G = K/G of the direct merged-group kernel in fp32 (kernels/merged_group_direct.cuh)."""


def _log2(value: float) -> float:
    return math.log2(value) if value > 0 else 0.0


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def merged_group_pairing(
    problem: ConvProblem, direction: Direction, dtype: DataType, kernel: KernelTraits
) -> int:
    """How a merged-group kernel (groups_to_merge GM > 1) runs `problem`. fwd and bwd_data on the Hopper path:
    the factor P where P consecutive groups, run as one, have the per-group GEMM extents tile_k / GM and
    tile_n / GM (1: diagonal blocks; 2, 4: paired groups), else 0 (gathered block-diagonally, with zero MACs;
    docs/pipelines.md, "merged groups"); fp32: 1 where the direct kernel multiplies the diagonal blocks (C/G =
    K/G of 2, 4, 8, 16 or 32, GM x C/G = tile_k = tile_n), else 0. bwd_weight: 1 where the merged groups' K/G
    rows fill tile_m exactly, else 0 (rows left empty, or groups spread over several tiles). Where GM does not
    divide G only the direct kernels run (a last block of fewer groups): 1 or 0 as for them. A kernel that
    merges no groups scores 0."""
    gm = kernel.groups_to_merge
    if gm == 1:
        return 0
    cg, kg = problem.C // problem.G, problem.K // problem.G
    if direction is Direction.BWD_WEIGHT:
        return int(gm * kg == kernel.tile_m)
    if dtype not in hopper.DTYPES:
        direct = cg == kg and cg in _FP32_DIRECT_WIDTHS and cg * gm == kernel.tile_k == kernel.tile_n
        return int(direct)
    along_k, along_n = (cg, kg) if direction is Direction.FWD else (kg, cg)
    for factor in _PAIRING_FACTORS:
        if (
            along_k * factor * gm == kernel.tile_k
            and along_n * factor * gm == kernel.tile_n
            and (factor == 1 or problem.G % (factor * gm) == 0)
        ):
            return factor
    return 0


def bwd_data_zero_fraction(problem: ConvProblem, direction: Direction) -> float:
    """bwd_data: the fraction of input pixels that no filter tap reaches at strides above 1 (their gradient
    is zero, yet the implicit GEMM computes their rows; HOPPER_KERNELS.md F2), ignoring the edges. Along one
    dimension the taps reach min(Y, s / gcd(dilation, s)) of every s positions. 0 in the other directions."""
    if direction is not Direction.BWD_DATA:
        return 0.0
    reached = 1.0
    for filt, stride, dilation in (
        (problem.Z, problem.stride_d, problem.dilation_d),
        (problem.Y, problem.stride_h, problem.dilation_h),
        (problem.X, problem.stride_w, problem.dilation_w),
    ):
        reached *= float(min(filt, stride // math.gcd(dilation, stride))) / float(stride)
    return 1.0 - reached


def depthwise_waste(
    problem: ConvProblem, direction: Direction, kernel: KernelTraits
) -> tuple[float, float, float]:
    """A depthwise kernel's share of idle tile rows, tile columns and slice channels on `problem`: its tiles
    cover the tensor its blocks own (fwd and bwd_weight the output, bwd_data the input), one H x W plane at
    a time, in tile_h x tile_w pixels, and the channels in slices of nbatch x out_vec (a 56-wide layer in
    16-wide tiles: 1 - 56 / 64 along W). A dilated axis runs as residues (docs/depthwise.md, "Dilation"):
    every d / s-th output or d-th input, whose largest residue the tiles cover. (0, 0, 0) for the implicit
    GEMM."""
    if not kernel.depthwise:
        return 0.0, 0.0, 0.0
    _, ho, wo = problem.output_spatial
    owns_input = direction is Direction.BWD_DATA
    height, width = (problem.Hi, problem.Wi) if owns_input else (ho, wo)

    def residue(size: int, stride: int, dilation: int) -> int:
        if dilation == 1:
            return size
        return _ceil_div(size, dilation if owns_input else max(1, dilation // stride))

    def waste(size: int, step: int) -> float:
        return 1.0 - float(size) / float(_ceil_div(size, step) * step)

    return (
        waste(residue(height, problem.stride_h, problem.dilation_h), kernel.dw_tile_h),
        waste(residue(width, problem.stride_w, problem.dilation_w), kernel.dw_tile_w),
        waste(problem.C, kernel.dw_slice_channels),
    )


def feature_vector(
    problem: ConvProblem,
    direction: Direction | str,
    dtype: DataType | str,
    kernel: KernelTraits,
    split_k: int = 1,
) -> list[float]:
    """The features in ``FEATURE_NAMES`` order."""
    d, t = Direction(direction), DataType(dtype)
    do, ho, wo = problem.output_spatial
    cg, kg = problem.C // problem.G, problem.K // problem.G
    m, n, k = problem.gemm(d)
    flops = problem.flops
    elem = t.size_bytes
    # The dimension the A and C vectors run along (ck_conventions §1, "Vector dims").
    a_dim, c_dim = (cg, kg) if d is Direction.FWD else (kg, cg)
    tiles_m, tiles_n = _ceil_div(m, kernel.tile_m), _ceil_div(n, kernel.tile_n)
    k_iterations = _ceil_div(k, kernel.tile_k)
    merged_groups = _ceil_div(problem.G, kernel.groups_to_merge)
    blocks = tiles_m * tiles_n * merged_groups * split_k
    waves = blocks / SM_COUNT
    wave_efficiency = blocks / (_ceil_div(blocks, SM_COUNT) * SM_COUNT)
    waste_m = 1.0 - float(m) / float(tiles_m * kernel.tile_m)
    waste_n = 1.0 - float(n) / float(tiles_n * kernel.tile_n)
    waste_k = 1.0 - float(k) / float(k_iterations * kernel.tile_k)
    smem = (kernel.tile_m + kernel.tile_n) * kernel.tile_k * elem * (2 if kernel.double_smem_buffer else 1)
    values: list[float] = [
        problem.N,
        problem.C,
        problem.K,
        problem.G,
        cg,
        kg,
        problem.Di,
        problem.Hi,
        problem.Wi,
        problem.Z,
        problem.Y,
        problem.X,
        problem.stride_h,
        problem.stride_w,
        problem.stride_d,
        problem.pad_h,
        problem.pad_w,
        problem.pad_d,
        problem.dilation_h,
        problem.dilation_w,
        do,
        ho,
        wo,
        problem.ndim_spatial,
        problem.filter_volume == 1,
        (problem.Y, problem.X) == (3, 3) and problem.Z == 1,
        cg == 1 and kg == 1,
        elem,
        t is DataType.FP32,
        _log2(problem.N),
        _log2(cg),
        _log2(kg),
        _log2(problem.G),
        _log2(problem.input_volume),
        _log2(problem.output_volume),
        _log2(flops),
        float(flops) / float(problem.bytes(t)),
        m,
        n,
        k,
        _log2(m),
        _log2(n),
        _log2(k),
        kernel.tile_m,
        kernel.tile_n,
        kernel.tile_k,
        kernel.wave_m,
        kernel.wave_n,
        kernel.wave_k,
        kernel.warp_tile_m,
        kernel.warp_tile_n,
        kernel.warp_tile_k,
        kernel.vector_a,
        kernel.vector_b,
        kernel.vector_c,
        kernel.block_threads,
        kernel.pipeline,
        kernel.interwave,
        kernel.double_smem_buffer,
        kernel.groups_to_merge,
        kernel.two_stage,
        kernel.specialization,
        kernel.explicit_gemm,
        kernel.streamk,
        kernel.streamk_persistent,
        kernel.split_image,
        kernel.depthwise,
        kernel.tile_m * kernel.tile_n,
        smem,
        split_k,
        tiles_m,
        tiles_n,
        k_iterations,
        _log2(blocks),
        waves,
        wave_efficiency,
        waste_m,
        waste_n,
        waste_k,
        (1.0 - waste_m) * (1.0 - waste_n) * (1.0 - waste_k),
        a_dim % kernel.vector_a == 0,
        c_dim % kernel.vector_c == 0,
        _ceil_div(k_iterations, split_k),
        kernel.tile_m * kernel.tile_n / kernel.block_threads,
        merged_group_pairing(problem, d, t, kernel),
        bwd_data_zero_fraction(problem, d),
        kernel.dw_tile_h,
        kernel.dw_tile_w,
        *depthwise_waste(problem, d, kernel),
    ]
    return [float(v) for v in values]
