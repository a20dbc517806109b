"""--select heuristic | topk=K and --models: parsing, model loading and the dry-run plan (no GPU needed).

The test-double instances are never supported, so the plan keeps none; the ranking itself is covered by
tests/selection (the same headers, compiled host-only, against the Python side).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from heuristics.features import FEATURE_NAMES
from heuristics.tree_model import Tree, TreeModel

PROBLEM = [
    "--direction",
    "fwd,bwd_weight",
    "--dtype",
    "fp16",
    "-N",
    "8",
    "-K",
    "256",
    "-C",
    "256",
    "--filter",
    "3,3",
    "--input",
    "28,28",
    "--pad",
    "1,1",
    "--dry-run",
]


def write_models(folder: Path, feature_names: tuple[str, ...] = FEATURE_NAMES) -> Path:
    leaf = Tree(split_feature=(), threshold=(), left=(), right=(), leaf_value=(1.0,))
    for direction in ("fwd", "bwd_data", "bwd_weight"):
        model = TreeModel(direction=direction, feature_names=feature_names, trees=(leaf,))
        (folder / f"{direction}.trees").write_text(model.to_text())
    return folder


@pytest.mark.parametrize("select", ["heuristic", "topk=3"])
def test_select_plans_among_the_supported_instances(run_profiler, tmp_path, select) -> None:
    result = run_profiler(*PROBLEM, "--select", select, "--models", str(write_models(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("--select keeps 0 of 0 supported (instance, split-K) pairs") == 2


def test_select_all_is_the_default_plan(run_profiler) -> None:
    plain = run_profiler(*PROBLEM)
    assert plain.returncode == 0 and "--select" not in plain.stdout
    assert run_profiler(*PROBLEM, "--select", "all").stdout == plain.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--select", "best"], "--select: 'best' is not accepted (accepted: all, heuristic, topk=K)"),
        (["--select", "topk=0"], "--select topk: 0 is out of range"),
        (["--select", "heuristic", "--models", "/nonexistent"], "/nonexistent/fwd.trees: cannot open"),
    ],
)
def test_bad_select_is_a_usage_error(run_profiler, args, message) -> None:
    result = run_profiler(*PROBLEM, *args)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0].startswith("error: ") and message in result.stderr.splitlines()[0]


def test_a_model_of_other_features_is_refused(run_profiler, tmp_path) -> None:
    write_models(tmp_path, ("a", "b"))
    result = run_profiler(*PROBLEM, "--select", "heuristic", "--models", str(tmp_path))
    assert result.returncode == 2 and "feature list differs" in result.stderr.splitlines()[0]


def test_help_documents_select(run_profiler) -> None:
    assert "--select all|heuristic|topk=K" in run_profiler("--help").stdout
