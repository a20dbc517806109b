"""Long-reduction accuracy of backward weight (docs/pipelines.md, "Accumulation"): the tensor cores' fp32
accumulation rounds toward zero, so the kernels fold their MMA accumulators into a round-to-nearest outer
accumulator; checked on GEMM K from 2^16 to 2^24 with mean-zero and positive inputs, per dtype and per place
of the outer accumulator (tests/kernels/test_accumulation_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check

INSTANCES = 5
SIZES = 5  # GEMM K = 2^16, 2^18, ..., 2^24
DISTRIBUTIONS = 2  # mean-zero and positive inputs
WORKSPACE_CHECKS = 3  # the Hopper-path instances (fp16, bf16, ping-pong) need a workspace for their outer
# accumulators


@pytest.mark.gpu
def test_long_reduction_unbiased(tmp_path: Path) -> None:
    lines, counts = run_check("test_accumulation_check.cu", tmp_path)
    expected = 2 + INSTANCES * SIZES * DISTRIBUTIONS + WORKSPACE_CHECKS  # 2 FADD probes
    assert counts == {"checked": expected, "failures": 0}
    growing = [line for line in lines if line.startswith("PASS") and "GEMM K 2^24" in line]
    assert len(growing) == INSTANCES * DISTRIBUTIONS
