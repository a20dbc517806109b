"""Merged-group bwd_weight by the direct kernel on the GPU
(tests/kernels/test_merged_group_bwd_weight_check.cu): correct on poisoned weights and workspaces against
the reference at split-K 1 and above, bit-identical when rerun at split-K > 1, and the direct kernel taken
exactly where gm x K/G is the configuration's tile_m (C/G = 2 too: as given, not channel-padded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_merged_group_bwd_weight(tmp_path: Path) -> None:
    lines, counts = run_check("test_merged_group_bwd_weight_check.cu", tmp_path)
    checked, direct, reruns = counts["checked"], counts["direct"], counts["bit-identical reruns"]
    passed = [line for line in lines if line.startswith("PASS")]
    assert len(passed) == checked >= 150
    assert reruns >= checked // 2
    on_direct = [line for line in passed if "| direct |" in line]
    assert len(on_direct) == direct >= 60
    # Every hand configuration takes the direct kernel somewhere, and the implicit GEMM elsewhere (a problem
    # whose K/G does not fill its tile_m).
    for instance in {line.split()[1] for line in passed}:
        assert any(line.split()[1] == instance for line in on_direct), instance
    assert any("| implicit gemm |" in line for line in passed)
    for needed in (
        "2/2",
        "3D 2/2",
        "4/4",
        "8/8",
        "16/16",
        "32/32",
        "C/G=8 K/G=16",
        "3D ",
        "stride 2",
        "wider than the tile",
        "long reduction",
        "k_batch 1 ",
        "k_batch 16 ",
    ):
        assert any(needed in line for line in on_direct), needed
    # fp32 (TF32 MMAs from single loads) on the same kernel: C/G 4, 8 and 16, 2D and 3D, split or not.
    for needed in (
        "bwdw_fp32_mg_64x64x64_gm8",
        "bwdw_fp32_mg_64x64x64_gm16",
        "bwdw_fp32_mg_32x64x64_gm2",
        "bwdw_fp32_mg_128x64x64_gm16",
        "bwdw_fp32_mg_3d_64x64x64_gm8",
        "bwdw_fp32_mg_64x64x64_gm2",
    ):
        runs = [line for line in on_direct if line.split()[1] == needed]
        assert any("k_batch 1 " in line for line in runs) and any("k_batch 16 " in line for line in runs), (
            needed
        )
    # C/G = K/G = 2 (below every vector) runs as given on gm 32, not channel-padded onto the implicit GEMM.
    for needed in (
        "bwdw_fp16_mg_64x64x128_gm32",
        "bwdw_bf16_mg_3d_64x64x128_gm32",
        "bwdw_fp32_mg_64x64x64_gm32",
    ):
        assert any(line.split()[1] == needed and "2/2 G=" in line for line in on_direct), needed
    # The 64x128x64 gm 2 configurations run 32/32 layers on the Hopper GEMM, both operands by TMA (2D, 3D).
    for what in ("| implicit gemm | 32/32", "| implicit gemm | 3D 32/32"):
        assert any("64x128x64" in line and what in line for line in passed), what
    # gm not dividing G (RegNet's odd group counts): the last block of fewer groups on the direct kernel,
    # split or not, 2D and 3D, stride 2; 32/32 with G = 5 on the 64x128x64 gm 2 tile too, which the GEMM by
    # TMA boxes cannot take
    for needed in ("8/8 G=13", "16/16 G=25 stride 2", "2/2 G=12", "3D 8/8 G=13"):
        runs = [line for line in on_direct if f"| {needed}" in line]
        assert any("k_batch 1 " in line for line in runs), needed
        assert any("k_batch 16 " in line for line in runs), needed
    assert any("64x128x64" in line and "| 32/32 G=5" in line for line in on_direct)
