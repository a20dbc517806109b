"""Frozen configuration models: one implicit-GEMM instance (``KernelConfig``) and one depthwise instance.

Field names are exactly those of docs/architecture.md §1 (ck_conventions §1). The models check types and
representation only (a 2D config has a 2D layout, ...); whether a configuration is *legal on an arch* is the
business of ``generators.validity``, the one module of legality rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, NonNegativeInt, PositiveInt, model_validator
from typing_extensions import Self

from generators.enums import (
    Category,
    DataType,
    Direction,
    Epilogue,
    Family,
    Layout,
    Pipeline,
    Scheduler,
    Specialization,
    StreamKReduction,
)

_FROZEN = ConfigDict(frozen=True, extra="forbid", ignored_types=(cached_property,))


class _FrozenConfig(BaseModel):
    """Frozen model whose derived strings (name, instance string) are computed once and cached.

    ``model_copy`` is redirected to ``replace``: pydantic's copy skips validation and would carry the cached
    name of the original over to the changed copy.
    """

    model_config = _FROZEN

    def replace(self, **changes: Any) -> Self:
        """A validated copy with ``changes`` applied."""
        return self.model_validate({**self.model_dump(), **changes})

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        return self.replace(**(update or {}))


class KernelConfig(_FrozenConfig):
    """One implicit-GEMM grouped-convolution instance (fwd, bwd_data or bwd_weight; stream-K included).

    ``layout`` may be omitted: it follows from ``ndim_spatial``. Every field has the CK default where CK
    has one, so a rule set names only what it varies.
    """

    direction: Direction
    dtype: DataType
    ndim_spatial: Literal[2, 3]
    layout: Layout
    tile_m: PositiveInt
    tile_n: PositiveInt
    tile_k: PositiveInt
    wave_m: PositiveInt
    wave_n: PositiveInt
    wave_k: PositiveInt
    warp_tile_m: PositiveInt
    warp_tile_n: PositiveInt
    warp_tile_k: PositiveInt
    vector_size_a: PositiveInt = 4
    vector_size_b: PositiveInt = 8
    vector_size_c: PositiveInt = 8
    pipeline: Pipeline = Pipeline.COMPV3
    scheduler: Scheduler = Scheduler.INTRAWAVE
    epilogue: Epilogue = Epilogue.CSHUFFLE
    double_smem_buffer: bool = False
    num_wave_groups: PositiveInt = 1
    num_groups_to_merge: PositiveInt = 1
    specialization: Specialization = Specialization.DEFAULT
    split_image: bool = False
    explicit_gemm: bool = False
    two_stage: bool = False
    streamk_enabled: bool = False
    streamk_reduction: StreamKReduction = StreamKReduction.TREE
    streamk_persistent: bool = False
    block_per_cu: PositiveInt = 1

    @model_validator(mode="before")
    @classmethod
    def _layout_from_ndim(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("layout") is None and data.get("ndim_spatial") in (2, 3):
            return {**data, "layout": Layout.for_ndim(data["ndim_spatial"])}
        return data

    @model_validator(mode="after")
    def _layout_matches_ndim(self) -> KernelConfig:
        if self.layout is not Layout.for_ndim(self.ndim_spatial):
            raise ValueError(
                f"layout {self.layout.value} does not match ndim_spatial {self.ndim_spatial}; "
                f"accepted: {Layout.for_ndim(self.ndim_spatial).value}"
            )
        return self

    @property
    def threads(self) -> int:
        """Threads per block: a CK wave of 64 lanes runs as two 32-lane warps (DESIGN decision 2)."""
        return 64 * self.wave_m * self.wave_n * self.wave_k

    @property
    def family(self) -> Family:
        return Family.STREAMK if self.streamk_enabled else Family.IMPLICIT_GEMM

    @property
    def category(self) -> Category:
        """Feature category; a configuration with several features belongs to the most specific one."""
        if self.streamk_enabled:
            return Category.STREAMK
        if self.explicit_gemm:
            return Category.EXPLICIT_GEMM
        if self.two_stage:
            return Category.TWO_STAGE
        if self.split_image:
            return Category.SPLIT_IMAGE
        if self.num_groups_to_merge != 1:
            return Category.MERGED_GROUPS
        return Category.REGULAR

    @cached_property
    def name(self) -> str:
        from generators.naming import kernel_name

        return kernel_name(self)

    @cached_property
    def instance_string(self) -> str:
        from generators.instance_string import instance_string

        return instance_string(self)


class DepthwiseConfig(_FrozenConfig):
    """One depthwise forward instance (2D, layout ngchw, dilation 1)."""

    dtype: DataType
    tile_h: PositiveInt
    tile_w: PositiveInt
    filter: PositiveInt
    stride_h: PositiveInt
    stride_w: PositiveInt
    pad_h: NonNegativeInt
    pad_w: NonNegativeInt
    nbatch: PositiveInt
    sub_h: PositiveInt
    sub_w: PositiveInt
    in_vec: PositiveInt
    out_vec: PositiveInt

    @property
    def direction(self) -> Direction:
        return Direction.FWD

    @property
    def ndim_spatial(self) -> int:
        return 2

    @property
    def layout(self) -> Layout:
        return Layout.NGCHW

    @property
    def family(self) -> Family:
        return Family.DEPTHWISE

    @property
    def category(self) -> Category:
        return Category.DEPTHWISE

    @cached_property
    def name(self) -> str:
        from generators.naming import depthwise_name

        return depthwise_name(self)

    @cached_property
    def instance_string(self) -> str:
        from generators.instance_string import depthwise_instance_string

        return depthwise_instance_string(self)


AnyConfig = KernelConfig | DepthwiseConfig
