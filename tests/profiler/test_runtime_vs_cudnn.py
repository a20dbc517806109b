"""bench/runtime_vs_cudnn.py on the CPU: the table and its geometric means; bad input is one line, exit 2."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPT = BENCH / "runtime_vs_cudnn.py"


@pytest.fixture(scope="module")
def rs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("runtime_vs_cudnn", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["runtime_vs_cudnn"] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    return module


def test_table_gives_each_launch_its_ratio_and_geometric_mean(rs: ModuleType) -> None:
    name = "grouped_conv_bwd_weight_fp16_nhwgc_2d_compv3_cshuffle_intrawave_64x64x64_2x2x1_32x32x16_gm8"
    tflops = {"select, 1": 5.0, "select, preferred": 20.0, "plan": 40.0}
    rows = [
        rs.Row(
            problem=f"p{i}",
            direction="bwd_weight",
            dtype="fp16",
            cudnn_tflops=cudnn,
            launches={
                k: rs.Timed(kernel=name, split_k=1 + 15 * (k != "select, 1"), tflops=v, run_us=42.0)
                for k, v in tflops.items()
            },
        )
        for i, cudnn in enumerate((10.0, 40.0))
    ]
    text = rs.format_table(rows)
    tile = "compv3_cshuffle_intrawave_64x64x64_2x2x1_32x32x16_gm8"
    first = f"| p0 | bwd_weight | fp16 | 10.0 | {tile}, 1, 5.0, **0.50** |"
    assert first in text
    assert text.splitlines()[2].endswith(", 16, 40.0, **4.00** | 42 |")
    # Ratios 0.5 and 0.125 for "select, 1": geometric mean 0.25; 2.0 and 0.5: 1.00; 4.0 and 1.0: 2.00.
    assert text.splitlines()[-1] == (
        "geometric mean of ours / cuDNN, bwd_weight fp16: select, 1 0.25, select, preferred 1.00, plan 2.00"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--library", "/nonexistent.so"], "error: --library '/nonexistent.so': no such file"),
        (
            ["--library", str(SCRIPT), "--dtypes", "fp64"],
            "error: unknown dtype 'fp64' (accepted: fp16, bf16, fp32)",
        ),
        (["--library", str(SCRIPT), "--ndims", "4"], "error: unknown ndim '4' (accepted: 2, 3)"),
        (
            ["--library", str(SCRIPT), "--directions", "wgrad"],
            "error: unknown direction 'wgrad' (accepted: fwd, bwd_data, bwd_weight)",
        ),
        (["--library", str(SCRIPT), "--repeat", "0"], "error: --warmup 5 / --repeat 0: accepted >= 0 / >= 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    problems = BENCH / "problems" / "small_groups.csv"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(problems), *args], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.startswith(message) and len(result.stderr.splitlines()) == 1, result.stderr
