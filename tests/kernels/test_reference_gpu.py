"""The GPU reference kernels agree with the float64 CPU reference (docs/architecture.md §5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.conftest import REPO_ROOT, compile_and_run
from tests.kernels.gpu_toolchain import find_nvcc, passed_check


@pytest.mark.gpu
def test_gpu_reference_matches_float64_host(tmp_path: Path) -> None:
    nvcc = find_nvcc()  # the GPU machine has the system CUDA, not the pinned wheel
    source = REPO_ROOT / "tests" / "kernels" / "reference_check.cu"
    output = compile_and_run(nvcc, source, tmp_path, ["-gencode=arch=compute_90a,code=sm_90a"])
    lines, counts = passed_check(output)
    assert counts == {"failures": 0}
    # 6 problems x 3 dtypes x 3 directions, each line a PASS
    assert sum(line.startswith("PASS") for line in lines) == 54
