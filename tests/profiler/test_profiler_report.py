"""The CK-style result lines and the --csv / --json files, through a driver that feeds crafted results."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

# The upstream sweep's result schema (ck_conventions section 6).
UPSTREAM_COLUMNS = [
    *("kernel", "problem_idx", "N", "C", "K", "G", "Hi", "Wi", "Y", "X"),
    *("stride_h", "stride_w", "pad_h", "pad_w", "latency_ms", "tflops", "non_zero"),
]
OUR_COLUMNS = ["direction", "dtype", "instance_string", "verified"]


def run_driver(report_driver: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    csv_path, json_path = tmp_path / "r.csv", tmp_path / "r.json"
    result = subprocess.run(
        [str(report_driver), str(csv_path), str(json_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    return result, csv_path, json_path


def test_result_lines_and_best_block(report_driver: Path, tmp_path: Path) -> None:
    result, _, _ = run_driver(report_driver, tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "[Valid] Perf: 0.25000 ms, 12.500 TFlops, 800.00 GB/s, "
        "GroupedConvolutionBackwardWeightKernel<2,Default,NHWGC,GKYXC>, SplitK 4"
    )
    assert lines[1] == (
        "[Failed] grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_64x64x32_2x2x1_32x32x16"
        " (SplitK 4): relative L2 error 3.000e-01 > 1e-02"
    )
    assert lines[2] == (
        "[Not supported] grouped_conv_fwd_fp16_nhwgc_2d_mem_cshuffle_interwave_64x64x32_2x2x1_16x16x32"
        ": C/G=4 is not a multiple of vector_size_a=8"
    )
    assert lines[3:6] == [
        "Best configuration parameters:",
        "name: GroupedConvolutionBackwardWeightKernel<2,Default,NHWGC,GKYXC>",
        "kernel: grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_64x64x32_2x2x1_32x32x16",
    ]
    assert "avg_time: 0.25000" in lines and "tflops: 12.500" in lines


def test_csv_has_upstream_schema_then_ours(report_driver: Path, tmp_path: Path) -> None:
    result, csv_path, _ = run_driver(report_driver, tmp_path)
    assert result.returncode == 0, result.stderr
    with csv_path.open(newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    assert header[: len(UPSTREAM_COLUMNS)] == UPSTREAM_COLUMNS
    assert header[len(UPSTREAM_COLUMNS) : len(UPSTREAM_COLUMNS) + 4] == OUR_COLUMNS
    records = [dict(zip(header, row, strict=True)) for row in rows[1:]]
    assert len(records) == 3
    valid, failed, unsupported = records
    assert valid["instance_string"] == "GroupedConvolutionBackwardWeightKernel<2,Default,NHWGC,GKYXC>"
    assert valid["problem_name"] == 'resnext "g32"'
    assert (valid["Hi"], valid["Wi"], valid["Y"], valid["X"], valid["stride_h"], valid["pad_w"]) == (
        "28",
        "30",
        "3",
        "5",
        "2",
        "2",
    )
    assert (valid["direction"], valid["dtype"], valid["verified"], valid["split_k"]) == (
        "bwd_weight",
        "bf16",
        "1",
        "4",
    )
    assert float(valid["latency_ms"]) == 0.25 and valid["non_zero"] == "1"
    assert (failed["status"], failed["verified"], failed["latency_ms"]) == ("failed", "0", "")
    assert (unsupported["status"], unsupported["verified"]) == ("not_supported", "")


def test_json_holds_the_same_records(report_driver: Path, tmp_path: Path) -> None:
    result, csv_path, json_path = run_driver(report_driver, tmp_path)
    assert result.returncode == 0, result.stderr
    records = json.loads(json_path.read_text())["results"]
    with csv_path.open(newline="") as f:
        header = next(csv.reader(f))
    assert [list(r) for r in records] == [header] * 3
    assert (
        records[0]["verified"] is True and records[1]["verified"] is False and records[2]["verified"] is None
    )
    assert records[1]["latency_ms"] is None
    assert records[0]["tflops"] == 12.5 and records[0]["rel_l2_error"] == 0.0015


def test_unwritable_report_fails_cleanly_without_partial_files(report_driver: Path, tmp_path: Path) -> None:
    missing_dir = tmp_path / "no" / "such"
    result = subprocess.run(
        [str(report_driver), str(missing_dir / "r.csv"), str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert result.returncode == 3
    assert result.stderr.startswith("error: cannot write")
    assert list(tmp_path.iterdir()) == []
