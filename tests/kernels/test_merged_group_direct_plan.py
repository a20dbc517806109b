"""The direct merged-group kernel's plan (kernels/merged_group_direct.cuh), checked on the CPU: which
problems it takes, that its tiles cover the written tensor, that every tap reads inside a tile's halo, that
the halo is one legal TMA box, its shared memory and its grid
(tests/kernels/test_merged_group_direct_plan.cu)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import REPO_ROOT, compile_and_run


def test_merged_group_direct_plan(nvcc: Path, cute_include: Path, tmp_path: Path) -> None:
    source = REPO_ROOT / "tests" / "kernels" / "test_merged_group_direct_plan.cu"
    flags = ["--expt-relaxed-constexpr", "-isystem", str(cute_include)]
    output = compile_and_run(nvcc, source, tmp_path, flags)
    match = re.fullmatch(r"(\d+) cases, (\d+) accepted, 0 failures", output.splitlines()[-1])
    assert match is not None, output[-2000:]
    cases, accepted = int(match[1]), int(match[2])
    assert cases == 2 * 6 * 4 * 7 * 3 * 5 * 4 * 3  # 16-bit and fp32 elements
    # C/G 2, 4, 8 and 16 (fp32: 32 too) with gm x C/G in 16..128 on the fwd and unit-stride bwd_data problems,
    # most limits
    assert 200 <= accepted < cases // 4
