"""Stream-K backward weight on the GPU: correct, bit-identical run to run and between persistent and
data-parallel launches, k_batch and workspace checked (tests/kernels/test_streamk_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_streamk_deterministic_and_correct(tmp_path: Path) -> None:
    lines, counts = run_check("test_streamk_check.cu", tmp_path)
    checked = counts["checked"]
    assert checked >= 20  # 5 problems x the instances that support them, plus the twin comparisons
    assert sum(line.startswith("IDENTICAL") for line in lines) >= 3
    assert not any(line.startswith("FAIL") for line in lines)
