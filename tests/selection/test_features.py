"""Kernel traits from names and the feature vector, against values worked out by hand."""

from __future__ import annotations

import pytest

from generators.problem import ConvProblem
from heuristics.features import FEATURE_NAMES, SM_COUNT, feature_vector
from heuristics.kernel_traits import KernelNameError, kernel_traits

FWD_128 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16"


def features(
    problem: ConvProblem, direction: str, dtype: str, kernel: str, split_k: int = 1
) -> dict[str, float]:
    return dict(
        zip(
            FEATURE_NAMES,
            feature_vector(problem, direction, dtype, kernel_traits(kernel), split_k),
            strict=True,
        )
    )


def test_traits_of_a_name_with_every_suffix():
    t = kernel_traits(
        "grouped_conv_bwd_weight_bf16_nhwgc_2d_mem_cshuffle_interwave_64x32x64_2x1x2_16x16x32_vec8_8_4_gm4_2stage"
    )
    assert (t.tile_m, t.tile_n, t.tile_k, t.wave_m, t.wave_n, t.wave_k) == (64, 32, 64, 2, 1, 2)
    assert (t.vector_a, t.vector_b, t.vector_c, t.groups_to_merge) == (8, 8, 4, 4)
    assert t.interwave and t.two_stage and not t.double_smem_buffer
    assert t.pipeline == 2  # mem: third in the Pipeline enum (basic_v1, basic_v2, mem, ...)
    assert t.block_threads == 64 * 4


def test_traits_defaults_and_specialization():
    t = kernel_traits(
        "grouped_conv_fwd_fp16_nhwgc_2d_compv4_cshuffle_intrawave_128x128x32_2x2x1_32x32x16_dsb_filter3x3"
    )
    assert (t.vector_a, t.vector_b, t.vector_c) == (4, 8, 8)
    assert t.double_smem_buffer and t.pipeline == 4 and t.specialization == 3


def test_depthwise_traits():
    t = kernel_traits("grouped_conv_fwd_depthwise_fp16_ngchw_2d_8x8_f3_s1x1_p1x1_nb8_sub2x2_vec2_2")
    assert t.depthwise and (t.tile_m, t.tile_n, t.tile_k) == (8 * 8 * 8, 1, 9)
    # 3D: the fields describe the H x W plane, so the traits are the 2D twin's (the depth is the problem's).
    assert kernel_traits("grouped_conv_fwd_depthwise_fp16_ngchw_3d_8x8_f3_s1x1_p1x1_nb8_sub2x2_vec2_2") == t


@pytest.mark.parametrize("name", ["grouped_conv_fwd_fp16", "not_a_kernel", FWD_128 + "_vec4_8_8"])
def test_bad_names_are_refused(name):
    with pytest.raises(KernelNameError):
        kernel_traits(name)


def test_forward_features_by_hand():
    p = ConvProblem(N=8, C=256, K=256, Hi=56, Wi=56, Y=3, X=3, pad_h=1, pad_w=1)
    f = features(p, "fwd", "fp16", FWD_128)
    # GEMM M = 8*56*56, N = 256, K = 256*9; tiles 196 x 2, 72 K steps; 392 blocks over 132 SMs = 3 waves.
    assert (f["gemm_m"], f["gemm_n"], f["gemm_k"]) == (25088, 256, 2304)
    assert (f["tiles_m"], f["tiles_n"], f["k_iterations"]) == (196, 2, 72)
    assert f["waves"] == pytest.approx(392 / 132) and f["wave_efficiency"] == pytest.approx(392 / 396)
    assert (f["waste_m"], f["waste_n"], f["waste_k"], f["tile_utilisation"]) == (0, 0, 0, 1)
    assert f["smem_bytes"] == (128 + 128) * 32 * 2
    assert f["accumulators_per_thread"] == 128 * 128 / 256
    assert f["is_3x3"] == 1 and f["is_1x1"] == 0 and f["dtype_bytes"] == 2
    flops = 2 * 8 * 256 * 56 * 56 * 256 * 9
    bytes_ = 2 * (8 * 56 * 56 * 256 * 2 + 256 * 256 * 9)
    assert f["log2_flops"] == pytest.approx(34.7846348) and f["arithmetic_intensity"] == pytest.approx(
        flops / bytes_
    )


def test_backward_gemm_views_padding_and_split_k():
    p = ConvProblem(N=4, C=96, K=200, G=2, Hi=30, Wi=30, Y=3, X=3, stride_h=2, stride_w=2)  # Ho = Wo = 14
    name = "grouped_conv_bwd_weight_fp32_nhwgc_2d_compv3_cshuffle_intrawave_64x64x32_2x2x1_16x16x4_vec4_4_4"
    f = features(p, "bwd_weight", "fp32", name, split_k=4)
    # bwd_weight per group: M = K/G = 100, N = (C/G)*9 = 432, K = N*Ho*Wo = 784.
    assert (f["gemm_m"], f["gemm_n"], f["gemm_k"]) == (100, 432, 784)
    assert f["waste_m"] == pytest.approx(1 - 100 / 128) and f["waste_n"] == pytest.approx(1 - 432 / 448)
    assert f["k_iterations"] == 25 and f["k_iterations_per_split"] == 7
    assert f["log2_blocks"] == pytest.approx(__import__("math").log2(2 * 7 * 2 * 4))
    assert f["vector_a_fits"] == 1 and f["vector_c_fits"] == 1 and f["is_fp32"] == 1
    bwd_data = features(p, "bwd_data", "fp16", name.replace("bwd_weight_fp32", "bwd_data_fp16"))
    assert (bwd_data["gemm_m"], bwd_data["gemm_n"], bwd_data["gemm_k"]) == (4 * 30 * 30, 48, 900)
    assert SM_COUNT == 132


MERGED = "grouped_conv_{d}_fp16_nhwgc_2d_compv3_cshuffle_intrawave_{m}x{n}x{k}_{waves}_{warp}{gm}"


def test_merged_group_pairing_by_hand():
    def pairing(
        problem: ConvProblem, direction: str, n: int, k: int, gm: int, dtype: str = "fp16", tile_m: int = 128
    ) -> float:
        suffix = f"_gm{gm}" if gm > 1 else ""
        waves, warp = {128: ("2x2x1", "32x32x16"), 32: ("1x2x1", "32x32x16"), 16: ("1x2x1", "16x16x32")}[
            tile_m
        ]
        name = MERGED.format(d=direction, m=tile_m, n=n, k=k, waves=waves, warp=warp, gm=suffix)
        name = name.replace("fp16", dtype)
        return features(problem, direction, dtype, name)["merged_group_pairing"]

    cg32 = ConvProblem(N=4, C=256, K=256, G=8, Hi=14, Wi=14, Y=3, X=3, pad_h=1, pad_w=1)
    # C/G = K/G = 32 on a 64x64 (N x K) tile: two groups side by side fill it exactly (diagonal blocks).
    assert pairing(cg32, "fwd", 64, 64, 2) == 1
    # Four groups need a 128-wide tile: gathered block-diagonally on a 64-wide one.
    assert pairing(cg32, "fwd", 64, 64, 4) == 0
    # C/G = K/G = 8, G = 4 on a 32x32 tile merging two: each merged block pairs two groups (2 * 8 * 2 = 32).
    cg8 = ConvProblem(N=4, C=32, K=32, G=4, Hi=14, Wi=14, Y=3, X=3, pad_h=1, pad_w=1)
    assert pairing(cg8, "fwd", 32, 32, 2) == 2
    # bwd_data swaps the roles: GEMM K runs over K/G, N over C/G.
    skew = ConvProblem(N=4, C=128, K=256, G=8, Hi=14, Wi=14, Y=3, X=3, pad_h=1, pad_w=1)  # C/G 16, K/G 32
    assert pairing(skew, "bwd_data", 32, 64, 2) == 1
    assert pairing(skew, "fwd", 32, 64, 2) == 0
    # No merged groups: 0. fp32 (no Hopper path): 1 only where the direct kernel takes the groups (C/G = K/G
    # of 2, 4, 8, 16 or 32 filling the tile), never paired.
    assert pairing(cg32, "fwd", 64, 64, 1) == 0
    assert pairing(cg32, "fwd", 64, 64, 2, dtype="fp32") == 1
    assert pairing(cg32, "fwd", 64, 64, 4, dtype="fp32") == 0
    assert pairing(cg8, "fwd", 32, 32, 4, dtype="fp32") == 1
    assert pairing(cg8, "bwd_data", 32, 32, 4, dtype="fp32") == 1
    assert pairing(cg8, "fwd", 32, 32, 2, dtype="fp32") == 0
    assert pairing(skew, "bwd_data", 32, 64, 2, dtype="fp32") == 0
    # bwd_weight: 1 where gm x K/G fills tile_m (16 rows: two groups of K/G 8, not four; four of K/G 4).
    assert pairing(cg8, "bwd_weight", 64, 64, 2, tile_m=16) == 1
    assert pairing(cg8, "bwd_weight", 64, 64, 4, tile_m=16) == 0
    cg4 = ConvProblem(N=4, C=32, K=32, G=8, Hi=14, Wi=14, Y=3, X=3, pad_h=1, pad_w=1)
    assert pairing(cg4, "bwd_weight", 64, 64, 4, tile_m=16) == 1
    assert pairing(cg4, "bwd_weight", 64, 64, 8, tile_m=32) == 1
    assert pairing(cg32, "bwd_weight", 64, 64, 2, tile_m=16) == 0
    # gm not dividing G (G = 13): only the direct kernels run it, their last block holding 5 groups; the pairs
    # of the diagonal mode need 2 x gm to divide G.
    odd = ConvProblem(N=4, C=104, K=104, G=13, Hi=14, Wi=14, Y=3, X=3, pad_h=1, pad_w=1)
    assert pairing(odd, "fwd", 64, 64, 8) == 1
    assert pairing(odd, "bwd_data", 64, 64, 8) == 1
    assert pairing(odd, "fwd", 32, 32, 2) == 0
    assert pairing(odd, "bwd_weight", 64, 64, 4, tile_m=32) == 1
    assert pairing(odd, "bwd_weight", 64, 64, 8, tile_m=32) == 0


@pytest.mark.parametrize(
    ("filt", "stride", "dilation", "zero"),
    [(1, 2, 1, 0.75), (3, 2, 1, 0.0), (3, 2, 2, 0.75), (1, 1, 1, 0.0), (2, 3, 1, 1 - (2 / 3) ** 2)],
)
def test_bwd_data_zero_fraction_by_hand(filt, stride, dilation, zero):
    p = ConvProblem(
        N=2, C=64, K=64, Hi=24, Wi=24, Y=filt, X=filt,
        stride_h=stride, stride_w=stride, dilation_h=dilation, dilation_w=dilation,
    )  # fmt: skip
    name = FWD_128.replace("fwd", "bwd_data")
    assert features(p, "bwd_data", "fp16", name)["bwd_data_zero_fraction"] == pytest.approx(zero)
    assert features(p, "fwd", "fp16", FWD_128)["bwd_data_zero_fraction"] == 0


def _depthwise_name(direction: str, shape: str, stride: int) -> str:
    return f"grouped_conv_{direction}_depthwise_fp16_ngchw_2d_{shape}_f3_s{stride}x{stride}_p1x1_{{}}_vec8_8"


@pytest.mark.parametrize(
    ("direction", "shape", "sub", "stride", "waste"),
    [
        # MobileNetV2 C = 144 at 56^2: 16-wide tiles leave 8 of 64 columns idle, 32-channel slices 16 of 160.
        ("fwd", "8x16", "nb4_sub1x4", 1, (0.0, 1 - 56 / 64, 1 - 144 / 160)),
        ("fwd", "8x28", "nb4_sub1x4", 1, (0.0, 0.0, 1 - 144 / 160)),
        # Stride 2: the forward tiles cover the 28^2 output; bwd_data's the 56^2 input (dX), bwd_weight's dY.
        ("fwd", "8x16", "nb4_sub1x4", 2, (1 - 28 / 32, 1 - 28 / 32, 1 - 144 / 160)),
        ("fwd", "7x28", "nb4_sub1x4", 2, (0.0, 0.0, 1 - 144 / 160)),
        ("bwd_data", "16x32", "nb4_sub2x4", 2, (1 - 56 / 64, 1 - 56 / 64, 1 - 144 / 160)),
        ("bwd_weight", "16x28", "nb2_sub2x4", 2, (1 - 28 / 32, 0.0, 0.0)),
    ],
)
def test_depthwise_waste_by_hand(direction, shape, sub, stride, waste):
    p = ConvProblem(N=32, C=144, K=144, G=144, Hi=56, Wi=56, Y=3, X=3, stride_h=stride, stride_w=stride,
                    pad_h=1, pad_w=1)  # fmt: skip
    f = features(p, direction, "fp16", _depthwise_name(direction, shape, stride).format(sub))
    tile_h, tile_w = (int(v) for v in shape.split("x"))
    assert (f["dw_tile_h"], f["dw_tile_w"]) == (tile_h, tile_w)
    assert (f["dw_waste_h"], f["dw_waste_w"], f["dw_slice_waste"]) == pytest.approx(waste)


def test_depthwise_waste_is_zero_for_the_implicit_gemm():
    p = ConvProblem(N=8, C=144, K=144, Hi=56, Wi=56, Y=3, X=3, pad_h=1, pad_w=1)
    f = features(p, "fwd", "fp16", FWD_128)
    assert [f[n] for n in ("dw_tile_h", "dw_tile_w", "dw_waste_h", "dw_waste_w", "dw_slice_waste")] == [0] * 5


def test_depthwise_waste_of_a_dilated_layer_is_its_residues():
    """Dilation d runs as residues (every d-th output at stride 1): DeepLab's 33^2 at d = 2 as planes of at
    most 17 x 17, so 8x16 tiles leave 1 - 17 / 24 of the rows and 1 - 17 / 32 of the columns idle."""
    p = ConvProblem(N=8, C=576, K=576, G=576, Hi=33, Wi=33, Y=3, X=3, pad_h=2, pad_w=2, dilation_h=2,
                    dilation_w=2)  # fmt: skip
    for direction in ("fwd", "bwd_data", "bwd_weight"):
        f = features(p, direction, "fp16", _depthwise_name(direction, "8x16", 1).format("nb4_sub2x4"))
        assert (f["dw_waste_h"], f["dw_waste_w"], f["dw_slice_waste"]) == pytest.approx(
            (1 - 17 / 24, 1 - 17 / 32, 0)
        )
