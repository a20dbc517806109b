"""bwd_data by stride phases on the GPU, both kernel generations: every strided problem of the battery against
the reference on a poisoned input gradient and workspace, phases exactly where the stride is 2 to 4
(tests/kernels/test_stride_phases_check.cu); the Hopper kernel runs every phase of a stride-2 problem in one
launch, phases without taps included (their zeros stored by phase 0's epilogue where phase 0 alone has
taps), and the direct merged-group kernel its own phases without a workspace. Every element is checked too,
not only the relative L2 error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_stride_phases_match_the_reference(tmp_path: Path) -> None:
    lines, counts = run_check("test_stride_phases_check.cu", tmp_path)
    checked, phases, one_launch = counts["checked"], counts["phases"], counts["in one launch"]
    direct = counts["direct"]
    assert checked >= 60
    assert phases >= 50
    assert one_launch >= 20
    assert direct >= 4  # C/G = K/G = 8 and 16 on tiles of gm x C/G
    assert any(" gathers " in line for line in lines)  # stride 5
    at_once = [line for line in lines if "| phases, one launch |" in line]
    # stride 2 in 2D (4 phases) and 3D (8), phases without taps (1x1 stride 2), the diagonal merged groups
    assert any("3D " in line and "bwdd_fp16_3d_compv6_64x64x64" in line for line in at_once)
    assert any("filter=1x1 stride=2x2" in line for line in at_once)
    # where phase 0 alone has taps (1x1 without padding; 3x3 at dilation 2), phase 0's launch alone, whose
    # staged epilogue stores the others' zeros, in 2D and 3D; not where the epilogue stores pairs (vector 2)
    beside = [line for line in at_once if line.endswith("| zeros beside phase 0")]
    assert counts["beside"] == len(beside) >= 5
    assert any("3D " in line and "filter=1x1x1 stride=2x2x2" in line for line in beside)
    assert any("filter=3x3 stride=2x2 dilation=2x2" in line for line in beside)
    assert any("in=57x55 filter=1x1" in line for line in beside)
    assert not any("bwdd_fp16_3d_compv6_64x64x64" in line for line in beside)
    # the zeros by bulk copies (warpgroup tiles of 16384 outputs): odd sizes, and 3D on 256-row tiles
    for instance, problem in (
        ("bwdd_fp16_staged_128x256x32", "in=57x55 filter=1x1"),
        ("bwdd_fp16_staged_wg2_128x128x64", "in=57x55 filter=1x1"),
        ("bwdd_bf16_3d_staged_256x64x64", "filter=1x1x1 stride=2x2x2"),
    ):
        assert any(line.startswith(f"PASS {instance} |") and problem in line for line in beside), instance
    assert any("bwdd_fp16_gm2_diag_128x64x64" in line and "G=14 " in line for line in at_once)
    # phase rows wider than a tile's 64-row block and of one or two pixels (G = 2), in one launch; the zeros
    # beside phase rows of 71 pixels
    staged = [line for line in at_once if line.startswith("PASS bwdd_fp16_compv3_128x128x32 |")]
    for problem in ("in=5x141 filter=3x3", "in=9x3 filter=3x3"):
        assert any(problem in line for line in staged), problem
    assert any("in=5x141 filter=1x1" in line for line in beside)
    # nine phases of a 2D stride 3 are more than one launch carries; paired phases expand weights in turn
    assert not any("2D " in line and "stride=3x3" in line for line in at_once)
    assert not any("G=32 " in line and "_diag_" in line for line in at_once)
    # the direct kernel's phases: C/G = 16 on the diagonal mode's tiles, C/G = 8 on its own, fp32 C/G = 16
    for instance, problem in (
        ("bwdd_fp16_gm2_diag_128x32x32", "G=14 "),
        ("bwdd_bf16_gm8_direct", "G=32 "),
        ("bwdd_fp32_gm4_direct", "G=8 "),
        ("bwdd_fp32_gm2_direct", "G=14 "),  # C/G = 32 in fp32
    ):
        on_direct = [line for line in lines if line.startswith(f"PASS {instance}") and "| direct |" in line]
        assert any(problem in line for line in on_direct), instance
    # fp32, the 1x1 specialization and a merged-group tile (diagonal at C/G = 32, paired at 8) ran phases
    for instance in (
        "bwdd_fp32_compv4_dsb_64x64x32",
        "bwdd_fp16_basicasync_1x1p0",
        "bwdd_fp16_gm2_diag_128x32x32",
    ):
        assert any(line.startswith(f"PASS {instance} | phases") for line in lines), instance
