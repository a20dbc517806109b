"""--select heuristic | topk=K and --models: parsing, model loading and the dry-run plan (no GPU needed).

The test-double instances are never supported, so the plan keeps none; the ranking itself is covered by
tests/selection (the same headers, compiled host-only, against the Python side).
"""

from __future__ import annotations

import shutil
import subprocess
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
        (["--select", "heuristic", "--models", ""], "--models: an empty path (accepted: a folder holding"),
    ],
)
def test_bad_select_is_a_usage_error(run_profiler, args, message) -> None:
    result = run_profiler(*PROBLEM, *args)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0].startswith("error: ") and message in result.stderr.splitlines()[0]


def run_in(exe: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60)


def test_default_models_are_compiled_in_wherever_the_executable_is(fake_profiler, tmp_path) -> None:
    # No --models: the models the profiler was built with, not a heuristics/models folder near the executable
    # or the working directory (here one whose models every loader refuses).
    repo = tmp_path / "repo"
    exe = repo / "build" / "x-sm_90a" / "profiler" / "tiledispatch_profiler"
    exe.parent.mkdir(parents=True)
    shutil.copy2(fake_profiler, exe)
    models = repo / "heuristics" / "models"
    models.mkdir(parents=True)
    write_models(models, ("a", "b"))
    for cwd in (repo, tmp_path):
        result = run_in(exe, cwd, *PROBLEM, "--select", "heuristic")
        assert result.returncode == 0, result.stderr
        assert result.stdout.count("--select keeps 0 of 0 supported") == 2
    # --models still names the folder to read
    refused = run_in(exe, tmp_path, *PROBLEM, "--select", "heuristic", "--models", str(models))
    assert refused.returncode == 2
    assert f"{models}/fwd.trees" in refused.stderr.splitlines()[0]
    assert "feature list differs" in refused.stderr.splitlines()[0]


def test_a_model_of_other_features_is_refused(run_profiler, tmp_path) -> None:
    write_models(tmp_path, ("a", "b"))
    result = run_profiler(*PROBLEM, "--select", "heuristic", "--models", str(tmp_path))
    assert result.returncode == 2 and "feature list differs" in result.stderr.splitlines()[0]


def test_help_documents_select(run_profiler) -> None:
    assert "--select all|heuristic|topk=K" in run_profiler("--help").stdout
