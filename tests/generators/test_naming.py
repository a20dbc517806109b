"""Kernel names: ck_conventions §2 examples, every optional fragment, and build -> parse round trips."""

from __future__ import annotations

import itertools

import pytest
from gen_factories import make_config, make_depthwise

from generators.config import KernelConfig
from generators.naming import KernelNameError, parse_kernel_name
from generators.validity import validate
from rulesets import RulesetRequest, enumerate_ruleset

CK_EXAMPLE = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16"
CK_DEPTHWISE_EXAMPLE = "grouped_conv_fwd_depthwise_fp16_ngchw_2d_8x8_f3_s1x1_p1x1_nb8_sub2x2_vec2_2"


def test_ck_examples():
    assert make_config().name == CK_EXAMPLE
    assert make_depthwise().name == CK_DEPTHWISE_EXAMPLE
    assert parse_kernel_name(CK_EXAMPLE) == make_config()
    assert parse_kernel_name(CK_DEPTHWISE_EXAMPLE) == make_depthwise()


@pytest.mark.parametrize("direction", ["bwd_data", "bwd_weight"])
def test_depthwise_backward_names_round_trip(direction):
    """The backward directions spell CK's depthwise name with their own direction token, and parse back to
    exactly their configuration (never the forward one of the same fields)."""
    expected = CK_DEPTHWISE_EXAMPLE.replace("grouped_conv_fwd_", f"grouped_conv_{direction}_")
    config = make_depthwise(direction=direction, filter=5, pad_h=2, pad_w=2, stride_h=2, stride_w=2)
    assert make_depthwise(direction=direction).name == expected
    assert parse_kernel_name(expected).direction.value == direction
    assert parse_kernel_name(config.name) == config
    assert parse_kernel_name(config.name) != config.replace(direction="fwd")


@pytest.mark.parametrize("direction", ["fwd", "bwd_data", "bwd_weight"])
def test_depthwise_3d_names_round_trip(direction):
    """3D depthwise names carry ``_3d_`` in the ``{N}d`` place of the grammar and parse back to exactly their
    configuration: never the 2D one of the same fields, never another direction's."""
    expected = CK_DEPTHWISE_EXAMPLE.replace("grouped_conv_fwd_", f"grouped_conv_{direction}_").replace(
        "_ngchw_2d_", "_ngchw_3d_"
    )
    assert make_depthwise(direction=direction, ndim_spatial=3).name == expected
    config = make_depthwise(
        direction=direction, ndim_spatial=3, dtype="bf16", filter=7, pad_h=3, pad_w=3, stride_h=2, stride_w=2
    )
    assert config.name == (
        f"grouped_conv_{direction}_depthwise_bf16_ngchw_3d_8x8_f7_s2x2_p3x3_nb8_sub2x2_vec2_2"
    )
    parsed = parse_kernel_name(config.name)
    assert parsed == config and parsed.ndim_spatial == 3
    assert parsed != config.replace(ndim_spatial=2)
    assert parse_kernel_name(config.replace(ndim_spatial=2).name).ndim_spatial == 2


def test_depthwise_ndim_defaults_to_2():
    """A configuration built without ``ndim_spatial`` (the legacy lists, every 2D rule set) is 2D and names
    itself as before."""
    assert make_depthwise().ndim_spatial == 2
    assert make_depthwise() == make_depthwise(ndim_spatial=2)
    assert "_ngchw_2d_" in make_depthwise().name


@pytest.mark.parametrize(
    ("changes", "suffix"),
    [
        (dict(vector_size_a=8, vector_size_b=8, vector_size_c=8), "_vec8_8_8"),
        (dict(num_wave_groups=2), "_wg2"),
        (dict(num_groups_to_merge=8), "_gm8"),
        (dict(double_smem_buffer=True), "_dsb"),
        (dict(specialization="filter1x1_stride1_pad0"), "_filter1x1_stride1_pad0"),
        (dict(specialization="filter3x3"), "_filter3x3"),
        (dict(split_image=True), "_large_tensor"),
        (dict(block_per_cu=2), "_bpc2"),
        (dict(direction="bwd_weight", two_stage=True), "_2stage"),
        (
            dict(direction="bwd_weight", explicit_gemm=True, specialization="filter1x1_stride1_pad0"),
            "_filter1x1_stride1_pad0_explicit_gemm",
        ),
        (dict(direction="bwd_weight", streamk_enabled=True), "_streamk_tree"),
        (
            dict(
                direction="bwd_weight",
                streamk_enabled=True,
                streamk_reduction="linear",
                streamk_persistent=True,
            ),
            "_streamk_linear_persistent",
        ),
        (dict(num_groups_to_merge=2, double_smem_buffer=True, vector_size_a=2), "_vec2_8_8_gm2_dsb"),
    ],
)
def test_optional_fragments(changes, suffix):
    config = make_config(**changes)
    assert config.name.endswith(suffix)
    assert parse_kernel_name(config.name) == config


def test_direction_dtype_layout_and_pipeline_fragments():
    config = make_config(
        direction="bwd_data", dtype="bf16", ndim_spatial=3, pipeline="basic_v1", scheduler="interwave"
    )
    assert config.name == (
        "grouped_conv_bwd_data_bf16_ndhwgc_3d_compv1_cshuffle_interwave_128x128x32_2x2x1_32x32x16"
    )


def test_alias_accepted_in_names_but_never_written():
    written = make_config(pipeline="compv1").name
    assert parse_kernel_name(written.replace("_compv1_", "_basic_v1_")).name == written


@pytest.mark.parametrize(
    "bad",
    [
        CK_EXAMPLE + "_vec4_8_8",  # default vectors are never written
        CK_EXAMPLE + "_gm1",
        CK_EXAMPLE.replace("_dsb", "") + "_large_tensor_dsb",  # wrong order
        CK_EXAMPLE.replace("fp16", "fp8"),
        CK_EXAMPLE.replace("2x2x1", "2x2"),
        CK_EXAMPLE.replace("128x128x32", "0128x128x32"),
        CK_EXAMPLE.replace("nhwgc_2d", "nhwgc_3d"),  # layout/ndim mismatch
        "grouped_conv_fwd_depthwise_fp16_ngchw_2d_8x8_f3",
        CK_DEPTHWISE_EXAMPLE.replace("_fwd_", "_bwd_"),  # no such direction
        CK_DEPTHWISE_EXAMPLE.replace("_2d_", "_4d_"),  # no such dimension
        CK_DEPTHWISE_EXAMPLE.replace("_2d_", "_1d_"),
        CK_DEPTHWISE_EXAMPLE.replace("_ngchw_2d_", "_ngchw_"),
        CK_DEPTHWISE_EXAMPLE.replace("_ngchw_2d_", "_ngcdhw_3d_"),  # the layout token stays ngchw in 3D
        "",
    ],
)
def test_bad_names_are_refused(bad):
    with pytest.raises(KernelNameError):
        parse_kernel_name(bad)


def _grid():
    tiles = [(16, 16, 64), (32, 64, 32), (64, 64, 8), (128, 128, 32), (256, 128, 32), (64, 80, 32)]
    waves = [(1, 1, 1), (2, 1, 1), (1, 2, 1), (2, 2, 1), (4, 1, 1), (2, 1, 2)]
    warp_tiles = [(16, 16, 16), (32, 32, 8), (32, 32, 16), (16, 16, 32)]
    vectors = [(4, 8, 8), (8, 8, 8), (1, 1, 1), (2, 4, 4)]
    pipelines = ["compv1", "mem", "compv3", "compv4", "compv5", "basic_async_v1", "wavelet"]
    for direction, dtype, ndim in itertools.product(
        ("fwd", "bwd_data", "bwd_weight"), ("fp16", "fp32"), (2, 3)
    ):
        for tile, wave, warp, vec, pipe in itertools.product(tiles, waves, warp_tiles, vectors, pipelines):
            base = dict(
                direction=direction, dtype=dtype, ndim_spatial=ndim,
                tile_m=tile[0], tile_n=tile[1], tile_k=tile[2],
                wave_m=wave[0], wave_n=wave[1], wave_k=wave[2],
                warp_tile_m=warp[0], warp_tile_n=warp[1], warp_tile_k=warp[2],
                vector_size_a=vec[0], vector_size_b=vec[1], vector_size_c=vec[2],
                pipeline=pipe, double_smem_buffer=pipe == "compv4",
            )  # fmt: skip
            yield KernelConfig(**base)
            if direction == "bwd_weight":
                yield KernelConfig(**base, two_stage=True, num_groups_to_merge=2)
                yield KernelConfig(**base, streamk_enabled=True, streamk_persistent=True)
                yield KernelConfig(**base, streamk_enabled=True, streamk_reduction="linear")
                yield KernelConfig(**base, explicit_gemm=True, specialization="filter1x1_stride1_pad0")
            if direction == "fwd":
                yield KernelConfig(**base, split_image=True, specialization="filter3x3")
                yield KernelConfig(**base, num_groups_to_merge=16, scheduler="interwave", block_per_cu=2)


def test_round_trip_over_a_large_grid():
    configs = [c for c in _grid() if validate(c).ok]
    assert len(configs) > 5000
    names = [c.name for c in configs]
    assert len(set(names)) == len(set(configs))  # distinct configurations never share a name
    for config, name in zip(configs, names, strict=True):
        assert parse_kernel_name(name) == config


def test_round_trip_over_all_of_full():
    names: dict[str, object] = {}
    signatures = itertools.product(("fwd", "bwd_data", "bwd_weight"), ("fp16", "bf16", "fp32"), (2, 3))
    for direction, dtype, ndim in signatures:
        request = RulesetRequest.build(ruleset="full", direction=direction, dtype=dtype, ndim=ndim)
        for config in enumerate_ruleset(request).configs:
            assert names.setdefault(config.name, config) == config  # one name, one configuration
            assert parse_kernel_name(config.name) == config
    assert len(names) > 10_000
    depthwise_3d = [n for n in names if "_depthwise_" in n and "_ngchw_3d_" in n]
    assert {n.split("_depthwise_")[0] for n in depthwise_3d} == {
        "grouped_conv_fwd",
        "grouped_conv_bwd_data",
        "grouped_conv_bwd_weight",
    }
