"""The vocabulary of a configuration: one enum per concept, each member carrying its spellings.

Every member has
- ``value``: the canonical Python/JSON spelling (what a rule set or export writes),
- ``cpp``: the C++ enumerator of ``instances/include/tiledispatch/runtime/types.hpp``
  (docs/architecture.md §3), or ``None`` where the C++ runtime has no enum (layout, family, category),
- ``token``: the spelling inside a CK instance string (ck_conventions §3),
- ``fragment``: the spelling inside a kernel name (ck_conventions §2).

Nobody types a C++ enumerator, token or name fragment by hand: they come from here.

Pipeline aliases: ``compv1`` and ``basic_v1`` name the same pipeline (likewise ``compv2``/``basic_v2``).
The canonical spelling (``value`` and ``fragment``) is ``compv1``/``compv2`` because that is what upstream's
codegen writes: the first upstream conversion tool (``ck_dispatcher_json``, PR #7284) emits
``"pipeline": "compv1"`` and ck_conventions §4 maps legacy V1 to ``compv1``.
``basic_v1``/``basic_v2`` are accepted on input only.
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType
from typing import Any


class _Spelled(Enum):
    """Base for enums whose members carry (value, cpp, token, fragment)."""

    cpp: str | None
    token: str
    fragment: str

    def __new__(cls, value: str, cpp: str | None, token: str, fragment: str | None = None) -> _Spelled:
        member = object.__new__(cls)
        member._value_ = value
        member.cpp = cpp
        member.token = token
        member.fragment = value if fragment is None else fragment
        return member

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _aliases(cls) -> MappingProxyType[str, str]:
        return MappingProxyType({})

    @classmethod
    def _missing_(cls, value: Any) -> _Spelled | None:
        if isinstance(value, str):
            canonical = cls._aliases().get(value.lower())
            if canonical is not None:
                return cls(canonical)
        return None

    @classmethod
    def values(cls) -> tuple[str, ...]:
        """Accepted canonical spellings, in declaration order (for error messages and CLI choices)."""
        return tuple(m.value for m in cls)

    @classmethod
    def from_token(cls, token: str) -> _Spelled:
        """The member whose instance-string token is ``token``; ValueError naming the accepted tokens."""
        for member in cls:
            if member.token == token:
                return member
        accepted = ", ".join(m.token for m in cls)
        raise ValueError(f"unknown {cls.__name__} token {token!r}; accepted: {accepted}")


class Direction(_Spelled):
    """Convolution direction; the token is the CK Tile kernel class of the instance string."""

    FWD = ("fwd", "ConvDirection::kFwd", "GroupedConvolutionForwardKernel")
    BWD_DATA = ("bwd_data", "ConvDirection::kBwdData", "GroupedConvolutionBackwardDataKernel")
    BWD_WEIGHT = ("bwd_weight", "ConvDirection::kBwdWeight", "GroupedConvolutionBackwardWeightKernel")


class DataType(_Spelled):
    """Element type of input, weight and output (accumulation is always fp32)."""

    FP16 = ("fp16", "DataType::kFp16", "fp16")
    BF16 = ("bf16", "DataType::kBf16", "bf16")
    FP32 = ("fp32", "DataType::kFp32", "fp32")

    @property
    def size_bytes(self) -> int:
        return 4 if self is DataType.FP32 else 2


class Layout(_Spelled):
    """Tensor layouts; the token is the four layout fields of an instance string (In, Wei, Ds, Out).

    There is no C++ enum for it: the traits carry ``kNDimSpatial`` and the layout follows from it.
    """

    NHWGC = ("nhwgc", None, "NHWGC,GKYXC,EmptyTuple,NHWGK")
    NDHWGC = ("ndhwgc", None, "NDHWGC,GKZYXC,EmptyTuple,NDHWGK")
    NGCHW = ("ngchw", None, "Depthwise")

    @classmethod
    def for_ndim(cls, ndim_spatial: int) -> Layout:
        """The implicit-GEMM layout of a 2D or 3D convolution."""
        if ndim_spatial == 2:
            return cls.NHWGC
        if ndim_spatial == 3:
            return cls.NDHWGC
        raise ValueError(f"no implicit-GEMM layout for ndim_spatial {ndim_spatial}; accepted: 2, 3")


class Pipeline(_Spelled):
    """Block-GEMM pipeline (docs/architecture.md §4 maps each to its NVIDIA strategy)."""

    BASIC_V1 = ("compv1", "Pipeline::kBasicV1", "BASIC_V1")
    BASIC_V2 = ("compv2", "Pipeline::kBasicV2", "BASIC_V2")
    MEM = ("mem", "Pipeline::kMem", "MEMORY")
    COMPV3 = ("compv3", "Pipeline::kCompV3", "COMPUTE_V3")
    COMPV4 = ("compv4", "Pipeline::kCompV4", "COMPUTE_V4")
    COMPV5 = ("compv5", "Pipeline::kCompV5", "COMPUTE_V5")
    COMPV6 = ("compv6", "Pipeline::kCompV6", "COMPUTE_V6")
    BASIC_ASYNC_V1 = ("basic_async_v1", "Pipeline::kBasicAsyncV1", "BASIC_ASYNC_V1")
    COMP_ASYNC = ("comp_async", "Pipeline::kCompAsync", "COMPUTE_ASYNC")
    WAVELET = ("wavelet", "Pipeline::kWavelet", "WAVELET")

    @classmethod
    def _aliases(cls) -> MappingProxyType[str, str]:
        return MappingProxyType({"basic_v1": "compv1", "basic_v2": "compv2"})


class Scheduler(_Spelled):
    INTRAWAVE = ("intrawave", "Scheduler::kIntrawave", "Intrawave")
    INTERWAVE = ("interwave", "Scheduler::kInterwave", "Interwave")


class Epilogue(_Spelled):
    """Epilogue; not part of an instance string (CK's ``get_instance_string`` omits it)."""

    CSHUFFLE = ("cshuffle", "Epilogue::kCShuffle", "CShuffle")
    DEFAULT = ("default", "Epilogue::kDefault", "Default")


class Specialization(_Spelled):
    DEFAULT = ("default", "ConvSpecialization::kDefault", "Default")
    FILTER1X1_PAD0 = ("filter1x1_pad0", "ConvSpecialization::kFilter1x1Pad0", "Filter1x1Pad0")
    FILTER1X1_STRIDE1_PAD0 = (
        "filter1x1_stride1_pad0",
        "ConvSpecialization::kFilter1x1Stride1Pad0",
        "Filter1x1Stride1Pad0",
    )
    FILTER3X3 = ("filter3x3", "ConvSpecialization::kFilter3x3", "Filter3x3")


class StreamKReduction(_Spelled):
    """Stream-K partial-tile reduction; the token is CK's ReductionStrategy number."""

    LINEAR = ("linear", "StreamKReduction::kLinear", "1")
    TREE = ("tree", "StreamKReduction::kTree", "2")


class Family(_Spelled):
    """Kernel family: which kernel template (and generator plugin) builds the instance."""

    IMPLICIT_GEMM = ("implicit_gemm", None, "implicit_gemm")
    STREAMK = ("streamk", None, "streamk")
    DEPTHWISE = ("depthwise", None, "depthwise")

    @property
    def cpp_template(self) -> str:
        """The C++ instance template (``tiledispatch/kernels/``); stream-K is a traits flag."""
        return "DepthwiseInstance" if self is Family.DEPTHWISE else "ImplicitGemmInstance"


class Category(_Spelled):
    """Feature category of a configuration (ck_conventions §5, used by ``full-tests`` and ``tiny``)."""

    REGULAR = ("regular", None, "regular")
    SPLIT_IMAGE = ("split_image", None, "split_image")
    MERGED_GROUPS = ("merged_groups", None, "merged_groups")
    TWO_STAGE = ("two_stage", None, "two_stage")
    EXPLICIT_GEMM = ("explicit_gemm", None, "explicit_gemm")
    STREAMK = ("streamk", None, "streamk")
    DEPTHWISE = ("depthwise", None, "depthwise")
