"""Merged groups by diagonal blocks on the Hopper path (fwd and bwd_data, no zero MACs), groups paired at the
MMA's granularity (C/G = K/G = 8 or 4) and merged groups by the direct kernel (C/G = K/G = 2, 4, 8, 16 where
tile_k = tile_n = gm x C/G; fp32 on TF32 MMAs) on the GPU: correct on poisoned outputs against the
reference, and each mode chosen exactly where it applies (tests/kernels/test_merged_groups_check.cu)."""

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
    assert diagonal >= 6  # both directions, 32/32 (16/16 on these tiles runs the direct kernel)
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
        "PASS fwd_fp32_gm8_direct",
        "PASS fwd_fp32_gm4_direct",
        "PASS fwd_fp32_gm32_direct",
        "PASS bwdd_fp32_gm16_direct",
        "PASS bwdd_fp32_gm4_direct",
        "PASS bwdd_fp32_gm8_direct_3d",
        "PASS fwd_fp32_gm2_direct_128",
        "PASS bwdd_fp32_gm2_direct_128",
    ):
        assert any(line.startswith(prefix) and "| direct |" in line for line in lines), prefix
    # fp32 C/G = 32 (four TF32 m16n8k8 a block) on the direct kernel, where 16-bit takes the diagonal mode
    for prefix in ("PASS fwd_fp32_gm2_direct_128", "PASS bwdd_fp32_gm2_direct_128"):
        on_direct = [line for line in lines if line.startswith(prefix) and "| direct |" in line]
        assert any("C=1024" in line for line in on_direct), prefix
    # fp32 (TF32) groups of 16 by two m16n8k8 a block, strided bwd_data by its phases
    strided = [line for line in lines if line.startswith("PASS bwdd_fp32_gm4") and "stride=2x2" in line]
    assert any("| direct |" in line for line in strided)
    # rows of 700 pixels: the plan narrows the one-row tile rather than leave them to the implicit GEMM
    for prefix, problem in (
        ("PASS fwd_fp16_gm8_direct_256", "G=32 N=1 K=256 C=256 in=3x700 "),
        ("PASS fwd_fp16_gm8_direct_256", "G=32 N=1 K=256 C=256 in=4x701 "),
        ("PASS bwdd_bf16_gm8_direct", "G=32 N=1 K=256 C=256 in=3x700 "),
        ("PASS bwdd_bf16_gm8_direct", "G=32 N=1 K=256 C=256 in=4x701 "),
        ("PASS bwdd_bf16_gm32_direct", "G=64 N=1 K=128 C=128 in=3x700 "),
    ):
        wide = [line for line in lines if line.startswith(prefix) and problem in line]
        assert len(wide) == 1 and "| direct |" in wide[0], (prefix, problem)
    # 16/16 on the diagonal mode's tiles (tile_k = tile_n = gm x 16): the direct kernel, strided bwd_data too
    for prefix, problem in (
        ("PASS fwd_fp16_gm2_diag_128x32x32", "G=14 "),
        ("PASS fwd_bf16_gm4_diag_128x64x64", "G=8 "),
        ("PASS bwdd_fp16_gm2_diag_128x32x32", "stride=2x2"),
        ("PASS bwdd_bf16_gm4_diag_128x64x64", "stride=2x2"),
    ):
        on_direct = [line for line in lines if line.startswith(prefix) and "| direct |" in line]
        assert any(problem in line for line in on_direct), prefix
    # gm not dividing G (RegNet's odd group counts): the direct kernel's last block holds fewer groups, in
    # both directions, at stride 2 and in 3D; 16-bit 16/16 fwd at stride 2 too, which the diagonal mode
    # cannot take
    for prefix, problem in (
        ("PASS fwd_fp16_gm8_direct_256", "2D G=13 N=2 K=104 C=104 in=15x13 "),
        ("PASS bwdd_bf16_gm8_direct", "2D G=13 N=2 K=104 C=104 in=29x27 "),
        ("PASS fwd_fp16_gm8_direct_3d", "3D G=13 "),
        ("PASS bwdd_fp16_gm8_direct_3d", "3D G=13 "),
        ("PASS fwd_fp16_gm2_diag_128x32x32", "G=25 N=1 K=400 C=400 in=15x13 "),
        ("PASS fwd_bf16_gm4_diag_128x64x64", "G=25 N=2 "),
        ("PASS bwdd_fp32_gm4_direct", "G=25 N=1 "),
        ("PASS bwdd_bf16_gm32_direct", "G=12 "),
        ("PASS fwd_fp32_gm32_direct", "G=6 N=1 K=12 "),
        ("PASS fwd_fp16_gm8_direct_256", "G=6 "),
    ):
        on_direct = [line for line in lines if line.startswith(prefix) and "| direct |" in line]
        assert any(problem in line for line in on_direct), (prefix, problem)
    # 24-byte pixels (C = 12, 16-bit) are not whole 16-byte vectors: no 16-bit direct kernel takes them
    assert not any(
        "G=6 N=1 K=12 " in line and "| direct |" in line and "_fp32_" not in line for line in lines
    )
