"""Instance strings: ck_conventions §3 examples and every native legacy line, byte for byte; the parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from gen_factories import make_config, make_depthwise

from generators.enums import DataType, Direction, Pipeline, StreamKReduction
from generators.instance_string import (
    InstanceStringError,
    ParsedDepthwiseString,
    ParsedImplicitGemmString,
    parse_instance_string,
)

LEGACY = Path(__file__).resolve().parents[3] / "shared" / "legacy" / "ck_builder_configs"

# Written out by hand from the §3 field lists for the §2 example configuration.
FWD = (
    "GroupedConvolutionForwardKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,4,8,8,1,0,0,128,128,32,2,2,1,"
    "32,32,16,fp16,fp16,COMPUTE_V3,Intrawave,0,1,fp32,fp16,EmptyTuple,PassThrough>"
)
BWD_DATA = (
    "GroupedConvolutionBackwardDataKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,4,8,8,1,0,128,128,32,2,2,1,"
    "32,32,16,fp16,fp16,COMPUTE_V3,Intrawave,0,1,fp32,fp16,EmptyTuple,PassThrough>"
)
# Verbatim from ck_conventions §3.
BWD_WEIGHT = (
    "GroupedConvolutionBackwardWeightKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,4,4,4,1,0,0,128,128,32,4,1,1,"
    "16,16,16,bf16,bf16,COMPUTE_V3,Intrawave,0,1,fp32,bf16,EmptyTuple,PassThrough>"
)
STREAMK = (
    "GroupedConvolutionBackwardWeightKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,8,8,8,1,0,0,64,64,64,2,2,1,"
    "16,16,16,fp16,fp16,BASIC_ASYNC_V1,Intrawave,0,1,fp32,fp16,EmptyTuple,PassThrough,1,2,0>"
)
DEPTHWISE = (
    "GroupedConvolutionForwardKernel<2,Default,Depthwise,2,2,2,64,8,8,3,3,1,1,8,2,2,fp16,fp16,fp32,fp16>"
)


def test_fwd_31_fields():
    assert make_config().instance_string == FWD
    assert FWD[FWD.index("<") + 1 : -1].count(",") == 30


def test_bwd_data_30_fields():
    assert make_config(direction="bwd_data").instance_string == BWD_DATA
    assert BWD_DATA[BWD_DATA.index("<") + 1 : -1].count(",") == 29


def test_bwd_weight_example():
    config = make_config(
        direction="bwd_weight", dtype="bf16", vector_size_a=4, vector_size_b=4, vector_size_c=4,
        wave_m=4, wave_n=1, warp_tile_m=16, warp_tile_n=16, warp_tile_k=16,
    )  # fmt: skip
    assert config.instance_string == BWD_WEIGHT


def test_streamk_example():
    config = make_config(
        direction="bwd_weight", tile_m=64, tile_n=64, tile_k=64, warp_tile_m=16, warp_tile_n=16,
        vector_size_a=8, pipeline="basic_async_v1", streamk_enabled=True, streamk_reduction="tree",
    )  # fmt: skip
    assert config.instance_string == STREAMK
    linear = config.replace(streamk_reduction="linear", streamk_persistent=True)
    assert linear.instance_string == STREAMK.replace(",1,2,0>", ",1,1,1>")


def test_depthwise_20_fields_weivec_is_invec():
    assert make_depthwise().instance_string == DEPTHWISE
    assert make_depthwise(in_vec=4, out_vec=2).instance_string.startswith(
        "GroupedConvolutionForwardKernel<2,Default,Depthwise,4,4,2,64,"
    )


def test_tokens_that_differ_per_field():
    config = make_config(
        ndim_spatial=3, specialization="filter3x3", pipeline="compv4", double_smem_buffer=True
    )
    assert config.instance_string.startswith(
        "GroupedConvolutionForwardKernel<3,Filter3x3,NDHWGC,GKZYXC,EmptyTuple,NDHWGK,"
    )
    assert ",COMPUTE_V4,Intrawave,1,1,fp32," in config.instance_string


def _native_lines() -> list[str]:
    lines = []
    for path in sorted(LEGACY.rglob("*.conf")):
        for line in path.read_text().splitlines():
            if line.startswith("GroupedConvolution") and "Kernel<" in line:
                lines.append(line.strip())
    return lines


NATIVE = _native_lines()


@pytest.mark.skipif(not NATIVE, reason=f"no legacy .conf files under {LEGACY}")
@pytest.mark.parametrize("line", NATIVE)
def test_native_legacy_lines(line):
    parsed = parse_instance_string(line)
    assert isinstance(parsed, ParsedImplicitGemmString)
    if parsed.layout is not None and parsed.layout.token.startswith("NDHWGC") and parsed.ndim_spatial == 2:
        # Upstream lines with NDim 2 and 3D layouts: reported, never silently turned into a config.
        with pytest.raises(InstanceStringError, match="do not match NDim 2"):
            parsed.to_config()
        return
    assert parsed.to_config().instance_string == line


def test_parsed_fields_by_name():
    parsed = parse_instance_string(STREAMK)
    assert parsed.direction is Direction.BWD_WEIGHT
    assert (parsed.tile_m, parsed.tile_n, parsed.tile_k) == (64, 64, 64)
    assert parsed.pipeline is Pipeline.BASIC_ASYNC_V1
    assert parsed.a_type is DataType.FP16
    assert parsed.streamk_enabled and parsed.streamk_reduction is StreamKReduction.TREE
    assert parse_instance_string(BWD_DATA).explicit_gemm is None
    depthwise = parse_instance_string(DEPTHWISE)
    assert isinstance(depthwise, ParsedDepthwiseString)
    assert depthwise.to_config() == make_depthwise()


@pytest.mark.parametrize(
    ("direction", "kernel"),
    [
        ("bwd_data", "GroupedConvolutionBackwardDataKernel"),
        ("bwd_weight", "GroupedConvolutionBackwardWeightKernel"),
    ],
)
def test_depthwise_backward_strings_round_trip(direction, kernel):
    """The backward depthwise strings keep the forward's 20 fields under the direction's kernel token, and
    parse back to their own direction (the padding, which no depthwise string carries, given)."""
    config = make_depthwise(direction=direction, filter=7, pad_h=2, pad_w=3, stride_h=2, stride_w=2)
    assert config.instance_string == DEPTHWISE.replace("GroupedConvolutionForwardKernel", kernel).replace(
        ",3,3,1,1,", ",7,7,2,2,"
    )
    parsed = parse_instance_string(config.instance_string)
    assert isinstance(parsed, ParsedDepthwiseString) and parsed.direction.value == direction
    assert parsed.to_config(pad_h=2, pad_w=3) == config
    assert parsed.to_config() == config.replace(pad_h=3, pad_w=3)  # (filter - 1) / 2 by default


@pytest.mark.parametrize(
    ("direction", "kernel"),
    [
        ("fwd", "GroupedConvolutionForwardKernel"),
        ("bwd_data", "GroupedConvolutionBackwardDataKernel"),
        ("bwd_weight", "GroupedConvolutionBackwardWeightKernel"),
    ],
)
def test_depthwise_3d_strings(direction, kernel):
    """3D depthwise: the first field (NDim) is 3, the other 19 are the 2D string's; the string parses back to
    the 3D configuration, and a NDim no depthwise instance has is refused by name."""
    config = make_depthwise(direction=direction, ndim_spatial=3)
    flat = make_depthwise(direction=direction)
    assert flat.instance_string == DEPTHWISE.replace("GroupedConvolutionForwardKernel", kernel)
    fields = "3,Default,Depthwise,2,2,2,64,8,8,3,3,1,1,8,2,2,fp16,fp16,fp32,fp16"
    assert config.instance_string == f"{kernel}<{fields}>"
    assert config.instance_string.split(",", 1)[1] == flat.instance_string.split(",", 1)[1]
    parsed = parse_instance_string(config.instance_string)
    assert isinstance(parsed, ParsedDepthwiseString) and parsed.ndim_spatial == 3
    assert parsed.to_config() == config
    with pytest.raises(InstanceStringError, match=r"NDim 4 \(accepted: 2, 3\)"):
        parse_instance_string(config.instance_string.replace("<3,", "<4,")).to_config()


def test_trailing_streamk_flag_form():
    parsed = parse_instance_string(BWD_WEIGHT[:-1] + ",0>")
    assert parsed.trailing_streamk_flag and not parsed.streamk_enabled
    assert parsed.to_config().instance_string == BWD_WEIGHT
    with pytest.raises(InstanceStringError, match="IsStreamK 0"):
        parse_instance_string(BWD_WEIGHT[:-1] + ",1>")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nonsense", "not an instance string"),
        (FWD.replace("Forward", "Sideways"), "unknown kernel"),
        (FWD.replace(",PassThrough>", ">"), "30 fields; accepted: 31"),
        (FWD.replace("COMPUTE_V3", "COMPUTE_V9"), r"field 23 \(pipeline\): bad value 'COMPUTE_V9'"),
        (FWD.replace("Intrawave", "Sometimes"), "scheduler"),
        (FWD.replace(",0,0,128", ",0,2,128"), "explicit_gemm"),
        (FWD.replace(",fp32,fp16,", ",fp64,fp16,"), "acc_type"),
        (FWD.replace(",fp16,fp16,", ",fp8,fp16,"), "a_type"),
        (FWD.replace(",128,128,", ",-128,128,"), "tile_m"),
        (DEPTHWISE.replace(",64,", ",128,"), None),
    ],
)
def test_bad_strings(text, message):
    if message is None:  # parses, but is not one of our configurations
        with pytest.raises(InstanceStringError, match="BlockSize 128"):
            parse_instance_string(text).to_config()
        return
    with pytest.raises(InstanceStringError, match=message):
        parse_instance_string(text)
