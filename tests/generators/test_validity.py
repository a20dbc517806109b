"""Every validity rule: one passing and one failing configuration, the broken rule id checked."""

from __future__ import annotations

import pytest
from gen_factories import make_config, make_depthwise

from generators.arch import get_arch
from generators.validity import (
    DEPTHWISE_RULES,
    IMPLICIT_GEMM_RULES,
    accumulators_per_thread,
    bwd_data_dy_hi,
    bwd_data_dy_lo,
    depthwise_smem_bytes,
    rule_ids,
    smem_bytes,
    validate,
    violations,
)

BWD_WEIGHT = dict(direction="bwd_weight")
# (rule id, changes that pass, changes that break exactly that rule first)
CASES = [
    ("wave_count", dict(wave_m=4, wave_n=1, tile_m=128), dict(wave_m=3, tile_m=96)),
    ("wave_count", dict(wave_m=4, wave_n=4, tile_m=128, tile_n=128, warp_tile_m=32, warp_tile_n=32),
     dict(wave_m=4, wave_n=4, wave_k=2, tile_k=32, warp_tile_k=16)),
    ("tile_divisible", dict(tile_m=64, wave_m=2), dict(tile_m=96, wave_m=2)),
    ("tile_divisible", dict(tile_k=32, wave_k=2), dict(tile_k=16, wave_k=2)),
    ("warp_tile_buildable", dict(warp_tile_k=8), dict(warp_tile_k=4)),
    ("warp_tile_buildable", dict(dtype="fp32", warp_tile_k=4, vector_size_b=4, vector_size_c=4),
     dict(dtype="fp32", warp_tile_k=2, vector_size_b=4, vector_size_c=4)),
    ("warp_tile_buildable", dict(warp_tile_m=16, warp_tile_n=16), dict(warp_tile_m=16, warp_tile_n=8)),
    ("vector_width", dict(vector_size_a=8), dict(vector_size_a=6)),
    # 32-byte vectors (two 16-byte accesses) are legal, 64-byte ones are not
    ("vector_width", dict(vector_size_a=16), dict(vector_size_a=32)),
    (
        "vector_width",
        dict(dtype="fp32", vector_size_b=8, vector_size_c=8),
        dict(dtype="fp32", vector_size_b=16),
    ),
    # Never the first rule broken (tile multiples of the MMA atoms are multiples of every legal vector), kept
    # as the statement of which dimension each vector runs along: checked through ``violations``.
    ("vector_divides_tile", dict(direction="bwd_weight", tile_m=64, wave_m=2, vector_size_a=8),
     dict(direction="bwd_weight", tile_m=12, vector_size_a=8)),
    ("compv5_forward_only", dict(pipeline="compv5"), dict(pipeline="compv5", **BWD_WEIGHT)),
    ("interwave_pipeline", dict(scheduler="interwave", pipeline="mem"),
     dict(scheduler="interwave", pipeline="compv3")),
    ("compv4_double_smem_buffer", dict(pipeline="compv4", double_smem_buffer=True), dict(pipeline="compv4")),
    ("two_stage_direction", dict(two_stage=True, **BWD_WEIGHT), dict(two_stage=True)),
    ("streamk_direction", dict(streamk_enabled=True, **BWD_WEIGHT), dict(streamk_enabled=True)),
    ("streamk_fields", dict(streamk_enabled=True, streamk_persistent=True, **BWD_WEIGHT),
     dict(streamk_persistent=True, **BWD_WEIGHT)),
    ("streamk_fp32_async", dict(streamk_enabled=True, dtype="fp32", vector_size_b=4, vector_size_c=4,
                                warp_tile_k=8, **BWD_WEIGHT),
     dict(streamk_enabled=True, dtype="fp32", vector_size_b=4, vector_size_c=4, warp_tile_k=8,
          pipeline="basic_async_v1", **BWD_WEIGHT)),
    ("explicit_gemm", dict(explicit_gemm=True, specialization="filter1x1_stride1_pad0"),
     dict(explicit_gemm=True)),
    ("explicit_gemm", dict(explicit_gemm=True, specialization="filter1x1_stride1_pad0", **BWD_WEIGHT),
     dict(explicit_gemm=True, specialization="filter1x1_stride1_pad0", direction="bwd_data")),
    ("backward_specialization", dict(specialization="filter3x3"),
     dict(specialization="filter3x3", direction="bwd_data")),
    ("split_image_merged_groups", dict(split_image=True), dict(split_image=True, num_groups_to_merge=2)),
    ("merged_groups", dict(num_groups_to_merge=32), dict(num_groups_to_merge=3)),
    ("num_wave_groups", dict(num_wave_groups=1), dict(num_wave_groups=3)),
    # ping-pong: two consumer warpgroups (4 waves) on the Hopper path; 2 waves are one warpgroup
    ("num_wave_groups", dict(num_wave_groups=2), dict(num_wave_groups=2, wave_n=1)),
    # ... and more than 128 accumulators on the one warpgroup that owns a tile
    ("num_wave_groups", dict(num_wave_groups=2), dict(num_wave_groups=2, tile_n=256)),
    ("shared_memory", dict(tile_k=64, pipeline="mem"),
     dict(tile_k=128, tile_m=256, wave_m=4, pipeline="mem")),
    ("register_budget", dict(tile_m=256, tile_n=128, wave_m=4), dict(tile_m=256, tile_n=256)),
    ("block_per_cu", dict(block_per_cu=2, tile_k=64, pipeline="compv3"),
     dict(block_per_cu=2, tile_k=64, pipeline="mem")),
    # 256 threads: 8 blocks fill the SM's 2048 threads, 9 do not fit.
    ("block_per_cu", dict(block_per_cu=8, tile_m=64, tile_n=64), dict(block_per_cu=9, tile_m=64, tile_n=64)),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "passing", "failing"), CASES, ids=[c[0] for c in CASES])
def test_rule(rule, passing, failing):
    good = validate(make_config(**passing))
    assert good.ok, good
    failing_config = make_config(**failing)
    broken = {v.rule: v.message for v in violations(failing_config)}
    assert broken.get(rule), broken
    if rule != "vector_divides_tile":
        assert validate(failing_config).rule == rule


def test_every_implicit_gemm_rule_is_covered():
    assert {r.id for r in IMPLICIT_GEMM_RULES} == {c[0] for c in CASES}


def test_rules_cite_a_source():
    for rule in (*IMPLICIT_GEMM_RULES, *DEPTHWISE_RULES):
        assert "Source:" in rule.doc, rule.id
    assert len(set(rule_ids())) == len(rule_ids())


def test_ping_pong_only_where_the_hopper_path_builds_it():
    ping_pong = make_config(num_wave_groups=2)
    assert validate(ping_pong, "sm_90a").ok
    broken = validate(ping_pong, "sm_80")
    assert broken.rule == "num_wave_groups"
    assert "sm_90a" in broken.message and "sm_80" in broken.message, broken.message
    # fp32 has no Hopper path (TF32 wgmma reads K-major operands only), so no ping-pong either
    fp32 = make_config(num_wave_groups=2, dtype="fp32", vector_size_a=4, vector_size_b=4, vector_size_c=4)
    assert validate(fp32, "sm_90a").rule == "num_wave_groups"


def test_shared_memory_formula_and_arch_limit():
    # 4 stages x (256 + 128) x 64 x 2 bytes = 196608: fits sm_90a (232448) but not sm_80 (166912).
    config = make_config(tile_m=256, tile_n=128, tile_k=64, wave_m=4, pipeline="mem")
    assert smem_bytes(config, get_arch("sm_90a")) == 4 * (256 + 128) * 64 * 2
    assert validate(config, "sm_90a").ok
    assert validate(config, "sm_80").rule == "shared_memory"
    # cshuffle epilogue: 128 rows x (128 + 4 pad) x 4 bytes beats 1 stage x 256 x 16 x 2 bytes.
    small_k = make_config(tile_k=16, pipeline="compv1")
    assert smem_bytes(small_k, get_arch()) == 128 * 132 * 4
    assert smem_bytes(small_k.replace(double_smem_buffer=True), get_arch()) == 128 * 132 * 4
    # The default epilogue stores from registers: only the stages, unless wave_k > 1 K groups are reduced
    # through the same accumulator tile.
    assert smem_bytes(small_k.replace(epilogue="default"), get_arch()) == 256 * 16 * 2
    split_k = make_config(wave_k=2, epilogue="default")
    assert smem_bytes(split_k, get_arch()) == 128 * 132 * 4
    assert smem_bytes(make_config(tile_k=128, pipeline="compv1", double_smem_buffer=True), get_arch()) == (
        2 * 256 * 128 * 2
    )


def test_bwd_weight_fold_slots_in_shared_memory():
    # 128 accumulators per thread: the outer fold accumulator (another 128) goes to shared memory, one fp32
    # slot per accumulator and thread after the 2 x 256 x 32 x 2 byte stages.
    fold = make_config(direction="bwd_weight", wave_n=1)
    assert accumulators_per_thread(fold) == 128
    assert smem_bytes(fold, get_arch()) == 2 * 256 * 32 * 2 + 128 * 128 * 4
    assert smem_bytes(fold.replace(direction="fwd"), get_arch()) == 128 * 132 * 4
    # 3 x 256 x 64 x 4 = 196608 bytes of stages leave no room for 65536 bytes of slots: registers then.
    fp32 = fold.replace(
        dtype="fp32", tile_k=64, warp_tile_k=8, pipeline="compv6", vector_size_b=4, vector_size_c=4
    )
    assert smem_bytes(fp32, get_arch()) == 3 * 256 * 64 * 4


def test_wave_k_groups_each_hold_the_whole_tile():
    # 128 threads in two K groups of 64: each group holds all 128 x 128 accumulators, 256 per thread.
    config = make_config(wave_m=1, wave_n=1, wave_k=2)
    assert accumulators_per_thread(config) == 256
    result = validate(config)
    assert result.rule == "register_budget"
    assert "(128x128 tile on 64 threads per K group)" in result.message


def test_depthwise_shared_memory_formula():
    # fp16 8x8 f3 s1 sub 2x2, nbatch 8 x out_vec 2 = 16 channels: the 10 x 10 halo as sub_w x stride_w = 2
    # column residues of 10 rows x 5 positions x 16 x 2 = 1600 bytes, each padded to 1664 (a TMA box's
    # 128-byte alignment), then 9 taps x 16 x 4 weights and two 8-byte barriers.
    assert depthwise_smem_bytes(make_depthwise()) == 2 * 1664 + 9 * 16 * 4 + 16
    # f5 s2 sub_w 4: 19 x 19 halo, 8 residues (sub_w x stride_w) of 19 rows x 3 positions x 32 channels x 2 =
    # 3648 bytes, padded to 3712.
    strided = make_depthwise(
        filter=5, stride_h=2, stride_w=2, pad_h=2, pad_w=2, sub_w=4, in_vec=4, out_vec=4, nbatch=8
    )
    assert depthwise_smem_bytes(strided) == 8 * 3712 + 25 * 32 * 4 + 16
    # One channel: each 100-byte residue is padded to 128, the 36 weight bytes to 48.
    single = make_depthwise(nbatch=1, in_vec=1, out_vec=1)
    assert depthwise_smem_bytes(single) == 2 * 128 + 48 + 16


def test_depthwise_shared_memory_3d():
    """3D (cubic filter): fwd and bwd_data stage ``filter`` halo slices and F x F x F fp32 weights. A slice
    is laid out as in 2D (column residues, each a 128-byte aligned TMA box) where a vector is 16 bytes, else
    16-byte aligned with its rows' residues side by side (vec-2 and vec-4 16-bit shapes: channel counts off a
    multiple of 8 have no TMA pitch); bwd_weight keeps its 2D shared memory (one depth tap per block). Hand
    counts."""
    # fwd fp16 8x8 f3 s1, 16 channels: 3 slices of a 10 x 10 x 16 x 2-byte halo, 27 taps x 16 x 4, barriers.
    assert depthwise_smem_bytes(make_depthwise(ndim_spatial=3)) == 3 * 3200 + 27 * 64 + 16
    # One channel: each 200-byte slice is padded to 208 (3 x 208 = 624, not align16(600) = 608); 108 weight
    # bytes to 112.
    single = make_depthwise(ndim_spatial=3, nbatch=1, in_vec=1, out_vec=1)
    assert depthwise_smem_bytes(single) == 624 + 112 + 16
    # fwd fp32 16x16 f3 s2, nbatch 4 x vec 4 (16-byte vectors): a 33 x 33 halo as 8 residues (sub_w x
    # stride_w) of 33 rows x 5 positions x 64 bytes = 10560, padded to 10624 (TMA), 84992 bytes a slice; 3
    # slices, 27 x 16 x 4 weights and the barriers = 256720 bytes, more than 227 KB. In 2D one slice.
    strided = make_depthwise(
        ndim_spatial=3, dtype="fp32", tile_h=16, tile_w=16, stride_h=2, stride_w=2,
        nbatch=4, sub_h=2, sub_w=4, in_vec=4, out_vec=4,
    )  # fmt: skip
    assert depthwise_smem_bytes(strided) == 3 * 8 * 10624 + 27 * 64 + 16 == 256720
    assert validate(strided).rule == "depthwise_shared_memory"
    assert validate(strided.replace(ndim_spatial=2)).ok  # one slice: 8 x 10624 + 9 x 64 + 16
    assert depthwise_smem_bytes(strided.replace(ndim_spatial=2)) == 8 * 10624 + 9 * 64 + 16
    # bwd_data fp16 8x16 f5 s2 p2, nbatch 4 x vec 8 = 32 channels, sub 2x4. A dX row i in [0, 8) reads the
    # dY rows (i + 2 - f) / 2 for the taps f < 5 with i + 2 - f even: from (0 + 2 - 4) / 2 = -1 to
    # (6 + 2 - 0) / 2 = 4, 6 rows; the 16 columns read -1 .. (14 + 2) / 2 = 8, 10 columns (a multiple of
    # sub_w / stride_w = 2). 5 slices of 6 x 10 x 32 x 2 = 3840 bytes, then 125 taps x 32 x 4 and the two
    # barriers. In 2D the halo is 2 residues of 6 rows x 5 positions x 64 bytes = 1920 (128-byte aligned).
    bwd_data = make_depthwise(
        direction="bwd_data", ndim_spatial=3, tile_h=8, tile_w=16, filter=5, stride_h=2, stride_w=2,
        pad_h=2, pad_w=2, nbatch=4, sub_h=2, sub_w=4, in_vec=8, out_vec=8,
    )  # fmt: skip
    assert depthwise_smem_bytes(bwd_data) == 5 * 3840 + 125 * 128 + 16 == 35216
    assert depthwise_smem_bytes(bwd_data.replace(ndim_spatial=2)) == 2 * 1920 + 25 * 128 + 16
    # bwd_weight fp16 8x8 f3 s1, 16 channels, 128 threads (4 warps): the X halo 10 x 10 x 16 x 2, the dY tile
    # 8 x 8 x 16 x 2, one 9 x 16 x 4 partial per warp and the barriers; in 2D the X halo as 2 residues of
    # 10 rows x 5 positions x 32 bytes = 1600, padded to 1664, the dY tile 2 residues of 8 x 4 x 32 = 1024.
    bwd_weight = make_depthwise(direction="bwd_weight", ndim_spatial=3)
    assert depthwise_smem_bytes(bwd_weight) == 3200 + 2048 + 4 * 576 + 16 == 7568
    assert depthwise_smem_bytes(bwd_weight.replace(ndim_spatial=2)) == 2 * 1664 + 2 * 1024 + 4 * 576 + 16


def test_register_budget_message_says_why():
    result = validate(make_config(tile_m=256, tile_n=256))
    assert "256 fp32 accumulators per thread" in result.message
    assert "legal upstream on AMD" in result.message


def test_violations_lists_every_broken_rule():
    config = make_config(pipeline="compv4", scheduler="interwave", tile_m=256, tile_n=256)
    assert [v.rule for v in violations(config)] == [
        "interwave_pipeline",
        "compv4_double_smem_buffer",
        "register_budget",
        "shared_memory",
    ]


def test_unknown_arch():
    with pytest.raises(ValueError, match="accepted: sm_90a, sm_80"):
        validate(make_config(), "sm_70")


DEPTHWISE_CASES = [
    ("depthwise_vector_width", dict(in_vec=8, out_vec=8, dtype="fp32"), dict(in_vec=16, dtype="fp32")),
    ("depthwise_vector_width", dict(in_vec=16, out_vec=16), dict(in_vec=8, out_vec=32)),
    (
        "depthwise_vector_divides_channels",
        dict(nbatch=1, out_vec=8, in_vec=8),
        dict(nbatch=1, out_vec=4, in_vec=8),
    ),
    (
        "depthwise_vector_divides_channels",
        dict(nbatch=2, out_vec=2, in_vec=4),
        dict(nbatch=1, out_vec=2, in_vec=4),
    ),
    ("depthwise_sub_tile", dict(sub_h=4), dict(sub_h=3)),
    ("depthwise_padding", dict(pad_h=2), dict(pad_h=3)),
    ("depthwise_shared_memory", dict(tile_h=64, tile_w=64, nbatch=4), dict(tile_h=128, tile_w=128, nbatch=8)),
    (
        "depthwise_bwd_data_phases",
        dict(direction="bwd_data", stride_h=2, stride_w=2, sub_h=2, sub_w=4),
        dict(direction="bwd_data", stride_h=2, stride_w=2, sub_h=2, sub_w=1),
    ),
    (
        "depthwise_bwd_weight_lanes",
        dict(direction="bwd_weight", nbatch=4),
        dict(direction="bwd_weight", nbatch=6),
    ),
    (
        "depthwise_bwd_weight_registers",
        dict(direction="bwd_weight", filter=7, pad_h=3, pad_w=3, nbatch=2, in_vec=4, out_vec=4),
        dict(
            direction="bwd_weight",
            filter=7,
            pad_h=3,
            pad_w=3,
            nbatch=8,
            in_vec=4,
            out_vec=4,
            tile_h=16,
            tile_w=16,
        ),
    ),
    (
        "depthwise_shared_memory",
        dict(direction="bwd_weight", tile_h=32, tile_w=32, nbatch=2, sub_h=8, sub_w=8, in_vec=8, out_vec=8),
        dict(direction="bwd_weight", tile_h=64, tile_w=64, nbatch=2, sub_h=8, sub_w=8, in_vec=8, out_vec=8),
    ),
]


@pytest.mark.parametrize(("rule", "passing", "failing"), DEPTHWISE_CASES, ids=[c[0] for c in DEPTHWISE_CASES])
def test_depthwise_rule(rule, passing, failing):
    assert validate(make_depthwise(**passing)).ok
    bad = validate(make_depthwise(**failing))
    assert bad.rule == rule, bad


def test_every_depthwise_rule_is_covered():
    assert {r.id for r in DEPTHWISE_RULES} == {c[0] for c in DEPTHWISE_CASES}


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("filter_size", [1, 2, 3, 5, 7])
def test_bwd_data_dy_extent_is_exactly_the_taps_reach(stride, filter_size):
    """The dY rows a bwd_data tile stages (``bwd_data_dy_lo``/``_hi``, mirrored by the kernel) are exactly
    those some dX row of the tile reads through a tap: (i + pad - f) / stride for the taps f that divide."""
    for pad in range(filter_size):
        for extent in (stride, 2 * stride, 8 * stride):
            reached = [
                (i + pad - f) // stride
                for i in range(extent)
                for f in range(filter_size)
                if (i + pad - f) % stride == 0
            ]
            assert bwd_data_dy_lo(filter_size, stride, pad) == min(reached), (pad, extent)
            assert bwd_data_dy_hi(extent, filter_size, stride, pad) == max(reached), (pad, extent)
