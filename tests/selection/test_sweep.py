"""The sweep harness with a fake profiler: schema, GPU spread, retry, timeout, failure, resume, CLI errors."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from heuristics.batch_runner import FatalSweepError
from heuristics.problem_sets import to_csv
from heuristics.sweep import SweepSummary, run_sweep
from heuristics.sweep_plan import SweepConfig
from heuristics.sweep_schema import read_sweep
from tests.selection import synthetic
from tests.selection.conftest import REPO_ROOT, problems_small

CK_RESULT_COLUMNS = [
    "kernel",
    "problem_idx",
    "N",
    "C",
    "K",
    "G",
    "Hi",
    "Wi",
    "Y",
    "X",
    "stride_h",
    "stride_w",
    "pad_h",
    "pad_w",
    "latency_ms",
    "tflops",
    "non_zero",
]


def config(profiler: Path, out: Path, **overrides: object) -> SweepConfig:
    problems = tuple(problems_small()[:6])
    values = {
        "profiler": profiler,
        "problems": {"fwd": problems, "bwd_weight": problems[:3]},
        "dtypes": ("fp16",),
        "out": out,
        "batch_size": 2,
        "timeout_s": 20.0,
        "split_k": (1, 2),
        "gpus": ("0", "1"),
    }
    return SweepConfig(**(values | overrides))


def calls(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def test_sweep_writes_ck_schema_with_every_job(fake_profiler, fake_env, tmp_path):
    log = fake_env()
    out = tmp_path / "sweep.csv"
    summary = run_sweep(config(fake_profiler, out), report=lambda _: None)
    header = next(csv.reader(out.open()))
    assert [c for c in header if c in CK_RESULT_COLUMNS] == CK_RESULT_COLUMNS
    for extra in (
        "Di",
        "Z",
        "stride_d",
        "pad_d",
        "dilation_h",
        "direction",
        "dtype",
        "split_k",
        "instance_string",
    ):
        assert extra in header
    rows = read_sweep([out])
    assert {(r.direction, r.problem_idx) for r in rows} == {("fwd", i) for i in range(6)} | {
        ("bwd_weight", i) for i in range(3)
    }
    # bwd_weight ran both split-K factors; fwd only 1.
    assert {r.split_k for r in rows if r.direction == "bwd_weight" and r.status == "valid"} == {1, 2}
    assert {r.split_k for r in rows if r.direction == "fwd"} == {1}
    # Global problem indices, not the batch's: problem 5 is "f" (2x32x32, G=32) wherever its batch ran.
    assert {(r.N, r.C, r.G) for r in rows if r.problem_idx == 5} == {(2, 32, 32)}
    valid = next(r for r in rows if r.status == "valid" and r.problem_idx == 4 and r.direction == "fwd")
    assert valid.tflops == pytest.approx(
        synthetic.tflops(problems_small()[4], "fwd", "fp16", valid.kernel), rel=1e-3
    )
    assert summary.batches == 3 + 2 and summary.failed_batches == 0
    # One process per batch, spread over both GPUs with CUDA_VISIBLE_DEVICES.
    assert len(calls(log)) == 5
    assert {c[2] for c in calls(log)} == {"0", "1"}


def test_auto_split_k_leaves_the_factors_to_the_profiler(fake_profiler, fake_env, tmp_path):
    log = fake_env()
    out = tmp_path / "sweep.csv"
    run_sweep(config(fake_profiler, out, split_k="auto"), report=lambda _: None)
    assert calls(log) and not any("--split-k" in c for c in calls(log))
    rows = read_sweep([out])
    assert {r.split_k for r in rows if r.direction == "bwd_weight" and r.status == "valid"} == {1, 2, 3}


def test_crash_is_retried_once_and_then_succeeds(fake_profiler, fake_env, tmp_path):
    log = fake_env(crash_once="c")
    out = tmp_path / "sweep.csv"
    summary = run_sweep(
        config(fake_profiler, out, problems={"fwd": tuple(problems_small()[:4])}), report=lambda _: None
    )
    assert summary.failed_batches == 0
    assert sum("c" in c[3:] for c in calls(log)) == 2  # crashed, then ran again
    assert {r.problem_idx for r in read_sweep([out]) if r.status == "valid"} == {0, 1, 2, 3}


@pytest.mark.parametrize("behaviour", [{"crash": "c"}, {"hang": "c"}])
def test_batch_failing_twice_is_recorded_and_the_rest_runs(fake_profiler, fake_env, tmp_path, behaviour):
    log = fake_env(**behaviour)
    out = tmp_path / "sweep.csv"
    # The hang: the healthy batch must finish well inside the timeout even on a loaded 2-core machine.
    timeout = 6.0 if "hang" in behaviour else 60.0
    cfg = config(fake_profiler, out, problems={"fwd": tuple(problems_small()[:4])}, timeout_s=timeout)
    summary = run_sweep(cfg, report=lambda _: None)
    rows = read_sweep([out])
    failed = [r for r in rows if r.status == "batch_failed"]
    # Problem "c" is index 2: its batch (2, 3) failed; the batch (0, 1) did not.
    assert sorted(r.problem_idx for r in failed) == [2, 3], [r.reason for r in failed]
    assert all(("timed out" if "hang" in behaviour else "exit 139") in r.reason for r in failed)
    assert {r.problem_idx for r in rows if r.status == "valid"} == {0, 1}
    assert summary.failed_batches == 1
    assert sum("c" in c[3:] for c in calls(log)) == 2


def test_resume_runs_only_what_the_partial_file_lacks(fake_profiler, fake_env, tmp_path):
    fake_env()
    full = tmp_path / "full.csv"
    run_sweep(config(fake_profiler, full), report=lambda _: None)
    expected = sorted(r.model_dump_json() for r in read_sweep([full]))

    # A sweep killed while writing: the rows of fwd problems 0-3, then half a line.
    lines = full.read_text().splitlines(keepends=True)
    keep = [lines[0]] + [ln for ln in lines[1:] if ",fwd," in ln and ln.split(",")[1] in ("0", "1", "2", "3")]
    partial = tmp_path / "partial.csv"
    partial.write_text("".join(keep) + lines[-1][:25])
    log = fake_env()
    summary = run_sweep(config(fake_profiler, partial), report=lambda _: None)
    assert summary.resumed_jobs == 4
    ran = calls(log)
    assert {(c[0], *c[3:]) for c in ran} == {("fwd", "e", "f"), ("bwd_weight", "a", "b"), ("bwd_weight", "c")}
    assert sorted(r.model_dump_json() for r in read_sweep([partial])) == expected


def test_retry_failed_runs_failed_batches_again(fake_profiler, fake_env, tmp_path):
    fake_env(crash="c")
    out = tmp_path / "sweep.csv"
    cfg = config(fake_profiler, out, problems={"fwd": tuple(problems_small()[:4])})
    run_sweep(cfg, report=lambda _: None)
    log = fake_env()
    run_sweep(cfg.model_copy(update={"retry_failed": True}), report=lambda _: None)
    assert [c[3:] for c in calls(log)] == [["c", "d"]]
    rows = read_sweep([out])
    assert not [r for r in rows if r.status == "batch_failed"]
    assert {r.problem_idx for r in rows if r.status == "valid"} == {0, 1, 2, 3}


def test_usage_error_from_the_profiler_stops_the_sweep(tmp_path):
    profiler = tmp_path / "profiler"
    profiler.write_text("#!/bin/sh\necho 'error: unknown option' >&2\nexit 2\n")
    profiler.chmod(0o755)
    with pytest.raises(FatalSweepError, match="refused"):
        run_sweep(config(profiler, tmp_path / "out.csv"), report=lambda _: None)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "heuristics", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_cli_sweep_end_to_end(fake_profiler, fake_env, tmp_path):
    fake_env()
    problems = tmp_path / "sets"
    problems.mkdir()
    (problems / "bwd_data.csv").write_text(to_csv(problems_small()[:3]))
    out = tmp_path / "sweep.csv"
    done = cli(
        "sweep",
        "--profiler",
        str(fake_profiler),
        "--problems",
        str(problems),
        "--out",
        str(out),
        "--directions",
        "bwd_data",
        "--dtypes",
        "bf16,fp32",
        "--gpus",
        "0",
        "--batch-size",
        "3",
    )
    assert done.returncode == 0, done.stderr
    assert {(r.dtype, r.problem_idx) for r in read_sweep([out])} == {
        (t, i) for t in ("bf16", "fp32") for i in range(3)
    }
    assert (tmp_path / "sweep.csv.meta.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profiler", "/nonexistent/profiler"], "not found or not executable"),
        (["--directions", "sideways"], "unknown direction sideways"),
        (["--problems", "/nonexistent"], "cannot read"),
        (["--split-k", "best"], "--split-k: 'best' is neither auto nor a comma list of integers"),
    ],
)
def test_cli_sweep_bad_input_is_one_line_and_exit_2(fake_profiler, tmp_path, args, message):
    base = {
        "--profiler": str(fake_profiler),
        "--out": str(tmp_path / "o.csv"),
        "--problems": "heuristics/problem_sets",
    }
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    done = cli("sweep", *[x for kv in base.items() for x in kv])
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_cli_bad_row_in_a_resumed_file_is_one_line_and_exit_2(fake_profiler, tmp_path):
    from heuristics.sweep_schema import SWEEP_COLUMNS

    out = tmp_path / "o.csv"
    out.write_text(",".join(SWEEP_COLUMNS) + "\n" + "k,0,-3" + ",1" * (len(SWEEP_COLUMNS) - 3) + "\n")
    done = cli("sweep", "--profiler", str(fake_profiler), "--out", str(out), "--gpus", "0")
    assert done.returncode == 2
    assert f"{out}:2: column N" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_stop_after_leaves_the_rest_for_a_resume(fake_profiler, fake_env, tmp_path):
    fake_env()
    out = tmp_path / "sweep.csv"
    cfg = config(fake_profiler, out, gpus=("0",), stop_after_s=0.01)
    first = run_sweep(cfg, report=lambda _: None)
    assert first.finished_batches < first.batches == 5
    second = run_sweep(cfg.model_copy(update={"stop_after_s": None}), report=lambda _: None)
    assert second.finished_batches == second.batches == 5 - first.finished_batches
    assert len({(r.direction, r.problem_idx) for r in read_sweep([out])}) == 9
    # The record beside the output counts both slices, not only the last.
    record = SweepSummary.model_validate_json((tmp_path / "sweep.csv.meta.json").read_text())
    assert (first.runs, record.runs) == (1, 2)
    assert record.rows_all_runs == first.rows_written + second.rows_written == len(read_sweep([out]))
    assert record.gpu_s_all_runs == pytest.approx(first.gpu_s + second.gpu_s)
    assert record.wall_s_all_runs > record.wall_s == second.wall_s
