"""CK instance strings (what ``get_instance_string()`` returns): field lists and parser, ck_conventions §3.

A configuration builds its own string (``KernelConfig.instance_string``, ``DepthwiseConfig.instance_string``
in ``generators.config``), independently of the C++ side (DESIGN decision 3); ``profiler
--verify-instances`` compares the two. This module parses a string back.

Field lists (comma separated, no spaces; booleans 0/1):
- fwd, 31 fields: NDim,Spec,InLayout,WeiLayout,DsLayout,OutLayout,VecA,VecB,VecC,NumGroupsToMerge,SplitImage,
  ExplicitGemm,MPerBlock,NPerBlock,KPerBlock,MWarp,NWarp,KWarp,MWarpTile,NWarpTile,KWarpTile,AType,BType,
  Pipeline,Scheduler,DoubleSmemBuffer,NumWaveGroups,AccType,EType,DsType,CDEOp
- bwd_data, 30 fields: the forward list without ExplicitGemm;
- bwd_weight, 31 fields in forward order, plus IsStreamK,ReductionStrategy,PersistentDP for stream-K (34);
- depthwise, 20 fields: NDim,Spec,Depthwise,InVec,WeiVec,OutVec,BlockSize,TileH,TileW,FilterH,FilterW,StrideH,
  StrideW,NBatch,SubTileH,SubTileW,InType,WeiType,AccType,OutType. WeiVec is written equal to InVec and
  BlockSize is upstream's fixed 64 (ck_conventions §3, open point decided as upstream does). Upstream has
  depthwise forward only; the backward directions here keep the same 20 fields under their own kernel token
  (``GroupedConvolutionBackwardDataKernel<2,Default,Depthwise,...>``; docs/depthwise.md). NDim is 3 for a 3D
  depthwise instance (cubic filter; FilterH/FilterW and the plane fields as in 2D, the depth axis a run-time
  walk), everything else unchanged.

An instance string does not carry every configuration field: the epilogue, two_stage, block_per_cu (and for
depthwise the padding) are absent. ``parse_instance_string`` therefore returns the fields the string has, and
``to_config`` takes the missing ones as arguments.

Open point (ck_conventions §4): some upstream native bwd_weight lines that are not stream-K carry one trailing
``,0`` (32 fields). The parser accepts it as IsStreamK=0 and records ``trailing_streamk_flag``; the builder
always writes the 31-field form, so such a line does not reproduce byte for byte and a parity report must
say so.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from generators.config import (
    ACC_TYPE,
    CDE_OP,
    DEPTHWISE_BLOCK_SIZE,
    DEPTHWISE_TOKEN,
    DS_TYPE,
    DepthwiseConfig,
    KernelConfig,
)
from generators.enums import (
    DataType,
    Direction,
    Epilogue,
    Layout,
    Pipeline,
    Scheduler,
    Specialization,
    StreamKReduction,
)


class InstanceStringError(ValueError):
    """An instance string that breaks ck_conventions §3; the message names the bad field and value."""


class ParsedImplicitGemmString(BaseModel):
    """The fields an implicit-GEMM instance string carries, by name (ck_conventions §3 order)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["implicit_gemm"] = "implicit_gemm"
    direction: Direction
    ndim_spatial: int
    specialization: Specialization
    in_layout: str
    wei_layout: str
    ds_layout: str
    out_layout: str
    vector_size_a: int
    vector_size_b: int
    vector_size_c: int
    num_groups_to_merge: int
    split_image: bool
    explicit_gemm: bool | None  # absent (None) in a bwd_data string
    tile_m: int
    tile_n: int
    tile_k: int
    wave_m: int
    wave_n: int
    wave_k: int
    warp_tile_m: int
    warp_tile_n: int
    warp_tile_k: int
    a_type: DataType
    b_type: DataType
    pipeline: Pipeline
    scheduler: Scheduler
    double_smem_buffer: bool
    num_wave_groups: int
    acc_type: str
    e_type: DataType
    ds_type: str
    cde_op: str
    streamk_enabled: bool
    streamk_reduction: StreamKReduction | None
    streamk_persistent: bool
    trailing_streamk_flag: bool  # the 32-field bwd_weight form ending in ",0"

    @property
    def layout(self) -> Layout | None:
        """The layout the four layout fields spell, or None if they spell none of ours."""
        joined = ",".join((self.in_layout, self.wei_layout, self.ds_layout, self.out_layout))
        return next((lay for lay in (Layout.NHWGC, Layout.NDHWGC) if lay.token == joined), None)

    def config_fields(self) -> dict[str, Any]:
        """The ``KernelConfig`` fields the string spells as they are (the tile, waves, warp tile, vectors,
        pipeline and the feature flags); direction, dtype, dimension and the fields a string does not carry
        are the caller's."""
        return dict(
            tile_m=self.tile_m,
            tile_n=self.tile_n,
            tile_k=self.tile_k,
            wave_m=self.wave_m,
            wave_n=self.wave_n,
            wave_k=self.wave_k,
            warp_tile_m=self.warp_tile_m,
            warp_tile_n=self.warp_tile_n,
            warp_tile_k=self.warp_tile_k,
            vector_size_a=self.vector_size_a,
            vector_size_b=self.vector_size_b,
            vector_size_c=self.vector_size_c,
            pipeline=self.pipeline,
            scheduler=self.scheduler,
            double_smem_buffer=self.double_smem_buffer,
            num_wave_groups=self.num_wave_groups,
            num_groups_to_merge=self.num_groups_to_merge,
            specialization=self.specialization,
            split_image=self.split_image,
            explicit_gemm=bool(self.explicit_gemm),
            streamk_enabled=self.streamk_enabled,
            streamk_reduction=self.streamk_reduction or StreamKReduction.TREE,
        )

    def to_config(
        self,
        *,
        epilogue: Epilogue = Epilogue.CSHUFFLE,
        two_stage: bool = False,
        block_per_cu: int = 1,
    ) -> KernelConfig:
        """The configuration this string describes, given the fields a string does not carry.

        Raises ``InstanceStringError`` when the string's fields cannot form a configuration (for instance a
        3D layout with NDim 2, which some upstream lines have, or mixed data types).
        """
        layout = self.layout
        if (
            layout is None
            or self.ndim_spatial not in (2, 3)
            or layout is not Layout.for_ndim(self.ndim_spatial)
        ):
            raise InstanceStringError(
                f"layout fields {self.in_layout},{self.wei_layout},{self.ds_layout},{self.out_layout} do not "
                f"match NDim {self.ndim_spatial}; accepted: NDim 2 with {Layout.NHWGC.token}, "
                f"NDim 3 with {Layout.NDHWGC.token}"
            )
        if not self.a_type is self.b_type is self.e_type:
            raise InstanceStringError(
                f"mixed data types A={self.a_type.value} B={self.b_type.value} E={self.e_type.value}; "
                "accepted: one type for A, B and E"
            )
        try:
            return KernelConfig(
                direction=self.direction,
                dtype=self.a_type,
                ndim_spatial=self.ndim_spatial,
                layout=layout,
                epilogue=epilogue,
                two_stage=two_stage,
                streamk_persistent=self.streamk_persistent,
                block_per_cu=block_per_cu,
                **self.config_fields(),
            )
        except ValueError as error:
            raise InstanceStringError(f"fields do not form a configuration: {error}") from None


class ParsedDepthwiseString(BaseModel):
    """The fields a depthwise instance string carries, by name (ck_conventions §3 order)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["depthwise"] = "depthwise"
    direction: Direction = Direction.FWD
    ndim_spatial: int
    specialization: Specialization
    in_vec: int
    wei_vec: int
    out_vec: int
    block_size: int
    tile_h: int
    tile_w: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    nbatch: int
    sub_h: int
    sub_w: int
    in_type: DataType
    wei_type: DataType
    acc_type: str
    out_type: DataType

    def to_config(self, *, pad_h: int | None = None, pad_w: int | None = None) -> DepthwiseConfig:
        """The configuration, given the padding the string does not carry (default ``(filter - 1) / 2``)."""
        problems = []
        if self.ndim_spatial not in (2, 3):
            problems.append(f"NDim {self.ndim_spatial} (accepted: 2, 3)")
        if self.filter_h != self.filter_w:
            problems.append(f"filter {self.filter_h}x{self.filter_w} (accepted: square)")
        if self.wei_vec != self.in_vec:
            problems.append(f"WeiVec {self.wei_vec} != InVec {self.in_vec} (accepted: equal)")
        if self.block_size != DEPTHWISE_BLOCK_SIZE:
            problems.append(f"BlockSize {self.block_size} (accepted: {DEPTHWISE_BLOCK_SIZE})")
        if not self.in_type is self.wei_type is self.out_type:
            problems.append("mixed data types (accepted: one type for In, Wei and Out)")
        if problems:
            raise InstanceStringError(
                "depthwise string does not form a configuration: " + "; ".join(problems)
            )
        pad = (self.filter_h - 1) // 2
        try:
            return DepthwiseConfig(
                direction=self.direction,
                dtype=self.in_type,
                ndim_spatial=self.ndim_spatial,
                tile_h=self.tile_h,
                tile_w=self.tile_w,
                filter=self.filter_h,
                stride_h=self.stride_h,
                stride_w=self.stride_w,
                pad_h=pad if pad_h is None else pad_h,
                pad_w=pad if pad_w is None else pad_w,
                nbatch=self.nbatch,
                sub_h=self.sub_h,
                sub_w=self.sub_w,
                in_vec=self.in_vec,
                out_vec=self.out_vec,
            )
        except ValueError as error:
            raise InstanceStringError(f"fields do not form a configuration: {error}") from None


ParsedInstanceString = ParsedImplicitGemmString | ParsedDepthwiseString

_OUTER = re.compile(r"(?P<kernel>[A-Za-z]+)<(?P<args>[^<>\s]*)>")
_COMMON_TAIL = [
    "tile_m",
    "tile_n",
    "tile_k",
    "wave_m",
    "wave_n",
    "wave_k",
    "warp_tile_m",
    "warp_tile_n",
    "warp_tile_k",
    "a_type",
    "b_type",
    "pipeline",
    "scheduler",
    "double_smem_buffer",
    "num_wave_groups",
    "acc_type",
    "e_type",
    "ds_type",
    "cde_op",
]
_HEAD = ["ndim_spatial", "specialization", "in_layout", "wei_layout", "ds_layout", "out_layout"]
_VECS = ["vector_size_a", "vector_size_b", "vector_size_c", "num_groups_to_merge", "split_image"]
_FWD_FIELDS = (*_HEAD, *_VECS, "explicit_gemm", *_COMMON_TAIL)
_BWD_DATA_FIELDS = (*_HEAD, *_VECS, *_COMMON_TAIL)
_STREAMK_FIELDS = ("streamk_enabled", "streamk_reduction", "streamk_persistent")
_DEPTHWISE_FIELDS = [
    "ndim_spatial",
    "specialization",
    "depthwise",
    "in_vec",
    "wei_vec",
    "out_vec",
    "block_size",
    "tile_h",
    "tile_w",
    "filter_h",
    "filter_w",
    "stride_h",
    "stride_w",
    "nbatch",
    "sub_h",
    "sub_w",
    "in_type",
    "wei_type",
    "acc_type",
    "out_type",
]
_BOOLS = {"split_image", "explicit_gemm", "double_smem_buffer", "streamk_enabled", "streamk_persistent"}
_TYPES = {"a_type", "b_type", "e_type", "in_type", "wei_type", "out_type"}
_LITERALS = {
    "acc_type": ACC_TYPE,
    "ds_type": DS_TYPE,
    "cde_op": CDE_OP,
    "ds_layout": "EmptyTuple",
    "depthwise": DEPTHWISE_TOKEN,
}


def parse_instance_string(text: str) -> ParsedInstanceString:
    """Parse one instance string into its fields by name; ``InstanceStringError`` names the first bad field.

    Accepts the forms the configurations' ``instance_string`` write, plus the 32-field bwd_weight
    form (trailing ``,0``). Leading/trailing whitespace is ignored; anything else must be exact.
    """
    match = _OUTER.fullmatch(text.strip())
    if match is None:
        raise InstanceStringError(
            f"{_short(text)} is not an instance string (expected Kernel<field,field,...>)"
        )
    kernel, args = match["kernel"], match["args"].split(",")
    try:
        direction = Direction.from_token(kernel)
    except ValueError:
        accepted = ", ".join(d.token for d in Direction)
        raise InstanceStringError(f"unknown kernel {kernel!r}; accepted: {accepted}") from None
    if len(args) > 2 and args[2] == DEPTHWISE_TOKEN:
        fields = _convert(_DEPTHWISE_FIELDS, args, kernel, depthwise=True)
        return ParsedDepthwiseString(direction=direction, **fields)
    names = _implicit_gemm_fields(direction, len(args), kernel)
    values = _convert(names, args, kernel)
    trailing = direction is Direction.BWD_WEIGHT and len(args) == len(_FWD_FIELDS) + 1
    if trailing and values.pop("streamk_enabled"):
        raise InstanceStringError(f"{kernel}: 32-field form must end in IsStreamK 0, got 1")
    if values.get("streamk_enabled") and values.get("streamk_reduction") is None:
        raise InstanceStringError(f"{kernel}: stream-K string lacks ReductionStrategy")
    values.setdefault("explicit_gemm", None)
    values.setdefault("streamk_enabled", False)
    values.setdefault("streamk_reduction", None)
    values.setdefault("streamk_persistent", False)
    return ParsedImplicitGemmString(direction=direction, trailing_streamk_flag=trailing, **values)


def _implicit_gemm_fields(direction: Direction, count: int, kernel: str) -> tuple[str, ...]:
    if direction is Direction.BWD_DATA:
        forms = {len(_BWD_DATA_FIELDS): _BWD_DATA_FIELDS}
    elif direction is Direction.FWD:
        forms = {len(_FWD_FIELDS): _FWD_FIELDS}
    else:
        forms = {
            len(_FWD_FIELDS): _FWD_FIELDS,
            len(_FWD_FIELDS) + 1: (*_FWD_FIELDS, "streamk_enabled"),
            len(_FWD_FIELDS) + 3: (*_FWD_FIELDS, *_STREAMK_FIELDS),
        }
    if count not in forms:
        accepted = " or ".join(str(n) for n in sorted(forms))
        raise InstanceStringError(f"{kernel} has {count} fields; accepted: {accepted}")
    return forms[count]


def _convert(names: tuple[str, ...], args: list[str], kernel: str, depthwise: bool = False) -> dict[str, Any]:
    if len(args) != len(names):
        raise InstanceStringError(f"{kernel} (depthwise) has {len(args)} fields; accepted: {len(names)}")
    values: dict[str, Any] = {}
    for position, (field, raw) in enumerate(zip(names, args, strict=True)):
        values[field] = _field_value(field, raw, kernel, position)
    if depthwise:
        del values["depthwise"]
    return values


def _field_value(field: str, raw: str, kernel: str, position: int) -> Any:
    where = f"{kernel} field {position} ({field})"
    try:
        if field in _LITERALS:
            if raw != _LITERALS[field]:
                raise ValueError(f"accepted: {_LITERALS[field]}")
            return raw
        if field in _BOOLS:
            if raw not in ("0", "1"):
                raise ValueError("accepted: 0, 1")
            return raw == "1"
        if field in _TYPES:
            return DataType.from_token(raw)
        if field == "specialization":
            return Specialization.from_token(raw)
        if field == "pipeline":
            return Pipeline.from_token(raw)
        if field == "scheduler":
            return Scheduler.from_token(raw)
        if field == "streamk_reduction":
            return StreamKReduction.from_token(raw)
        if field in ("in_layout", "wei_layout", "out_layout"):
            if not raw.isalpha():
                raise ValueError("accepted: a layout name such as NHWGC")
            return raw
        if not raw.isdigit() or (len(raw) > 1 and raw[0] == "0"):
            raise ValueError("accepted: a non-negative integer")
        return int(raw)
    except ValueError as error:
        raise InstanceStringError(f"{where}: bad value {raw!r}; {error}") from None


def _short(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")
