"""The direct merged-group bwd_weight kernel's plan (kernels/merged_group_bwd_weight.cuh), checked on the CPU:
which problems and CTA shapes it takes, its diagonal blocks, its tap chunks in whole batches, its steps'
location and coverage, every tap inside the halo, its stage boxes, the splits and its shared memory
(tests/kernels/test_merged_group_bwd_weight_plan.cu)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.conftest import REPO_ROOT, compile_and_run


def test_merged_group_bwd_weight_plan(nvcc: Path, cute_include: Path, tmp_path: Path) -> None:
    source = REPO_ROOT / "tests" / "kernels" / "test_merged_group_bwd_weight_plan.cu"
    flags = ["--expt-relaxed-constexpr", "-isystem", str(cute_include)]
    output = compile_and_run(nvcc, source, tmp_path, flags)
    match = re.fullmatch(r"(\d+) cases, (\d+) accepted, 0 failures", output.splitlines()[-1])
    assert match is not None, output[-2000:]
    cases, accepted = int(match[1]), int(match[2])
    assert cases == 2 * 10 * 3 * 6 * 6 * 3 * 2 * 3 * 2 * 2  # 16-bit and fp32 elements, gm 1 to 32
    # gm x C/G and gm x K/G multiples of 8 up to 128, chains of 16 pixels or more, most within 24 KB
    assert 4000 <= accepted < cases // 2
