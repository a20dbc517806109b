"""Transposed bwd_weight on the Hopper path (tile_m below 64: wgmma computes the tile's transpose) on the
GPU: correct on poisoned outputs and workspaces against the reference at split-K 1 and above, bit-identical
when rerun at split-K > 1, the transposed mapping taken exactly where tile_m is not a multiple of 64 and
tile_n is, and the first-generation kernel where the transposed one would gather its input (C/G = 8)
(tests/kernels/test_bwd_weight_transposed_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_bwd_weight_transposed(tmp_path: Path) -> None:
    lines, counts = run_check("test_bwd_weight_transposed_check.cu", tmp_path)
    checked, transposed, direct = counts["checked"], counts["transposed"], counts["direct"]
    first_generation, reruns = counts["first generation"], counts["bit-identical reruns"]
    assert checked >= 280  # 94 (instance, problem) pairs at k_batch 1, 3, 16 and the automatic factor
    assert reruns >= 188
    passed = [line for line in lines if line.startswith("PASS")]
    assert len(passed) == checked
    # A transposed configuration that the first generation also builds runs that kernel where C/G is not a
    # multiple of its tile_m-wide atom (16 or 32), since the transposed one would gather the input: always at
    # C/G = 8 (the "8/8" problems), never at C/G = 32.
    fallback = [line for line in passed if "| first generation |" in line]
    on_transposed = [line for line in passed if "| transposed |" in line]
    assert len(fallback) == first_generation > 0
    assert len(on_transposed) == transposed > 0
    # all but the untransposed control instance's runs; the merged-group hand configuration (gm 2, tile_m 32)
    # runs the direct kernel where K/G = 16 (merged_group_bwd_weight.cuh)
    on_direct = [line for line in passed if "| direct |" in line]
    assert len(on_direct) == direct > 0
    assert all(line.startswith("PASS bwdw_fp16_t_gm2_32x128x32 ") for line in on_direct)
    assert transposed + first_generation + direct >= checked - 60
    assert not any(" 32/32 " in line for line in fallback)
    falling_back = {line.split()[1] for line in fallback}
    assert not any(" 8/8 " in line and line.split()[1] in falling_back for line in on_transposed)
    for needed in ("| transposed |", "| untransposed |", "3D ", "stride 2", "k_batch 1 ", "k_batch 16 "):
        assert any(needed in line for line in passed), needed
    # 2D instances: several 2D problems at k_batch 1, 3 and 16; the 3D one: both 3D problems at those three
    minimum_runs = {
        "bwdw_fp16_t_16x128x64": 8,
        "bwdw_fp16_t_32x128x32_ping_pong": 8,
        "bwdw_bf16_t_3d_32x64x32": 6,
    }
    for instance, minimum in minimum_runs.items():
        assert sum(line.startswith(f"PASS {instance} ") for line in passed) >= minimum, instance
