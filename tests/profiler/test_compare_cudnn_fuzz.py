"""Fuzz-style probes of bench/compare_cudnn.py (issue 11): bad input is one ``error:`` line and status 2, a
failed sweep one line with the profiler's status, never a traceback, and no output folder is created before
there is a result. Generated problem rows (fixed seed) go through ``read_problems`` in-process."""

from __future__ import annotations

import importlib.util
import os
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest
from fuzz_support import SEED, assert_no_crash, assert_one_line_error, run_bounded

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "compare_cudnn.py"
COLUMNS = (
    *("name", "N", "C", "K", "G", "Di", "Hi", "Wi", "Z", "Y", "X", "stride_d", "stride_h", "stride_w"),
    *("pad_d", "pad_h", "pad_w", "dilation_d", "dilation_h", "dilation_w"),
)
HEADER = ",".join(COLUMNS)
GOOD = "a,1,8,8,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1"


@pytest.fixture(scope="module")
def cc() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_cudnn_fuzz", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare_cudnn_fuzz"] = module
    spec.loader.exec_module(module)
    return module


def _row(**values: str) -> str:
    cells = dict(zip(COLUMNS, GOOD.split(","), strict=True)) | values
    return ",".join(cells[c] for c in COLUMNS)


TABLES: dict[str, tuple[bytes, str]] = {
    "undecodable": (f"{HEADER}\n{GOOD}\n".encode().replace(b"a,1", b"\xff,1"), "not UTF-8"),
    "NUL": (f"{HEADER}\n{GOOD}\x00\n".encode(), "line 2: a NUL byte"),
    "extra column": (f"{HEADER},extra\n{GOOD},1\n".encode(), "header"),
    "missing column": (f"{HEADER.replace(',dilation_w', '')}\n{GOOD[:-2]}\n".encode(), "header"),
    "repeated column": (f"{HEADER},N\n{GOOD},1\n".encode(), "each once"),
    "ragged row": (f"{HEADER}\n{GOOD},7\n".encode(), "row 2: 20 cells expected"),
    "short row": (f"{HEADER}\n{GOOD[:-4]}\n".encode(), "row 2: 20 cells expected"),
    "zero stride": (f"{HEADER}\n{_row(stride_h='0')}\n".encode(), "stride_h = 0"),
    "N=K=C=2^32": (
        f"{HEADER}\n{_row(N=str(2**32), K=str(2**32), C=str(2**32))}\n".encode(),
        "N = 4294967296",
    ),
    "2^62 elements": (f"{HEADER}\n{_row(N=str(2**30), C=str(2**30), K=str(2**30))}\n".encode(), "2^62"),
    "G not dividing": (f"{HEADER}\n{_row(G='3')}\n".encode(), "G = 3 must divide"),
    "empty output": (f"{HEADER}\n{_row(Y='30')}\n".encode(), "is empty"),
    "not a number": (f"{HEADER}\n{_row(K='x')}\n".encode(), "K"),
    "no rows": (f"{HEADER}\n".encode(), "no problem rows"),
    "empty file": (b"", "header"),
}


@pytest.mark.parametrize("case", sorted(TABLES))
def test_bad_tables(tmp_path: Path, case: str) -> None:
    data, named = TABLES[case]
    table = tmp_path / "p.csv"
    table.write_bytes(data)
    out = tmp_path / "out"
    ended = run_bounded([sys.executable, SCRIPT, table, "--profiler", sys.executable, "--out-dir", out])
    assert_one_line_error(ended, str(table), named, prefix="error: ")
    assert not out.exists(), "output folder created before failing"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["DIR", "--profiler", "PY"], "is not a regular file"),
        (["FIFO", "--profiler", "PY"], "is not a regular file"),
        (["TABLE", "--profiler", "DIR"], "is not an executable file"),
        (["TABLE", "--profiler", "PLAIN"], "is not an executable file"),
        (["TABLE", "--profiler", "PY", "--directions", "fwd,fwd"], "direction 'fwd' given twice"),
        (["TABLE", "--profiler", "PY", "--dtypes", "fp16,fp16"], "dtype 'fp16' given twice"),
        (["TABLE", "--profiler", "PY", "--dtypes", ""], "unknown dtype ''"),
        (["TABLE", "--profiler", "PY", "--warmup", "x"], "--warmup"),
        (["TABLE", "--profiler", "PY", "--repeat", "0"], "--repeat"),
        (["TABLE", "--profiler", "PY", "--out-dir", "PLAIN"], "is not a directory"),
        (["TABLE", "--profiler", "PY", "--out-dir", "PLAIN/sub"], "is not a directory"),
        (["TABLE"], "--profiler"),
    ],
)
def test_bad_command_lines(tmp_path: Path, args: list[str], named: str) -> None:
    table = tmp_path / "p.csv"
    table.write_text(f"{HEADER}\n{GOOD}\n")
    plain = tmp_path / "plain"
    plain.write_text("not a program\n")
    os.mkfifo(tmp_path / "fifo")
    paths = {"TABLE": table, "DIR": tmp_path, "FIFO": tmp_path / "fifo", "PY": sys.executable, "PLAIN": plain}
    words = [str(paths[a]) if a in paths else a.replace("PLAIN", str(plain)) for a in args]
    before = sorted(p.name for p in tmp_path.iterdir())
    ended = run_bounded([sys.executable, SCRIPT, *words], cwd=tmp_path)
    assert_one_line_error(ended, named, prefix="error: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "something was written before failing"


def test_a_failed_sweep_is_one_line_with_its_status_and_writes_nothing(
    fake_profiler: Path, tmp_path: Path
) -> None:
    table = tmp_path / "p.csv"
    table.write_text(f"{HEADER}\n{GOOD}\n")
    out = tmp_path / "out"
    # No GPU here: the profiler exits 3 (a GPU machine would run it); either way no traceback.
    ended = run_bounded([sys.executable, SCRIPT, table, "--profiler", fake_profiler, "--out-dir", out])
    if ended.status == 0:
        pytest.skip("a GPU answered: the sweep ran")
    # The profiler's own reason comes first (its stderr passes through), then ours.
    assert_no_crash(ended)
    assert ended.status == 3, ended.describe()
    assert ended.stderr.splitlines()[-1] == f"error: profiler {fake_profiler} exited with 3", ended.describe()
    assert not out.exists()
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\nexit 1\n")
    failing.chmod(0o755)
    ended = run_bounded([sys.executable, SCRIPT, table, "--profiler", failing, "--out-dir", out])
    assert_one_line_error(ended, "exited with 1", prefix="error: ", status=1)
    assert not out.exists()


VALUES = ("0", "-1", "1", "2", "3", "7", "64", "", "x", "1.5", "2147483648", str(2**40), " 5", "٣", "1e3")
GENERATED = 300


def test_generated_problem_rows(cc: ModuleType, tmp_path: Path) -> None:
    rng = random.Random(SEED * 13)
    table = tmp_path / "p.csv"
    failures = []
    outcomes = {"accepted": 0, "rejected": 0}
    for case in range(GENERATED):
        cells = GOOD.split(",")
        for index in rng.sample(range(1, len(cells)), rng.choice((1, 1, 2))):
            cells[index] = rng.choice(VALUES)
        text = f"{HEADER}\n{','.join(cells)}\n"
        table.write_text(text, encoding="utf-8")
        try:
            (problem,) = cc.read_problems(table)
        except cc.UsageError as error:
            outcomes["rejected"] += 1
            if not str(error).startswith(f"{table}: row 2: ") or "\n" in str(error):
                failures.append(f"#{case} {cells}: {error}")
            continue
        except Exception as error:
            failures.append(f"#{case} {cells}: {type(error).__name__}: {error}")
            continue
        outcomes["accepted"] += 1
        # Accepted rows are ones the profiler accepts too: a positive output and finite FLOPs.
        if min(problem.output()) < 1 or not problem.flops() > 0:
            failures.append(f"#{case} {cells}: accepted a problem with output {problem.output()}")
    assert not failures, "\n".join(failures[:20])
    assert outcomes["accepted"] > 10 and outcomes["rejected"] > 100, outcomes
