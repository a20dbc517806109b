"""The depthwise kernels' thread and shared-memory layouts on the CPU (``test_depthwise_layout.cu``):
``thread_place`` covers every (channel group, sub-tile column, row) of a block once, keeps the channel
group at ``tid % nbatch``, keeps a banded warp within half of the sub-tile columns (so that a tile cut by
the tensor's edge leaves whole warps outside) and each 128-byte access on one row's consecutive positions;
``PixelLayout`` puts every staged element at its own offset, as a TMA box lands (128-byte aligned residue
blocks) or as the cp.async rows lie (residues side by side)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import REPO_ROOT, compile_and_run


def test_thread_place_and_pixel_layouts(nvcc: Path, tmp_path: Path) -> None:
    flags = ["--expt-relaxed-constexpr", "-gencode=arch=compute_90a,code=sm_90a"]
    source = REPO_ROOT / "tests" / "kernels" / "test_depthwise_layout.cu"
    output = compile_and_run(nvcc, source, tmp_path, flags)
    found = re.search(r"checked (\d+) failures (\d+)", output)
    assert found, output[-3000:]
    assert int(found[2]) == 0, output[-3000:]
    # 16 block shapes (3 checks each, banded ones more) and 5 layouts (at least 4 checks each)
    assert int(found[1]) >= 16 * 3 + 5 * 4
