"""bwd_data by stride phases (kernels/stride_phases.hpp) equals the strided problem, on the CPU: the
phases' filters, the zero phases and each phase's unit-stride GEMM through BwdDataView
(``test_stride_phases.cpp``)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import REPO_ROOT, compile_and_run


def test_stride_phases_equal_the_strided_problem(nvcc: Path, tmp_path: Path) -> None:
    source = REPO_ROOT / "tests" / "kernels" / "test_stride_phases.cpp"
    output = compile_and_run(nvcc, source, tmp_path, [])
    phased = re.search(
        r"phased (\d+) problems, (\d+) with zeros beside phase 0, (\d+) rows' siblings in the cube", output
    )
    found = re.search(r"checked (\d+) mismatches (\d+)", output)
    assert phased and found, output[-3000:]
    assert int(found[2]) == 0, output[-3000:]
    assert int(phased[1]) >= 200  # strides 2-4, filters 1-5, paddings, dilations, 3D, merged groups
    assert int(phased[2]) >= 12  # 1x1 without padding, C % 8 == 0: phase 0 stores the others' zeros
    assert int(phased[3]) >= 1000  # their rows at stride 2, 2D and 3D: the bulk copies' cube of siblings
    assert int(found[1]) > 300_000
