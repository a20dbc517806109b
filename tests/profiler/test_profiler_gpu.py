"""The run path on a GPU, with test-double instances of known behaviour (fixtures/gpu_instances.cu): verdicts,
poison detection, split-K, timing, sweeps and their CSV/JSON files, and a kernel fault."""

from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

GROUPED_2D = [
    "-G",
    "2",
    "-N",
    "2",
    "-K",
    "16",
    "-C",
    "24",
    "--filter",
    "3,3",
    "--input",
    "10,9",
    "--stride",
    "2,1",
    "--pad",
    "1,1",
]
GROUPED_3D = [
    "-G",
    "4",
    "-N",
    "1",
    "-K",
    "8",
    "-C",
    "16",
    "--filter",
    "3,1,3",
    "--input",
    "5,6,7",
    "--dilation",
    "1,1,2",
    "--left-pad",
    "1,0,2",
    "--right-pad",
    "0,0,1",
]


def run(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, check=False, timeout=300)


def verdicts(stdout: str) -> dict[str, str]:
    """Kernel name (or instance string for [Valid] lines) -> the line."""
    out: dict[str, str] = {}
    for line in stdout.splitlines():
        if line.startswith("[Valid]"):
            out[line.split(", ")[3]] = line
        elif line.startswith(("[Failed]", "[Not supported]")):
            out[line.split("] ", 1)[1].split(":")[0].split(" (")[0]] = line
    return out


@pytest.mark.parametrize("direction", ["fwd", "bwd_data", "bwd_weight"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_verdict_for_every_planted_fault(gpu_profiler: Path, direction: str, dtype: str) -> None:
    result = run(
        gpu_profiler,
        f"grouped_conv_{direction}_tile",
        "--dtype",
        dtype,
        *GROUPED_2D,
        "--instances",
        "^test_(exact|partial|scaled|nan|unsupported|refused)_",
        "--warmup",
        "1",
        "--repeat",
        "3",
    )
    assert result.returncode == 1, result.stdout + result.stderr
    v = verdicts(result.stdout)
    suffix = f"{direction}_{dtype}_2d"
    exact = v[f"TestDouble<exact,{direction},{dtype},2>"]
    ms = float(re.search(r"Perf: ([0-9.]+) ms", exact).group(1))
    assert ms > 0
    # fwd output 2x5x9x16 (Ho = (10 + 2 - 3) / 2 + 1), bwd_data input 2x10x9x24, bwd_weight 16x(3x3)x12.
    written = {"fwd": 2 * 5 * 9 * 16, "bwd_data": 2 * 10 * 9 * 24, "bwd_weight": 16 * 9 * 12}[direction]
    assert v[f"test_partial_{suffix}"].endswith(f": 1 of {written} output elements not written")
    assert re.search(r"relative L2 error 2\.(49|50)\de-01 > [12]e-0[23]$", v[f"test_scaled_{suffix}"])
    assert v[f"test_nan_{suffix}"].endswith(f": 1 of {written} output elements are NaN or Inf")
    assert (
        v[f"test_unsupported_{suffix}"]
        == f"[Not supported] test_unsupported_{suffix}: test double: never supported"
    )
    assert "run returned cudaErrorInvalidConfiguration" in v[f"test_refused_{suffix}"]
    best = result.stdout.split("Best configuration parameters:\n", 1)[1].splitlines()
    assert best[0] == f"name: TestDouble<exact,{direction},{dtype},2>"
    assert best[1] == f"kernel: test_exact_{suffix}"


def test_all_exact_instances_pass_on_3d_and_every_init_mode(gpu_profiler: Path, tmp_path: Path) -> None:
    for init in ("float", "int", "constant"):
        out = tmp_path / f"{init}.json"
        result = run(
            gpu_profiler,
            "--direction",
            "fwd,bwd_data,bwd_weight",
            "--dtype",
            "fp16,bf16,fp32",
            *GROUPED_3D,
            "--instances",
            "^test_exact_",
            "--init",
            init,
            "--time",
            "0",
            "--json",
            str(out),
        )
        assert result.returncode == 0, result.stdout + result.stderr
        records = json.loads(out.read_text())["results"]
        assert len(records) == 9
        assert all(r["status"] == "valid" and r["verified"] and r["non_zero"] for r in records)
        tolerance = {"fp16": 1e-2, "bf16": 1e-2, "fp32": 2e-3}
        assert all(r["rel_l2_error"] <= tolerance[r["dtype"]] for r in records)


def test_split_k_list_runs_each_accepted_factor(gpu_profiler: Path) -> None:
    result = run(
        gpu_profiler,
        "grouped_conv_bwd_weight_tile",
        "--dtype",
        "bf16",
        *GROUPED_2D,
        "--instances",
        "^test_exact_",
        "--split-k",
        "1,2,4",
        "--repeat",
        "2",
        "--warmup",
        "0",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert sum(line.startswith("[Valid]") and line.endswith("SplitK 1") for line in lines) == 1
    assert sum(line.startswith("[Valid]") and line.endswith("SplitK 2") for line in lines) == 1
    assert (
        "[Not supported] test_exact_bwd_weight_bf16_2d: SplitK 4: test double: k_batch 1 or 2 only"
    ) in lines


def test_sweep_writes_csv_json_and_progress(gpu_profiler: Path, tmp_path: Path) -> None:
    table = tmp_path / "p.csv"
    table.write_text(
        "name,N,C,K,G,Di,Hi,Wi,Z,Y,X,stride_d,stride_h,stride_w,pad_d,pad_h,pad_w,dilation_d,dilation_h,dilation_w\n"
        "dense,2,16,32,1,1,12,12,1,3,3,1,1,1,0,1,1,1,1,1\n"
        "depthwise,1,32,32,32,1,14,14,1,5,5,1,2,2,0,2,2,1,1,1\n"
        "c3d,1,8,8,2,4,6,6,3,3,3,1,1,1,1,1,1,1,1,1\n"
    )
    csv_path, json_path = tmp_path / "r.csv", tmp_path / "r.json"
    result = run(
        gpu_profiler,
        "--direction",
        "fwd,bwd_weight",
        "--dtype",
        "fp16,fp32",
        "--problems",
        str(table),
        "--instances",
        "^test_(exact|unsupported)_",
        "--csv",
        str(csv_path),
        "--json",
        str(json_path),
        "--repeat",
        "3",
        "--warmup",
        "1",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    progress = [line for line in result.stderr.splitlines() if line.startswith("[progress]")]
    assert len(progress) == 3 * 2 * 2 and progress[-1].startswith("[progress] 12/12 c3d bwd_weight fp32")
    with csv_path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3 * 2 * 2 * 2  # problems x directions x dtypes x (exact, unsupported)
    valid = [r for r in rows if r["status"] == "valid"]
    assert len(valid) == 12 and all(r["verified"] == "1" and float(r["tflops"]) > 0 for r in valid)
    assert {r["problem_name"] for r in valid} == {"dense", "depthwise", "c3d"}
    assert json.loads(json_path.read_text())["results"][0].keys() == rows[0].keys()


def test_a_kernel_fault_stops_the_sweep_and_keeps_the_report(gpu_profiler: Path, tmp_path: Path) -> None:
    csv_path = tmp_path / "r.csv"
    result = run(
        gpu_profiler,
        "grouped_conv_fwd_tile",
        "--dtype",
        "fp16",
        *GROUPED_2D,
        "--instances",
        "^test_(crash|exact)_",
        "--csv",
        str(csv_path),
    )
    assert result.returncode == 1
    assert "[Failed] test_crash_fwd_fp16_2d: kernel failed: cudaErrorIllegalAddress" in result.stdout
    assert "the CUDA context is lost" in result.stderr
    with csv_path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["failed"]
