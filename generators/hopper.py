"""The Hopper path (the second kernel generation, docs/pipelines.md "Hopper path"): which valid configurations
it builds on an arch, and what it allocates. Every other valid configuration runs on the first generation; the
name and instance string are the same either way.

This is the Python half of ``Sm90Config<Traits>::not_buildable()`` / ``kSmemBytes``
(``instances/include/tiledispatch/kernels/sm90/config.hpp``); ``tests/kernels/test_resource_model.py``
compiles the C++ half and compares the two on every configuration of its sample.

bwd_weight tiles whose tile_m is not a multiple of 64 while tile_n is (grouped layers' K/G of 16 or 32) are
computed transposed (``Sm90Config::kTransposed``): wgmma's M runs over tile_n and its N over tile_m, so the
warpgroup rules below apply to (tile_n, tile_m) there; the tile, its shared memory and accumulators are those
of the untransposed tile.

What the Hopper kernel does per problem (TMA or gathers, and for num_groups_to_merge > 1 the diagonal kernel
where C/G and K/G fill tile_k / gm and tile_n / gm: ``Sm90Config::kDiagonal``) changes neither which
configurations it builds nor what they accept or allocate, so nothing of it is mirrored here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from generators.arch import ArchSpec
from generators.config import KernelConfig
from generators.enums import DataType, Direction, Epilogue

WARPGROUP_THREADS = 128
MAX_STAGES = 8
SMEM_ALIGN = 1024
"""The 128-byte swizzle repeats every 1024 bytes: the operand ring starts on such a boundary."""
RING_BARRIER_BYTES = 2 * MAX_STAGES * 8
"""A full and an empty mbarrier (8 bytes each) per stage, for the deepest ring."""
ORDER_BARRIER_BYTES = 2 * 8
"""Ping-pong: one mbarrier per consumer warpgroup saying whose turn it is to multiply."""
EPILOGUE_COLUMNS = 64
"""The staged epilogue stores a consumer warpgroup's tile this many columns at a time (fewer if its N is)."""
EPILOGUE_ROW_INFO_BYTES = 32
"""The staged epilogue's slot per row for the row's output address."""
ZERO_ROW_MIN_OUTPUTS = 16384
"""bwd_data warpgroup tiles of at least this many outputs keep a row of zeros in shared memory, which their
staged epilogue bulk-copies to the tap-less stride phases' pixels (16-bit outputs)."""
MIN_STAGED_STAGES = 4
"""The staged epilogue takes shared memory only where the ring keeps this many stages (or all it had)."""
DTYPES = (DataType.FP16, DataType.BF16)
"""What the Hopper path multiplies: TF32 wgmma reads K-major operands only, and bwd_data / bwd_weight need
MN-major ones, so fp32 stays on the first generation."""


class HopperPlan(BaseModel):
    """What the Hopper kernel of one configuration is made of."""

    model_config = ConfigDict(frozen=True)

    consumer_warpgroups: int
    ping_pong: bool
    """num_wave_groups 2: each consumer warpgroup owns whole tiles, the two taking turns."""
    transposed: bool
    """bwd_weight computed as the tile's transpose: wgmma's M is tile_n, its N tile_m."""
    warpgroups_along_m: bool
    """Consumer warpgroups stacked along wgmma's M (tile_n where transposed)."""
    warpgroup_tile_m: int
    """One warpgroup's wgmma M (a slice of tile_n where transposed)."""
    warpgroup_tile_n: int
    """One warpgroup's wgmma N (a slice of tile_m where transposed)."""
    stages: int
    staged_epilogue: bool
    """Results through shared memory (``Sm90Config::kStagedEpilogue``)."""
    smem_bytes: int
    accumulators_per_thread: int
    batch_in_flight: bool

    @property
    def threads(self) -> int:
        """One producer warpgroup and the consumers."""
        return WARPGROUP_THREADS * (1 + self.consumer_warpgroups)


def align_up(value: int, to: int) -> int:
    """``value`` rounded up to a multiple of ``to``."""
    return (value + to - 1) // to * to


def is_transposed(c: KernelConfig) -> bool:
    """Whether the Hopper kernel computes ``c``'s tile transposed (``Sm90Config::kTransposed``): bwd_weight
    whose tile_m (K/G's extent) is not a multiple of 64, wgmma's least M per warpgroup, while tile_n is."""
    return c.direction is Direction.BWD_WEIGHT and c.tile_m % 64 != 0 and c.tile_n % 64 == 0


def staged_epilogue_bytes(c: KernelConfig, consumers: int, wg_m: int, wg_n: int) -> int:
    """Shared memory of the staged epilogue (the cshuffle epilogue) where ``c``'s tile can have it (fwd and
    bwd_data, 16-byte output stores, warpgroup N a multiple of 16 and of the staged columns), else 0: per
    consumer warpgroup, its rows of staged columns and a slot per row."""
    columns = min(wg_n, EPILOGUE_COLUMNS)
    if (
        c.epilogue is not Epilogue.CSHUFFLE
        or c.direction is Direction.BWD_WEIGHT
        or c.vector_size_c < 8
        or c.dtype.size_bytes != 2
        or wg_n <= 0
        or wg_n % 16 != 0
        or wg_n % columns != 0
    ):
        return 0
    return consumers * wg_m * (columns * c.dtype.size_bytes + EPILOGUE_ROW_INFO_BYTES)


def hopper_plan(c: KernelConfig, arch: ArchSpec) -> HopperPlan | str:
    """The plan of ``c`` on the Hopper path, or why that path cannot build it (it then runs on the first
    generation). ``c`` must be valid on ``arch`` (``generators.validity``)."""
    consumers = 2 if c.wave_m * c.wave_n >= 4 else 1
    ping_pong = c.num_wave_groups == 2
    tile_warpgroups = 1 if ping_pong else consumers
    transposed = is_transposed(c)
    mma_m, mma_n = (c.tile_n, c.tile_m) if transposed else (c.tile_m, c.tile_n)
    along_m = mma_m % (64 * tile_warpgroups) == 0
    wg_m = mma_m // tile_warpgroups if along_m else mma_m
    wg_n = mma_n if along_m else mma_n // tile_warpgroups
    stage_bytes = (c.tile_m + c.tile_n) * c.tile_k * c.dtype.size_bytes
    # The pipeline's first-generation strategy: its stages are the ring's minimum, a ring needs cp.async, and
    # double-fragment pipelines keep one wgmma batch in flight (warpgroup_wait<1>).
    strategy = arch.pipeline_strategy(c.pipeline, c.double_smem_buffer)
    min_stages = strategy.stages
    barrier_bytes = RING_BARRIER_BYTES + (ORDER_BARRIER_BYTES if ping_pong else 0)
    # bwd_data's row of zeros after the barriers (Sm90Config::kZeroRowBytes)
    has_zero_row = (
        c.direction is Direction.BWD_DATA and c.dtype.size_bytes == 2 and wg_m * wg_n >= ZERO_ROW_MIN_OUTPUTS
    )
    zero_row = wg_n * 2 if has_zero_row else 0

    def fill_stages(other: int) -> int:
        left = arch.smem_per_block_bytes - barrier_bytes - zero_row - SMEM_ALIGN - other
        return max(0, left) // stage_bytes

    epilogue = staged_epilogue_bytes(c, consumers, wg_m, wg_n)
    plain_fill = fill_stages(0)
    # the staged epilogue starts on a 1024-byte boundary (its rows are TMA boxes in the 128-byte swizzle)
    staged_fill = fill_stages(epilogue + SMEM_ALIGN)
    staged = epilogue > 0 and staged_fill >= min_stages and staged_fill >= min(plain_fill, MIN_STAGED_STAGES)
    fill = staged_fill if staged else plain_fill
    stages = min_stages if fill < min_stages else min(fill, MAX_STAGES)
    operand_bytes = stages * stage_bytes
    if staged:
        operand_bytes = align_up(operand_bytes, SMEM_ALIGN) + epilogue
    smem = SMEM_ALIGN + operand_bytes + barrier_bytes + zero_row
    accumulators = c.tile_m * c.tile_n // (WARPGROUP_THREADS * tile_warpgroups)
    reasons = (
        (not arch.has_wgmma, "the build does not target sm_90a"),
        (c.dtype not in DTYPES, f"{c.dtype.value} (TF32 wgmma reads K-major operands only)"),
        (c.streamk_enabled, "stream-K"),
        (c.wave_k != 1, "wave_k > 1"),
        (c.num_wave_groups > 2, "num_wave_groups above 2"),
        (ping_pong and consumers != 2, "ping-pong with fewer than 4 waves (one warpgroup)"),
        (not strategy.async_copy or min_stages < 2, "a pipeline without a shared-memory ring"),
        (wg_m % 64 != 0, "a warpgroup tile M that is not a multiple of 64"),
        (wg_n % 8 != 0 or wg_n > 256, "a warpgroup tile N outside 8..256 by 8"),
        (c.tile_k % 16 != 0, "tile_k not a multiple of 16"),
        (
            min(c.vector_size_a, c.vector_size_b) * c.dtype.size_bytes < 4,
            "2-byte operand vectors (no cp.async)",
        ),
        (
            accumulators > arch.max_accumulators_per_thread,
            f"more than {arch.max_accumulators_per_thread} accumulators per consumer thread",
        ),
        (smem > arch.smem_per_block_bytes, "shared memory"),
    )
    for failed, reason in reasons:
        if failed:
            return reason
    return HopperPlan(
        consumer_warpgroups=consumers,
        ping_pong=ping_pong,
        transposed=transposed,
        warpgroups_along_m=along_m,
        warpgroup_tile_m=wg_m,
        warpgroup_tile_n=wg_n,
        stages=stages,
        staged_epilogue=staged,
        smem_bytes=smem,
        accumulators_per_thread=accumulators,
        batch_in_flight=strategy.fragment_double_buffer,
    )
