"""The depthwise kernels' index maps on the CPU, each computed as the kernels compute it and compared
exactly with the direct convolution in all three directions: the dilation residues (``residue_grid``,
``pixel_offset``; ``test_dilation_residues.cu``) and the 3D depth map (``depth_map``, ``depth_source``,
``depth_tap_mask``; ``test_depth_map.cu``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels.conftest import REPO_ROOT, compile_and_run


@pytest.mark.parametrize(
    ("source", "min_problems", "min_checks"),
    [
        # dilations 1-4 on each axis, four heights, three widths, three right pads; stride 2 with
        # dilation 2 or 4
        ("test_dilation_residues.cu", 550, 900_000),
        # depths 1-9, depth strides 1-3, dilations 1-3, pads 0-4 each side, filters 3 and 5
        ("test_depth_map.cu", 1000, 20_000),
    ],
)
def test_index_map_equals_the_direct_problem(
    nvcc: Path, tmp_path: Path, source: str, min_problems: int, min_checks: int
) -> None:
    # The instances that decide which problems run are compiled for sm_90a, as the kernels are.
    flags = ["--expt-relaxed-constexpr", "-gencode=arch=compute_90a,code=sm_90a"]
    output = compile_and_run(nvcc, REPO_ROOT / "tests" / "kernels" / source, tmp_path, flags)
    found = re.search(r"problems (\d+) checked (\d+) mismatches (\d+)", output)
    assert found, output[-3000:]
    assert int(found[3]) == 0, output[-3000:]
    assert int(found[1]) >= min_problems
    assert int(found[2]) > min_checks
