"""The committed sweep data and models (heuristics/data, heuristics/models): the data validates, the models
are the ones trained on it, their recorded held-out figures are those of their evaluation files, and they load
and rank candidates (the C++ agreement is in test_cpp_selection.py)."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from generators.problem import CSV_COLUMNS, load_problems
from heuristics.dataset import build_dataset
from heuristics.features import FEATURE_NAMES
from heuristics.merge import MergeRecord
from heuristics.metrics import summarise
from heuristics.select import MODEL_DIR, LearnedSelector, load_checked_model, rank
from heuristics.sweep_schema import SWEEP_COLUMNS, read_sweep
from tests.selection.conftest import REPO_ROOT, problems_small, ruleset_names

DATA_DIR = REPO_ROOT / "heuristics" / "data"
DIRECTIONS = ("fwd", "bwd_data", "bwd_weight")


def data_file(direction: str) -> Path:
    """The direction's one data file, ``<dir>_fp16_<devices>.csv.gz``."""
    (path,) = DATA_DIR.glob(f"{direction}_fp16_*.csv.gz")
    return path


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_committed_data_validates_and_matches_its_record(direction):
    path = data_file(direction)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert tuple(header) == SWEEP_COLUMNS
    rows = read_sweep([path])  # every row through SweepRow: raises on a bad one
    record = MergeRecord.model_validate_json(path.with_name(path.name + ".meta.json").read_text())
    assert record.direction == direction and len(rows) == record.rows_written > 0
    assert sum(s.rows_taken for s in record.sources) == len(rows)
    assert sum(s.shapes_taken for s in record.sources) == record.shapes == len({r.shape_key for r in rows})
    # One sweep per shape: a (kernel, split-K) appears once per shape, and problem_idx names the shape in
    # the full problem set.
    assert len({(r.shape_key, r.kernel, r.split_k) for r in rows}) == len(rows)
    problem_set = load_problems(REPO_ROOT / "heuristics" / "problem_sets" / f"{direction}.csv")
    assert all(
        r.shape_key == tuple(getattr(problem_set[r.problem_idx], c) for c in CSV_COLUMNS) for r in rows
    )
    assert {r.direction for r in rows} == {direction} and {r.dtype for r in rows} == {"fp16"}
    assert {r.status for r in rows} <= {"valid", "not_supported"}  # no failed or batch_failed rows
    valid = [r for r in rows if r.status == "valid"]
    assert valid and all(r.tflops and r.tflops > 0 and r.latency_ms and r.latency_ms > 0 for r in valid)


def test_committed_models_were_trained_on_the_committed_data():
    # train records sha256 over the data files' bytes, concatenated in sorted path order.
    digest = hashlib.sha256()
    for path in sorted(data_file(d) for d in DIRECTIONS):
        digest.update(path.read_bytes())
    for direction in DIRECTIONS:
        meta = json.loads((MODEL_DIR / f"{direction}.json").read_text())
        assert meta["data_sha256"] == digest.hexdigest(), f"{direction}: retrain on heuristics/data"
        assert meta["direction"] == direction and tuple(meta["feature_names"]) == FEATURE_NAMES


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_recorded_held_out_metrics_are_those_of_the_eval_file(direction):
    meta = json.loads((MODEL_DIR / f"{direction}.json").read_text())
    with (MODEL_DIR / f"{direction}_eval.csv").open() as f:
        rows = list(csv.DictReader(f))
    eff = np.array([float(r["predicted_tflops"]) / float(r["oracle_tflops"]) for r in rows])
    cv = meta["cv"]
    assert cv["groups"] == len(rows) == meta["groups"]
    assert cv["mean_efficiency"] == pytest.approx(eff.mean(), abs=1e-5)
    assert cv["p10_efficiency"] == pytest.approx(np.percentile(eff, 10), abs=1e-5)
    assert cv["worst_efficiency"] == pytest.approx(eff.min(), abs=1e-5)
    same = [
        (r["predicted_kernel"], r["predicted_split_k"]) == (r["oracle_kernel"], r["oracle_split_k"])
        for r in rows
    ]
    top1 = np.mean(same)
    # A different candidate can tie the oracle's TFLOP/s, so top-1 by (kernel, split-K) is a lower bound.
    assert cv["top1_accuracy"] >= top1 - 1e-9
    assert meta["rounds"] == len(load_checked_model(MODEL_DIR / f"{direction}.trees").trees)


@pytest.mark.parametrize("direction", ("fwd", "bwd_data"))
def test_committed_models_rank_their_training_data_at_least_as_well_as_held_out(direction):
    data = build_dataset(read_sweep([data_file(direction)]), direction)
    score = load_checked_model(MODEL_DIR / f"{direction}.trees").predict(data.features)
    seen, _ = summarise(data.group, data.shape, score, data.tflops, data.kernels, data.split_k)
    held_out = json.loads((MODEL_DIR / f"{direction}.json").read_text())["cv"]
    # Chance: the mean efficiency of a uniformly random valid candidate.
    chance = np.mean([data.efficiency[data.group == g].mean() for g in np.unique(data.group)])
    assert seen.mean_efficiency >= held_out["mean_efficiency"] - 0.005
    assert seen.mean_efficiency > chance + 0.1


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_default_rank_and_selector_use_the_committed_models(direction):
    prefix = f"grouped_conv_{direction}_fp16_nhwgc_2d_"
    kernels = [n for n in ruleset_names("default") if n.startswith(prefix)]
    assert len(kernels) > 10
    problem = problems_small()[0]
    ranked = rank(problem, kernels, split_ks=(1, 4))  # no model_dir: the committed folder
    assert len({round(r.score, 9) for r in ranked}) > 5  # the model tells the candidates apart
    chosen = LearnedSelector().select(problem, [_Named(n) for n in kernels])
    assert chosen.name == rank(problem, kernels)[0].kernel


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name
