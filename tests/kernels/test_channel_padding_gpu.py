"""Channels padded to the vector width (kernels/channel_padding.cuh) and width unfolding
(kernels/width_unfolding.hpp) on the GPU: layers of C/G = 1, 3, 5, 12 and 20 (RGB stems among them) run on
default-like configurations of both generations in every direction, 2D and 3D, with the expected padded C/G or
unfolded C', correct on poisoned outputs, leaving the tensors they read unchanged, split bwd_weight
bit-identical on a rerun (tests/kernels/test_channel_padding_check.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.gpu_toolchain import run_check


@pytest.mark.gpu
def test_channel_padding(tmp_path: Path) -> None:
    lines, counts = run_check("test_channel_padding_check.cu", tmp_path)
    assert counts["checked"] >= 60
    assert counts["padded"] >= 30
    assert counts["unfolded"] >= 10
    # every direction ran the stem padded (16-bit to 8 channels, fp32 to 4)
    stem = (("pad_fwd_fp16", 8), ("pad_bwdd_fp16", 8), ("pad_bwdw_fp16", 8), ("pad_fwd_fp32", 4))
    for prefix, padded in stem:
        wanted = f"padded C/G {padded} | unfolded C' 0 | stem"
        assert any(line.startswith(f"PASS {prefix}") and wanted in line for line in lines), prefix
    # and unfolded, 2D and 3D, on the 16-bit tile_k-32 configurations of fwd and bwd_weight
    unfolded = (
        ("pad_fwd_fp16_128x64x32 ", "| stem C=3 7x7 stride 2 odd"),
        ("pad_fwd_fp16_128x64x32 ", "| stem C=3 7x7 stride 2, W padded 3/2"),
        ("pad_bwdw_fp16_64x64x32 ", "| C=3 5x5 dilation 2"),
        ("pad_fwd_bf16_3d_128x64x32 ", "| 3D C=1 5x5x5 stride 2"),
        ("pad_bwdw_fp16_64x64x32_2st ", "| 3D C=1 5x5x5 stride 2"),
    )
    for prefix, case in unfolded:
        wanted = f"padded C/G 0 | unfolded C' 32 {case}"
        assert any(line.startswith(f"PASS {prefix}") and wanted in line for line in lines), (prefix, case)
    assert any("no kernel:" in line for line in lines)
    assert any("padded C/G 0 | unfolded C' 0 | C=16" in line for line in lines)
    assert any("same bits" in line and "padded C/G 8" in line for line in lines)
    assert any("same bits" in line and "unfolded C' 32" in line for line in lines)
