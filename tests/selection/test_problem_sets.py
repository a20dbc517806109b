"""The committed per-direction problem sets are CK's forward shapes and the grouped layers, de-duplicated, for
every direction."""

from __future__ import annotations

import csv

import pytest

from generators.problem import CSV_COLUMNS, load_problems
from heuristics.grouped_layers import (
    depthwise_3d_layers,
    depthwise_layers,
    grouped_layers,
    network_layers,
    regnet_layers,
)
from heuristics.problem_sets import direction_set, sample, to_csv
from tests.conftest import SHARED_DIR
from tests.selection.conftest import REPO_ROOT

SOURCE = SHARED_DIR / "problems" / "forward_synthetic_extended.csv"
SETS = REPO_ROOT / "heuristics" / "problem_sets"
BENCH_TABLES = (
    *sorted((REPO_ROOT / "bench" / "problems").glob("*.csv")),
    SHARED_DIR / "problems" / "dev_suite.csv",
)


def _key(problem) -> tuple[int, ...]:
    return tuple(getattr(problem, c) for c in CSV_COLUMNS)


def test_committed_sets_hold_each_source_shape_once():
    if not SOURCE.exists():
        pytest.skip(f"{SOURCE} is not on this machine")
    with SOURCE.open() as f:
        source = [tuple(int(r[c]) for c in CSV_COLUMNS) for r in csv.DictReader(f)]
    source += [_key(p) for p in network_layers()]
    for direction in ("fwd", "bwd_data", "bwd_weight"):
        with (SETS / f"{direction}.csv").open() as f:
            rows = list(csv.DictReader(f))
        shapes = [tuple(int(r[c]) for c in CSV_COLUMNS) for r in rows]
        assert len(shapes) == len(set(shapes)) == len(set(source))
        assert shapes == sorted(set(source), key=source.index)  # first-seen order
        assert [r["name"] for r in rows] == [f"{direction}_{i}" for i in range(len(rows))]


def test_committed_sets_are_what_the_command_derives():
    if not SOURCE.exists():
        pytest.skip(f"{SOURCE} is not on this machine")
    problems = [*load_problems(SOURCE), *network_layers()]
    for direction in ("fwd", "bwd_data", "bwd_weight"):
        assert (SETS / f"{direction}.csv").read_text() == to_csv(direction_set(problems, direction))


def test_sample_is_seeded_and_order_preserving():
    problems = load_problems(SETS / "fwd.csv")
    a, b = sample(problems, 50, seed=3), sample(problems, 50, seed=3)
    assert a == b and len(a) == 50 and a != sample(problems, 50, seed=4)
    indices = [problems.index(p) for p in a]
    assert indices == sorted(indices)
    with pytest.raises(ValueError, match="unknown direction"):
        direction_set(problems, "sideways")


def _assert_no_benchmark_shapes(keys: list[tuple[int, ...]], what: str) -> None:
    for table in BENCH_TABLES:
        if table.exists():  # the dev suite lives in ../shared
            overlap = set(keys) & {_key(p) for p in load_problems(table)}
            assert not overlap, f"{table.name} shares {len(overlap)} shapes with {what}"


def test_grouped_layers_are_network_scale_and_not_benchmark_shapes():
    layers = grouped_layers()
    keys = [_key(p) for p in layers]
    assert len(keys) == len(set(keys)) == 66
    widths = {p.C // p.G for p in layers}
    assert widths == {2, 4, 8, 16, 24, 32} and all(p.C == p.K for p in layers)
    assert {p.output_spatial[1:] for p in layers} == {(56, 56), (28, 28), (14, 14), (7, 7)}
    assert {(p.stride_h, p.Hi) for p in layers if p.stride_h == 2} == {(2, 56), (2, 28), (2, 14)}
    _assert_no_benchmark_shapes(keys, "the training layers")


def test_regnet_layers_have_group_counts_no_gm_divides_and_are_not_benchmark_shapes():
    layers = regnet_layers()
    keys = [_key(p) for p in layers]
    assert len(keys) == len(set(keys)) == 44
    assert {p.C // p.G for p in layers} == {8, 16} and all(p.C == p.K for p in layers)
    # every G leaves a remainder for some power-of-two gm up to 8: the direct kernels' last block
    assert all(p.G & (p.G - 1) for p in layers)
    assert {p.N for p in layers} == {16, 64} and {p.stride_h for p in layers} == {1, 2}
    assert not set(keys) & {_key(p) for p in grouped_layers()}
    _assert_no_benchmark_shapes(keys, "the RegNet layers")


def test_depthwise_layers_cover_every_filter_and_stride_and_are_not_benchmark_shapes():
    layers = depthwise_layers()
    keys = [_key(p) for p in layers]
    assert len(keys) == len(set(keys)) == 44
    assert all(p.G == p.C == p.K > 1 for p in layers)
    assert {(p.X, p.stride_h) for p in layers} == {(f, s) for f in (3, 5, 7) for s in (1, 2)}
    assert all(p.Y == p.X and p.pad_h == p.pad_w == p.X // 2 and p.stride_w == p.stride_h for p in layers)
    assert {p.N for p in layers} == {16, 64}
    assert not set(keys) & {_key(p) for p in [*grouped_layers(), *regnet_layers()]}
    _assert_no_benchmark_shapes(keys, "the depthwise layers")


def test_depthwise_3d_layers_cover_every_filter_and_stride_and_are_not_benchmark_shapes():
    """Cubic filters 3/5/7 at H and W strides 1 and 2 (unit depth stride), "same" padding in every axis, each
    layer 3D depthwise, none a 2D layer's shape nor a benchmark table's row."""
    layers = depthwise_3d_layers()
    keys = [_key(p) for p in layers]
    assert len(keys) == len(set(keys)) == 26
    assert all(p.G == p.C == p.K > 1 and p.Di > 1 for p in layers)
    assert {(p.X, p.stride_h) for p in layers} == {(f, s) for f in (3, 5, 7) for s in (1, 2)}
    assert all(p.Z == p.Y == p.X and p.pad_d == p.pad_h == p.pad_w == p.X // 2 for p in layers)
    assert all(p.stride_d == 1 and p.stride_w == p.stride_h for p in layers)
    assert not set(keys) & {_key(p) for p in [*grouped_layers(), *regnet_layers(), *depthwise_layers()]}
    _assert_no_benchmark_shapes(keys, "the 3D depthwise layers")
