"""Raw legacy ``.conf`` lines -> typed ``LegacyLine`` models (ck_conventions §4), before any derivation.

Every device-op format is described as DATA: its argument count and the 0-based position of each field
(``XDL_FORMATS``), so adding an upstream format is one table entry. Parsing checks that the line has the
shape its format promises (argument count, integers where integers belong, known tokens) and raises
``LineFormatError`` naming what was expected; the file reader adds ``file:line``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict

from generators.enums import Layout
from generators.instance_string import (
    InstanceStringError,
    ParsedImplicitGemmString,
    parse_instance_string,
)
from rulesets.conf_tokens import split_device_op, split_top_level

_FROZEN = ConfigDict(frozen=True, extra="forbid")

SPEC_TOKENS = ("Default", "OddC", "Filter1x1Pad0", "Filter1x1Stride1Pad0", "Filter3x3")
SCHEDULER_TOKENS = ("Intrawave", "Interwave")
PIPELINE_VERSIONS = ("v1", "v2", "v3", "v4", "v5")
# Native lines are CK instance strings: they are parsed by generators.instance_string (the one grammar, whose
# tokens come from the enums). Upstream's converter reads ndim, layout and dtype from the file name, but the
# fields must still be tokens an instance string can hold: anything else is a typo or junk, not a line.
NATIVE_NDIMS = (1, 2, 3)


class LineFormatError(ValueError):
    """A line that no known format explains: ``problem`` and what was ``expected``."""

    def __init__(self, problem: str, expected: str) -> None:
        self.problem = problem
        self.expected = expected
        super().__init__(f"{problem}; expected {expected}")


class LegacyFormat(Enum):
    """The device-op formats of the legacy lists; value = the device-op name that starts the line."""

    FWD_XDL = "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle"
    FWD_LARGE_TENSOR = "DeviceGroupedConvFwdMultipleD_Xdl_CShuffle_Large_Tensor"
    FWD_V3 = "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3"
    BWD_DATA_XDL = "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle"
    BWD_WEIGHT_XDL = "DeviceGroupedConvBwdWeight_Xdl_CShuffle"
    BWD_WEIGHT_V3 = "DeviceGroupedConvBwdWeight_Xdl_CShuffleV3"
    BWD_WEIGHT_TWO_STAGE = "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle"
    BWD_WEIGHT_EXPLICIT = "DeviceGroupedConvBwdWeight_Explicit_Xdl"
    NATIVE_FWD = "GroupedConvolutionForwardKernel"
    NATIVE_BWD_DATA = "GroupedConvolutionBackwardDataKernel"
    NATIVE_BWD_WEIGHT = "GroupedConvolutionBackwardWeightKernel"
    DEPTHWISE = "GroupedConvolutionForwardDepthwise"

    @property
    def direction(self) -> Literal["fwd", "bwd_data", "bwd_weight"]:
        return _FORMAT_DIRECTION[self]

    @property
    def is_native(self) -> bool:
        return self in (LegacyFormat.NATIVE_FWD, LegacyFormat.NATIVE_BWD_DATA, LegacyFormat.NATIVE_BWD_WEIGHT)


_FORMAT_DIRECTION: MappingProxyType[LegacyFormat, Literal["fwd", "bwd_data", "bwd_weight"]] = (
    MappingProxyType(
        {
            LegacyFormat.FWD_XDL: "fwd",
            LegacyFormat.FWD_LARGE_TENSOR: "fwd",
            LegacyFormat.FWD_V3: "fwd",
            LegacyFormat.BWD_DATA_XDL: "bwd_data",
            LegacyFormat.BWD_WEIGHT_XDL: "bwd_weight",
            LegacyFormat.BWD_WEIGHT_V3: "bwd_weight",
            LegacyFormat.BWD_WEIGHT_TWO_STAGE: "bwd_weight",
            LegacyFormat.BWD_WEIGHT_EXPLICIT: "bwd_weight",
            LegacyFormat.NATIVE_FWD: "fwd",
            LegacyFormat.NATIVE_BWD_DATA: "bwd_data",
            LegacyFormat.NATIVE_BWD_WEIGHT: "bwd_weight",
            LegacyFormat.DEPTHWISE: "fwd",
        }
    )
)


@dataclass(frozen=True)
class XdlLayout:
    """Where an old-CK (XDL) device op keeps each field: argument count, positions, and fixed values.

    ``positions`` keys are ``XdlLine`` field names (plus ``k0`` for the V1 backward-weight K0 x K1 split and
    ``bk1`` where a line carries a separate B K1); ``fixed`` gives the fields the format implies.
    """

    arg_count: int
    positions: Mapping[str, int]
    fixed: Mapping[str, str | int | bool]


def _layout(arg_count: int, fixed: dict[str, str | int | bool], **positions: int) -> XdlLayout:
    return XdlLayout(
        arg_count=arg_count, positions=MappingProxyType(positions), fixed=MappingProxyType(fixed)
    )


_FWD_V1_POSITIONS = dict(
    spec=14,
    block_size=17,
    tile_m=18,
    tile_n=19,
    tile_k=20,
    k1=21,
    m_per_xdl=23,
    n_per_xdl=24,
    m_xdl_per_wave=25,
    n_xdl_per_wave=26,
    vector_a=31,
    vector_b=38,
    vector_c=44,
)
_BWD_WEIGHT_POSITIONS = dict(
    spec=11,
    block_size=12,
    tile_m=13,
    tile_n=14,
    k1=16,
    m_per_xdl=17,
    n_per_xdl=18,
    m_xdl_per_wave=19,
    n_xdl_per_wave=20,
    vector_a=25,
    vector_b=32,
    vector_c=38,
)
_V1_INTRAWAVE = {"scheduler": "Intrawave", "pipeline_version": "v1", "direct_load": False}

XDL_FORMATS: MappingProxyType[LegacyFormat, XdlLayout] = MappingProxyType(
    {
        # ck_conventions §4: fwd V1 (49 args), Large_Tensor (48 args, no NumGroupsToMerge: split image, gm 1).
        LegacyFormat.FWD_XDL: _layout(49, _V1_INTRAWAVE, **_FWD_V1_POSITIONS, num_groups_to_merge=48),
        LegacyFormat.FWD_LARGE_TENSOR: _layout(
            48, {**_V1_INTRAWAVE, "num_groups_to_merge": 1, "split_image": True}, **_FWD_V1_POSITIONS
        ),
        LegacyFormat.FWD_V3: _layout(
            50,
            {},
            spec=14,
            block_size=16,
            tile_m=17,
            tile_n=18,
            tile_k=19,
            k1=20,
            m_per_xdl=22,
            n_per_xdl=23,
            m_xdl_per_wave=24,
            n_xdl_per_wave=25,
            vector_a=30,
            vector_b=37,
            vector_c=43,
            scheduler=44,
            pipeline_version=45,
            direct_load=48,
            num_groups_to_merge=49,
        ),
        LegacyFormat.BWD_DATA_XDL: _layout(
            51,
            {"pipeline_version": "v1", "direct_load": False, "num_groups_to_merge": 1},
            spec=13,
            block_size=17,
            tile_m=18,
            tile_n=19,
            tile_k=20,
            k1=21,
            bk1=22,
            m_per_xdl=23,
            n_per_xdl=24,
            m_xdl_per_wave=25,
            n_xdl_per_wave=26,
            vector_a=31,
            vector_b=38,
            vector_c=44,
            scheduler=46,
        ),
        # V1 backward weight keeps K0 at 15: tile_k = K0 * K1.
        LegacyFormat.BWD_WEIGHT_XDL: _layout(
            43, {**_V1_INTRAWAVE, "num_groups_to_merge": 1}, **_BWD_WEIGHT_POSITIONS, k0=15
        ),
        LegacyFormat.BWD_WEIGHT_V3: _layout(
            45,
            {},
            **_BWD_WEIGHT_POSITIONS,
            tile_k=15,
            scheduler=39,
            pipeline_version=40,
            direct_load=43,
            num_groups_to_merge=44,
        ),
        LegacyFormat.BWD_WEIGHT_TWO_STAGE: _layout(
            46,
            {"direct_load": False, "two_stage": True},
            **_BWD_WEIGHT_POSITIONS,
            tile_k=15,
            scheduler=39,
            pipeline_version=40,
            num_groups_to_merge=41,
        ),
    }
)


class XdlLine(BaseModel):
    """An old-CK (XDL) device-op line, fields as written (before waves and warp_tile_k are derived)."""

    model_config = _FROZEN

    format: LegacyFormat
    spec: str
    block_size: int
    tile_m: int
    tile_n: int
    tile_k: int
    k1: int
    bk1: int | None = None
    m_per_xdl: int
    n_per_xdl: int
    m_xdl_per_wave: int
    n_xdl_per_wave: int
    vector_a: int
    vector_b: int
    vector_c: int
    scheduler: str
    pipeline_version: str
    direct_load: bool
    num_groups_to_merge: int
    split_image: bool = False
    explicit_gemm: bool = False
    two_stage: bool = False


class NativeLine(BaseModel):
    """A native CK Tile instance string (``GroupedConvolution...Kernel<...>``): ``fields`` as
    ``generators.instance_string.parse_instance_string`` reads them (``explicit_gemm`` None for backward data,
    ``trailing_streamk_flag`` for the 32-field form ``...,PassThrough,0``, the open point of §4)."""

    model_config = _FROZEN

    format: LegacyFormat
    text: str
    fields: ParsedImplicitGemmString


class DepthwiseLine(BaseModel):
    """``GroupedConvolutionForwardDepthwise<TileH,TileW,Filter,StrH,StrW,PadH,PadW,NBatch,SubH,SubW,InVec,OutVec>``."""

    model_config = _FROZEN

    format: Literal[LegacyFormat.DEPTHWISE] = LegacyFormat.DEPTHWISE
    tile_h: int
    tile_w: int
    filter: int
    stride_h: int
    stride_w: int
    pad_h: int
    pad_w: int
    nbatch: int
    sub_h: int
    sub_w: int
    in_vec: int
    out_vec: int


LegacyLine = XdlLine | NativeLine | DepthwiseLine

_KNOWN_OPS = ", ".join(f.value for f in LegacyFormat)


def _int(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise LineFormatError(f"{what} is {value!r}", "an integer") from None


def _bool(value: str, what: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise LineFormatError(f"{what} is {value!r}", "true/false or 1/0")


def _token(value: str, what: str, accepted: tuple[str, ...]) -> str:
    if value not in accepted:
        raise LineFormatError(f"{what} is {value!r}", f"one of {', '.join(accepted)}")
    return value


def _parse_xdl(fmt: LegacyFormat, args: list[str]) -> XdlLine:
    layout = XDL_FORMATS[fmt]
    if len(args) != layout.arg_count:
        raise LineFormatError(f"{fmt.value} has {len(args)} arguments", f"{layout.arg_count}")
    raw = {name: args[index] for name, index in layout.positions.items()}
    fields: dict[str, str | int | bool] = dict(layout.fixed)
    fields["spec"] = _token(
        raw.pop("spec"), f"specialization (argument {layout.positions['spec']})", SPEC_TOKENS
    )
    if "scheduler" in raw:
        scheduler = raw.pop("scheduler")
        # Backward data writes CK's LoopScheduler, whose Default is the intrawave schedule.
        scheduler = "Intrawave" if scheduler == "Default" else scheduler
        fields["scheduler"] = _token(scheduler, "scheduler", SCHEDULER_TOKENS)
    if "pipeline_version" in raw:
        fields["pipeline_version"] = _token(
            raw.pop("pipeline_version"), "pipeline version", PIPELINE_VERSIONS
        )
    if "direct_load" in raw:
        fields["direct_load"] = _bool(raw.pop("direct_load"), "direct-load flag")
    for name, value in raw.items():
        fields[name] = _int(value, f"{name} (argument {layout.positions[name]})")
    k0 = fields.pop("k0", None)
    if k0 is not None:
        fields["tile_k"] = int(k0) * int(fields["k1"])
    return XdlLine(format=fmt, **fields)


_EXPLICIT_KEYS = (
    "BlkSize",
    "BlkTile",
    "WaveTile",
    "K1",
    "WaveMap",
    "VmemReadVec",
    "BlkGemmPipelineScheduler",
    "BlkGemmPipelineVersion",
    "BlkGemmPipelinePrefetchStages",
)


def _x_ints(value: str, count: int, what: str) -> list[int]:
    parts = value.split("x")
    if len(parts) != count:
        raise LineFormatError(f"{what} is {value!r}", f"{count} integers joined by 'x'")
    return [_int(p, what) for p in parts]


def _parse_explicit(argument_text: str) -> XdlLine:
    """``DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceBatchedGemmXdlUniversal<..> BlkSize: .., ...>``."""
    inner_end = argument_text.find(">")
    if not argument_text.startswith("DeviceBatchedGemmXdlUniversal<") or inner_end < 0:
        raise LineFormatError(
            "explicit GEMM line without its GEMM op", "DeviceBatchedGemmXdlUniversal<...> first"
        )
    pairs: dict[str, str] = {}
    for item in split_top_level(argument_text[inner_end + 1 :]):
        key, colon, value = item.partition(":")
        if not colon:
            raise LineFormatError(f"explicit GEMM item {item!r}", "'Key: value'")
        pairs[key.strip()] = value.strip()
    if tuple(pairs) != _EXPLICIT_KEYS:
        raise LineFormatError(f"explicit GEMM keys {', '.join(pairs)}", ", ".join(_EXPLICIT_KEYS))
    tile_m, tile_n, tile_k = _x_ints(pairs["BlkTile"], 3, "BlkTile")
    m_per_xdl, n_per_xdl = _x_ints(pairs["WaveTile"], 2, "WaveTile")
    ak1, bk1 = _x_ints(pairs["K1"], 2, "K1")
    m_xdl_per_wave, n_xdl_per_wave = _x_ints(pairs["WaveMap"], 2, "WaveMap")
    vec_a, vec_b, vec_c_seq = [*pairs["VmemReadVec"].split("x", 2), "", ""][:3]
    if not (vec_c_seq.startswith("Seq(") and vec_c_seq.endswith(")")):
        raise LineFormatError(f"VmemReadVec is {pairs['VmemReadVec']!r}", "AxBxSeq(c,...)")
    vec_c_values = {_int(v.strip(), "VmemReadVec C") for v in vec_c_seq[4:-1].split(",")}
    if len(vec_c_values) != 1:
        raise LineFormatError(
            f"VmemReadVec C values {sorted(vec_c_values)}", "one C vector width for all waves"
        )
    return XdlLine(
        format=LegacyFormat.BWD_WEIGHT_EXPLICIT,
        # The explicit GEMM runs a 1x1 / stride 1 / pad 0 convolution as a batched GEMM (ck_conventions §4).
        spec="Filter1x1Stride1Pad0",
        block_size=_int(pairs["BlkSize"], "BlkSize"),
        tile_m=tile_m,
        tile_n=tile_n,
        tile_k=tile_k,
        k1=min(ak1, bk1),
        m_per_xdl=m_per_xdl,
        n_per_xdl=n_per_xdl,
        m_xdl_per_wave=m_xdl_per_wave,
        n_xdl_per_wave=n_xdl_per_wave,
        vector_a=_int(vec_a, "VmemReadVec A"),
        vector_b=_int(vec_b, "VmemReadVec B"),
        vector_c=vec_c_values.pop(),
        scheduler=_token(pairs["BlkGemmPipelineScheduler"], "BlkGemmPipelineScheduler", SCHEDULER_TOKENS),
        pipeline_version=_token(pairs["BlkGemmPipelineVersion"], "BlkGemmPipelineVersion", PIPELINE_VERSIONS),
        direct_load=False,
        num_groups_to_merge=1,
        explicit_gemm=True,
    )


_NATIVE_ARG_COUNTS: MappingProxyType[LegacyFormat, tuple[int, ...]] = MappingProxyType(
    {
        LegacyFormat.NATIVE_FWD: (31,),
        LegacyFormat.NATIVE_BWD_DATA: (30,),
        LegacyFormat.NATIVE_BWD_WEIGHT: (31, 32, 34),
    }
)


def _parse_native(fmt: LegacyFormat, text: str, args: list[str]) -> NativeLine:
    counts = _NATIVE_ARG_COUNTS[fmt]
    if len(args) not in counts:
        raise LineFormatError(f"{fmt.value} has {len(args)} fields", " or ".join(str(c) for c in counts))
    try:
        fields = parse_instance_string(text)
    except InstanceStringError as error:
        raise LineFormatError(str(error), "a CK instance string (ck_conventions §3)") from None
    if not isinstance(fields, ParsedImplicitGemmString):
        raise LineFormatError(f"{fmt.value} with depthwise fields", "an implicit-GEMM instance string")
    if fields.layout is None:
        layouts = ",".join((fields.in_layout, fields.wei_layout, fields.ds_layout, fields.out_layout))
        accepted = " or ".join(layout.token for layout in (Layout.NHWGC, Layout.NDHWGC))
        raise LineFormatError(f"layout fields {layouts!r}", accepted)
    if fields.ndim_spatial not in NATIVE_NDIMS:
        raise LineFormatError(f"NDim is {fields.ndim_spatial}", ", ".join(str(n) for n in NATIVE_NDIMS))
    return NativeLine(format=fmt, text=text, fields=fields)


def _parse_depthwise(args: list[str]) -> DepthwiseLine:
    names = tuple(name for name in DepthwiseLine.model_fields if name != "format")
    if len(args) != len(names):
        raise LineFormatError(
            f"depthwise line has {len(args)} arguments", f"{len(names)} ({','.join(names)})"
        )
    return DepthwiseLine(**{name: _int(value, name) for name, value in zip(names, args, strict=True)})


def _reject_control_characters(text: str) -> None:
    for column, char in enumerate(text.rstrip("\r\n"), start=1):
        if (ord(char) < 0x20 and char != "\t") or ord(char) == 0x7F:
            raise LineFormatError(f"control character U+{ord(char):04X} at column {column}", "printable text")


def parse_line(text: str) -> LegacyLine:
    """Parse one non-comment line. Raises ``LineFormatError`` when no known format explains it."""
    _reject_control_characters(text)
    try:
        op, argument_text = split_device_op(text)
    except ValueError as error:
        raise LineFormatError(
            f"line is {text.strip()[:60]!r}: {error}", f"a device op, one of {_KNOWN_OPS}"
        ) from None
    try:
        fmt = LegacyFormat(op)
    except ValueError:
        raise LineFormatError(f"unknown device op {op!r}", f"one of {_KNOWN_OPS}") from None
    if fmt is LegacyFormat.BWD_WEIGHT_EXPLICIT:
        return _parse_explicit(argument_text)
    try:
        args = split_top_level(argument_text)
    except ValueError as error:
        raise LineFormatError(f"arguments of {op}: {error}", "balanced Seq(...) groups") from None
    if fmt is LegacyFormat.DEPTHWISE:
        return _parse_depthwise(args)
    if fmt.is_native:
        return _parse_native(fmt, text.strip(), args)
    return _parse_xdl(fmt, args)
