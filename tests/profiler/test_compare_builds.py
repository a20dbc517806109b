"""bench/compare_builds.py on the CPU: the pairs both builds verified and their ratios, each build's best per
row, failed results, the report, and a whole run over fake profilers (alternating rounds, exit status, bad
input)."""

from __future__ import annotations

import csv
import importlib.util
import math
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "compare_builds.py"
HEADER = (
    "name,N,C,K,G,Di,Hi,Wi,Z,Y,X,stride_d,stride_h,stride_w,pad_d,pad_h,pad_w,"
    "dilation_d,dilation_h,dilation_w"
)
ROWS = ["a,1,8,8,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1", "b,2,16,16,1,1,8,8,1,1,1,1,2,2,0,0,0,1,1,1"]


@pytest.fixture(scope="module")
def cb() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_builds", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare_builds"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def problems(cb: ModuleType, tmp_path: Path) -> list:
    """The two rows, read as the script reads them (compare_cudnn, which it imports)."""
    return sys.modules["compare_cudnn"].read_problems(table(tmp_path))


def table(tmp_path: Path) -> Path:
    path = tmp_path / "p.csv"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n")
    return path


def record(
    problem: int, kernel: str, ms: float | None, status: str = "valid", verified: bool | None = True
) -> dict:
    return {
        "problem_idx": problem,
        "direction": "bwd_data",
        "dtype": "fp16",
        "kernel": kernel,
        "split_k": 1,
        "latency_ms": ms,
        "tflops": None if ms is None else 1.0 / ms,
        "status": status,
        "verified": verified,
        "reason": "" if status == "valid" else "why",
    }


def test_pairs_take_each_builds_fastest_round_and_only_what_both_verified(
    cb: ModuleType, problems: list
) -> None:
    baseline = [
        record(0, "A", 2.0),
        record(0, "A", 1.8),  # a second round, faster: it counts
        record(0, "B", 1.0),
        record(1, "A", 4.0),
        record(1, "C", 3.0),  # the change does not verify C: no pair
        record(1, "D", None, status="not_supported", verified=None),
    ]
    change = [
        record(0, "A", 1.2),
        record(0, "B", 1.25),
        record(1, "A", 4.4),
        record(1, "C", 2.0, verified=False),
    ]
    pairs = cb.pairs_of(problems, baseline, change)
    assert [(p.problem, p.kernel) for p in pairs] == [("a", "A"), ("a", "B"), ("b", "A")]
    assert [p.speedup for p in pairs] == pytest.approx([1.8 / 1.2, 1.0 / 1.25, 4.0 / 4.4])
    assert cb.geomean([p.speedup for p in pairs]) == pytest.approx((1.5 * 0.8 * (4.0 / 4.4)) ** (1 / 3))
    rows = cb.best_rows(problems, ["bwd_data"], ["fp16"], baseline, change)
    # row a: baseline's best is B (1.0 ms), the change's A (1.2 ms); row b: baseline C (3 ms), change A only
    assert [(r.baseline_kernel, r.change_kernel) for r in rows] == [("B", "A"), ("C", "A")]
    assert [r.ratio for r in rows] == pytest.approx([1.0 / 1.2, 3.0 / 4.4])
    failures = cb.failed_results("change", problems, change)
    assert failures == ["change: C (split-K 1) on b bwd_data fp16: verification failed"]
    assert cb.failed_results("baseline", problems, baseline) == []


def test_report_names_the_pairs_that_moved_most(cb: ModuleType, problems: list) -> None:
    baseline = [record(0, f"K{i}", 1.0) for i in range(20)]
    change = [record(0, f"K{i}", 1.0 / (0.5 + 0.05 * i)) for i in range(20)]  # K0 slowest, K19 fastest
    pairs = cb.pairs_of(problems, baseline, change)
    rows = cb.best_rows(problems, ["bwd_data"], ["fp16"], baseline, change)
    report = cb.format_report(rows, pairs, [], 2)
    listed = [
        line.split("|")[4].strip()
        for line in report.splitlines()
        if line.startswith("| 0.") or "| 1." in line[:4]
    ]
    assert listed == [*(f"K{i}" for i in range(cb.MOVED)), *(f"K{i}" for i in range(20 - cb.MOVED, 20))]
    speedups = [0.5 + 0.05 * i for i in range(20)]
    expected = math.exp(sum(math.log(s) for s in speedups) / 20)
    assert f"geometric mean {expected:.3f}, smallest 0.500, largest 1.450 over 20 pairs" in report
    assert "failed" not in report


FAKE = """#!{python}
import csv, json, sys
args = sys.argv[1:]
table = args[args.index("--problems") + 1]
out = args[args.index("--json") + 1]
with open({log!r}, "a") as log:
    log.write({build!r} + "\\n")
rows = list(csv.DictReader(open(table)))
results = []
for index, _ in enumerate(rows):
    for kernel, ms in {latencies!r}.items():
        results.append({{"problem_idx": index, "direction": "fwd", "dtype": "fp16", "kernel": kernel,
                        "split_k": 1, "latency_ms": ms, "tflops": 1.0 / ms, "status": "valid",
                        "verified": kernel != {bad!r}, "reason": ""}})
json.dump({{"results": results}}, open(out, "w"))
sys.exit(1 if {bad!r} else 0)
"""


def fake(tmp_path: Path, build: str, latencies: dict[str, float], bad: str = "") -> Path:
    path = tmp_path / f"fake_{build}"
    log = tmp_path / "order.txt"
    path.write_text(
        FAKE.format(python=sys.executable, log=str(log), build=build, latencies=latencies, bad=bad)
    )
    path.chmod(0o755)
    return path


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False, cwd=tmp_path
    )


def run_builds(tmp_path: Path, baseline: Path, change: Path, rounds: int) -> subprocess.CompletedProcess[str]:
    """The script over the two rows' forward fp16, results in tmp_path/out."""
    builds = ["--baseline", str(baseline), "--change", str(change), "--rounds", str(rounds)]
    rows = ["--directions", "fwd", "--dtypes", "fp16", "--out-dir", str(tmp_path / "out")]
    return run(tmp_path, str(table(tmp_path)), *builds, *rows)


def test_a_run_alternates_the_builds_and_writes_the_report(tmp_path: Path) -> None:
    base = fake(tmp_path, "baseline", {"A": 2.0, "B": 1.0})
    change = fake(tmp_path, "change", {"A": 1.0, "B": 1.25})
    out = tmp_path / "out"
    result = run_builds(tmp_path, base, change, rounds=3)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "order.txt").read_text().split() == ["baseline", "change"] * 3
    with open(out / "compare_builds.csv") as f:
        pairs = list(csv.DictReader(f))
    assert [(p["problem"], p["kernel"], float(p["speedup"])) for p in pairs] == [
        ("a", "A", 2.0),
        ("a", "B", 0.8),
        ("b", "A", 2.0),
        ("b", "B", 0.8),
    ]
    report = (out / "compare_builds.md").read_text()
    assert f"geometric mean {math.sqrt(1.6):.3f}, smallest 0.800, largest 2.000 over 4 pairs" in report
    # best per row: baseline B at 1 ms, change A at 1 ms: the same TFLOP/s
    assert "geometric mean 1.000 over 2 rows" in report
    assert sorted(p.name for p in out.iterdir()) == [
        *(f"baseline_{i}.json" for i in (1, 2, 3)),
        *(f"change_{i}.json" for i in (1, 2, 3)),
        "compare_builds.csv",
        "compare_builds.md",
    ]


def test_a_failed_check_is_listed_and_exits_1(tmp_path: Path) -> None:
    base = fake(tmp_path, "baseline", {"A": 2.0, "B": 1.0})
    change = fake(tmp_path, "change", {"A": 1.0, "B": 1.25}, bad="B")
    result = run_builds(tmp_path, base, change, rounds=1)
    assert result.returncode == 1, result.stderr
    assert "2 results failed:" in result.stdout
    assert "- change: B (split-K 1) on a fwd fp16: verification failed" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["TABLE", "--baseline", "X"], "the following arguments are required: --change"),
        (
            ["TABLE", "--baseline", "no/such", "--change", "X"],
            "--baseline 'no/such' is not an executable file",
        ),
        (["TABLE", "--baseline", "X", "--change", "X", "--rounds", "0"], "--rounds 0: accepted >= 1"),
        (["TABLE", "--baseline", "X", "--change", "X", "--dtypes", "fp8"], "unknown dtype 'fp8'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    executable = fake(tmp_path, "x", {"A": 1.0})
    args = [str(table(tmp_path)) if a == "TABLE" else str(executable) if a == "X" else a for a in args]
    result = run(tmp_path, *args)
    assert result.returncode == 2
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: ") and message in first, result.stderr
    assert "Traceback" not in result.stderr
