"""Every enum member's C++ enumerator, instance-string token and name fragment (architecture §3, ck §2-3)."""

from __future__ import annotations

import pytest

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

SPELLINGS = [
    (Direction.FWD, "fwd", "ConvDirection::kFwd", "GroupedConvolutionForwardKernel"),
    (Direction.BWD_DATA, "bwd_data", "ConvDirection::kBwdData", "GroupedConvolutionBackwardDataKernel"),
    (
        Direction.BWD_WEIGHT,
        "bwd_weight",
        "ConvDirection::kBwdWeight",
        "GroupedConvolutionBackwardWeightKernel",
    ),
    (DataType.FP16, "fp16", "DataType::kFp16", "fp16"),
    (DataType.BF16, "bf16", "DataType::kBf16", "bf16"),
    (DataType.FP32, "fp32", "DataType::kFp32", "fp32"),
    (Pipeline.BASIC_V1, "compv1", "Pipeline::kBasicV1", "BASIC_V1"),
    (Pipeline.BASIC_V2, "compv2", "Pipeline::kBasicV2", "BASIC_V2"),
    (Pipeline.MEM, "mem", "Pipeline::kMem", "MEMORY"),
    (Pipeline.COMPV3, "compv3", "Pipeline::kCompV3", "COMPUTE_V3"),
    (Pipeline.COMPV4, "compv4", "Pipeline::kCompV4", "COMPUTE_V4"),
    (Pipeline.COMPV5, "compv5", "Pipeline::kCompV5", "COMPUTE_V5"),
    (Pipeline.COMPV6, "compv6", "Pipeline::kCompV6", "COMPUTE_V6"),
    (Pipeline.BASIC_ASYNC_V1, "basic_async_v1", "Pipeline::kBasicAsyncV1", "BASIC_ASYNC_V1"),
    (Pipeline.COMP_ASYNC, "comp_async", "Pipeline::kCompAsync", "COMPUTE_ASYNC"),
    (Pipeline.WAVELET, "wavelet", "Pipeline::kWavelet", "WAVELET"),
    (Scheduler.INTRAWAVE, "intrawave", "Scheduler::kIntrawave", "Intrawave"),
    (Scheduler.INTERWAVE, "interwave", "Scheduler::kInterwave", "Interwave"),
    (Epilogue.CSHUFFLE, "cshuffle", "Epilogue::kCShuffle", "CShuffle"),
    (Epilogue.DEFAULT, "default", "Epilogue::kDefault", "Default"),
    (Specialization.DEFAULT, "default", "ConvSpecialization::kDefault", "Default"),
    (Specialization.FILTER1X1_PAD0, "filter1x1_pad0", "ConvSpecialization::kFilter1x1Pad0", "Filter1x1Pad0"),
    (
        Specialization.FILTER1X1_STRIDE1_PAD0,
        "filter1x1_stride1_pad0",
        "ConvSpecialization::kFilter1x1Stride1Pad0",
        "Filter1x1Stride1Pad0",
    ),
    (Specialization.FILTER3X3, "filter3x3", "ConvSpecialization::kFilter3x3", "Filter3x3"),
    (StreamKReduction.LINEAR, "linear", "StreamKReduction::kLinear", "1"),
    (StreamKReduction.TREE, "tree", "StreamKReduction::kTree", "2"),
    (Layout.NHWGC, "nhwgc", None, "NHWGC,GKYXC,EmptyTuple,NHWGK"),
    (Layout.NDHWGC, "ndhwgc", None, "NDHWGC,GKZYXC,EmptyTuple,NDHWGK"),
]


@pytest.mark.parametrize(("member", "fragment", "cpp", "token"), SPELLINGS, ids=lambda v: str(v))
def test_spellings(member, fragment, cpp, token):
    assert member.fragment == fragment
    assert member.value == fragment
    assert member.cpp == cpp
    assert member.token == token
    assert type(member).from_token(token) is member


def test_every_member_is_listed():
    listed = {m for m, *_ in SPELLINGS}
    for enum in (Direction, DataType, Pipeline, Scheduler, Epilogue, Specialization, StreamKReduction):
        assert set(enum) <= listed, enum


@pytest.mark.parametrize(
    ("alias", "member"), [("basic_v1", Pipeline.BASIC_V1), ("basic_v2", Pipeline.BASIC_V2)]
)
def test_pipeline_aliases_on_input(alias, member):
    assert Pipeline(alias) is member
    assert member.fragment != alias  # names use the one canonical spelling


def test_unknown_value_and_token_are_refused():
    with pytest.raises(ValueError):
        Pipeline("compv7")
    with pytest.raises(ValueError, match=r"accepted: .*COMPUTE_V3"):
        Pipeline.from_token("COMPUTE_V7")
