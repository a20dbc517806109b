"""bench/compare_cudnn.py on the CPU: problem categories, picking our best, geometric means, the table and
CSV, bad input, and that importing it does not import PyTorch."""

from __future__ import annotations

import csv
import importlib.util
import math
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "compare_cudnn.py"
HEADER = (
    "name,N,C,K,G,Di,Hi,Wi,Z,Y,X,stride_d,stride_h,stride_w,pad_d,pad_h,pad_w,"
    "dilation_d,dilation_h,dilation_w"
)


@pytest.fixture(scope="module")
def cc() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_cudnn", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare_cudnn"] = module
    spec.loader.exec_module(module)
    return module


def table(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "p.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def test_categories_and_flops(cc: ModuleType, tmp_path: Path) -> None:
    problems = cc.read_problems(
        table(
            tmp_path,
            [
                "dense,32,3,64,1,1,224,224,1,7,7,1,2,2,0,3,3,1,1,1",
                "grouped,8,128,128,32,1,28,28,1,3,3,1,1,1,0,1,1,1,1,1",
                "dw,8,64,64,64,1,56,56,1,3,3,1,2,2,0,1,1,1,1,1",
                "c3d,2,32,32,8,4,8,8,3,3,3,1,1,1,1,1,1,1,1,1",
                "g16,8,224,224,14,1,28,28,1,3,3,1,1,1,0,1,1,1,1,1",
                "g15,8,120,120,8,1,28,28,1,3,3,1,1,1,0,1,1,1,1,1",
                "dw3d,8,48,48,48,16,56,56,3,3,3,1,1,1,1,1,1,1,1,1",
                "c3d_dense,2,64,64,1,4,8,8,3,3,3,1,1,1,1,1,1,1,1,1",
                "dw3d_x2,2,32,64,32,4,8,8,3,3,3,1,1,1,1,1,1,1,1,1",
            ],
        )
    )
    # C/G = 4 and 15 are small_cg (issue 10), C/G = 16 grouped (issue 9). A 3D layer is 3d (issue 9) whatever
    # its groups, unless it is depthwise (G = C = K): depthwise (issue 10) is decided first, in 2D and 3D. A
    # channel multiplier (K = 2G) is not depthwise.
    categories = ["small_cg", "depthwise", "3d", "grouped", "small_cg", "depthwise", "3d", "3d"]
    assert [cc.category_of(p) for p in problems] == ["dense", *categories]
    # stem: 112x112 output, 2*32*64*112*112*3*49 FLOPs.
    assert problems[0].output() == (1, 112, 112)
    assert problems[0].flops() == 2 * 32 * 64 * 112 * 112 * 3 * 49
    assert problems[2].output() == (1, 28, 28)
    assert problems[3].ndim == 3 and problems[3].output() == (4, 8, 8)
    # 3D depthwise 3x3x3, pad 1: 16x56x56 output, 2*N*K*(Do*Ho*Wo)*(C/G = 1)*27 FLOPs.
    assert problems[6].ndim == 3 and problems[6].output() == (16, 56, 56)
    assert problems[6].flops() == 2 * 8 * 48 * 16 * 56 * 56 * 27


def test_depthwise_3d_table(cc: ModuleType) -> None:
    """bench/problems/depthwise_3d.csv (video depthwise layers) loads with both problem readers, and every row
    is a 3D depthwise problem (G = C = K, category depthwise) with a cubic filter whose fp32 tensors stay
    below 300 MB."""
    from generators.problem import load_problems

    path = SCRIPT.parent / "problems" / "depthwise_3d.csv"
    assert path.read_text().splitlines()[0] == HEADER
    rows = cc.read_problems(path)
    assert len(rows) >= 7 and len({p.name for p in rows}) == len(rows)
    for p in rows:
        assert p.G == p.C == p.K > 1 and p.ndim == 3, p.name
        assert p.Z == p.Y == p.X and cc.category_of(p) == "depthwise", p.name
        assert max(p.tensor_elements().values()) * 4 < 300e6, p.name
    assert {p.Z for p in rows} == {3, 5, 7} and {p.stride_h for p in rows} == {1, 2}
    loaded = load_problems(path)
    assert [p.name for p in loaded] == [p.name for p in rows]
    assert all(p.ndim_spatial == 3 for p in loaded)


def test_bandwidth_counts_each_tensor_once(cc: ModuleType, tmp_path: Path) -> None:
    # depthwise 3x3 stride 2 at 56x56 -> 28x28, N = 8, C = K = G = 64
    (p,) = cc.read_problems(table(tmp_path, ["dw,8,64,64,64,1,56,56,1,3,3,1,2,2,0,1,1,1,1,1"]))
    elements = 8 * 64 * 56 * 56 + 64 * 9 + 8 * 64 * 28 * 28
    assert p.min_bytes("fp16") == 2 * elements and p.min_bytes("fp32") == 4 * elements
    # a run at 1 TFLOP/s takes flops / 1e12 s; in that time min_bytes moved
    seconds = p.flops() / 1e12
    assert cc.achieved_gbps(p, "bf16", 1.0) == pytest.approx(2 * elements / seconds / 1e9)
    row = cc.Comparison(
        problem="dw",
        problem_idx=0,
        category="depthwise",
        direction="fwd",
        dtype="fp16",
        ours_tflops=1.0,
        ours_kernel="k",
        cudnn_tflops=0.5,
        ours_gbps=2400.0,
        copy_gbps=3200.0,
    )
    assert row.roofline_fraction == pytest.approx(2400.0 / cc.ROOFLINE_GBPS)
    assert row.copy_fraction == pytest.approx(0.75)
    line = "| dw | depthwise | fwd | fp16 | 1.0 | 2400 | 0.80 | 3200 | 0.75 | 0.5 | 2.00 |"
    assert line in cc.format_table([row], {})
    # The reference copy moves min_bytes in all: two buffers of half of it; 1 ms for all of it is its GB/s.
    assert 2 * cc.copy_buffer_bytes(p, "fp16") == p.min_bytes("fp16")
    assert cc.copy_gbps(p, "fp32", 1.0) == pytest.approx(4 * elements / 1e-3 / 1e9)


def test_best_ours_takes_the_fastest_verified_valid_result(cc: ModuleType) -> None:
    records = [
        {
            "problem_idx": 0,
            "direction": "fwd",
            "dtype": "fp16",
            "status": "valid",
            "verified": True,
            "tflops": 10.0,
            "kernel": "a",
        },
        {
            "problem_idx": 0,
            "direction": "fwd",
            "dtype": "fp16",
            "status": "valid",
            "verified": True,
            "tflops": 30.0,
            "kernel": "b",
        },
        {
            "problem_idx": 0,
            "direction": "fwd",
            "dtype": "fp16",
            "status": "failed",
            "verified": False,
            "tflops": None,
            "kernel": "c",
        },
        {
            "problem_idx": 0,
            "direction": "fwd",
            "dtype": "bf16",
            "status": "valid",
            "verified": False,
            "tflops": 99.0,
            "kernel": "d",
        },
        {
            "problem_idx": 1,
            "direction": "bwd_data",
            "dtype": "fp16",
            "status": "not_supported",
            "verified": None,
            "tflops": None,
            "kernel": "e",
        },
    ]
    assert cc.best_ours(records) == {(0, "fwd", "fp16"): (30.0, "b")}


def test_geomean_table_and_csv(cc: ModuleType, tmp_path: Path) -> None:
    def row(problem: str, category: str, ours: float | None, cudnn: float) -> object:
        return cc.Comparison(
            problem=problem,
            problem_idx=0,
            category=category,
            direction="fwd",
            dtype="fp16",
            ours_tflops=ours,
            ours_kernel="k" if ours else "",
            cudnn_tflops=cudnn,
        )

    rows = [
        row("a", "dense", 100.0, 200.0),
        row("b", "dense", 400.0, 200.0),
        row("c", "grouped", 30.0, 10.0),
        row("d", "depthwise", None, 5.0),
    ]
    means = cc.geomean_by_category(rows)
    assert means == {"dense": pytest.approx(1.0), "grouped": pytest.approx(3.0)}
    text = cc.format_table(rows, means)
    assert "| a | dense | fwd | fp16 | 100.0 | - | - | - | - | 200.0 | 0.50 |" in text
    assert "| d | depthwise | fwd | fp16 | - | - | - | - | - | 5.0 | - |" in text
    assert "| grouped | 3.00 |" in text and "| depthwise |" not in text.split("geometric mean")[1]
    # Per category, dtype and direction, with the rows counted; nothing for a category none of whose rows ran.
    assert "| dense | fp16 | 1.00 (2) | - | - |" in text
    assert "| grouped | fp16 | 3.00 (1) | - | - |" in text
    assert "| depthwise | fp16 |" not in text
    out = tmp_path / "r.csv"
    cc.write_csv(out, rows)
    with out.open(newline="") as f:
        records = list(csv.DictReader(f))
    assert [r["ratio"] for r in records] == ["0.5000", "2.0000", "3.0000", "-"]
    assert math.isclose(float(records[2]["ours_tflops"]), 30.0)


def test_geomean_by_direction_keeps_dtypes_and_directions_apart(cc: ModuleType) -> None:
    def row(direction: str, dtype: str, ratio: float) -> object:
        return cc.Comparison(
            problem="p",
            problem_idx=0,
            category="small_cg",
            direction=direction,
            dtype=dtype,
            ours_tflops=ratio * 10.0,
            ours_kernel="k",
            cudnn_tflops=10.0,
        )

    rows = [
        row("fwd", "fp16", 2.0),
        row("fwd", "fp16", 0.5),
        row("fwd", "bf16", 4.0),
        row("bwd_data", "fp16", 3.0),
    ]
    means = cc.geomean_by_direction(rows)
    assert set(means) == {
        ("small_cg", "fp16", "fwd"),
        ("small_cg", "bf16", "fwd"),
        ("small_cg", "fp16", "bwd_data"),
    }
    assert means[("small_cg", "fp16", "fwd")] == (pytest.approx(1.0), 2)
    assert means[("small_cg", "bf16", "fwd")] == (pytest.approx(4.0), 1)
    text = cc.format_table(rows, cc.geomean_by_category(rows))
    assert "| small_cg | fp16 | 1.00 (2) | 3.00 (1) | - |" in text
    assert "| small_cg | bf16 | 4.00 (1) | - | - |" in text


def test_importing_does_not_import_torch() -> None:
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('cc', {str(SCRIPT)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "print('torch' in sys.modules, 'matplotlib' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False False"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.csv", "--profiler", "x"], "problem table 'missing.csv' does not exist"),
        (["TABLE", "--profiler", "x", "--dtypes", "fp8"], "unknown dtype 'fp8' (accepted: fp16, bf16, fp32)"),
        (["TABLE", "--profiler", "no/such/profiler"], "profiler 'no/such/profiler' does not exist"),
        (["BAD", "--profiler", "x"], "row 2: N: Input should be a valid integer"),
        (["TABLE", "--profiler", "x", "--ndims", "4"], "unknown ndim '4' (accepted: 2, 3)"),
        (["TABLE", "--profiler", "x", "--ndims", "3"], "no 3D problem rows (--ndims 3)"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    good = table(tmp_path, ["a,1,8,8,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1"])
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "\nb,x,8,8,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1\n")
    args = [str(good) if a == "TABLE" else str(bad) if a == "BAD" else a for a in args]
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[0].startswith("error: ")
    assert message in result.stderr.splitlines()[0]
    assert "Traceback" not in result.stderr


def test_cudnn_counts_its_better_round(cc: ModuleType) -> None:
    assert cc.CUDNN_ROUNDS == 2
    assert cc.best_of_rounds([0.91, 0.52]) == 0.52  # an outlier round does not make the ratio
    with pytest.raises(ValueError):
        cc.best_of_rounds([])


def test_split_k_factors(cc: ModuleType) -> None:
    assert cc.split_k_factors("") == []
    assert cc.split_k_factors("1,4,16") == [1, 4, 16]
    for bad, message in (("0", "'0' is not a positive integer"), ("2,x", "'x'"), ("4,4", "4 is given twice")):
        with pytest.raises(cc.UsageError, match=message):
            cc.split_k_factors(bad)


def test_split_k_reaches_the_profiler(tmp_path: Path) -> None:
    """--split-k is passed through to the profiler's command line (recorded by a fake that then fails)."""
    good = table(tmp_path, ["a,1,8,8,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1"])
    record = tmp_path / "argv.txt"
    fake = tmp_path / "fake_profiler"
    fake.write_text(f'#!/bin/sh\necho "$@" > {record}\nexit 3\n')
    fake.chmod(0o755)
    args = [str(good), "--profiler", str(fake), "--directions", "bwd_weight", "--split-k", "2,8"]
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert result.returncode == 3
    assert "--split-k 2,8" in record.read_text()


def test_ndims_sweeps_only_those_rows(tmp_path: Path) -> None:
    """--ndims 3: the profiler is given a table of the 3D rows alone, in table order (a fake profiler copies
    it, then fails); a depth stride alone makes a row 3D."""
    rows = [
        "flat,1,8,8,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1",
        "video,2,8,8,1,4,8,8,3,3,3,1,1,1,1,1,1,1,1,1",
        "flat2,1,16,16,1,1,8,8,1,1,1,1,1,1,0,0,0,1,1,1",
        "depth_stride,1,8,8,1,5,6,6,1,1,1,2,1,1,0,0,0,1,1,1",
    ]
    good = table(tmp_path, rows)
    swept = tmp_path / "swept.csv"
    fake = tmp_path / "fake_profiler"
    fake.write_text(f'#!/bin/sh\nwhile [ "$1" != "--problems" ]; do shift; done\ncp "$2" {swept}\nexit 3\n')
    fake.chmod(0o755)
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(good), "--profiler", str(fake), "--ndims", "3"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 3
    lines = swept.read_text().splitlines()
    assert lines == [HEADER, rows[1], rows[3]]


def test_select_ndims_renumbers(cc: ModuleType, tmp_path: Path) -> None:
    path = table(
        tmp_path,
        ["a,1,8,8,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1", "b,2,8,8,1,4,8,8,3,3,3,1,1,1,1,1,1,1,1,1"],
    )
    problems = cc.read_problems(path)
    assert [(p.name, p.index) for p in cc.select_ndims(problems, [3], path)] == [("b", 0)]
    assert cc.select_ndims(problems, [2, 3], path) == problems


def test_compare_times_one_copy_per_problem_and_dtype(
    cc: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Timers replaced (no GPU): the copy of a (problem, dtype) is timed once and its GB/s reaches the rows of
    # every direction; our GB/s and the fractions follow from the times.
    problems = cc.read_problems(
        table(
            tmp_path,
            [
                "dw,8,64,64,64,1,56,56,1,3,3,1,1,1,0,1,1,1,1,1",
                "dense,4,32,32,1,1,14,14,1,3,3,1,1,1,0,1,1,1,1,1",
            ],
        )
    )
    copies: list[int] = []

    def fake_copy(nbytes: int, warmup: int, repeat: int) -> float:
        copies.append(nbytes)
        return 0.5

    monkeypatch.setattr(cc, "time_copy", fake_copy)
    monkeypatch.setattr(cc, "time_cudnn", lambda p, direction, dtype, warmup, repeat: 2.0)
    ours = {(0, "fwd", "fp16"): (4.0, "k")}
    rows = cc.compare(problems, ours, ["fwd", "bwd_data"], ["fp16", "fp32"], warmup=1, repeat=2)
    assert len(rows) == 8
    assert copies == [cc.copy_buffer_bytes(p, dt) for p in problems for dt in ("fp16", "fp32")]
    for r in rows:
        p = problems[r.problem_idx]
        assert r.copy_gbps == pytest.approx(p.min_bytes(r.dtype) / 0.5e6)
    (mine,) = [r for r in rows if r.ours_tflops]
    assert mine.problem == "dw" and mine.direction == "fwd" and mine.dtype == "fp16"
    assert mine.copy_fraction == pytest.approx(mine.ours_gbps / mine.copy_gbps)
    assert all(r.copy_fraction is None for r in rows if r is not mine)
