"""Fuzz-style probes of the profiler's command line (issue 11), on the CPU test-double profiler.

Listed probes first (zero strides in every input form, int64 element-count overflow, empty and repeated list
values, a folder or FIFO where a file belongs), then seeded random perturbations of a valid CK positional
line, of named flags and of problem-table rows, all with ``--dry-run`` (no GPU). Each ends in a correct
result (status 0 and the job echoes the values given) or one ``error:`` line naming the bad value and
status 2: never a signal (the SIGFPE of a zero stride), a hang or a silent acceptance.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from fuzz_support import SEED, Ended, assert_no_crash, assert_one_line_error, run_bounded

PREFIX = "error: "
DIRECTIONS = ("fwd", "bwd_data", "bwd_weight")
# CK positional: dtype layout index verify init log time ndim G N K C Y X Hi Wi strides dilations lpads rpads
STEM = [
    "1",
    "1",
    "0",
    "1",
    "2",
    "0",
    "1",
    "2",
    "1",
    "32",
    "256",
    "256",
    "3",
    "3",
    "56",
    "56",
    "1",
    "1",
    "1",
    "1",
    "1",
    "1",
    "1",
    "1",
]
NAMES = [
    "dtype",
    "layout",
    "index",
    "verify",
    "init",
    "log",
    "time",
    "ndim",
    "G",
    "N",
    "K",
    "C",
    "Y",
    "X",
    "Hi",
    "Wi",
    "sH",
    "sW",
    "dH",
    "dW",
    "lH",
    "lW",
    "rH",
    "rW",
]
HEADER = ",".join(
    (
        *("name", "N", "C", "K", "G", "Di", "Hi", "Wi", "Z", "Y", "X", "stride_d", "stride_h", "stride_w"),
        *("pad_d", "pad_h", "pad_w", "dilation_d", "dilation_h", "dilation_w"),
    )
)
GOOD_ROW = [
    "r",
    "8",
    "64",
    "64",
    "1",
    "1",
    "28",
    "28",
    "1",
    "3",
    "3",
    "1",
    "1",
    "1",
    "0",
    "1",
    "1",
    "1",
    "1",
    "1",
]


@pytest.fixture
def profile(fake_profiler: Path):
    def run(*args: str | Path) -> Ended:
        return run_bounded([fake_profiler, *args], timeout=30)

    return run


def _positional(direction: str, **values: str) -> list[str]:
    words = list(STEM)
    for name, value in values.items():
        words[NAMES.index(name)] = value
    return [f"grouped_conv_{direction}_tile", *words]


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "run"])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("field", ["sH", "sW"])
def test_a_zero_stride_in_positional_arguments(profile, direction: str, field: str, dry_run: bool) -> None:
    args = _positional(direction, **{field: "0"}) + (["--dry-run"] if dry_run else [])
    axis = "H" if field == "sH" else "W"
    assert_one_line_error(profile(*args), f"stride along {axis} must be >= 1, got 0", prefix=PREFIX)


@pytest.mark.parametrize("stride", ["0,1", "1,0", "0,0", "-1,1"])
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "run"])
def test_a_zero_stride_in_named_flags(profile, stride: str, dry_run: bool) -> None:
    args = ["--direction", "bwd_data", "--dtype", "bf16", "-N", "2", "-K", "16", "-C", "16"]
    args += ["--filter", "3,3", "--input", "14,14", "--stride", stride] + (["--dry-run"] if dry_run else [])
    assert_one_line_error(profile(*args), "stride along", prefix=PREFIX)


@pytest.mark.parametrize("column", ["stride_d", "stride_h", "stride_w", "dilation_h"])
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "run"])
def test_a_zero_stride_in_a_problem_row(profile, tmp_path: Path, column: str, dry_run: bool) -> None:
    row = list(GOOD_ROW)
    row[HEADER.split(",").index(column)] = "0"
    table = tmp_path / "p.csv"
    table.write_text(f"{HEADER}\n{','.join(GOOD_ROW)}\n{','.join(row)}\n")
    args = ["--direction", "fwd,bwd_weight", "--problems", table] + (["--dry-run"] if dry_run else [])
    assert_one_line_error(profile(*args), f"{table}:3:", "got 0", prefix=PREFIX)


OVERFLOWS = {
    "N=K=C=2^32": {"N": "4294967296", "K": "4294967296", "C": "4294967296"},
    "N=2^63": {"N": "9223372036854775808"},
    "2^62 input elements": {"N": "1073741824", "C": "1073741824", "K": "64"},
    "2^62 weight elements": {"K": "2147483647", "C": "2147483647", "Y": "3", "X": "3"},
    "huge spatial": {"Hi": "2147483647", "Wi": "2147483647"},
    "negative": {"N": "-1"},
}


@pytest.mark.parametrize("case", sorted(OVERFLOWS))
def test_int64_element_count_overflow_is_rejected(profile, tmp_path: Path, case: str) -> None:
    values = OVERFLOWS[case]
    assert_one_line_error(profile(*_positional("fwd", **values), "--dry-run"), prefix=PREFIX)
    flags = {"N": "-N", "K": "-K", "C": "-C", "G": "-G"}
    if set(values) <= set(flags):
        named = ["--direction", "fwd", "--filter", "3,3", "--input", "8,8", "--dry-run"]
        named += [word for key, value in values.items() for word in (flags[key], value)]
        assert_one_line_error(profile(*named), prefix=PREFIX)
        row = dict(zip(HEADER.split(","), GOOD_ROW, strict=True)) | values
        table = tmp_path / "p.csv"
        table.write_text(f"{HEADER}\n{','.join(row[c] for c in HEADER.split(','))}\n")
        ended = profile("--direction", "fwd", "--problems", table, "--dry-run")
        assert_one_line_error(ended, f"{table}:2:", prefix=PREFIX)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--dtype", "", "-N", "1"], "--dtype: empty list"),
        (["--direction", "", "--list"], "--direction: empty list"),
        (["--direction", ",", "--list"], "unknown direction ''"),
        (["--dtype", "fp16,fp16", "--problems", "P"], "--dtype: 'fp16' given twice"),
        (["--direction", "fwd,fwd", "--problems", "P"], "--direction: 'fwd' given twice"),
        (["--direction", "bwd_weight", "--split-k", "2,2", "--problems", "P"], "--split-k: '2' given twice"),
        (["--dtype", "fp99", "--problems", "P"], "'fp99'"),
        (["--dtype", "fp16\x01", "--problems", "P"], "unknown dtype"),
        (["--direction", "fwd", "--problems", "DIR", "--dry-run"], "is a directory"),
        (["--direction", "fwd", "--problems", "FIFO", "--dry-run"], "is not a regular file"),
        (["--direction", "fwd", "--problems", "MISSING"], "cannot open"),
        (["--verify-instances", "DIR"], "is a directory"),
        (["--verify-instances", "FIFO"], "is not a regular file"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_listed_bad_input(profile, tmp_path: Path, args: list[str], named: str) -> None:
    table = tmp_path / "p.csv"
    table.write_text(f"{HEADER}\n{','.join(GOOD_ROW)}\n")
    os.mkfifo(tmp_path / "fifo")
    paths = {"P": table, "DIR": tmp_path, "FIFO": tmp_path / "fifo", "MISSING": tmp_path / "missing.csv"}
    words = [str(paths.get(word, word)) for word in args]
    assert_one_line_error(profile(*words), named, prefix=PREFIX)


# ---- generated probes --------------------------------------------------------------------------------------

VALUES = (
    *("0", "-1", "1", "2", "3", "7", "64", "", "x", "1.5", "0x10", "+3", " 4", "1e3", "٣"),
    *("2147483647", "2147483648", "4294967296", "9223372036854775807", "9223372036854775808"),
    "-9223372036854775808",
)
GENERATED_POSITIONAL = 150
GENERATED_NAMED = 100
GENERATED_ROWS = 100


def _judge(ended: Ended, expect: dict[str, str]) -> None:
    """Status 0 with a job line that shows what was asked, or one error line with status 2."""
    assert_no_crash(ended)
    if ended.status == 0:
        job = next((line for line in ended.stdout.splitlines() if line.startswith("problem ")), None)
        assert job is not None, ended.describe()
        for key, value in expect.items():
            assert f" {key}={int(value)} " in job or f" {key}={int(value)}," in job, (key, value, job)
        return
    assert_one_line_error(ended, prefix=PREFIX)


@pytest.mark.parametrize("chunk", range(3))
def test_generated_positional_lines(profile, chunk: int) -> None:
    rng = random.Random(SEED + chunk)
    for _ in range(GENERATED_POSITIONAL // 3):
        direction = rng.choice(DIRECTIONS)
        fields = rng.sample(NAMES, rng.choice((1, 1, 2)))
        values = {field: rng.choice(VALUES) for field in fields}
        args = [*_positional(direction, **values), "--dry-run"]
        if rng.random() < 0.1:
            args.insert(
                rng.randrange(1, len(args)), rng.choice(("1", "--dtype", "fp16"))
            )  # arity / stray word
        expect = {k: v for k, v in values.items() if k in ("G", "N", "K", "C")}
        _judge(profile(*args), expect if "--dtype" not in args[1:-1] else {})


FLAGS = ("--direction", "--dtype", "--ndim", "-G", "-N", "-K", "-C", "--filter", "--input", "--stride",
         "--dilation", "--pad", "--left-pad", "--right-pad", "--split-k", "--warmup", "--repeat", "--init",
         "--verify", "--seed", "--instances")  # fmt: skip
FLAG_VALUES = (*VALUES, "fwd", "fwd,fwd", "bwd_weight", "fp16", "bf16,fp32", "fp16,fp16", "3,3", "0,3", "3,0",
               "1,1,1", ",", "3,,3", "(", "[a-", "float", "int", "constant")  # fmt: skip


@pytest.mark.parametrize("chunk", range(2))
def test_generated_named_flags(profile, chunk: int) -> None:
    rng = random.Random(SEED * 7 + chunk)
    for _ in range(GENERATED_NAMED // 2):
        base = {
            "--direction": "fwd",
            "-N": "2",
            "-K": "16",
            "-C": "16",
            "--filter": "3,3",
            "--input": "14,14",
        }
        for flag in rng.sample(FLAGS, rng.choice((1, 2))):
            base[flag] = rng.choice(FLAG_VALUES)
        args = [word for pair in base.items() for word in pair] + ["--dry-run"]
        _judge(profile(*args), {})


def test_generated_problem_rows(profile, tmp_path: Path) -> None:
    rng = random.Random(SEED * 11)
    columns = HEADER.split(",")
    for case in range(GENERATED_ROWS):
        row = list(GOOD_ROW)
        for index in rng.sample(range(1, len(columns)), rng.choice((1, 1, 2))):
            row[index] = rng.choice(VALUES).replace(",", "")
        if rng.random() < 0.1:
            row = row[: rng.randrange(1, len(row))]  # a short row
        table = tmp_path / f"p{case}.csv"
        table.write_text(f"{HEADER}\n{','.join(row)}\n")
        ended = profile("--direction", "fwd,bwd_data,bwd_weight", "--problems", table, "--dry-run")
        assert_no_crash(ended)
        if ended.status != 0:
            assert_one_line_error(ended, f"{table}:2:", prefix=PREFIX)
