"""Merged groups by diagonal blocks on the Hopper path (fwd and bwd_data, no zero MACs), groups paired at the
MMA's granularity (C/G = K/G = 8 or 4) and merged groups by the direct kernel (C/G = K/G = 2, 4, 8 where
tile_k = tile_n = gm x C/G) on the GPU: correct on poisoned outputs against the reference, and each mode
chosen exactly where it applies (tests/kernels/test_merged_groups_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_merged_groups_diagonal_and_paired(tmp_path: Path) -> None:
    lines, counts = run_check("test_merged_groups_check.cu", tmp_path)
    checked, diagonal, paired = counts["checked"], counts["diagonal"], counts["paired"]
    direct = counts["direct"]
    assert checked >= 60
    assert diagonal >= 15  # both directions, 16/16 and 32/32, every hand instance on its problems
    assert paired >= 10  # 8/8 and 4/4 problems, both directions
    assert any(" diagonal " in line and line.startswith("PASS bwdd_") for line in lines)
    assert any(" paired x2 " in line and line.startswith("PASS bwdd_") for line in lines)
    assert any(" paired x4 " in line for line in lines)
    assert any(" gathers " in line for line in lines)
    assert direct >= 20  # 2/2, 4/4 and 8/8, both directions (bwd_data at stride 2 too), 2D and 3D
    for prefix in (
        "PASS fwd_fp16_gm8_direct_256",
        "PASS fwd_bf16_gm16_direct",
        "PASS fwd_fp16_gm8_direct_3d",
        "PASS bwdd_bf16_gm8_direct",
        "PASS bwdd_fp16_gm16_direct",
        "PASS bwdd_fp16_gm8_direct_3d",
        "PASS bwdd_bf16_gm32_direct",
    ):
        assert any(line.startswith(prefix) and "| direct |" in line for line in lines), prefix
