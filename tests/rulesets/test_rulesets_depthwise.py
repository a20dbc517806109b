"""Depthwise in the rule sets: 3D depthwise (cubic filter, docs/depthwise.md "3D") in ``full`` and ``default``
for every direction and dtype at ndim 3, which ``default`` candidates validity drops, and the 2D depthwise
lists exactly as they were before 3D existed."""

from __future__ import annotations

import csv
import hashlib
from collections import Counter
from functools import cache
from pathlib import Path

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
    """full: filters 3/5/7 x strides 1/2 x the seventeen 3D shapes = 102 candidates per request, each either
    kept or rejected with a depthwise rule (listed in rulesets/full.py's docstring)."""
    kept = {c.name for c in depthwise("full", direction, dtype, 3)}
    rejected = {
        r.config.name: r.rule
        for r in result("full", direction, dtype, 3).rejected
        if isinstance(r.config, DepthwiseConfig)
    }
    assert len(kept) + len(rejected) == 3 * 2 * len(DEPTHWISE_3D_SHAPES) == 102
    assert set(rejected.values()) <= {
        "depthwise_shared_memory",
        "depthwise_bwd_weight_registers",
        "depthwise_bwd_data_phases",
    }
    assert {c.filter for c in depthwise("full", direction, dtype, 3)} == {3, 5, 7}
    assert {c.stride_h for c in depthwise("full", direction, dtype, 3)} == {1, 2}


# The default 3D candidates validity refuses (all: the fwd stage of ``filter`` halo slices does not fit 227 KB
# = 232448 bytes). By hand from docs/depthwise.md's formula, 3D forward = F x slice + F x F x F x CB x 4 + 16
# (barriers), InH = (tile_h - 1) x s + F, InW = (tile_w - 1) x s + F, CB = nbatch x vec channels. Every shape
# below stages 16-byte vectors, so a slice is laid out for TMA: sub_w x s column residues, each a block of InH
# rows x ceil(InW / (sub_w x s)) positions x CB x size bytes, rounded up to 128. 16-bit fwd 8x32 nb2 sub1x4
# vec 8: CB = 16, 32 bytes a pixel, InH = 7 s + F, InW = 31 s + F; 3x3 s1: 4 x align128(10 x 9 x 32 = 2880) =
# 4 x 2944 -> 3 x 11776 + 1728 + 16 = 37072; 5x5 s2: 8 x align128(19 x 9 x 32 = 5472) = 8 x 5504 -> 5 x 44032
# + 8000 + 16 = 228176 fits; 7x7 s1: 4 x (14 x 10 x 32 = 4480) -> 7 x 17920 + 21952 + 16 = 147408; 7x7 s2: 8 x
# align128(21 x 9 x 32 = 6048) = 8 x 6144 -> 7 x 49152 + 21952 + 16 = 366032 does not. 16-bit fwd 8x16 nb2
# sub1x4 vec 8 (7x7 only): 7x7 s2: InH 21, InW 37, 8 x align128(21 x 5 x 32 = 3360) = 8 x 3456 -> 7 x 27648 +
# 21952 + 16 = 215504 fits. 16-bit fwd 4x28 nb4 sub1x4 vec 8 (3x3, 5x5): CB = 32, 64 bytes a pixel, InH = 3 s
# + F, InW = 27 s + F; 3x3 s2: 8 x (9 x 8 x 64 = 4608) -> 3 x 36864 + 3456 + 16 = 114064 fits; 5x5 s2: 8 x (11
# x 8 x 64 = 5632) -> 5 x 45056 + 16000 + 16 = 241296 does not (8x32 nb2 serves 5x5 stride 2). fp32 fwd 8x16
# nb4 sub1x4 vec 4: CB = 16, 64 bytes a pixel; 3x3 s2: 8 x align128(17 x 5 x 64 = 5440) = 8 x 5504 -> 3 x
# 44032 + 1728 + 16 = 133840 fits; 5x5 s2: 8 x align128(19 x 5 x 64 = 6080) = 8 x 6144 -> 5 x 49152 + 8000 +
# 16 = 253776 does not; 7x7 s2: 8 x align128(21 x 5 x 64 = 6720) = 8 x 6784 -> 7 x 54272 + 21952 + 16 = 401872
# does not. fp32 fwd 8x16 nb2 sub1x4 vec 4 (5x5, 7x7): CB = 8, 32 bytes a pixel, weights F x F x F x 32; 5x5
# s2: 8 x align128(19 x 5 x 32 = 3040) = 8 x 3072 -> 5 x 24576 + 4000 + 16 = 126896 fits; 7x7 s2: 8 x 3456 ->
# 7 x 27648 + 10976 + 16 = 204528 fits. So every forward filter x stride keeps a kernel in every dtype.
# bwd_data reads at most the forward's halo at stride 1 (7x7: 147408 in 16 bits) and about a quarter at stride
# 2, so it keeps every candidate; bwd_weight keeps its 2D shared memory. They are reported as ``default``'s
# rejections and never reach the build.
DEFAULT_3D_DROPPED = {
    "grouped_conv_fwd_depthwise_fp16_ngchw_3d_8x32_f7_s2x2_p3x3_nb2_sub1x4_vec8_8",
    "grouped_conv_fwd_depthwise_bf16_ngchw_3d_8x32_f7_s2x2_p3x3_nb2_sub1x4_vec8_8",
    "grouped_conv_fwd_depthwise_fp16_ngchw_3d_4x28_f5_s2x2_p2x2_nb4_sub1x4_vec8_8",
    "grouped_conv_fwd_depthwise_bf16_ngchw_3d_4x28_f5_s2x2_p2x2_nb4_sub1x4_vec8_8",
    "grouped_conv_fwd_depthwise_fp32_ngchw_3d_8x16_f5_s2x2_p2x2_nb4_sub1x4_vec4_4",
    "grouped_conv_fwd_depthwise_fp32_ngchw_3d_8x16_f7_s2x2_p3x3_nb4_sub1x4_vec4_4",
}


def signature(name: str) -> tuple[Direction, DataType]:
    """The (direction, dtype) a depthwise kernel name spells."""
    direction, rest = name.removeprefix("grouped_conv_").split("_depthwise_")
    return Direction(direction), DataType(rest.split("_")[0])


_FWD_8X32 = DepthwiseShape(8, 32, 2, 1, 4, 8)
_BWD_DATA_8X32 = DepthwiseShape(8, 32, 2, 2, 4, 8)
_FWD_8X16_VEC4 = DepthwiseShape(8, 16, 4, 1, 4, 4)
_BWD_DATA_8X16_VEC4 = DepthwiseShape(8, 16, 4, 2, 4, 4)
_BWD_WEIGHT = DepthwiseShape(16, 16, 4, 2, 4, 4)
_BWD_WEIGHT_VEC8 = DepthwiseShape(16, 16, 4, 2, 4, 8)
_FWD_8X16_NB2_VEC8 = DepthwiseShape(8, 16, 2, 1, 4, 8)
_FWD_8X16_NB2_VEC4 = DepthwiseShape(8, 16, 2, 1, 4, 4)
_FWD_8X28 = DepthwiseShape(8, 28, 2, 1, 4, 8)
_BWD_DATA_8X28 = DepthwiseShape(8, 28, 2, 2, 4, 8)
_FWD_4X28 = DepthwiseShape(4, 28, 4, 1, 4, 8)
_BWD_DATA_4X28 = DepthwiseShape(4, 28, 4, 2, 4, 8)
_BWD_WEIGHT_16X28_VEC8 = DepthwiseShape(16, 28, 4, 2, 4, 8)
_BWD_WEIGHT_16X28_VEC4 = DepthwiseShape(16, 28, 4, 2, 4, 4)
# (shape, filters) per (direction, 16-bit?): 16-bit fwd and bwd_data 8x32 nb2 vec 8 for 3/5/7, the 8x16 nb4
# vec-4 shape for 3x3 (channel counts that are multiples of 4, X3D's 108) and 8x28 nb2 vec 8 for 3x3, fwd 4x28
# nb4 for 3x3 and 5x5, bwd_data 4x28 nb4 for 5x5; 16-bit bwd_weight 16x16 vec 8 for 3x3 beside vec 4 for
# 3/5/7, and 16x28 at vec 8 and vec 4 for 3x3; fp32 the 8x16 nb4 vec-4 shapes, bwd_weight 16x16 vec 4; fwd
# adds 8x16 nb2 sub1x4, vec 8 for 16-bit 7x7 and vec 4 for fp32 5x5 and 7x7 (their stride 2 fits only there).
DEFAULT_3D = {
    (Direction.FWD, True): (
        (_FWD_8X32, (3, 5, 7)),
        (_FWD_8X16_VEC4, (3,)),
        (_FWD_8X16_NB2_VEC8, (7,)),
        (_FWD_8X28, (3,)),
        (_FWD_4X28, (3, 5)),
    ),
    (Direction.BWD_DATA, True): (
        (_BWD_DATA_8X32, (3, 5, 7)),
        (_BWD_DATA_8X28, (3,)),
        (_BWD_DATA_4X28, (5,)),
        (_BWD_DATA_8X16_VEC4, (3,)),
    ),
    (Direction.BWD_WEIGHT, True): (
        (_BWD_WEIGHT_VEC8, (3,)),
        (_BWD_WEIGHT_16X28_VEC8, (3,)),
        (_BWD_WEIGHT_16X28_VEC4, (3,)),
        (_BWD_WEIGHT, (3, 5, 7)),
    ),
    (Direction.FWD, False): ((_FWD_8X16_VEC4, (3, 5, 7)), (_FWD_8X16_NB2_VEC4, (5, 7))),
    (Direction.BWD_DATA, False): ((_BWD_DATA_8X16_VEC4, (3, 5, 7)),),
    (Direction.BWD_WEIGHT, False): ((_BWD_WEIGHT, (3, 5, 7)),),
}


def default_3d(direction: Direction, dtype: DataType) -> tuple[tuple[DepthwiseShape, tuple[int, ...]], ...]:
    return DEFAULT_3D[(direction, dtype is not DataType.FP32)]


def candidates(direction: Direction, dtype: DataType) -> int:
    return sum(2 * len(filters) for _, filters in default_3d(direction, dtype))


@pytest.mark.parametrize(("direction", "dtype"), SIGNATURES, ids=lambda v: v.value)
def test_default_3d_depthwise(direction: Direction, dtype: DataType) -> None:
    """default at ndim 3: 16-bit fwd 8x32 nb2 sub1x4 vec 8 (3/5/7), 8x16 nb4 sub1x4 vec 4 (3), 8x16 nb2
    sub1x4 vec 8 (7), 8x28 nb2 sub1x4 vec 8 (3) and 4x28 nb4 sub1x4 vec 8 (3/5), 16-bit bwd_data 8x32 nb2
    sub2x4 vec 8 (3/5/7), 8x28 nb2 (3), 4x28 nb4 (5) and 8x16 nb4 sub2x4 vec 4 (3), 16-bit bwd_weight 16x16
    nb4 sub2x4 vec 8 (3) and vec 4 (3/5/7) and 16x28 nb4 sub2x4 vec 8 and vec 4 (3), fp32 fwd and bwd_data
    the 8x16 nb4 vec-4 shapes (3/5/7), fp32 fwd also 8x16 nb2 sub1x4 vec 4 (5/7), and bwd_weight 16x16 nb4
    sub2x4 vec 4 (3/5/7), each filter at strides 1 and 2; what validity refuses is exactly
    DEFAULT_3D_DROPPED, reported with its rule, and the kept ones are a subset of full's 3D depthwise."""
    expected = default_3d(direction, dtype)
    assert DEFAULT_DEPTHWISE_3D[(direction, dtype)] == expected
    kept = depthwise("default", direction, dtype, 3)
    assert {(shape_of(c), c.filter) for c in kept} <= {(s, f) for s, filters in expected for f in filters}
    assert {shape_of(c) for c in kept} == {s for s, _ in expected}
    rejected = {
        r.config.name: r.rule
        for r in result("default", direction, dtype, 3).rejected
        if isinstance(r.config, DepthwiseConfig)
    }
    assert len(kept) + len(rejected) == candidates(direction, dtype)
    assert set(rejected) == {n for n in DEFAULT_3D_DROPPED if signature(n) == (direction, dtype)}
    assert set(rejected.values()) <= {"depthwise_shared_memory"}
    assert {c.name for c in kept} <= {c.name for c in depthwise("full", direction, dtype, 3)}


def test_default_3d_keeps_something_everywhere_and_drops_only_the_listed() -> None:
    kept = {(d, t): len(depthwise("default", d, t, 3)) for d, t in SIGNATURES}
    dropped = Counter(signature(n) for n in DEFAULT_3D_DROPPED)
    assert kept == {s: candidates(*s) - dropped[s] for s in SIGNATURES}
    assert min(kept.values()) == 6  # fp32 bwd_data and bwd_weight: all six (filter, stride) candidates


@pytest.mark.parametrize(("direction", "dtype"), SIGNATURES, ids=lambda v: v.value)
def test_default_3d_has_every_filter_and_stride(direction: Direction, dtype: DataType) -> None:
    """default at ndim 3 holds a depthwise configuration for every filter 3/5/7 x stride 1/2 in every
    direction and dtype. Forward 7x7 stride 2 (every dtype) and fp32 5x5 stride 2 had none before 8x16 nb2
    sub1x4: every other forward shape's stage of ``filter`` halo slices exceeds 227 KB there."""
    kept = depthwise("default", direction, dtype, 3)
    assert {(c.filter, c.stride_h) for c in kept} == {(f, s) for f in (3, 5, 7) for s in (1, 2)}


PROBLEMS_3D = Path(__file__).resolve().parents[2] / "bench" / "problems" / "depthwise_3d.csv"


@pytest.mark.parametrize(("direction", "dtype"), SIGNATURES, ids=lambda v: v.value)
def test_default_3d_covers_the_video_depthwise_table(direction: Direction, dtype: DataType) -> None:
    """Every row of bench/problems/depthwise_3d.csv (X3D's 48 to 432 channels, 5x5x5 and 7x7x7 on 28^2) has a
    default 3D depthwise kernel in every direction and dtype: its filter and (H, W) stride, and a vector that
    divides C. Before the vec-4 twins the 16-bit fwd and bwd_data kernels were vec 8 only, and C = 108 had
    none; fp32 forward lost 3x3 stride 2 and 7x7 to shared memory on 16x16 vec 4."""
    kept = depthwise("default", direction, dtype, 3)
    with PROBLEMS_3D.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert any(int(row["C"]) % 8 for row in rows)  # the table still holds a channel count off vec 8
    for row in rows:
        channels, filt, stride = int(row["C"]), int(row["X"]), int(row["stride_h"])
        assert int(row["Y"]) == int(row["Z"]) == filt and int(row["stride_w"]) == stride
        fitting = [c for c in kept if c.filter == filt and c.stride_h == stride]
        assert any(channels % c.in_vec == 0 and channels % c.out_vec == 0 for c in fitting), row["name"]


# Configurations added to `default` since the digests were taken (session 31: bwd_weight 16x32 nb4 sub2x4
# vec 8 for 3x3, docs/performance.md "Session 31"; session 47: fwd 7x7 on 8x32 / 16x32 nb4 sub1x8 vec 4 in
# 16 bits and 8x32 nb8 sub1x8 vec 2 in fp32, "Session 47"; session 50: tiles 28 and 56 wide, "Session 50"):
# the digest is taken without them, and each must be there.
ADDED_SINCE = {
    "default": tuple(
        f"grouped_conv_bwd_weight_depthwise_{dtype}_ngchw_2d_16x32_f3_s{s}x{s}_p1x1_nb4_sub2x4_vec8_8"
        for dtype in ("fp16", "bf16")
        for s in (1, 2)
    )
    + tuple(
        f"grouped_conv_fwd_depthwise_{dtype}_ngchw_2d_{tile}_f7_s{s}x{s}_p3x3_nb4_sub1x8_vec4_4"
        for dtype in ("fp16", "bf16")
        for tile in ("8x32", "16x32")
        for s in (1, 2)
    )
    + tuple(
        f"grouped_conv_fwd_depthwise_fp32_ngchw_2d_8x32_f7_s{s}x{s}_p3x3_nb8_sub1x8_vec2_2" for s in (1, 2)
    )
    + tuple(
        f"grouped_conv_bwd_data_depthwise_{dtype}_ngchw_2d_{shape}_f{f}_s{s}x{s}_p{f // 2}x{f // 2}_{sub}"
        for dtype in ("fp16", "bf16")
        for shape, filters, sub in (
            ("16x32", (5, 7), "nb4_sub2x8_vec4_4"),
            ("16x16", (7,), "nb4_sub2x4_vec4_4"),
        )
        for f in filters
        for s in (1, 2)
    )
    + tuple(
        f"grouped_conv_{direction}_depthwise_{dtype}_ngchw_2d_{shape}_f{f}_s{s}x{s}_p{f // 2}x{f // 2}_{sub}"
        for direction, dtypes, shape, filters, sub in (
            ("fwd", ("fp16", "bf16"), "8x28", (3, 5, 7), "nb4_sub1x4_vec8_8"),
            ("fwd", ("fp16", "bf16"), "7x28", (3, 5), "nb4_sub1x4_vec8_8"),
            ("fwd", ("fp16", "bf16"), "8x56", (7,), "nb4_sub1x8_vec4_4"),
            ("fwd", ("fp16", "bf16"), "8x28", (3,), "nb4_sub2x4_vec8_8"),
            ("fwd", ("fp16", "bf16"), "8x28", (3, 5), "nb8_sub2x4_vec4_4"),
            ("fwd", ("fp16", "bf16"), "8x28", (3,), "nb8_sub4x4_vec4_4"),
            ("fwd", ("fp16", "bf16"), "4x28", (5,), "nb8_sub1x4_vec4_4"),
            ("fwd", ("fp32",), "8x28", (3,), "nb4_sub1x4_vec4_4"),
            ("fwd", ("fp32",), "7x28", (3, 5), "nb4_sub1x4_vec4_4"),
            ("bwd_data", ("fp16", "bf16"), "8x28", (3, 5), "nb4_sub2x4_vec8_8"),
            ("bwd_data", ("fp16", "bf16"), "16x28", (3,), "nb4_sub2x4_vec8_8"),
            ("bwd_data", ("fp16", "bf16"), "8x56", (5, 7), "nb4_sub2x8_vec4_4"),
            ("bwd_data", ("fp32",), "16x28", (3, 5, 7), "nb4_sub2x4_vec4_4"),
            ("bwd_weight", ("fp16", "bf16"), "16x28", (3,), "nb4_sub2x4_vec8_8"),
            ("bwd_weight", ("fp16", "bf16"), "16x28", (5, 7), "nb4_sub2x4_vec4_4"),
            ("bwd_weight", ("fp32",), "16x28", (3, 5, 7), "nb4_sub2x4_vec4_4"),
        )
        for dtype in dtypes
        for f in filters
        for s in (1, 2)
    ),
    "full": (),
}


def _digest(ruleset: str) -> tuple[int, str]:
    configs = [c for d, t in SIGNATURES for c in depthwise(ruleset, d, t, 2)]
    names = {c.name for c in configs}
    missing = [name for name in ADDED_SINCE[ruleset] if name not in names]
    assert not missing, missing
    lines = sorted(f"{c.name} {c.instance_string}" for c in configs if c.name not in ADDED_SINCE[ruleset])
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
    lines, taken at commit f0f0435), but for the configurations added since (ADDED_SINCE), which must be
    there."""
    assert _digest(ruleset) == expected
