"""Dilated depthwise problems as residue sub-problems equal the dilated convolution, on the CPU: every residue
computed as the kernels compute it, through residue_grid and pixel_offset, in all three directions
(``test_dilation_residues.cu``)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import REPO_ROOT, compile_and_run


def test_residues_equal_the_dilated_problem(nvcc: Path, tmp_path: Path) -> None:
    source = REPO_ROOT / "tests" / "kernels" / "test_dilation_residues.cu"
    # The instances that decide which problems run are compiled for sm_90a, as the kernels are.
    flags = ["--expt-relaxed-constexpr", "-gencode=arch=compute_90a,code=sm_90a"]
    output = compile_and_run(nvcc, source, tmp_path, flags)
    found = re.search(r"problems (\d+) checked (\d+) mismatches (\d+)", output)
    assert found, output[-3000:]
    assert int(found[3]) == 0, output[-3000:]
    assert int(found[1]) >= 400  # dilations 1-4 on each axis, four heights, three widths, three right pads
    assert int(found[2]) > 800_000
