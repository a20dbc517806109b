"""Depthwise in the rule sets: 3D depthwise (cubic filter, docs/depthwise.md "3D") in ``full`` and ``default``
for every direction and dtype at ndim 3, which ``default`` candidates validity drops, and the 2D depthwise
lists exactly as they were before 3D existed."""

from __future__ import annotations

import hashlib
from collections import Counter
from functools import cache

import pytest

from generators.config import DepthwiseConfig
from generators.enums import Category, DataType, Direction
from rulesets import RulesetRequest, RulesetResult, enumerate_ruleset
from rulesets.default import DEFAULT_DEPTHWISE_3D
from rulesets.space import DEPTHWISE_3D_SHAPES, DepthwiseShape

SIGNATURES = [(d, t) for d in Direction for t in DataType]


@cache
def result(ruleset: str, direction: Direction, dtype: DataType, ndim: int) -> RulesetResult:
    return enumerate_ruleset(
        RulesetRequest.build(ruleset=ruleset, direction=direction.value, dtype=dtype.value, ndim=ndim)
    )


def depthwise(ruleset: str, direction: Direction, dtype: DataType, ndim: int) -> list[DepthwiseConfig]:
    return [c for c in result(ruleset, direction, dtype, ndim).configs if isinstance(c, DepthwiseConfig)]


def shape_of(c: DepthwiseConfig) -> DepthwiseShape:
    assert c.in_vec == c.out_vec
    return DepthwiseShape(c.tile_h, c.tile_w, c.nbatch, c.sub_h, c.sub_w, c.in_vec)


@pytest.mark.parametrize(("direction", "dtype"), SIGNATURES, ids=lambda v: v.value)
@pytest.mark.parametrize("ruleset", ["full", "default", "full-tests"])
def test_every_direction_and_dtype_has_3d_depthwise(
    ruleset: str, direction: Direction, dtype: DataType
) -> None:
    """At ndim 3 each (direction, dtype) holds 3D depthwise configurations, all 3D, cubic-filter shapes of
    the 3D list, padding (filter - 1) / 2 and equal strides; at ndim 2 every depthwise one is 2D."""
    cube = depthwise(ruleset, direction, dtype, 3)
    assert cube and all(c.ndim_spatial == 3 and c.category is Category.DEPTHWISE for c in cube)
    assert all("_ngchw_3d_" in c.name and c.instance_string.split("<")[1].startswith("3,") for c in cube)
    assert all(c.stride_h == c.stride_w and c.pad_h == c.pad_w == (c.filter - 1) // 2 for c in cube)
    assert {shape_of(c) for c in cube} <= set(DEPTHWISE_3D_SHAPES)
    assert all(c.ndim_spatial == 2 for c in depthwise(ruleset, direction, dtype, 2))


@pytest.mark.parametrize(("direction", "dtype"), SIGNATURES, ids=lambda v: v.value)
def test_full_3d_depthwise_is_the_product_less_its_rejections(direction: Direction, dtype: DataType) -> None:
    """full: filters 3/5/7 x strides 1/2 x the four 3D shapes = 24 candidates per request, each either kept or
    rejected with a depthwise rule (listed in rulesets/full.py's docstring)."""
    kept = {c.name for c in depthwise("full", direction, dtype, 3)}
    rejected = {
        r.config.name: r.rule
        for r in result("full", direction, dtype, 3).rejected
        if isinstance(r.config, DepthwiseConfig)
    }
    assert len(kept) + len(rejected) == 3 * 2 * len(DEPTHWISE_3D_SHAPES) == 24
    assert set(rejected.values()) <= {
        "depthwise_shared_memory",
        "depthwise_bwd_weight_registers",
        "depthwise_bwd_data_phases",
    }
    assert {c.filter for c in depthwise("full", direction, dtype, 3)} == {3, 5, 7}
    assert {c.stride_h for c in depthwise("full", direction, dtype, 3)} == {1, 2}


# The default 3D candidates validity refuses (all: the fwd/bwd_data stage of ``filter`` halo slices does not
# fit 227 KB). They are reported as ``default``'s rejections and never reach the build.
DEFAULT_3D_DROPPED = {
    "grouped_conv_fwd_depthwise_fp16_ngchw_3d_8x16_f5_s2x2_p2x2_nb4_sub1x4_vec8_8",
    "grouped_conv_fwd_depthwise_fp16_ngchw_3d_8x16_f7_s2x2_p3x3_nb4_sub1x4_vec8_8",
    "grouped_conv_fwd_depthwise_bf16_ngchw_3d_8x16_f5_s2x2_p2x2_nb4_sub1x4_vec8_8",
    "grouped_conv_fwd_depthwise_bf16_ngchw_3d_8x16_f7_s2x2_p3x3_nb4_sub1x4_vec8_8",
    "grouped_conv_fwd_depthwise_fp32_ngchw_3d_16x16_f3_s2x2_p1x1_nb4_sub2x4_vec4_4",
    "grouped_conv_fwd_depthwise_fp32_ngchw_3d_16x16_f5_s2x2_p2x2_nb4_sub2x4_vec4_4",
    "grouped_conv_fwd_depthwise_fp32_ngchw_3d_16x16_f7_s1x1_p3x3_nb4_sub2x4_vec4_4",
    "grouped_conv_fwd_depthwise_fp32_ngchw_3d_16x16_f7_s2x2_p3x3_nb4_sub2x4_vec4_4",
    "grouped_conv_bwd_data_depthwise_fp32_ngchw_3d_16x16_f7_s1x1_p3x3_nb4_sub2x4_vec4_4",
}


def signature(name: str) -> tuple[Direction, DataType]:
    """The (direction, dtype) a depthwise kernel name spells."""
    direction, rest = name.removeprefix("grouped_conv_").split("_depthwise_")
    return Direction(direction), DataType(rest.split("_")[0])


DEFAULT_3D_SHAPE = {
    (Direction.FWD, True): DepthwiseShape(8, 16, 4, 1, 4, 8),
    (Direction.BWD_DATA, True): DepthwiseShape(8, 16, 4, 2, 4, 8),
    (Direction.BWD_WEIGHT, True): DepthwiseShape(16, 16, 4, 2, 4, 4),
    (Direction.FWD, False): DepthwiseShape(16, 16, 4, 2, 4, 4),
    (Direction.BWD_DATA, False): DepthwiseShape(16, 16, 4, 2, 4, 4),
    (Direction.BWD_WEIGHT, False): DepthwiseShape(16, 16, 4, 2, 4, 4),
}


@pytest.mark.parametrize(("direction", "dtype"), SIGNATURES, ids=lambda v: v.value)
def test_default_3d_depthwise(direction: Direction, dtype: DataType) -> None:
    """default at ndim 3: one shape per (direction, dtype) (16-bit fwd 8x16 nb4 sub1x4 vec 8, 16-bit bwd_data
    8x16 nb4 sub2x4 vec 8, the rest 16x16 nb4 sub2x4 vec 4), filters 3/5/7 x strides 1/2; what validity
    refuses is exactly DEFAULT_3D_DROPPED, reported with its rule, and a subset of full's 3D depthwise."""
    shape = DEFAULT_3D_SHAPE[(direction, dtype is not DataType.FP32)]
    assert DEFAULT_DEPTHWISE_3D[(direction, dtype)] == ((shape, (3, 5, 7)),)
    kept = depthwise("default", direction, dtype, 3)
    assert {shape_of(c) for c in kept} == {shape}
    rejected = {
        r.config.name: r.rule
        for r in result("default", direction, dtype, 3).rejected
        if isinstance(r.config, DepthwiseConfig)
    }
    assert len(kept) + len(rejected) == 6
    assert set(rejected) == {n for n in DEFAULT_3D_DROPPED if signature(n) == (direction, dtype)}
    assert set(rejected.values()) <= {"depthwise_shared_memory"}
    assert {c.name for c in kept} <= {c.name for c in depthwise("full", direction, dtype, 3)}


def test_default_3d_keeps_something_everywhere_and_drops_only_the_listed() -> None:
    kept = {(d, t): len(depthwise("default", d, t, 3)) for d, t in SIGNATURES}
    dropped = Counter(signature(n) for n in DEFAULT_3D_DROPPED)
    assert kept == {s: 6 - dropped[s] for s in SIGNATURES}
    assert min(kept.values()) == 2  # fp32 fwd: 3x3 and 5x5 at stride 1


def _digest(ruleset: str) -> tuple[int, str]:
    lines = sorted(
        f"{c.name} {c.instance_string}" for d, t in SIGNATURES for c in depthwise(ruleset, d, t, 2)
    )
    return len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest()


@pytest.mark.parametrize(
    ("ruleset", "expected"),
    [
        ("default", (88, "cbdfe54c5a40eaf0f312560bcd16aa736cbe50790591a12df996498f307662ae")),
        ("full", (254, "52536612c31d8292557c6527bfecc9acb3563debdb6fdd85d26f2ca2031596b5")),
    ],
)
def test_2d_depthwise_lists_unchanged(ruleset: str, expected: tuple[int, str]) -> None:
    """The 2D depthwise configurations (names and instance strings) of default and full, all directions and
    dtypes, are byte for byte those before 3D depthwise existed (digest of the sorted "name instance_string"
    lines, taken at commit f0f0435)."""
    assert _digest(ruleset) == expected
