"""THE validity rules: whether a configuration is legal on an NVIDIA arch (DESIGN decision 1).

Everything that enumerates or accepts configurations (rule sets, the legacy parser, the generator) calls
``validate(config, arch)``; nothing else decides legality. A rejection names the rule it broke (a short,
stable id) and says why. Where a configuration that upstream CK accepts on AMD is rejected here, the message
says what NVIDIA lacks (an MMA atom, registers, shared memory), so a parity report can quote it.

Each rule is a small function returning ``None`` (passes) or the message; its docstring cites its source.
The rule tables ``IMPLICIT_GEMM_RULES`` and ``DEPTHWISE_RULES`` list them in the order they are checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from generators.arch import ArchSpec, get_arch
from generators.config import DepthwiseConfig, KernelConfig
from generators.enums import (
    DataType,
    Direction,
    Epilogue,
    Pipeline,
    Scheduler,
    Specialization,
    StreamKReduction,
)
from generators.hopper import align_up, hopper_plan

ACCUMULATOR_BYTES = 4
EPILOGUE_ROW_PAD = 4
"""fp32 elements padding each row of the shared accumulator tile (spreads its rows over the banks)."""
SMEM_ALIGN = 16
TMA_BOX_ALIGN = 128
"""Shared-memory alignment of a TMA box's destination (the depthwise halos' column residues)."""
TMA_MAX_TRAVERSAL = 8
"""TMA's largest traversal stride; TMA_MAX_BOX its largest box side."""
TMA_MAX_BOX = 256
TMA_MIN_VECTOR_BYTES = 16
"""3D depthwise halos are laid out for TMA where a vector is this wide (depthwise::halo_by_tma): narrower
vectors serve channel counts whose pixel pitch TMA's 16-byte rule refuses."""
DEPTHWISE_BARRIER_BYTES = 16
"""The depthwise kernels' two stage mbarriers (their TMA halos; ``depthwise::kStageBarrierBytes``)."""
WARP_SIZE = 32
"""Lanes of a warp on every NVIDIA arch (``ArchSpec.warp_size``); the depthwise bwd_weight shuffles use it."""


class ValidationResult(BaseModel):
    """Outcome of ``validate``: ``ok``, and for a rejection the broken ``rule`` id and a ``message``."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    rule: str = ""
    message: str = ""


OK = ValidationResult(ok=True)


class Rule(NamedTuple):
    id: str
    check: Callable[..., str | None]

    @property
    def doc(self) -> str:
        return (self.check.__doc__ or "").strip()


def _is_pow2(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


# --- facts about single fields --------------------------------------------------------------------------
# Each fact below is stated once, here. The rules further down call these predicates, and so do the rule
# sets when they leave a candidate out before validation (``rulesets.space``, ``rulesets.full``,
# ``rulesets.default``, ``rulesets.legacy_convert``): an enumeration never keeps its own copy of a rule.

FORWARD_ONLY_PIPELINES = (Pipeline.COMPV5,)
"""Source: ck_conventions §5; upstream ``grouped_config_rules_default.py``."""
INTERWAVE_PIPELINES = (Pipeline.BASIC_V1, Pipeline.MEM)
"""The pipelines the interwave scheduler runs with. Source: ck_conventions §5."""
DOUBLE_SMEM_BUFFER_PIPELINES = (Pipeline.COMPV4,)
"""Pipelines that always double-buffer shared memory. Source: ck_conventions §1 and §5."""
BACKWARD_SPECIALIZATIONS = (Specialization.DEFAULT, Specialization.FILTER1X1_STRIDE1_PAD0)
"""The specialisations backward kernels have. Source: ck_conventions §5."""
STREAMK_FP32_EXCLUDED_PIPELINES = (Pipeline.BASIC_ASYNC_V1, Pipeline.COMP_ASYNC)
"""The async pipelines stream-K does not run in fp32. Source: ck_conventions §4."""


def pipeline_runs_direction(pipeline: Pipeline, direction: Direction) -> bool:
    """compv5 is forward only."""
    return direction is Direction.FWD or pipeline not in FORWARD_ONLY_PIPELINES


def scheduler_runs_pipeline(scheduler: Scheduler, pipeline: Pipeline) -> bool:
    """The interwave scheduler runs only with compv1 (basic_v1) and mem."""
    return scheduler is not Scheduler.INTERWAVE or pipeline in INTERWAVE_PIPELINES


def needs_double_smem_buffer(pipeline: Pipeline) -> bool:
    """compv4 always double-buffers shared memory."""
    return pipeline in DOUBLE_SMEM_BUFFER_PIPELINES


def specialization_runs_direction(specialization: Specialization, direction: Direction) -> bool:
    """Forward kernels have every specialisation, backward ones only ``BACKWARD_SPECIALIZATIONS``."""
    return direction is Direction.FWD or specialization in BACKWARD_SPECIALIZATIONS


def two_stage_runs_direction(direction: Direction) -> bool:
    """two_stage is a backward-weight feature."""
    return direction is Direction.BWD_WEIGHT


def streamk_runs_direction(direction: Direction) -> bool:
    """Stream-K is a backward-weight feature."""
    return direction is Direction.BWD_WEIGHT


def streamk_runs_pipeline(dtype: DataType, pipeline: Pipeline) -> bool:
    """Stream-K with fp32 does not run the async pipelines."""
    return dtype is not DataType.FP32 or pipeline not in STREAMK_FP32_EXCLUDED_PIPELINES


def tile_splits(tile: int, waves: int, warp_tile: int) -> bool:
    """One block-tile dimension is a whole number of waves x warp-tile steps."""
    return tile % (waves * warp_tile) == 0


# --- implicit GEMM --------------------------------------------------------------------------------------


def mainloop_smem_bytes(c: KernelConfig, arch: ArchSpec) -> int:
    """The operand stages: stages x (tile_m + tile_n) x tile_k x sizeof(dtype) (``kMainloopSmemBytes``)."""
    stages = arch.smem_stages(c.pipeline, c.double_smem_buffer)
    return stages * (c.tile_m + c.tile_n) * c.tile_k * c.dtype.size_bytes


def accumulator_tile_smem_bytes(c: KernelConfig) -> int:
    """The fp32 accumulator tile, rows padded by 4 floats, needed by the cshuffle epilogue and by the
    reduction of wave_k > 1 K groups (``kEpilogueSmemBytes``); 0 otherwise."""
    if c.epilogue is not Epilogue.CSHUFFLE and c.wave_k == 1:
        return 0
    return c.tile_m * (c.tile_n + EPILOGUE_ROW_PAD) * ACCUMULATOR_BYTES


def fold_smem_bytes(c: KernelConfig, arch: ArchSpec) -> int:
    """The bwd_weight outer accumulator when it lives in shared memory (``kFoldPlace == kSharedMemory``):
    one fp32 slot per accumulator and thread, after the 16-byte aligned operand stages. It goes there only
    when twice the accumulators exceed the register share and it fits the block limit; else 0."""
    if c.direction is not Direction.BWD_WEIGHT:
        return 0
    per_thread = accumulators_per_thread(c)
    if 2 * per_thread <= arch.max_accumulators_per_thread:
        return 0
    slots = c.threads * per_thread * ACCUMULATOR_BYTES
    if align_up(mainloop_smem_bytes(c, arch), SMEM_ALIGN) + slots > arch.smem_per_block_bytes:
        return 0
    return slots


def smem_bytes(c: KernelConfig, arch: ArchSpec) -> int:
    """Shared memory per block, exactly what the kernel allocates (``ImplicitGemmConfig::kSmemBytes``;
    docs/architecture.md §4): the larger of the operand stages (plus the shared fold slots) and the
    accumulator tile, which reuses the stages' memory after the main loop."""
    mainloop = mainloop_smem_bytes(c, arch)
    fold = fold_smem_bytes(c, arch)
    stages = align_up(mainloop, SMEM_ALIGN) + fold if fold else mainloop
    return max(stages, accumulator_tile_smem_bytes(c))


def accumulators_per_thread(c: KernelConfig) -> int:
    """fp32 accumulators each thread holds (docs/architecture.md §4): every K group (wave_k) holds the
    whole tile, so the tile is spread over threads / wave_k (``kAccumulatorsPerThread``)."""
    return c.tile_m * c.tile_n // (c.threads // c.wave_k)


def _wave_count(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Waves per block dimension are 1, 2 or 4 and the block fits the thread limit.

    Source: ck_conventions §5 wave strategies (1x1x1 ... 4x1x1, 2x1x2); CUDA's 1024 threads per block; a CK
    wave is 64 lanes = two warps (DESIGN decision 2).
    """
    for axis, waves in (("wave_m", c.wave_m), ("wave_n", c.wave_n), ("wave_k", c.wave_k)):
        if waves not in arch.wave_counts:
            accepted = ", ".join(map(str, arch.wave_counts))
            return f"{axis} {waves} is not a legal wave count; accepted: {accepted}"
    if c.threads > arch.max_threads_per_block:
        return f"{c.threads} threads per block exceed {arch.max_threads_per_block}"
    return None


def _tile_divisible(c: KernelConfig, arch: ArchSpec) -> str | None:
    """The block tile is a whole number of wave x warp-tile steps in M, N and K.

    Source: CK Tile's ``TileGemmShape`` static_asserts (ck_tile/ops/gemm), restated in upstream
    ``codegen/grouped_conv/tile_math.py``.
    """
    for axis, tile, waves, warp in (
        ("m", c.tile_m, c.wave_m, c.warp_tile_m),
        ("n", c.tile_n, c.wave_n, c.warp_tile_n),
        ("k", c.tile_k, c.wave_k, c.warp_tile_k),
    ):
        if not tile_splits(tile, waves, warp):
            return f"tile_{axis} {tile} is not a multiple of wave_{axis} x warp_tile_{axis} = {waves}x{warp}"
    return None


def _warp_tile_buildable(c: KernelConfig, arch: ArchSpec) -> str | None:
    """The warp tile is whole ``mma.sync`` atoms of the dtype, split evenly over a wave's two warps.

    Source: DESIGN decision 2; CuTe ``mma_sm80.hpp`` atoms (m16n8k16/m16n8k8 half, m16n8k8/m16n8k4 TF32).
    Upstream accepts warp tiles that AMD's MFMA builds (fp32 32x32x2, for one); those are rejected here.
    """
    for atom in arch.mma_atoms[c.dtype]:
        if c.warp_tile_m % atom.m or c.warp_tile_n % atom.n or c.warp_tile_k % atom.k:
            continue
        if (c.warp_tile_m // atom.m) * (c.warp_tile_n // atom.n) % arch.warps_per_wave == 0:
            return None
    atoms = ", ".join(a.name for a in arch.mma_atoms[c.dtype])
    return (
        f"warp tile {c.warp_tile_m}x{c.warp_tile_n}x{c.warp_tile_k} cannot be built from {c.dtype.value} "
        f"mma.sync atoms ({atoms}) split over {arch.warps_per_wave} warps per wave; "
        "upstream builds it from AMD MFMA, NVIDIA has no such instruction"
    )


def _vector_width(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Vector widths are powers of two up to 32 bytes (16 for fp16/bf16, 8 for fp32).

    Source: ck_conventions §1 (max vector width 8 / 4, i.e. 16 bytes); CK's legacy lists also hold fp16
    ScalarPerVector 16. cp.async and ld.global move at most 16 bytes, so a 32-byte vector is two accesses
    (``ImplicitGemmConfig::kAccessA``); the vector width remains the alignment a problem must have.
    Limits: ``ArchSpec.max_vector_bytes`` / ``max_access_bytes``.
    """
    widest = arch.max_vector_width(c.dtype)
    for operand, width in (("a", c.vector_size_a), ("b", c.vector_size_b), ("c", c.vector_size_c)):
        if not _is_pow2(width) or width > widest:
            return f"vector_size_{operand} {width} is not a power of two <= {widest} for {c.dtype.value}"
    return None


def vector_tile_dims(c: KernelConfig) -> tuple[tuple[str, int], tuple[str, int], tuple[str, int]]:
    """The tile dimension each operand's vector runs along (its contiguous dimension), per direction.

    fwd: A and B along K (input/weight channels C), C along N (output channels K); bwd_data: A along K
    (output-gradient channels K), B and C along N (C); bwd_weight: A along M (K), B and C along N (C).
    """
    if c.direction is Direction.FWD:
        return ("tile_k", c.tile_k), ("tile_k", c.tile_k), ("tile_n", c.tile_n)
    if c.direction is Direction.BWD_DATA:
        return ("tile_k", c.tile_k), ("tile_n", c.tile_n), ("tile_n", c.tile_n)
    return ("tile_m", c.tile_m), ("tile_n", c.tile_n), ("tile_n", c.tile_n)


def _vector_divides_tile(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Each operand's vector width divides the tile dimension it loads along.

    Source: ck_conventions §1 (vector dims per direction: fwd a,b -> C, c -> K; bwd_data a -> K, b,c -> C;
    bwd_weight a -> K, b,c -> C), mapped onto the GEMM tile by ``vector_tile_dims``.
    """
    widths = (c.vector_size_a, c.vector_size_b, c.vector_size_c)
    for operand, width, (dim, size) in zip("abc", widths, vector_tile_dims(c), strict=True):
        if size % width:
            return f"vector_size_{operand} {width} does not divide {dim} {size} ({c.direction.value})"
    return None


def _shared_memory(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Shared memory per block fits the arch (227 KB sm_90a, 163 KB sm_80).

    Source: docs/architecture.md §4 (``smem_bytes``: the operand stages, the bwd_weight fold slots, the
    fp32 accumulator tile of cshuffle and wave_k > 1).
    """
    need = smem_bytes(c, arch)
    if need > arch.smem_per_block_bytes:
        return (
            f"needs {need} bytes of shared memory ({c.pipeline.value}, "
            f"{arch.smem_stages(c.pipeline, c.double_smem_buffer)} stages), {arch.name} allows "
            f"{arch.smem_per_block_bytes}"
        )
    return None


def _register_budget(c: KernelConfig, arch: ArchSpec) -> str | None:
    """At most 128 fp32 accumulators per thread, so operand fragments fit beside them in 255 registers.

    Source: DESIGN decision 2 and docs/architecture.md §4: upstream's 256x256 and 224x256 tiles on 256
    threads (224-256 accumulators) are legal on AMD (512 VGPRs incl. AGPRs) but would spill here; rejected
    and reported. With wave_k > 1 each K group holds the whole tile, on threads / wave_k threads.
    """
    per_thread = accumulators_per_thread(c)
    if per_thread > arch.max_accumulators_per_thread:
        holders = f"{c.threads // c.wave_k} threads" + (" per K group" if c.wave_k > 1 else "")
        return (
            f"{per_thread} fp32 accumulators per thread ({c.tile_m}x{c.tile_n} tile on {holders}) "
            f"exceed {arch.max_accumulators_per_thread}: legal upstream on AMD, but beside the operand "
            f"fragments it does not fit {arch.registers_per_thread} registers per thread on {arch.name}"
        )
    return None


def _compv5_forward_only(c: KernelConfig, arch: ArchSpec) -> str | None:
    """compv5 is forward only. Source: ck_conventions §5; upstream ``grouped_config_rules_default.py``."""
    if not pipeline_runs_direction(c.pipeline, c.direction):
        return f"pipeline {c.pipeline.value} is forward only, not {c.direction.value}"
    return None


def _interwave_pipeline(c: KernelConfig, arch: ArchSpec) -> str | None:
    """The interwave scheduler runs only with compv1 (basic_v1) and mem. Source: ck_conventions §5."""
    if not scheduler_runs_pipeline(c.scheduler, c.pipeline):
        accepted = " or ".join(p.value for p in INTERWAVE_PIPELINES)
        return f"scheduler {c.scheduler.value} needs pipeline {accepted}, not {c.pipeline.value}"
    return None


def _compv4_double_smem_buffer(c: KernelConfig, arch: ArchSpec) -> str | None:
    """compv4 always double-buffers shared memory. Source: ck_conventions §1 and §5 (compv4 implies dsb)."""
    if needs_double_smem_buffer(c.pipeline) and not c.double_smem_buffer:
        return f"pipeline {c.pipeline.value} requires double_smem_buffer"
    return None


def _two_stage_direction(c: KernelConfig, arch: ArchSpec) -> str | None:
    """two_stage is a backward-weight feature. Source: ck_conventions §1 (``two_stage`` (bwd_weight))."""
    if c.two_stage and not two_stage_runs_direction(c.direction):
        return f"two_stage is bwd_weight only, not {c.direction.value}"
    return None


def _streamk_direction(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Stream-K is a backward-weight feature. Source: ck_conventions §1 (streamk_* (bwd_weight only))."""
    if c.streamk_enabled and not streamk_runs_direction(c.direction):
        return f"stream-K is bwd_weight only, not {c.direction.value}"
    return None


def _streamk_fields(c: KernelConfig, arch: ArchSpec) -> str | None:
    """streamk_reduction/streamk_persistent are left at their defaults (tree, off) without stream-K.

    Source: ck_conventions §1 (meaningful only with stream-K); keeps one name per configuration (DESIGN 4).
    """
    if not c.streamk_enabled and (c.streamk_persistent or c.streamk_reduction is not StreamKReduction.TREE):
        return "streamk_reduction/streamk_persistent set without streamk_enabled"
    return None


def _streamk_fp32_async(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Stream-K with fp32 does not run the async pipelines. Source: ck_conventions §4 (upstream skips native
    stream-K lines with fp32 and an async pipeline)."""
    if c.streamk_enabled and not streamk_runs_pipeline(c.dtype, c.pipeline):
        return f"stream-K fp32 does not support pipeline {c.pipeline.value}"
    return None


def _explicit_gemm(c: KernelConfig, arch: ArchSpec) -> str | None:
    """explicit_gemm runs the convolution as one plain GEMM, which needs filter1x1_stride1_pad0 and a
    direction whose instance string has the field (fwd, bwd_weight). Source: ck_conventions §3 (bwd_data
    has no ExplicitGemm field) and §4 (explicit GEMM implies Filter1x1Stride1Pad0)."""
    if not c.explicit_gemm:
        return None
    if c.direction is Direction.BWD_DATA:
        return "explicit_gemm is not available for bwd_data"
    if c.specialization is not Specialization.FILTER1X1_STRIDE1_PAD0:
        return f"explicit_gemm needs specialization filter1x1_stride1_pad0, not {c.specialization.value}"
    return None


def _backward_specialization(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Backward kernels specialize only default and filter1x1_stride1_pad0. Source: ck_conventions §5."""
    if not specialization_runs_direction(c.specialization, c.direction):
        accepted = ", ".join(s.value for s in BACKWARD_SPECIALIZATIONS)
        return (
            f"specialization {c.specialization.value} is forward only; {c.direction.value} accepts {accepted}"
        )
    return None


def _split_image_merged_groups(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Split image (large tensor) runs one group per GEMM. Source: ck_conventions §4 (``_Large_Tensor`` sets
    split_image and num_groups_to_merge 1)."""
    if c.split_image and c.num_groups_to_merge != 1:
        return f"split_image needs num_groups_to_merge 1, not {c.num_groups_to_merge}"
    return None


def _merged_groups(c: KernelConfig, arch: ArchSpec) -> str | None:
    """num_groups_to_merge is a power of two (1 ... 32). Source: ck_conventions §5 (gm 2/4/8/16/32)."""
    if not _is_pow2(c.num_groups_to_merge) or c.num_groups_to_merge > 32:
        return f"num_groups_to_merge {c.num_groups_to_merge} is not a power of two <= 32"
    return None


def _num_wave_groups(c: KernelConfig, arch: ArchSpec) -> str | None:
    """Wave groups partition the block's waves. 2 is CK's ping-pong: on NVIDIA the Hopper path's two consumer
    warpgroups that take turns, each on tiles of its own (docs/pipelines.md, "num_wave_groups"). The
    first-generation kernel has no counterpart, so a ping-pong configuration is valid only where the Hopper
    path builds it: no instance is generated that could never run. Source: CK Tile ``NumWaveGroups``."""
    waves = c.wave_m * c.wave_n * c.wave_k
    if waves % c.num_wave_groups:
        return f"num_wave_groups {c.num_wave_groups} does not divide the {waves} waves of the block"
    if c.num_wave_groups == 1:
        return None
    plan = hopper_plan(c, arch)
    if isinstance(plan, str):
        return (
            f"num_wave_groups {c.num_wave_groups}: ping-pong consumer warpgroups run only on the Hopper "
            f"path, which does not build this configuration on {arch.name} ({plan})"
        )
    return None


def _block_per_cu(c: KernelConfig, arch: ArchSpec) -> str | None:
    """block_per_cu blocks must fit one SM together (threads and shared memory).

    Source: CK ``kBlockPerCu`` is an occupancy hint; on NVIDIA it becomes ``__launch_bounds__`` min blocks.
    """
    if c.block_per_cu == 1:
        return None
    if c.block_per_cu * c.threads > arch.max_threads_per_sm:
        return f"block_per_cu {c.block_per_cu} x {c.threads} threads exceed {arch.max_threads_per_sm} per SM"
    if c.block_per_cu * smem_bytes(c, arch) > arch.smem_per_sm_bytes:
        need = c.block_per_cu * smem_bytes(c, arch)
        return f"block_per_cu {c.block_per_cu} blocks need {need} bytes of shared memory per SM"
    return None


IMPLICIT_GEMM_RULES: tuple[Rule, ...] = (
    Rule("wave_count", _wave_count),
    Rule("tile_divisible", _tile_divisible),
    Rule("warp_tile_buildable", _warp_tile_buildable),
    Rule("vector_width", _vector_width),
    Rule("vector_divides_tile", _vector_divides_tile),
    Rule("compv5_forward_only", _compv5_forward_only),
    Rule("interwave_pipeline", _interwave_pipeline),
    Rule("compv4_double_smem_buffer", _compv4_double_smem_buffer),
    Rule("two_stage_direction", _two_stage_direction),
    Rule("streamk_direction", _streamk_direction),
    Rule("streamk_fields", _streamk_fields),
    Rule("streamk_fp32_async", _streamk_fp32_async),
    Rule("explicit_gemm", _explicit_gemm),
    Rule("backward_specialization", _backward_specialization),
    Rule("split_image_merged_groups", _split_image_merged_groups),
    Rule("merged_groups", _merged_groups),
    Rule("num_wave_groups", _num_wave_groups),
    Rule("register_budget", _register_budget),
    Rule("shared_memory", _shared_memory),
    Rule("block_per_cu", _block_per_cu),
)


# --- depthwise ------------------------------------------------------------------------------------------


DEPTHWISE_REGISTER_RESERVE = 40
"""Registers a depthwise bwd_weight thread keeps for addresses, loop state and one input vector beside its
accumulators and dY values (what ptxas needed for bench/gpu_check/hand_depthwise_bwd.cu's instances)."""


def bwd_data_dy_lo(filter_size: int, stride: int, pad: int) -> int:
    """The lowest dY offset (relative to i0 / stride, i0 a multiple of the stride) that a dX index of
    [i0, i0 + stride) reads; phases without taps read nothing. Mirrors ``depthwise::bwd_data_dy_lo``."""
    offsets = []
    for i in range(stride):
        r = (i + pad) % stride
        if r < filter_size:
            f_max = r + (filter_size - 1 - r) // stride * stride
            offsets.append((i + pad - f_max) // stride)
    return min(offsets)


def bwd_data_dy_hi(extent: int, filter_size: int, stride: int, pad: int) -> int:
    """The highest dY offset (relative to i0 / stride) that a dX index of [i0 + extent - stride, i0 + extent)
    reads. Mirrors ``depthwise::bwd_data_dy_hi``."""
    offsets = []
    for i in range(extent - stride, extent):
        r = (i + pad) % stride
        if r < filter_size:
            offsets.append((i + pad - r) // stride)
    return max(offsets)


def depthwise_threads(c: DepthwiseConfig) -> int:
    """Threads of a block: one per (sub-tile, channel group); bwd_weight launches whole warps."""
    threads = (c.tile_h // c.sub_h) * (c.tile_w // c.sub_w) * c.nbatch
    return align_up(threads, WARP_SIZE) if c.direction is Direction.BWD_WEIGHT else threads


def depthwise_smem_bytes(c: DepthwiseConfig) -> int:
    """Shared memory a block needs with one stage of its halo ring, what the configuration must fit
    (``depthwise::Shape``, ``BwdDataShape``, ``BwdWeightShape`` ``::kSmemBytes``; the kernel allocates a
    second stage when two fit, ``kStages``; docs/depthwise.md), 16-byte aligned parts:
    staged pixels as ``_pixel_layout_bytes`` places them (2D and 3D with 16-byte vectors: 128-byte aligned
    column residues, TMA's boxes),
    two 8-byte stage barriers last. fwd: the input halo of the block's nbatch x out_vec channels (column
    residues sub_w x stride_w apart), then the F x F fp32 weights; bwd_data: the dY halo its dX tile reads
    (residues sub_w / stride_w apart), then the weights; bwd_weight: the X halo as fwd, the dY tile (residues
    sub_w apart), then one F x F fp32 partial per warp.

    3D (docs/depthwise.md, "3D"): with FD = filter depth slices (FD = 1 in 2D), fwd and bwd_data stage FD
    halo slices and the F x F x F weights (``kWeightBytes = kFilterD * F * F * CB * 4``); a bwd_weight block
    handles one depth tap and stages the 2D parts. Every 3D slice is laid out for TMA where a vector is 16
    bytes, else 16-byte aligned with its rows' residues side by side."""
    channels = c.nbatch * c.out_vec
    element = c.dtype.size_bytes
    depth = c.filter if c.ndim_spatial == 3 else 1
    weights = c.filter * c.filter * channels * ACCUMULATOR_BYTES
    # Laid out for TMA: 2D, and 3D with 16-byte vectors (depthwise::halo_by_tma)
    tma_halo = c.ndim_spatial == 2 or c.in_vec * element >= TMA_MIN_VECTOR_BYTES
    if c.direction is Direction.BWD_DATA:
        halo_h = (
            bwd_data_dy_hi(c.tile_h, c.filter, c.stride_h, c.pad_h)
            - bwd_data_dy_lo(c.filter, c.stride_h, c.pad_h)
            + 1
        )
        halo_w = (
            bwd_data_dy_hi(c.tile_w, c.filter, c.stride_w, c.pad_w)
            - bwd_data_dy_lo(c.filter, c.stride_w, c.pad_w)
            + 1
        )
        halo = _pixel_layout_bytes(halo_h, halo_w, c.sub_w // c.stride_w, channels, element, tma_halo)
        return depth * halo + align_up(depth * weights, SMEM_ALIGN) + DEPTHWISE_BARRIER_BYTES
    in_h = (c.tile_h - 1) * c.stride_h + c.filter
    in_w = (c.tile_w - 1) * c.stride_w + c.filter
    halo = _pixel_layout_bytes(in_h, in_w, c.sub_w * c.stride_w, channels, element, tma_halo)
    if c.direction is Direction.BWD_WEIGHT:
        dy_tile = _pixel_layout_bytes(c.tile_h, c.tile_w, c.sub_w, channels, element, tma_halo)
        partials = depthwise_threads(c) // WARP_SIZE * weights
        return halo + dy_tile + align_up(partials, SMEM_ALIGN) + DEPTHWISE_BARRIER_BYTES
    return depth * halo + align_up(depth * weights, SMEM_ALIGN) + DEPTHWISE_BARRIER_BYTES


def _pixel_layout_bytes(rows: int, cols: int, col_step: int, channels: int, element: int, tma: bool) -> int:
    """Bytes of staged pixels (``depthwise::PixelLayout``): a row's columns in ``col_step`` residues of
    ceil(cols / col_step) positions; where TMA can load them (``tma``: 2D, or 3D with 16-byte vectors; a
    traversal stride of at most 8, box sides of at most 256) each residue a block of the rows, 128-byte
    aligned, else a row's residues side by side, 16-byte aligned in all."""
    positions = -(-cols // col_step)
    if tma and col_step <= TMA_MAX_TRAVERSAL and max(positions * col_step, rows) <= TMA_MAX_BOX:
        return col_step * align_up(rows * positions * channels * element, TMA_BOX_ALIGN)
    return align_up(rows * positions * col_step * channels * element, SMEM_ALIGN)


def _depthwise_vector_width(c: DepthwiseConfig, arch: ArchSpec) -> str | None:
    """in_vec/out_vec are powers of two up to 32 bytes, moved as one access or (32 bytes: fp32 vec 8, fp16
    vec 16) two 16-byte ones, as the implicit GEMM's vectors. Source: ck_conventions §1 (max vector width)."""
    widest = arch.max_vector_width(c.dtype)
    for field, width in (("in_vec", c.in_vec), ("out_vec", c.out_vec)):
        if not _is_pow2(width) or width > widest:
            return (
                f"{field} {width} is not a power of two <= {widest} for {c.dtype.value} "
                f"({width * c.dtype.size_bytes} bytes; the widest vector is {arch.max_vector_bytes}, "
                f"two {arch.max_access_bytes}-byte accesses)"
            )
    return None


def _depthwise_vector_divides_channels(c: DepthwiseConfig, arch: ArchSpec) -> str | None:
    """in_vec divides the nbatch x out_vec channels a block stages. Our kernel reads channels-last tensors,
    so vectors run along C, not along W as in CK's NGCHW kernel: CK's W-alignment rule does not apply, this
    one (the kernel's ``kVectorsFitSlice``) does. Source: docs/depthwise.md, depthwise_kernel.cuh."""
    channels = c.nbatch * c.out_vec
    if channels % c.in_vec:
        return (
            f"in_vec {c.in_vec} does not divide the block's nbatch x out_vec = {channels} channels: "
            "a vector copy would straddle two blocks' channel slices"
        )
    return None


def _depthwise_sub_tile(c: DepthwiseConfig, arch: ArchSpec) -> str | None:
    """The per-thread sub-tile divides the block tile. Source: ck_conventions §1 depthwise fields."""
    if c.tile_h % c.sub_h or c.tile_w % c.sub_w:
        return f"sub-tile {c.sub_h}x{c.sub_w} does not divide tile {c.tile_h}x{c.tile_w}"
    return None


def _depthwise_bwd_data_phases(c: DepthwiseConfig, arch: ArchSpec) -> str | None:
    """bwd_data: the sub-tile is a whole number of stride phases, so each pixel's taps are compile-time and no
    pixel multiplies a zero of the strided dY grid. Source: depthwise_bwd_kernel.cuh (BwdDataShape)."""
    if c.direction is Direction.BWD_DATA and (c.sub_h % c.stride_h or c.sub_w % c.stride_w):
        return (
            f"bwd_data sub-tile {c.sub_h}x{c.sub_w} is not a multiple of stride {c.stride_h}x{c.stride_w}: "
            "a thread's pixels must cover whole stride phases"
        )
    return None


def _depthwise_bwd_weight_lanes(c: DepthwiseConfig, arch: ArchSpec) -> str | None:
    """bwd_weight: nbatch divides the warp, so the lanes of one channel group are lane % nbatch and the
    fixed-order butterfly reduces them. Source: depthwise_bwd_kernel.cuh (BwdWeightShape)."""
    if c.direction is Direction.BWD_WEIGHT and WARP_SIZE % c.nbatch:
        return f"bwd_weight nbatch {c.nbatch} does not divide the {WARP_SIZE} lanes of a warp"
    return None


def _depthwise_bwd_weight_registers(c: DepthwiseConfig, arch: ArchSpec) -> str | None:
    """bwd_weight: the F x F x out_vec fp32 accumulators and the sub_w x out_vec dY values of a thread fit its
    registers (the register file shared by the block's threads, at most 255) beside
    ``DEPTHWISE_REGISTER_RESERVE``. Source: ptxas on the hand instances (the 512-thread 5x5 and 7x7 ones
    spilled)."""
    if c.direction is not Direction.BWD_WEIGHT:
        return None
    need = c.filter * c.filter * c.out_vec + c.sub_w * c.out_vec + DEPTHWISE_REGISTER_RESERVE
    have = min(arch.registers_per_thread, arch.registers_per_sm // depthwise_threads(c))
    if need > have:
        return (
            f"bwd_weight needs about {need} registers per thread ({c.filter}x{c.filter}x{c.out_vec} "
            f"accumulators, {c.sub_w}x{c.out_vec} dY values), {depthwise_threads(c)} threads allow {have}"
        )
    return None


def _depthwise_padding(c: DepthwiseConfig, arch: ArchSpec) -> str | None:
    """Padding is smaller than the filter. Source: ck_conventions §1 (pad = (filter-1)/2 in the rule sets)."""
    if c.pad_h >= c.filter or c.pad_w >= c.filter:
        return f"padding {c.pad_h}x{c.pad_w} is not smaller than filter {c.filter}"
    return None


def _depthwise_shared_memory(c: DepthwiseConfig, arch: ArchSpec) -> str | None:
    """The input halo and weights of a block fit shared memory. Source: docs/depthwise.md (kernel layout),
    docs/architecture.md §4 limits."""
    if _depthwise_bwd_data_phases(c, arch) is not None:
        return None  # not a kernel shape; depthwise_bwd_data_phases reports it
    need = depthwise_smem_bytes(c)
    if need > arch.smem_per_block_bytes:
        return f"needs {need} bytes of shared memory, {arch.name} allows {arch.smem_per_block_bytes}"
    return None


DEPTHWISE_RULES: tuple[Rule, ...] = (
    Rule("depthwise_vector_width", _depthwise_vector_width),
    Rule("depthwise_vector_divides_channels", _depthwise_vector_divides_channels),
    Rule("depthwise_sub_tile", _depthwise_sub_tile),
    Rule("depthwise_bwd_data_phases", _depthwise_bwd_data_phases),
    Rule("depthwise_bwd_weight_lanes", _depthwise_bwd_weight_lanes),
    Rule("depthwise_bwd_weight_registers", _depthwise_bwd_weight_registers),
    Rule("depthwise_padding", _depthwise_padding),
    Rule("depthwise_shared_memory", _depthwise_shared_memory),
)


def rules_for(config: KernelConfig | DepthwiseConfig) -> tuple[Rule, ...]:
    return DEPTHWISE_RULES if isinstance(config, DepthwiseConfig) else IMPLICIT_GEMM_RULES


def validate(config: KernelConfig | DepthwiseConfig, arch: ArchSpec | str | None = None) -> ValidationResult:
    """The first rule ``config`` breaks on ``arch`` (default sm_90a), or ``OK``."""
    spec = arch if isinstance(arch, ArchSpec) else get_arch(arch or "sm_90a")
    for rule in rules_for(config):
        message = rule.check(config, spec)
        if message is not None:
            return ValidationResult(ok=False, rule=rule.id, message=message)
    return OK


def violations(
    config: KernelConfig | DepthwiseConfig, arch: ArchSpec | str | None = None
) -> list[ValidationResult]:
    """Every rule ``config`` breaks (for reports that list all reasons, not just the first)."""
    spec = arch if isinstance(arch, ArchSpec) else get_arch(arch or "sm_90a")
    found = []
    for rule in rules_for(config):
        message = rule.check(config, spec)
        if message is not None:
            found.append(ValidationResult(ok=False, rule=rule.id, message=message))
    return found


def rule_ids() -> tuple[str, ...]:
    """Every rule id, implicit GEMM then depthwise."""
    return tuple(rule.id for rule in (*IMPLICIT_GEMM_RULES, *DEPTHWISE_RULES))
