"""The kernel half of the features: what a kernel name says about its configuration.

The name round-trips to exactly one configuration (DESIGN decision 4), so it is the key both here and in the
C++ evaluator (``selection/kernel_traits.hpp`` parses the same grammar). Depthwise kernels map onto the same
fields: one output tile of ``tile_h x tile_w x nbatch`` pixels is ``tile_m``, the filter window is ``tile_k``;
their tile's height and width and its channel slice (``nbatch x out_vec``) are kept apart too (0 for the
implicit GEMM), for the features of how the tiles and slices cover a layer.
A 3D depthwise kernel (``_ngchw_3d_``) has the same traits as its 2D twin: its fields describe the H x W plane
(``tile_k`` the F x F window of one depth tap) and the problem's features carry the depth.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from generators.config import DepthwiseConfig
from generators.enums import Pipeline, Scheduler, Specialization
from generators.naming import KernelNameError, parse_kernel_name

__all__ = ["KernelNameError", "KernelTraits", "kernel_traits"]


class KernelTraits(BaseModel):
    """Numeric description of one kernel; codes are enum positions, shared with the C++ parser."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    depthwise: bool
    tile_m: int
    tile_n: int
    tile_k: int
    wave_m: int
    wave_n: int
    wave_k: int
    warp_tile_m: int
    warp_tile_n: int
    warp_tile_k: int
    vector_a: int
    vector_b: int
    vector_c: int
    pipeline: int  # position in generators.enums.Pipeline (= tiledispatch::Pipeline)
    interwave: bool
    double_smem_buffer: bool
    groups_to_merge: int
    two_stage: bool
    specialization: int  # position in generators.enums.Specialization
    explicit_gemm: bool
    streamk: bool
    streamk_persistent: bool
    split_image: bool
    dw_tile_h: int = 0  # depthwise: the tile's pixels along H and W, and its channel slice
    dw_tile_w: int = 0
    dw_slice_channels: int = 0

    @property
    def block_threads(self) -> int:
        return 64 * self.wave_m * self.wave_n * self.wave_k


@lru_cache(maxsize=4096)
def kernel_traits(name: str) -> KernelTraits:
    """Traits of a kernel name; ``KernelNameError`` when it is not a canonical name."""
    config = parse_kernel_name(name)
    if isinstance(config, DepthwiseConfig):
        return KernelTraits(
            depthwise=True,
            tile_m=config.tile_h * config.tile_w * config.nbatch,
            tile_n=1,
            tile_k=config.filter * config.filter,
            wave_m=1,
            wave_n=1,
            wave_k=1,
            warp_tile_m=config.sub_h,
            warp_tile_n=config.sub_w,
            warp_tile_k=1,
            vector_a=config.in_vec,
            vector_b=config.in_vec,
            vector_c=config.out_vec,
            pipeline=0,
            interwave=False,
            double_smem_buffer=False,
            groups_to_merge=1,
            two_stage=False,
            specialization=0,
            explicit_gemm=False,
            streamk=False,
            streamk_persistent=False,
            split_image=False,
            dw_tile_h=config.tile_h,
            dw_tile_w=config.tile_w,
            dw_slice_channels=config.nbatch * config.out_vec,
        )
    return KernelTraits(
        depthwise=False,
        tile_m=config.tile_m,
        tile_n=config.tile_n,
        tile_k=config.tile_k,
        wave_m=config.wave_m,
        wave_n=config.wave_n,
        wave_k=config.wave_k,
        warp_tile_m=config.warp_tile_m,
        warp_tile_n=config.warp_tile_n,
        warp_tile_k=config.warp_tile_k,
        vector_a=config.vector_size_a,
        vector_b=config.vector_size_b,
        vector_c=config.vector_size_c,
        pipeline=list(Pipeline).index(config.pipeline),
        interwave=config.scheduler is Scheduler.INTERWAVE,
        double_smem_buffer=config.double_smem_buffer,
        groups_to_merge=config.num_groups_to_merge,
        two_stage=config.two_stage,
        specialization=list(Specialization).index(config.specialization),
        explicit_gemm=config.explicit_gemm,
        streamk=config.streamk_enabled,
        streamk_persistent=config.streamk_persistent,
        split_image=config.split_image,
    )
