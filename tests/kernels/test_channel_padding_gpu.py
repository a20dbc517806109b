"""Channels padded to the vector width (kernels/channel_padding.cuh) on the GPU: layers of C/G = 1, 3, 5, 12
and 20 (an RGB stem among them) run on default-like configurations of both generations in every direction,
2D and 3D, with the expected padded C/G, correct on poisoned outputs, leaving the tensors they read unchanged,
split bwd_weight bit-identical on a rerun (tests/kernels/test_channel_padding_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_channel_padding(tmp_path: Path) -> None:
    lines, counts = run_check("test_channel_padding_check.cu", tmp_path)
    assert counts["checked"] >= 40
    assert counts["padded"] >= 25
    # every direction ran the stem padded (16-bit to 8 channels, fp32 to 4)
    stem = (("pad_fwd_fp16", 8), ("pad_bwdd_fp16", 8), ("pad_bwdw_fp16", 8), ("pad_fwd_fp32", 4))
    for prefix, padded in stem:
        wanted = f"padded C/G {padded} | stem"
        assert any(line.startswith(f"PASS {prefix}") and wanted in line for line in lines), prefix
    assert any("no kernel:" in line for line in lines)
    assert any("padded C/G 0 | C=16" in line for line in lines)
    assert any("same bits" in line and "padded C/G 8" in line for line in lines)
