"""``full``: the rule-derived space of ck_conventions §5, enumerated from ``rulesets.space`` (pure functions).

How the axes combine (a decision; upstream's exact product is not public): every tile of the direction's list
meets every wave strategy that yields a warp tile, and around that core
- every (pipeline, scheduler) pair of the direction, with CK's default vectors and no specialisation;
- every specialisation of the tile (§5 rules), on compv3/intrawave with default vectors;
- every other vector strategy, on compv3/intrawave without specialisation;
- every feature family (split image, merged groups, two-stage, explicit GEMM, stream-K) on its own tiles;
- depthwise 2D: fwd 20 parameter sets, filters 3 and 5 x strides 1 and 2 x five tiles; bwd_data and
  bwd_weight 30 each, filters 3, 5 and 7 x strides 1 and 2 x five shapes of their own (``space``);
- depthwise 3D (cubic filter; docs/depthwise.md, "3D"): every direction 66, filters 3, 5 and 7 x strides 1
  and 2 (in H and W; the depth stride is a run-time value) x the eleven ``space.DEPTHWISE_3D_SHAPES``, whose
  channel slices are smaller than 2D's because a forward or bwd_data stage holds ``filter`` depth slices.
Varying one axis at a time around the core keeps ``full`` enumerable in well under the 2 s budget while every
tile, wave strategy, pipeline, specialisation, vector strategy and family value occurs.

The warp-tile rule: M,N 32x32 when the per-wave tile is >= 32 and a multiple of 32 in M and N, else 16x16;
a wave strategy whose per-wave tile is not a multiple of 16 yields no warp tile, and one whose tile M or N is
not a whole number of wave x warp-tile steps (``generators.validity.tile_splits``) none either.
``warp_tile_k = min(max(k1, k_mfma), tile_k)`` with ``k1 = 4 if tile_k <= 16 else 8``.

``full`` also holds every configuration of the legacy lists (``profiler`` and ``tests``): CK defines ``full``
to contain them, and their odd tiles (64x64x80, 256x224, ...) are not all in the tile lists. Both sides are
filtered by the same ``generators.validity``, so ``full`` contains ``profiler`` and ``tests`` after filtering.

Arch rejections of ``full`` on sm_90a (configurations summed over the 18 direction x dtype x ndim requests,
each reported with its rule in ``enumerate_ruleset(...).rejected``): ``register_budget`` 5390 -- more than
128 fp32 accumulators per thread (128x128 and larger tiles on one or two waves, 224x256, 256x224 and
256x256 even on four, and with SPLIT_MK 128x256 / 256x128 too, since each of the wave_k K groups holds the
whole tile): AMD's accumulator registers hold them, sm_90a's 255 registers per thread do not beside the
operand fragments; ``tile_divisible`` 848 -- the SPLIT_MK wave strategy (wave_k 2) on tiles whose
tile_k equals the warp tile's K (8, 16, 32), which must be a multiple of wave_k x warp_tile_k;
``shared_memory`` 246 -- fp32 K-64 tiles with tile_m + tile_n >= 256 on the 4-stage mem and comp_async
pipelines, beyond sm_90a's 227 KB per block; ``depthwise_shared_memory`` 122 -- 2D: fp32 forward vec 8 on
the 32x32 tile (a 64-channel halo of 262-356 KB), 4; 3D, whose fwd and bwd_data stages hold ``filter``
halo slices and F x F x F weights, 118: forward in fp16 and bf16 23 each (16x16 and 16x28 vec 8 at stride 2
and at 7x7, their vec-4 twins at 7x7 stride 2 and 16x28's at 5x5 stride 2, 4x28 nb4 and 8x16 nb4 vec 8 at
5x5 and 7x7 stride 2, 8x28 nb2 and 8x32 nb2 at 7x7 stride 2, whose 5x5 stride 2 fits at 223 KB on 8x32; the
8x16 nb4 vec-4 and 8x16 nb2 shapes fit, at most 210 KB), in fp32 53 (its 4-byte elements double a stage:
every shape but 8x16 nb2 vec 4 at 7x7 stride 2, most at 5x5 stride 2 and 7x7 stride 1; 8x16 nb2 vec 4 fits
everywhere, at most 200 KB), bwd_data 7x7 stride 1 on 16x16 and 16x28 vec 8 in fp16 and bf16 (2 each) and
in fp32 14 (7x7 stride 1 on the 16x16 and 16x28 shapes and every vec-8 one, 16x16 and 16x28 vec 8 at 5x5
stride 1; at stride 2 a dX tile reads about a quarter of the dY halo and fits), bwd_weight fp32 3x3 stride 2
on 16x28 vec 8 (327 KB), 1;
``depthwise_bwd_weight_registers`` 156 -- bwd_weight 5x5 and 7x7 on the vec-8 shapes (200 or 392 fp32
accumulators per thread), fp32's since its vec 8 runs as two 16-byte accesses, as the implicit GEMM's
32-byte vectors do: 2D 24, 3D 132 (its eleven vec-8 shapes, 8x16 nb4, 8x32 nb2, 8x28 nb2 and 4x28 nb4 at
sub1x4 and sub2x4, 16x16 nb4 and 16x28 nb4 sub2x4, 8x16 nb2 sub1x4, 44 per dtype; vec 4 at 7x7, 196, fits);
``depthwise_bwd_data_phases`` 63 -- 3D bwd_data on the sub1x4 shapes (8x16 nb4 vec 8 and vec 4, 8x32 nb2,
8x28 nb2 and 4x28 nb4 vec 8, 8x16 nb2 vec 8 and vec 4) at stride 2 (3 filters x 7 shapes per dtype), whose
one-row sub-tile is not a whole number of stride phases.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from generators.config import AnyConfig, DepthwiseConfig, KernelConfig
from generators.enums import DataType, Direction, Specialization
from generators.validity import specialization_runs_direction, streamk_runs_pipeline, tile_splits
from rulesets import space
from rulesets.space import PipelineChoice, Tile, VectorStrategy
from rulesets.warp_tile import WarpTileKConvention, k_mfma, rule_k1, warp_tile_k

WaveWarp = tuple[tuple[int, int, int], tuple[int, int, int]]


def tiles_for(direction: Direction, dtype: DataType, ndim: int) -> tuple[Tile, ...]:
    """The §5 tile list of a direction, with its 3D and fp32 drops applied."""
    if direction is Direction.FWD:
        drops = space.FWD_3D_DROPS if ndim == 3 else ()
        tiles = space.FWD_TILES
    elif direction is Direction.BWD_DATA:
        drops = space.BWD_DATA_FP32_DROPS if dtype is DataType.FP32 else ()
        tiles = space.BWD_DATA_TILES
    else:
        drops = space.BWD_WEIGHT_3D_DROPS if ndim == 3 else ()
        tiles = space.BWD_WEIGHT_TILES
    return tuple(t for t in tiles if t not in drops)


def _warp_mn(per_wave: int) -> int | None:
    if per_wave >= 32 and per_wave % 32 == 0:
        return 32
    return 16 if per_wave >= 16 and per_wave % 16 == 0 else None


def wave_warp_choices(tile: Tile, dtype: DataType, convention: WarpTileKConvention) -> tuple[WaveWarp, ...]:
    """(waves, warp tile) for every wave strategy that yields a warp tile on ``tile``."""
    tile_m, tile_n, tile_k = tile
    choices: list[WaveWarp] = []
    for waves in space.WAVE_STRATEGIES.values():
        warp_m, warp_n = _warp_mn(tile_m // waves[0]), _warp_mn(tile_n // waves[1])
        if warp_m is None or warp_n is None:
            continue
        side = min(warp_m, warp_n)
        if not (tile_splits(tile_m, waves[0], side) and tile_splits(tile_n, waves[1], side)):
            continue
        kmfma = k_mfma(dtype, side, side, convention)
        if kmfma is None:
            continue
        choices.append((waves, (side, side, warp_tile_k(rule_k1(tile_k), kmfma, tile_k))))
    return tuple(choices)


def specializations_for(direction: Direction, tile: Tile) -> tuple[Specialization, ...]:
    """§5: fwd tile_k 8 default only; filter3x3 only on small tiles; of the rest, those the direction has
    (``generators.validity.specialization_runs_direction``: backward default + 1x1/s1/p0). Default first."""
    if direction is Direction.FWD and tile[2] == 8:
        return (Specialization.DEFAULT,)
    small = tile[0] * tile[1] <= space.FILTER3X3_MAX_TILE_AREA
    return tuple(
        spec
        for spec in space.SPECIALIZATIONS
        if (small or spec is not Specialization.FILTER3X3) and specialization_runs_direction(spec, direction)
    )


def build_config(
    direction: Direction,
    dtype: DataType,
    ndim: int,
    tile: Tile,
    wave_warp: WaveWarp,
    choice: PipelineChoice,
    vector: VectorStrategy,
    **features: object,
) -> KernelConfig:
    (wave_m, wave_n, wave_k), (warp_m, warp_n, warp_k) = wave_warp
    vec_a, vec_b, vec_c = vector.widths(space.MAX_VECTOR_WIDTH[dtype])
    return KernelConfig(
        direction=direction,
        dtype=dtype,
        ndim_spatial=ndim,
        tile_m=tile[0],
        tile_n=tile[1],
        tile_k=tile[2],
        wave_m=wave_m,
        wave_n=wave_n,
        wave_k=wave_k,
        warp_tile_m=warp_m,
        warp_tile_n=warp_n,
        warp_tile_k=warp_k,
        vector_size_a=vec_a,
        vector_size_b=vec_b,
        vector_size_c=vec_c,
        pipeline=choice.pipeline,
        scheduler=choice.scheduler,
        double_smem_buffer=choice.double_smem_buffer,
        **features,
    )


def _core(
    direction: Direction, dtype: DataType, ndim: int, convention: WarpTileKConvention
) -> Iterator[KernelConfig]:
    base_pipeline, base_vector = space.BASE_PIPELINE, space.BASE_VECTOR
    for tile in tiles_for(direction, dtype, ndim):
        for wave_warp in wave_warp_choices(tile, dtype, convention):
            for choice in space.PIPELINES[direction]:
                yield build_config(direction, dtype, ndim, tile, wave_warp, choice, base_vector)
            for spec in specializations_for(direction, tile)[1:]:
                yield build_config(
                    direction, dtype, ndim, tile, wave_warp, base_pipeline, base_vector, specialization=spec
                )
            for vector in space.VECTOR_STRATEGIES[1:]:
                yield build_config(direction, dtype, ndim, tile, wave_warp, base_pipeline, vector)


def _variant_runs(dtype: DataType, choice: PipelineChoice, variant: Mapping[str, object]) -> bool:
    """Whether a family variant can run on the pipeline (stream-K: ``streamk_runs_pipeline``)."""
    return not variant.get("streamk_enabled") or streamk_runs_pipeline(dtype, choice.pipeline)


def _families(
    direction: Direction, dtype: DataType, ndim: int, convention: WarpTileKConvention
) -> Iterator[KernelConfig]:
    for family in space.FAMILIES:
        if direction not in family.directions:
            continue
        runs = [
            (choice, variant)
            for choice in family.pipelines
            for variant in family.variants
            if _variant_runs(dtype, choice, variant)
        ]
        for tile in family.tiles:
            for wave_warp in wave_warp_choices(tile, dtype, convention):
                for choice, variant in runs:
                    yield build_config(
                        direction, dtype, ndim, tile, wave_warp, choice, space.BASE_VECTOR, **variant
                    )


def depthwise_configs(
    direction: Direction,
    dtype: DataType,
    filters: tuple[int, ...],
    shapes: tuple[space.DepthwiseShape, ...],
    ndim: int = 2,
) -> Iterator[DepthwiseConfig]:
    """Every (filter, stride, shape) depthwise configuration, padding (filter - 1) / 2 (ck_conventions §1);
    ``ndim`` 3: a cubic filter, the fields describing the H x W plane (docs/depthwise.md, "3D")."""
    for filter_size in filters:
        for stride in space.DEPTHWISE_STRIDES:
            for shape in shapes:
                pad = (filter_size - 1) // 2
                yield DepthwiseConfig(
                    direction=direction,
                    dtype=dtype,
                    ndim_spatial=ndim,
                    tile_h=shape.tile_h,
                    tile_w=shape.tile_w,
                    filter=filter_size,
                    stride_h=stride,
                    stride_w=stride,
                    pad_h=pad,
                    pad_w=pad,
                    nbatch=shape.nbatch,
                    sub_h=shape.sub_h,
                    sub_w=shape.sub_w,
                    in_vec=shape.vec,
                    out_vec=shape.vec,
                )


def rule_configs(
    direction: Direction, dtype: DataType, ndim: int, convention: WarpTileKConvention
) -> Iterator[AnyConfig]:
    """The rule-derived part of ``full`` (may repeat a configuration; the caller de-duplicates by name)."""
    yield from _core(direction, dtype, ndim, convention)
    yield from _families(direction, dtype, ndim, convention)
    if ndim == 3:
        yield from depthwise_configs(
            direction, dtype, space.DEPTHWISE_3D_FILTERS, space.DEPTHWISE_3D_SHAPES, ndim=3
        )
    elif direction is Direction.FWD:
        yield from depthwise_configs(direction, dtype, space.DEPTHWISE_FILTERS, space.DEPTHWISE_SHAPES)
    else:
        yield from depthwise_configs(
            direction, dtype, space.DEPTHWISE_BWD_FILTERS, space.DEPTHWISE_BWD_SHAPES[direction]
        )
