"""Merged groups by diagonal blocks on the Hopper path (fwd and bwd_data, no zero MACs) and groups paired at
the MMA's granularity (C/G = K/G = 8 or 4) on the GPU: correct on poisoned outputs against the reference, and
each mode chosen exactly where the per-group extents match (tests/kernels/test_merged_groups_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_merged_groups_diagonal_and_paired(tmp_path: Path) -> None:
    lines, counts = run_check("test_merged_groups_check.cu", tmp_path)
    checked, diagonal, paired = counts["checked"], counts["diagonal"], counts["paired"]
    assert checked >= 40
    assert diagonal >= 15  # both directions, 16/16 and 32/32, every hand instance on its problems
    assert paired >= 10  # 8/8 and 4/4 problems, both directions
    assert any(" diagonal " in line and line.startswith("PASS bwdd_") for line in lines)
    assert any(" paired x2 " in line and line.startswith("PASS bwdd_") for line in lines)
    assert any(" paired x4 " in line for line in lines)
    assert any(" gathers " in line for line in lines)
