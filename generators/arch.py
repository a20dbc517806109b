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


class PipelineStrategy(BaseModel):
    """The NVIDIA strategy a CK pipeline name stands for in the first kernel generation (docs/pipelines.md);
    the Hopper path reads its stages as the ring's minimum, ``async_copy`` as "has a ring" and
    ``fragment_double_buffer`` as "one wgmma batch in flight". The field docstrings are the C++ comments of
    the arch header's ``PipelineStrategy``."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    stages: int
    """Shared-memory stages of the main loop."""
    async_copy: bool
    """cp.async global -> shared (else ld.global -> registers -> st.shared)."""
    register_prefetch: bool
    """The next tile is loaded into registers during the MMAs (basic_v2)."""
    prefetch: bool
    """The next tile's copy overlaps the current tile's MMAs."""
    fragment_double_buffer: bool
    """ldmatrix of k-step s+1 issued before the MMAs of k-step s."""


class ArchSpec(BaseModel):
    """Limits of one NVIDIA arch that the validity rules check and the kernels are sized by: both read this,
    the kernels through the C++ header that ``generators.arch_header`` renders from it (``ArchTraits<Arch>``).

    Shared-memory limits are the per-block opt-in maxima (227 KB on sm_90, 163 KB on sm_80); the register
    budget is the per-thread cap (255) and the accumulator share of it that leaves room for operand fragments,
    addresses and the pipeline's bookkeeping (docs/architecture.md §4).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    cuda_arch: int
    """``__CUDA_ARCH__`` of the device pass for this arch (the kernels check that they are built for it)."""
    warp_size: int = 32
    wave_size: int = 64
    wave_counts: tuple[int, ...] = (1, 2, 4)
    max_threads_per_block: int = 1024
    max_threads_per_sm: int = 2048
    smem_per_block_bytes: int
    smem_per_sm_bytes: int
    registers_per_thread: int = 255
    registers_per_sm: int = 64 * 1024
    """32-bit registers of an SM: what a CTA alone on it shares among its threads (setmaxnreg moves them)."""
    max_accumulators_per_thread: int = 128
    max_access_bytes: int = 16
    """Widest single global load, store or cp.async."""
    max_vector_bytes: int = 32
    """Widest implicit-GEMM vector: two accesses (CK's legacy lists hold fp16 vector 16)."""
    mma_atoms: dict[DataType, tuple[MmaAtom, ...]]
    pipelines: dict[Pipeline, PipelineStrategy]
    has_wgmma: bool = False
    """wgmma and setmaxnreg (sm_90a only): the Hopper path of generators/hopper.py."""

    @property
    def warps_per_wave(self) -> int:
        return self.wave_size // self.warp_size

    @property
    def cpp(self) -> str:
        """The C++ enumerator of the arch header (``sm_90a`` -> ``Arch::kSm90a``)."""
        return f"Arch::k{self.name.replace('sm_', 'Sm')}"

    def max_access_width(self, dtype: DataType) -> int:
        """Widest single access in elements: 16 bytes = 8 fp16/bf16 or 4 fp32 (ck_conventions §1)."""
        return self.max_access_bytes // dtype.size_bytes

    def max_vector_width(self, dtype: DataType) -> int:
        """Widest implicit-GEMM vector in elements: 32 bytes = 16 fp16/bf16 or 8 fp32."""
        return self.max_vector_bytes // dtype.size_bytes

    def pipeline_strategy(self, pipeline: Pipeline, double_smem_buffer: bool) -> PipelineStrategy:
        """The strategy of a pipeline; ``double_smem_buffer`` makes a 1-stage pipeline use 2 stages."""
        strategy = self.pipelines[pipeline]
        if double_smem_buffer and strategy.stages < 2:
            return strategy.model_copy(update={"stages": 2})
        return strategy

    def smem_stages(self, pipeline: Pipeline, double_smem_buffer: bool) -> int:
        """Shared-memory stages of a pipeline (``pipeline_strategy(...).stages``)."""
        return self.pipeline_strategy(pipeline, double_smem_buffer).stages


_HALF_ATOMS = (
    MmaAtom(name="m16n8k16", m=16, n=8, k=16),
    MmaAtom(name="m16n8k8", m=16, n=8, k=8),
)
# fp32 runs as TF32 (what cuDNN does by default; DESIGN decision 2).
_TF32_ATOMS = (
    MmaAtom(name="m16n8k8.tf32", m=16, n=8, k=8),
    MmaAtom(name="m16n8k4.tf32", m=16, n=8, k=4),
)


def _strategy(
    stages: int, async_copy: bool, prefetch: bool, fragment_double_buffer: bool
) -> PipelineStrategy:
    """A prefetch without cp.async goes through registers (basic_v2)."""
    return PipelineStrategy(
        stages=stages,
        async_copy=async_copy,
        register_prefetch=not async_copy and prefetch,
        prefetch=prefetch,
        fragment_double_buffer=fragment_double_buffer,
    )


# The one table of pipeline -> NVIDIA strategy (docs/pipelines.md renders it; the kernels read it through the
# arch header). compv4 is always double_smem_buffer, as in CK (rule compv4_double_smem_buffer).
_PIPELINES = MappingProxyType(
    {
        Pipeline.BASIC_V1: _strategy(1, async_copy=False, prefetch=False, fragment_double_buffer=False),
        Pipeline.BASIC_V2: _strategy(1, async_copy=False, prefetch=True, fragment_double_buffer=False),
        Pipeline.MEM: _strategy(4, async_copy=True, prefetch=True, fragment_double_buffer=False),
        Pipeline.COMPV3: _strategy(2, async_copy=True, prefetch=True, fragment_double_buffer=False),
        Pipeline.COMPV4: _strategy(2, async_copy=True, prefetch=True, fragment_double_buffer=True),
        Pipeline.COMPV5: _strategy(3, async_copy=True, prefetch=True, fragment_double_buffer=False),
        Pipeline.COMPV6: _strategy(3, async_copy=True, prefetch=True, fragment_double_buffer=True),
        Pipeline.BASIC_ASYNC_V1: _strategy(2, async_copy=True, prefetch=False, fragment_double_buffer=False),
        Pipeline.COMP_ASYNC: _strategy(4, async_copy=True, prefetch=True, fragment_double_buffer=True),
        Pipeline.WAVELET: _strategy(3, async_copy=True, prefetch=True, fragment_double_buffer=True),
    }
)


@cache
def get_arch(name: str = DEFAULT_ARCH) -> ArchSpec:
    """The spec of ``name``; ValueError naming the accepted arches otherwise."""
    atoms = {DataType.FP16: _HALF_ATOMS, DataType.BF16: _HALF_ATOMS, DataType.FP32: _TF32_ATOMS}
    if name == "sm_90a":
        return ArchSpec(
            name=name,
            cuda_arch=900,
            smem_per_block_bytes=227 * 1024,
            smem_per_sm_bytes=228 * 1024,
            mma_atoms=atoms,
            pipelines=_PIPELINES,
            has_wgmma=True,
        )
    if name == "sm_80":
        return ArchSpec(
            name=name,
            cuda_arch=800,
            smem_per_block_bytes=163 * 1024,
            smem_per_sm_bytes=164 * 1024,
            mma_atoms=atoms,
            pipelines=_PIPELINES,
        )
    raise ValueError(f"unknown arch {name!r}; accepted: {', '.join(ARCH_NAMES)}")
