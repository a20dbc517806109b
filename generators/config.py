"""Frozen configuration models: one implicit-GEMM instance (``KernelConfig``) and one depthwise instance.

Field names are exactly those of docs/architecture.md §1 (ck_conventions §1). The models check types and
representation only (a 2D config has a 2D layout, ...); whether a configuration is *legal on an arch* is the
business of ``generators.validity``, the one module of legality rules.

A model spells itself: ``name`` (the kernel name, ck_conventions §2) and ``instance_string`` (what the
compiled instance's ``get_instance_string()`` returns, ck_conventions §3; field lists in
``generators.instance_string``) are built here, from the fields alone. The parsers that turn those strings
back into models (``generators.naming``, ``generators.instance_string``) import this module, never the
other way round.
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

DEFAULT_VECTORS = (4, 8, 8)
"""CK's default (vector_size_a, b, c): the one vector triple a kernel name leaves out."""
ACC_TYPE = "fp32"
DS_TYPE = "EmptyTuple"
CDE_OP = "PassThrough"
DEPTHWISE_TOKEN = "Depthwise"
DEPTHWISE_BLOCK_SIZE = 64
"""Upstream's fixed depthwise BlockSize (ck_conventions §3)."""


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
        """The canonical kernel name (ck_conventions §2 grammar and order; ``generators.naming``).

        Every field that distinguishes two valid configurations is in it; one fragment is ours:
        ``_bpc{n}`` when ``block_per_cu != 1`` (last). ``layout`` follows ``ndim_spatial`` and
        ``streamk_reduction``/``streamk_persistent`` are named only with stream-K enabled.
        """
        parts = [
            f"grouped_conv_{self.direction.fragment}_{self.dtype.fragment}_{self.layout.fragment}"
            f"_{self.ndim_spatial}d_{self.pipeline.fragment}_{self.epilogue.fragment}_{self.scheduler.fragment}"
            f"_{self.tile_m}x{self.tile_n}x{self.tile_k}_{self.wave_m}x{self.wave_n}x{self.wave_k}"
            f"_{self.warp_tile_m}x{self.warp_tile_n}x{self.warp_tile_k}"
        ]
        vectors = (self.vector_size_a, self.vector_size_b, self.vector_size_c)
        if vectors != DEFAULT_VECTORS:
            parts.append(f"_vec{vectors[0]}_{vectors[1]}_{vectors[2]}")
        if self.num_wave_groups != 1:
            parts.append(f"_wg{self.num_wave_groups}")
        if self.num_groups_to_merge != 1:
            parts.append(f"_gm{self.num_groups_to_merge}")
        if self.double_smem_buffer:
            parts.append("_dsb")
        if self.two_stage:
            parts.append("_2stage")
        if self.specialization is not Specialization.DEFAULT:
            parts.append(f"_{self.specialization.fragment}")
        if self.explicit_gemm:
            parts.append("_explicit_gemm")
        if self.streamk_enabled:
            parts.append(f"_streamk_{self.streamk_reduction.fragment}")
            if self.streamk_persistent:
                parts.append("_persistent")
        if self.split_image:
            parts.append("_large_tensor")
        if self.block_per_cu != 1:
            parts.append(f"_bpc{self.block_per_cu}")
        return "".join(parts)

    @cached_property
    def instance_string(self) -> str:
        """The CK instance string (all three directions, stream-K included; ck_conventions §3)."""
        dtype = self.dtype.token
        fields: list[object] = [
            self.ndim_spatial,
            self.specialization.token,
            self.layout.token,
            self.vector_size_a,
            self.vector_size_b,
            self.vector_size_c,
            self.num_groups_to_merge,
            int(self.split_image),
        ]
        if self.direction is not Direction.BWD_DATA:
            fields.append(int(self.explicit_gemm))
        fields += [
            self.tile_m,
            self.tile_n,
            self.tile_k,
            self.wave_m,
            self.wave_n,
            self.wave_k,
            self.warp_tile_m,
            self.warp_tile_n,
            self.warp_tile_k,
            dtype,
            dtype,
            self.pipeline.token,
            self.scheduler.token,
            int(self.double_smem_buffer),
            self.num_wave_groups,
            ACC_TYPE,
            dtype,
            DS_TYPE,
            CDE_OP,
        ]
        if self.streamk_enabled:
            fields += [1, self.streamk_reduction.token, int(self.streamk_persistent)]
        return f"{self.direction.token}<{','.join(map(str, fields))}>"


class DepthwiseConfig(_FrozenConfig):
    """One depthwise instance (2D or 3D, layout ngchw) of any direction (docs/depthwise.md).

    The 12 fields are CK's ``DepthwiseConfig`` for every direction; what the tile counts depends on it: output
    (dY) pixels for fwd and bwd_weight, dX pixels for bwd_data. ``direction`` defaults to fwd, the only
    direction CK and the legacy lists have, and ``ndim_spatial`` to 2, the only dimension they have, so a
    legacy configuration reads, names and prints as it always did. As in CK, no field names a dilation: the
    kernels run a dilated problem (stride 1, or a stride that divides the dilation, along the dilated axis;
    left pad dilation x ``pad``) as stride-1 residue sub-problems at run time (docs/depthwise.md,
    "Dilation").

    3D (``ndim_spatial = 3``, docs/depthwise.md "3D"): the filter is cubic, ``filter`` x ``filter`` x
    ``filter`` (Z = Y = X). The 12 fields keep describing the H x W plane at compile time (tile, sub-tile,
    stride, pad, vectors); the depth axis is walked at run time, so the depth stride, depth pad and depth
    dilation are run-time values of the problem (any), not configuration fields.
    """

    direction: Direction = Direction.FWD
    dtype: DataType
    ndim_spatial: Literal[2, 3] = 2
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
        """The canonical depthwise kernel name (``generators.naming``)."""
        return (
            f"grouped_conv_{self.direction.fragment}_depthwise_{self.dtype.fragment}_{Layout.NGCHW.fragment}"
            f"_{self.ndim_spatial}d"
            f"_{self.tile_h}x{self.tile_w}_f{self.filter}_s{self.stride_h}x{self.stride_w}"
            f"_p{self.pad_h}x{self.pad_w}_nb{self.nbatch}_sub{self.sub_h}x{self.sub_w}"
            f"_vec{self.in_vec}_{self.out_vec}"
        )

    @cached_property
    def instance_string(self) -> str:
        """The CK depthwise instance string (20 fields; NDim 2 or 3, WeiVec = InVec, BlockSize 64) under the
        direction's kernel token."""
        dtype = self.dtype.token
        fields: list[object] = [
            self.ndim_spatial,
            Specialization.DEFAULT.token,
            DEPTHWISE_TOKEN,
            self.in_vec,
            self.in_vec,
            self.out_vec,
            DEPTHWISE_BLOCK_SIZE,
            self.tile_h,
            self.tile_w,
            self.filter,
            self.filter,
            self.stride_h,
            self.stride_w,
            self.nbatch,
            self.sub_h,
            self.sub_w,
            dtype,
            dtype,
            ACC_TYPE,
            dtype,
        ]
        return f"{self.direction.token}<{','.join(map(str, fields))}>"


AnyConfig = KernelConfig | DepthwiseConfig
