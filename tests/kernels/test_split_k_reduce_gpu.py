"""The split-K reduction on its own (kernels/split_k_reduce.cuh; tests/kernels/test_split_k_reduce_check.cu):
every element against a double-precision sum, bit-identical reruns, and a programmatic dependent launch that
must wait for the kernel writing its slices."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check

CASES = 8
DTYPES = 3


@pytest.mark.gpu
def test_split_k_reduce(tmp_path: Path) -> None:
    lines, counts = run_check("test_split_k_reduce_check.cu", tmp_path)
    assert counts == {"checked": CASES * DTYPES, "failures": 0}
    assert sum(line.startswith("PASS") for line in lines) == CASES * DTYPES
