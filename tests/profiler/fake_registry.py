"""The test-double registry of fixtures/fake_instances.cpp, written out independently of the C++ file."""

from __future__ import annotations

# (direction, kernel name, instance string)
FAKE_INSTANCES: list[tuple[str, str, str]] = [
    (
        "fwd",
        "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16",
        "GroupedConvolutionForwardKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,4,8,8,1,0,0,128,128,32,2,2,1,32,32,16,"
        "fp16,fp16,COMPUTE_V3,Intrawave,0,1,fp32,fp16,EmptyTuple,PassThrough>",
    ),
    (
        "fwd",
        "grouped_conv_fwd_fp16_nhwgc_2d_mem_cshuffle_interwave_64x64x32_2x2x1_16x16x32",
        "GroupedConvolutionForwardKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,4,8,8,1,0,0,64,64,32,2,2,1,16,16,32,"
        "fp16,fp16,MEMORY,Interwave,0,1,fp32,fp16,EmptyTuple,PassThrough>",
    ),
    (
        "fwd",
        "grouped_conv_fwd_bf16_ndhwgc_3d_compv4_cshuffle_intrawave_128x64x32_2x2x1_32x32x16_dsb",
        "GroupedConvolutionForwardKernel<3,Default,NDHWGC,GKZYXC,EmptyTuple,NDHWGK,4,8,8,1,0,0,128,64,32,2,2,1,32,32,16,"
        "bf16,bf16,COMPUTE_V4,Intrawave,1,1,fp32,bf16,EmptyTuple,PassThrough>",
    ),
    (
        "bwd_data",
        "grouped_conv_bwd_data_fp16_nhwgc_2d_compv3_cshuffle_intrawave_64x64x32_2x2x1_32x32x16",
        "GroupedConvolutionBackwardDataKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,4,8,8,1,0,64,64,32,2,2,1,32,32,16,"
        "fp16,fp16,COMPUTE_V3,Intrawave,0,1,fp32,fp16,EmptyTuple,PassThrough>",
    ),
    (
        "bwd_weight",
        "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_4x1x1_16x16x16_vec4_4_4",
        "GroupedConvolutionBackwardWeightKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,4,4,4,1,0,0,128,128,32,4,1,1,16,"
        "16,16,bf16,bf16,COMPUTE_V3,Intrawave,0,1,fp32,bf16,EmptyTuple,PassThrough>",
    ),
    (
        "bwd_weight",
        "grouped_conv_bwd_weight_fp32_ndhwgc_3d_mem_cshuffle_intrawave_64x64x32_2x2x1_16x16x4_vec4_4_4",
        "GroupedConvolutionBackwardWeightKernel<3,Default,NDHWGC,GKZYXC,EmptyTuple,NDHWGK,4,4,4,1,0,0,64,64,32,2,2,1,16,"
        "16,4,fp32,fp32,MEMORY,Intrawave,0,1,fp32,fp32,EmptyTuple,PassThrough>",
    ),
]


def expected_lines(direction: str | None = None) -> list[str]:
    return sorted(f"{name}\t{s}" for d, name, s in FAKE_INSTANCES if direction in (None, d))
