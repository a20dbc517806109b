"""The exported tree format: evaluation by hand, round trip, errors naming the line, and LightGBM's export."""

from __future__ import annotations

import numpy as np
import pytest

from heuristics.tree_model import Tree, TreeModel, TreeModelError, parse_model

# Tree 1: x0 <= 2 ? (x1 <= 0.5 ? 1 : 2) : 3.  Tree 2: a single leaf 0.25.
HAND = TreeModel(
    direction="fwd",
    feature_names=("x0", "x1"),
    trees=(
        Tree(
            split_feature=(0, 1),
            threshold=(2.0, 0.5),
            left=(1, -1),
            right=(-3, -2),
            leaf_value=(1.0, 2.0, 3.0),
        ),
        Tree(split_feature=(), threshold=(), left=(), right=(), leaf_value=(0.25,)),
    ),
)


def test_hand_built_model_scores():
    rows = [[1.0, 0.0], [1.0, 0.5], [1.0, 0.7], [2.0, 9.0], [2.5, 0.0]]
    assert HAND.predict(rows).tolist() == [1.25, 1.25, 2.25, 2.25, 3.25]


def test_text_round_trip():
    text = HAND.to_text()
    assert text.splitlines()[0] == "tiledispatch-trees 1"
    assert parse_model(text) == HAND


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda lines: ["xgboost 1", *lines[1:]], ":1: not a"),
        (lambda lines: lines[:8], "ends before"),
        (lambda lines: [*lines[:7], "0 1 7", *lines[8:]], ":8: split features: 3 values, expected 2"),
        (lambda lines: [*lines[:8], "2.0 abc", *lines[9:]], ":9: thresholds: not a number list"),
        (lambda lines: [*lines[:9], "1 5", *lines[10:]], "child 5 out of range"),
    ],
)
def test_bad_files_name_the_line(edit, message):
    lines = HAND.to_text().splitlines()
    with pytest.raises(TreeModelError, match=message):
        parse_model("\n".join(edit(lines)), "m.trees")


def test_lightgbm_export_matches_the_booster():
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed (requirements.txt)")
    from heuristics.tree_model import from_lightgbm_dump

    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 5))
    x[:, 3] = rng.integers(0, 4, size=400)  # integer-valued feature, as most of ours are
    y = np.sin(x[:, 0]) + x[:, 3] * x[:, 1] + 0.1 * rng.normal(size=400)
    booster = lgb.train(
        {"objective": "regression", "num_leaves": 15, "verbose": -1, "seed": 1, "num_threads": 1},
        lgb.Dataset(x, label=y),
        num_boost_round=30,
    )
    model = from_lightgbm_dump(booster.dump_model(), "fwd", [f"f{i}" for i in range(5)])
    probe = np.vstack([x, rng.normal(size=(100, 5))])
    np.testing.assert_allclose(model.predict(probe), booster.predict(probe), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        parse_model(model.to_text()).predict(probe), booster.predict(probe), rtol=1e-12
    )
