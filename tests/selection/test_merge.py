"""``python -m heuristics merge``: per shape the newest source's rows; problem_idx from the full set."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from generators.problem import CSV_COLUMNS, ConvProblem
from heuristics.problem_sets import to_csv
from heuristics.sweep_schema import format_rows, read_sweep
from tests.selection.conftest import REPO_ROOT, problems_small, synthetic_rows

SET = [p for p in problems_small() if p.ndim_spatial == 2]  # the "full set" of these tests


def key(problem: ConvProblem) -> tuple[int, ...]:
    return tuple(getattr(problem, c) for c in CSV_COLUMNS)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "heuristics", *args], cwd=REPO_ROOT, capture_output=True, text=True
    )


def write_sweep(path: Path, problems: list, scale: float, record: dict | None = None) -> None:
    """A sweep of ``problems`` numbered as a sample would be (0..n-1); TFLOP/s scaled to tell sweeps apart."""
    rows = [
        r.model_copy(update={"tflops": r.tflops * scale if r.tflops else None})
        for r in synthetic_rows(problems, ("bwd_data",), ("fp16",))
    ]
    text = format_rows(rows, header=True)
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    if record is not None:
        path.with_name(path.name + ".meta.json").write_text(json.dumps(record))


@pytest.fixture
def problem_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "sets"
    folder.mkdir()
    for direction in ("fwd", "bwd_data"):
        (folder / f"{direction}.csv").write_text(to_csv(SET))
    return folder


def test_newest_source_wins_per_shape_and_older_fills_the_rest(tmp_path, problem_dir):
    newer, older, out = tmp_path / "new.csv", tmp_path / "old.csv.gz", tmp_path / "merged.csv.gz"
    write_sweep(newer, [SET[3], SET[1]], scale=2.0, record={"rows_written": 1})
    write_sweep(older, [SET[0], SET[1], SET[2]], scale=1.0)
    args = ("merge", "--direction", "bwd_data", "--data", str(newer), str(older), "--out", str(out))
    done = cli(*args, "--problems", str(problem_dir))
    assert done.returncode == 0, done.stderr
    merged = read_sweep([out])
    # Set order, each shape once; problem_idx is the shape's index in the set (each sweep numbered its own).
    assert [r.problem_idx for r in merged] == sorted(r.problem_idx for r in merged)
    assert {r.problem_idx for r in merged} == {0, 1, 2, 3}
    assert all(r.shape_key == key(SET[r.problem_idx]) for r in merged)
    # Shape 1 is in both sweeps: its rows are all the newer sweep's, the other shapes' their only sweep's.
    newer_rows = read_sweep([newer])
    newer_shapes = {r.shape_key for r in newer_rows}
    expected = newer_rows + [r for r in read_sweep([older]) if r.shape_key not in newer_shapes]

    def content(rows: list) -> list[str]:
        return sorted(str(r.model_dump(exclude={"problem_idx"})) for r in rows)

    assert content(merged) == content(expected)
    record = json.loads((tmp_path / "merged.csv.gz.meta.json").read_text())
    assert record["rows_written"] == len(merged) and record["shapes"] == 4
    assert [(s["shapes"], s["shapes_taken"]) for s in record["sources"]] == [(2, 2), (3, 2)]
    assert record["sources"][0]["sweep_record"] == {"rows_written": 1}
    assert record["sources"][1]["sweep_record"] is None
    assert gzip.decompress(out.read_bytes())  # gzip data, whatever the name


def test_merge_is_reproducible_byte_for_byte(tmp_path, problem_dir):
    newer, older = tmp_path / "new.csv", tmp_path / "old.csv"
    write_sweep(newer, [SET[2]], scale=2.0)
    write_sweep(older, [SET[0], SET[2]], scale=1.0)
    outs = []
    for name in ("a.csv.gz", "b.csv.gz"):
        out = tmp_path / name
        args = ("merge", "--direction", "bwd_data", "--data", str(newer), str(older), "--out", str(out))
        assert cli(*args, "--problems", str(problem_dir)).returncode == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_merge_refuses_a_shape_outside_the_set_in_one_line(tmp_path, problem_dir):
    (problem_dir / "bwd_data.csv").write_text(to_csv(SET[:2]))
    sweep = tmp_path / "s.csv"
    write_sweep(sweep, [SET[4]], scale=1.0)
    args = ("merge", "--direction", "bwd_data", "--data", str(sweep), "--out", str(tmp_path / "o.csv"))
    done = cli(*args, "--problems", str(problem_dir))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not in the bwd_data problem set" in done.stderr
    assert not (tmp_path / "o.csv").exists()


def test_merge_refuses_another_direction_in_one_line(tmp_path, problem_dir):
    sweep = tmp_path / "s.csv"
    write_sweep(sweep, [SET[0]], scale=1.0)
    args = ("merge", "--direction", "fwd", "--data", str(sweep), "--out", str(tmp_path / "o.csv"))
    done = cli(*args, "--problems", str(problem_dir))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
