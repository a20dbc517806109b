"""Arch specs: what an NVIDIA target can build, as data (the role ``arch_specs.json`` plays for CK).

``sm_90a`` (H100, the default) and ``sm_80`` (A100). The MMA atoms are the ``mma.sync`` shapes CuTe wraps
in ``include/cute/arch/mma_sm80.hpp`` (``SM80_16x8x16_F32F16F16F32_TN`` and friends; sm_90a runs them too):
a warp tile must be a whole number of atoms, and since a CK wave (64 lanes) runs as two 32-lane warps
(DESIGN decision 2), a wave's warp tile must split evenly over its two warps.
"""

from __future__ import annotations

from functools import cache
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from generators.enums import DataType, Pipeline

ARCH_NAMES: tuple[str, ...] = ("sm_90a", "sm_80")
DEFAULT_ARCH = "sm_90a"


class MmaAtom(BaseModel):
    """One ``mma.sync`` instruction shape (per 32-lane warp)."""

    model_config = ConfigDict(frozen=True)

    name: str
    m: int
    n: int
    k: int


class ArchSpec(BaseModel):
    """Limits of one NVIDIA arch that the validity rules check against.

    Shared-memory limits are the per-block opt-in maxima (227 KB on sm_90, 163 KB on sm_80); the register
    budget is the per-thread cap (255) and the accumulator share of it that leaves room for operand fragments,
    addresses and the pipeline's bookkeeping (docs/architecture.md §4).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    warp_size: int = 32
    wave_size: int = 64
    wave_counts: tuple[int, ...] = (1, 2, 4)
    max_threads_per_block: int = 1024
    max_threads_per_sm: int = 2048
    smem_per_block_bytes: int
    smem_per_sm_bytes: int
    registers_per_thread: int = 255
    max_accumulators_per_thread: int = 128
    max_vector_bytes: int = 16
    mma_atoms: dict[DataType, tuple[MmaAtom, ...]]
    pipeline_stages: dict[Pipeline, int]
    has_wgmma: bool = False
    """wgmma and setmaxnreg (sm_90a only): the Hopper path of generators/hopper.py."""

    @property
    def warps_per_wave(self) -> int:
        return self.wave_size // self.warp_size

    def max_vector_width(self, dtype: DataType) -> int:
        """Widest vector load in elements: 16 bytes = 8 fp16/bf16 or 4 fp32 (ck_conventions §1)."""
        return self.max_vector_bytes // dtype.size_bytes

    def smem_stages(self, pipeline: Pipeline, double_smem_buffer: bool) -> int:
        """Shared-memory stages of a pipeline; ``double_smem_buffer`` makes a 1-stage pipeline use 2."""
        stages = self.pipeline_stages[pipeline]
        return max(stages, 2) if double_smem_buffer else stages


_HALF_ATOMS = (
    MmaAtom(name="m16n8k16", m=16, n=8, k=16),
    MmaAtom(name="m16n8k8", m=16, n=8, k=8),
)
# fp32 runs as TF32 (what cuDNN does by default; DESIGN decision 2).
_TF32_ATOMS = (
    MmaAtom(name="m16n8k8.tf32", m=16, n=8, k=8),
    MmaAtom(name="m16n8k4.tf32", m=16, n=8, k=4),
)
# docs/architecture.md §4: the one table of pipeline -> shared-memory stages.
_PIPELINE_STAGES = MappingProxyType(
    {
        Pipeline.BASIC_V1: 1,
        Pipeline.BASIC_V2: 1,
        Pipeline.MEM: 4,
        Pipeline.COMPV3: 2,
        Pipeline.COMPV4: 2,
        Pipeline.COMPV5: 3,
        Pipeline.COMPV6: 3,
        Pipeline.BASIC_ASYNC_V1: 2,
        Pipeline.COMP_ASYNC: 4,
        Pipeline.WAVELET: 3,
    }
)


@cache
def get_arch(name: str = DEFAULT_ARCH) -> ArchSpec:
    """The spec of ``name``; ValueError naming the accepted arches otherwise."""
    atoms = {DataType.FP16: _HALF_ATOMS, DataType.BF16: _HALF_ATOMS, DataType.FP32: _TF32_ATOMS}
    if name == "sm_90a":
        return ArchSpec(
            name=name,
            smem_per_block_bytes=227 * 1024,
            smem_per_sm_bytes=228 * 1024,
            mma_atoms=atoms,
            pipeline_stages=_PIPELINE_STAGES,
            has_wgmma=True,
        )
    if name == "sm_80":
        return ArchSpec(
            name=name,
            smem_per_block_bytes=163 * 1024,
            smem_per_sm_bytes=164 * 1024,
            mma_atoms=atoms,
            pipeline_stages=_PIPELINE_STAGES,
        )
    raise ValueError(f"unknown arch {name!r}; accepted: {', '.join(ARCH_NAMES)}")
