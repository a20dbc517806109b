"""A tensor just over 2^31 elements: the split_image instance computes it correctly against the 64-bit
reference and float64 spots; an instance without split_image reports it as not supported
(tests/kernels/test_large_tensor_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import REPO_ROOT, build_and_run


@pytest.mark.gpu
def test_split_image_over_2_pow_31_elements(tmp_path: Path) -> None:
    output = build_and_run(REPO_ROOT / "tests" / "kernels" / "test_large_tensor_check.cu", tmp_path)
    print(output)  # shown with -rP: the per-case lines
    lines = output.splitlines()
    assert lines[-1] == "6 checked, 0 failures", output[-3000:]
    assert "input elements 2148007968 (2^31 = 2147483648)" in lines
    assert any(line.startswith("PASS without split_image: not supported") for line in lines)
