"""The rule-derived configuration space of ck_conventions §5 as DATA: tiles, wave and vector strategies,
pipelines, specialisations and the feature families. ``rulesets.full`` enumerates it.

What is here is what upstream's ``full`` varies; nothing here decides legality (that is
``generators.validity``). Where the enumeration leaves out a combination that could never be valid (here:
compv5 backward, interwave beyond compv1 and mem, compv4 without its double buffer; in ``rulesets.full``:
backward specialisations, stream-K fp32 on async pipelines), it asks the validity module's predicates
(``pipeline_runs_direction``, ``scheduler_runs_pipeline``, ...), so a rule is stated once. Upstream rules that
NVIDIA's arch spec rejects are listed in ``rulesets.full``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from generators.enums import DataType, Direction, Pipeline, Scheduler, Specialization, StreamKReduction
from generators.validity import needs_double_smem_buffer, pipeline_runs_direction, scheduler_runs_pipeline

Tile = tuple[int, int, int]
"""(tile_m, tile_n, tile_k)"""


def parse_tiles(text: str) -> tuple[Tile, ...]:
    return tuple(tuple(int(v) for v in item.split("x")) for item in text.split())  # type: ignore[misc]


FWD_TILES = parse_tiles(
    "16x16x64 16x16x128 16x32x64 16x64x64 16x128x64 16x256x64 32x16x64 32x64x32 32x64x64 32x128x32 32x128x64 "
    "32x256x64 64x16x16 64x16x64 64x32x32 64x32x64 64x64x8 64x64x32 64x64x64 64x128x32 64x128x64 128x16x64 "
    "128x32x32 128x32x64 128x64x8 128x64x16 128x64x32 128x64x64 128x128x32 128x128x64 128x256x32 224x256x64 "
    "256x16x64 256x32x64 256x64x8 256x128x32 256x224x64 256x256x32"
)
FWD_3D_DROPS = parse_tiles("64x64x8 128x64x8 128x64x16 256x64x8")
BWD_DATA_TILES = parse_tiles(
    "16x64x32 32x64x32 32x128x32 64x16x16 64x16x32 64x16x64 64x32x32 64x64x32 64x128x32 128x32x16 128x32x32 "
    "128x32x64 128x64x32 128x128x32 128x256x32 256x128x32"
)
BWD_DATA_FP32_DROPS = parse_tiles("64x16x64 128x32x64")
BWD_WEIGHT_TILES = parse_tiles(
    "16x16x32 16x16x64 16x32x64 16x64x64 16x128x32 16x128x64 16x256x32 16x256x64 32x16x64 32x32x32 "
    "32x64x32 32x128x32 64x16x64 64x32x32 64x32x64 64x64x32 64x64x64 64x128x32 64x128x64 128x16x64 "
    "128x32x32 128x64x32 128x128x32 128x128x64 128x256x32 256x16x64 256x32x64 256x128x32 256x256x32"
)
BWD_WEIGHT_3D_DROPS = parse_tiles("64x32x64 64x128x64 256x32x64")

WAVE_STRATEGIES: MappingProxyType[str, tuple[int, int, int]] = MappingProxyType(
    {
        "SINGLE": (1, 1, 1),
        "SPLIT_M": (2, 1, 1),
        "SPLIT_N": (1, 2, 1),
        "SPLIT_MN": (2, 2, 1),
        "SPLIT_M4": (4, 1, 1),
        "SPLIT_N4": (1, 4, 1),
        "SPLIT_MK": (2, 1, 2),
    }
)


@dataclass(frozen=True)
class VectorStrategy:
    """Vector widths as divisors of the dtype's maximum width m: (a, b, c) = (m // div_a, ...); 0 means 1."""

    name: str
    divisors: tuple[int, int, int]

    def widths(self, max_width: int) -> tuple[int, int, int]:
        a, b, c = (1 if d == 0 else max(1, max_width // d) for d in self.divisors)
        return a, b, c


# m = max width (8 fp16/bf16, 4 fp32), h = m/2, 1 = scalar; CK_DEFAULT is CK's (4, 8, 8) for half types.
VECTOR_STRATEGIES = (
    VectorStrategy("CK_DEFAULT", (2, 1, 1)),
    VectorStrategy("UNIFORM_MAX", (1, 1, 1)),
    VectorStrategy("MAX_AB_HALF_C", (1, 1, 2)),
    VectorStrategy("HALF_UNIFORM", (2, 2, 2)),
    VectorStrategy("MIN_AB_MAX_C", (0, 0, 1)),
    VectorStrategy("GENERIC", (0, 0, 0)),
)
BASE_VECTOR = VECTOR_STRATEGIES[0]


def vector_strategy(name: str) -> VectorStrategy:
    """The strategy of VECTOR_STRATEGIES called ``name``."""
    return next(v for v in VECTOR_STRATEGIES if v.name == name)


MAX_VECTOR_WIDTH: MappingProxyType[DataType, int] = MappingProxyType(
    {DataType.FP16: 8, DataType.BF16: 8, DataType.FP32: 4}
)


@dataclass(frozen=True)
class PipelineChoice:
    """A (pipeline, scheduler) pair, with the double shared-memory buffer where the pipeline needs one
    (compv4; ``generators.validity.needs_double_smem_buffer``)."""

    pipeline: Pipeline
    scheduler: Scheduler = Scheduler.INTRAWAVE

    @property
    def double_smem_buffer(self) -> bool:
        return needs_double_smem_buffer(self.pipeline)


FULL_PIPELINES = (
    Pipeline.BASIC_V1,
    Pipeline.MEM,
    Pipeline.COMPV3,
    Pipeline.COMPV4,
    Pipeline.COMPV5,
    Pipeline.COMPV6,
    Pipeline.BASIC_ASYNC_V1,
    Pipeline.COMP_ASYNC,
)
"""Upstream's eight pipelines; basic_v2 and wavelet are not in full."""


def pipeline_choices(direction: Direction, pipelines: tuple[Pipeline, ...]) -> tuple[PipelineChoice, ...]:
    """Every (pipeline, scheduler) pair of ``pipelines`` that the validity predicates let run ``direction``
    (compv5 forward only; interwave only with compv1 and mem), in pipeline then scheduler order."""
    return tuple(
        PipelineChoice(pipeline, scheduler)
        for pipeline in pipelines
        if pipeline_runs_direction(pipeline, direction)
        for scheduler in Scheduler
        if scheduler_runs_pipeline(scheduler, pipeline)
    )


PIPELINES: MappingProxyType[Direction, tuple[PipelineChoice, ...]] = MappingProxyType(
    {direction: pipeline_choices(direction, FULL_PIPELINES) for direction in Direction}
)
BASE_PIPELINE = PipelineChoice(Pipeline.COMPV3)

SPECIALIZATIONS = tuple(Specialization)
"""Every specialisation, default first; ``rulesets.full.specializations_for`` narrows them per tile and
direction."""
FILTER3X3_MAX_TILE_AREA = 4096


@dataclass(frozen=True)
class Family:
    """A feature family: tiles on which ``variants`` (KernelConfig field values) are set, on the base
    pipeline unless ``pipelines`` says otherwise, for ``directions``. A (pipeline, variant) pair that the
    validity predicates refuse for a dtype (stream-K fp32 on async pipelines) is left out by
    ``rulesets.full``, not listed here."""

    name: str
    directions: tuple[Direction, ...]
    tiles: tuple[Tile, ...]
    variants: tuple[MappingProxyType[str, object], ...]
    pipelines: tuple[PipelineChoice, ...] = (BASE_PIPELINE,)


def _variants(*dicts: dict[str, object]) -> tuple[MappingProxyType[str, object], ...]:
    return tuple(MappingProxyType(d) for d in dicts)


FAMILIES = (
    Family(
        "split_image",
        (Direction.FWD,),
        parse_tiles("64x64x32 64x64x64 128x64x32 128x128x32 256x128x32"),
        _variants({"split_image": True}),
    ),
    Family(
        "merged_groups",
        (Direction.FWD,),
        parse_tiles("64x16x16 64x32x32 128x32x32 128x64x32"),
        _variants({"num_groups_to_merge": 8}),
    ),
    Family(
        "merged_groups_wide",
        (Direction.FWD,),
        parse_tiles("64x16x16"),
        _variants({"num_groups_to_merge": 16}, {"num_groups_to_merge": 32}),
    ),
    Family(
        "two_stage",
        (Direction.BWD_WEIGHT,),
        parse_tiles("16x128x32 32x64x32 64x32x32 64x64x32 64x64x64 128x128x32"),
        _variants({"two_stage": True}),
    ),
    Family(
        "explicit_gemm",
        (Direction.BWD_WEIGHT,),
        parse_tiles("16x16x64 16x32x64 16x64x64 32x16x64 64x16x64 128x128x64"),
        _variants({"explicit_gemm": True, "specialization": Specialization.FILTER1X1_STRIDE1_PAD0}),
    ),
    Family(
        "merged_groups",
        (Direction.BWD_WEIGHT,),
        parse_tiles("16x16x32 32x32x32 64x64x32"),
        _variants({"num_groups_to_merge": 2}, {"num_groups_to_merge": 4}, {"num_groups_to_merge": 8}),
    ),
    Family(
        "streamk",
        (Direction.BWD_WEIGHT,),
        parse_tiles("16x16x32 16x32x64 32x16x64 64x16x64 64x64x64 128x32x32"),
        _variants(
            {
                "streamk_enabled": True,
                "streamk_reduction": StreamKReduction.TREE,
                "streamk_persistent": False,
            },
            {"streamk_enabled": True, "streamk_reduction": StreamKReduction.TREE, "streamk_persistent": True},
        ),
        pipelines=(
            PipelineChoice(Pipeline.BASIC_V1),
            PipelineChoice(Pipeline.MEM),
            PipelineChoice(Pipeline.BASIC_ASYNC_V1),
        ),
    ),
)


@dataclass(frozen=True)
class DepthwiseShape:
    """Per-tile depthwise parameters (batching, sub-tile, vectors) used with every filter and stride."""

    tile_h: int
    tile_w: int
    nbatch: int
    sub_h: int
    sub_w: int
    vec: int


DEPTHWISE_FILTERS = (3, 5)
DEPTHWISE_STRIDES = (1, 2)
DEPTHWISE_SHAPES = (
    DepthwiseShape(8, 8, 8, 2, 2, 2),
    DepthwiseShape(14, 28, 1, 2, 4, 4),
    DepthwiseShape(16, 16, 8, 1, 4, 8),
    DepthwiseShape(28, 28, 1, 4, 4, 4),
    DepthwiseShape(32, 32, 1, 4, 4, 8),
)
"""Forward: upstream's 20 parameter sets per dtype (ck_conventions §5)."""

# The backward directions have no upstream list (CK's depthwise is forward only): filters 3, 5 and 7 (the
# MobileNet/EfficientNet/ConvNeXt kernels) x strides 1 and 2 x the shapes below. bwd_data tiles count dX
# pixels and its sub-tiles are whole stride phases (even sub_h, sub_w); bwd_weight tiles count dY pixels, and
# its shapes keep the F x F x vec accumulators of a thread in registers (128-thread shapes for 5x5 and 7x7).
DEPTHWISE_BWD_FILTERS = (3, 5, 7)
DEPTHWISE_BWD_SHAPES = MappingProxyType(
    {
        Direction.BWD_DATA: (
            DepthwiseShape(8, 8, 8, 2, 2, 2),
            DepthwiseShape(16, 16, 4, 2, 4, 4),
            DepthwiseShape(16, 16, 8, 2, 2, 8),
            DepthwiseShape(16, 32, 4, 2, 4, 8),
            DepthwiseShape(32, 32, 1, 4, 4, 8),
        ),
        Direction.BWD_WEIGHT: (
            DepthwiseShape(8, 8, 8, 2, 2, 2),
            DepthwiseShape(16, 16, 4, 1, 4, 8),
            DepthwiseShape(16, 16, 4, 2, 4, 4),
            DepthwiseShape(28, 28, 1, 4, 4, 8),
            DepthwiseShape(32, 32, 2, 4, 4, 4),
        ),
    }
)

# 3D (cubic filter; the 12 fields describe the H x W plane, the depth axis is walked at run time): every
# direction on filters 3, 5 and 7 x strides 1 and 2 (in H and W) x the shapes below. Their channel slices are
# smaller than the 2D ones because a forward or bwd_data stage holds ``filter`` depth slices of the halo and
# ``filter`` x F x F weights (``generators.validity.depthwise_smem_bytes``); bwd_weight handles one depth tap
# per block and keeps the 2D shared memory. The two 8x16 shapes come in vec 8 and vec 4: vec 4 serves 16-bit
# channel counts that are multiples of 4 (X3D's 108 has no vec-8 kernel), and in fp32 it stages the same 64
# bytes per pixel as the 16-bit vec 8. 8x32 nb2 vec 8 (sub1x4, sub2x4) stages 16 channels of a plane twice as
# wide as the 8x16 nb4 vec-8 shapes' 32 channels, with as many threads and a smaller stage, and 16x16 nb4
# sub2x4 vec 8 is 2D bwd_weight's 3x3 shape (the register rule refuses 5x5 and 7x7 at vec 8); both measured
# faster on the H100 (docs/performance.md, "3D depthwise"). 8x16 nb2 sub1x4 (vec 8 and vec 4) halves the
# 8x16 nb4 sub1x4 channel slice, so that a forward stage fits at 7x7 stride 2 (16-bit vec 8, fp32 vec 4)
# and fp32 5x5 stride 2 (vec 4). The 28-wide shapes fit the 56- and 28-wide planes of X3D without a part-empty
# last tile (2D's reason, docs/performance.md "Session 50"): 8x28 nb2 (sub1x4 fwd, sub2x4 bwd_data), 4x28 nb4
# (32 channels of four rows: stride-2 and 5x5 stages that fit twice an SM) and bwd_weight's 16x28 nb4 sub2x4
# at vec 8 and vec 4 (docs/performance.md, "Session 51").
DEPTHWISE_3D_FILTERS = (3, 5, 7)
DEPTHWISE_3D_SHAPES = (
    DepthwiseShape(8, 16, 4, 1, 4, 8),
    DepthwiseShape(8, 16, 4, 2, 4, 8),
    DepthwiseShape(8, 16, 4, 1, 4, 4),
    DepthwiseShape(8, 16, 4, 2, 4, 4),
    DepthwiseShape(16, 16, 4, 2, 4, 4),
    DepthwiseShape(8, 8, 8, 2, 2, 2),
    DepthwiseShape(8, 32, 2, 1, 4, 8),
    DepthwiseShape(8, 32, 2, 2, 4, 8),
    DepthwiseShape(16, 16, 4, 2, 4, 8),
    DepthwiseShape(8, 16, 2, 1, 4, 8),
    DepthwiseShape(8, 16, 2, 1, 4, 4),
    DepthwiseShape(8, 28, 2, 1, 4, 8),
    DepthwiseShape(8, 28, 2, 2, 4, 8),
    DepthwiseShape(4, 28, 4, 1, 4, 8),
    DepthwiseShape(4, 28, 4, 2, 4, 8),
    DepthwiseShape(16, 28, 4, 2, 4, 8),
    DepthwiseShape(16, 28, 4, 2, 4, 4),
)
