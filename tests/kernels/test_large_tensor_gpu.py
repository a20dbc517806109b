"""A tensor just over 2^31 elements: the split_image instance computes it correctly against the 64-bit
reference and float64 spots; an instance without split_image reports it as not supported
(tests/kernels/test_large_tensor_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_split_image_over_2_pow_31_elements(tmp_path: Path) -> None:
    lines, counts = run_check("test_large_tensor_check.cu", tmp_path)
    assert counts == {"checked": 6, "failures": 0}
    assert "input elements 2148007968 (2^31 = 2147483648)" in lines
    assert any(line.startswith("PASS without split_image: not supported") for line in lines)
