"""Training on synthetic sweep data: the one command, its artifacts, reproducibility, and that it learns."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from generators.problem import load_problems
from heuristics.dataset import build_dataset
from heuristics.problem_sets import sample
from heuristics.sweep_schema import format_rows
from tests.selection.conftest import REPO_ROOT, synthetic_rows

pytest.importorskip("lightgbm", reason="lightgbm is not installed (requirements.txt)")

DIRECTIONS = ("fwd", "bwd_weight")


@pytest.fixture(scope="module")
def sweep_file(tmp_path_factory: pytest.TempPathFactory):
    problems = sample(load_problems(REPO_ROOT / "heuristics/problem_sets/fwd.csv"), 50, seed=5)
    rows = synthetic_rows(problems, DIRECTIONS, ("fp16", "fp32"))
    path = tmp_path_factory.mktemp("sweep") / "sweep.csv"
    path.write_text(format_rows(rows, header=True))
    return path, rows


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "heuristics", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def train(sweep, out, directions=DIRECTIONS) -> subprocess.CompletedProcess[str]:
    return cli(
        "train",
        "--data",
        str(sweep),
        "--out",
        str(out),
        "--directions",
        ",".join(directions),
        "--max-rounds",
        "120",
        "--folds",
        "4",
    )


@pytest.fixture(scope="module")
def trained(sweep_file, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("models")
    done = train(sweep_file[0], out)
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_train_writes_models_that_beat_chance(sweep_file, trained):
    _, rows = sweep_file
    models, stdout = trained
    for direction in DIRECTIONS:
        meta = json.loads((models / f"{direction}.json").read_text())
        data = build_dataset(rows, direction)
        groups = np.unique(data.group)
        # Chance: the mean efficiency of a uniformly random valid candidate, per group.
        chance = np.mean([data.efficiency[data.group == g].mean() for g in groups])
        # every (shape, dtype) with a valid measurement is a group: 50 shapes x 2 dtypes, less those that no
        # kernel supports
        valid = {(r.shape_key, r.dtype) for r in rows if r.direction == direction and r.status == "valid"}
        assert meta["groups"] == len(groups) == len(valid) > 90
        assert meta["cv"]["mean_efficiency"] >= 0.9
        assert meta["cv"]["mean_efficiency"] > chance + 0.1, (meta["cv"], chance)
        assert meta["cv"]["top5_accuracy"] > meta["cv"]["top1_accuracy"] > 0.2
        eval_rows = (models / f"{direction}_eval.csv").read_text().splitlines()
        assert len(eval_rows) == 1 + len(groups)
        assert f"{direction:<11} groups {len(groups):>5}  mean" in stdout


def test_training_is_reproducible(sweep_file, trained, tmp_path):
    assert train(sweep_file[0], tmp_path, directions=("fwd",)).returncode == 0
    assert (trained[0] / "fwd.trees").read_bytes() == (tmp_path / "fwd.trees").read_bytes()


def test_evaluate_scores_exported_models(sweep_file, trained):
    done = cli("evaluate", "--data", str(sweep_file[0]), "--models", str(trained[0]), "--directions", "fwd")
    assert done.returncode == 0, done.stderr
    # On its own training shapes the model does at least as well as held out.
    held_out = json.loads((trained[0] / "fwd.json").read_text())["cv"]["mean_efficiency"]
    seen = float(done.stdout.split("mean")[1].split("%")[0]) / 100
    assert seen >= held_out - 0.005


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--directions", "bwd_data"], "no valid bwd_data measurements"),
        (["--directions", "upward"], "unknown direction upward"),
    ],
)
def test_train_bad_input_is_one_line_and_exit_2(sweep_file, tmp_path, args, message):
    done = cli("train", "--data", str(sweep_file[0]), "--out", str(tmp_path), *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_train_bad_csv_row_is_one_line_and_exit_2(sweep_file, tmp_path):
    lines = sweep_file[0].read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], lines[1].replace(",fwd,", ",sideways,", 1), *lines[2:5]]) + "\n")
    done = cli("train", "--data", str(bad), "--out", str(tmp_path))
    assert done.returncode == 2 and f"{bad}:2: column direction" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
