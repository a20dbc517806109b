"""Selection metrics on a hand-made case."""

from __future__ import annotations

import numpy as np
import pytest

from heuristics.dataset import shape_folds
from heuristics.metrics import summarise


def test_efficiency_and_top_k_by_hand():
    # Group 0: oracle is row 1 (10), the model picks row 0 (8): efficiency 0.8, oracle ranked 2nd.
    # Group 1: the model picks the oracle (row 8 of six candidates).
    group = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1])
    shape = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1])
    tflops = np.array([8.0, 10.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    score = np.array([0.9, 0.5, 0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    kernels = tuple(f"k{i}" for i in range(9))
    metrics, outcomes = summarise(group, shape, score, tflops, kernels)
    assert [o.efficiency for o in outcomes] == [0.8, 1.0]
    assert outcomes[0].predicted_kernel == "k0" and outcomes[0].oracle_kernel == "k1"
    assert metrics.mean_efficiency == pytest.approx(0.9) and metrics.worst_efficiency == 0.8
    assert metrics.p10_efficiency == pytest.approx(0.82)  # linear interpolation between 0.8 and 1.0
    assert (metrics.top1_accuracy, metrics.top5_accuracy) == (0.5, 1.0)


def test_shape_folds_hold_each_shape_out_exactly_once():
    shape = np.repeat(np.arange(23), 7)
    folds = shape_folds(shape, 5, seed=1)
    assert sorted(np.concatenate(folds).tolist()) == list(range(len(shape)))
    for test in folds:
        held = set(shape[test].tolist())
        assert held and not held & set(np.delete(shape, test).tolist())


def test_outcomes_name_the_split_k_of_the_pick_and_of_the_oracle():
    # One bwd_weight group: the same kernel at split-K 1, 4 and 8; the model prefers 8, the oracle is 4.
    group, shape = np.zeros(3, dtype=int), np.zeros(3, dtype=int)
    _, outcomes = summarise(
        group, shape, np.array([0.1, 0.2, 0.3]), np.array([1.0, 3.0, 2.0]), ("k",) * 3, np.array([1, 4, 8])
    )
    assert (outcomes[0].predicted_split_k, outcomes[0].oracle_split_k) == (8, 4)
