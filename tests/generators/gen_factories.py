"""Factories for generator tests: hand-built configurations (no rule set needed)."""

from __future__ import annotations

from typing import Any

from generators.config import DepthwiseConfig, KernelConfig


def make_config(**changes: Any) -> KernelConfig:
    """The ck_conventions §2 example (fwd fp16 2D compv3 128x128x32 2x2x1 32x32x16), with ``changes``."""
    fields: dict[str, Any] = dict(
        direction="fwd",
        dtype="fp16",
        ndim_spatial=2,
        tile_m=128,
        tile_n=128,
        tile_k=32,
        wave_m=2,
        wave_n=2,
        wave_k=1,
        warp_tile_m=32,
        warp_tile_n=32,
        warp_tile_k=16,
    )
    fields.update(changes)
    return KernelConfig(**fields)


def make_depthwise(**changes: Any) -> DepthwiseConfig:
    """The ck_conventions §2 depthwise example (8x8 f3 s1 p1 nb8 sub2x2 vec2/2), with ``changes``."""
    fields: dict[str, Any] = dict(
        dtype="fp16",
        tile_h=8,
        tile_w=8,
        filter=3,
        stride_h=1,
        stride_w=1,
        pad_h=1,
        pad_w=1,
        nbatch=8,
        sub_h=2,
        sub_w=2,
        in_vec=2,
        out_vec=2,
    )
    fields.update(changes)
    return DepthwiseConfig(**fields)
