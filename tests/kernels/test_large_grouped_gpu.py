"""Tensors of more than 2^31 elements on issue 10's kernels: the direct merged-group kernels of the three
directions, diagonal and paired merged groups, the depthwise kernels (2D and 3D) and stride-2 bwd_data by
stride phases each support such a problem and match the reference over the whole result
(tests/kernels/test_large_grouped_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check

# The cases of large_cases(): each prints its size verdict and then its result verdicts.
CASES = (
    "direct fwd C/G 8",
    "direct fwd C/G 16",
    "direct fwd 3D C/G 8",
    "direct bwd_data C/G 8",
    "direct bwd_data C/G 8 stride 2, odd",
    "direct bwd_weight C/G 8",
    "direct bwd_weight C/G 16 stride 2, odd",
    "direct fwd fp32 C/G 8",
    "direct bwd_data fp32 C/G 16 stride 2, odd",
    "direct bwd_weight fp32 C/G 8",
    "depthwise fwd",
    "depthwise fwd fp32",
    "depthwise bwd_data stride 2, odd",
    "depthwise bwd_weight",
    "diagonal fwd C/G 32, split_image",
    "paired bwd_data C/G 8, split_image",
    "depthwise 3D fwd",
    "depthwise 3D bwd_data",
    "depthwise 3D bwd_weight",
    "dense bwd_data stride 2 by phases, split_image",
)


@pytest.mark.gpu
def test_issue10_kernels_over_2_pow_31_elements(tmp_path: Path) -> None:
    lines, counts = run_check("test_large_grouped_check.cu", tmp_path)
    # 3 checks of the blocked bwd_weight reference, then per case: the size, the whole result, and the float64
    # values (fwd, bwd_data) or a bit-identical second run (bwd_weight)
    assert counts == {"checked": 3 + 3 * len(CASES), "failures": 0}
    for case in CASES:
        verdicts = [line for line in lines if line.startswith(f"PASS {case} | ")]
        assert len(verdicts) == 3, f"{case}: {verdicts}"
        assert any("> 2^31" in line for line in verdicts), verdicts
        assert any("relative L2" in line and ", 0 unwritten" in line for line in verdicts), verdicts
