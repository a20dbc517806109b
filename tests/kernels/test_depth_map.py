"""The depth axis of 3D depthwise problems, on the CPU: every direction's depth taps computed as the kernels
compute them, through depth_map, depth_source and depth_tap_mask, equal the direct convolution and its
transposes for depth strides, dilations and pads 0-4 (``test_depth_map.cu``)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import REPO_ROOT, compile_and_run


def test_depth_taps_equal_the_3d_problem(nvcc: Path, tmp_path: Path) -> None:
    source = REPO_ROOT / "tests" / "kernels" / "test_depth_map.cu"
    # The instances that decide which problems run are compiled for sm_90a, as the kernels are.
    flags = ["--expt-relaxed-constexpr", "-gencode=arch=compute_90a,code=sm_90a"]
    output = compile_and_run(nvcc, source, tmp_path, flags)
    found = re.search(r"problems (\d+) checked (\d+) mismatches (\d+)", output)
    assert found, output[-3000:]
    assert int(found[3]) == 0, output[-3000:]
    assert (
        int(found[1]) >= 1000
    )  # depths 1-9, strides 1-3, dilations 1-3, pads 0-4 each side, filters 3 and 5
    assert int(found[2]) > 20_000
