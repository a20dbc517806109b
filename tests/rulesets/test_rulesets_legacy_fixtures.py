"""Legacy formats not in ../shared (bf16, fp32, 3D, fwd V1/Large_Tensor, native 32-field), built by hand
from the ck_conventions §4 argument positions, not from the parser's output."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.enums import DataType, Direction, Pipeline, Scheduler, Specialization
from rulesets import LegacyFormatError, RulesetRequest, WarpTileKConvention, enumerate_ruleset
from rulesets.legacy import read_legacy_file


def device_op(name: str, count: int, **at: object) -> str:
    """A line of ``count`` filler arguments with the given 0-based positions set (``p14="Default"``)."""
    args = ["Seq(1,1,1)"] * count
    for key, value in at.items():
        args[int(key[1:])] = str(value)
    return f"{name}<{','.join(args)}>"


FWD_V1_3D_BF16 = device_op(
    "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle", 49,
    p14="Filter1x1Pad0", p17=256, p18=128, p19=128, p20=32, p21=8, p23=32, p24=32, p25=2, p26=2,
    p31=8, p38=8, p44=4, p48=2,
)  # fmt: skip
FWD_LARGE_3D_BF16 = device_op(
    "DeviceGroupedConvFwdMultipleD_Xdl_CShuffle_Large_Tensor", 48,
    p14="OddC", p17=64, p18=64, p19=64, p20=32, p21=8, p23=32, p24=32, p25=2, p26=2, p31=1, p38=8, p44=1,
)  # fmt: skip
FWD_V3_DIRECT_LOAD = device_op(
    "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3", 50,
    p14="Default", p16=256, p17=128, p18=64, p19=64, p20=8, p22=16, p23=16, p24=4, p25=2,
    p30=8, p37=8, p43=8, p44="Interwave", p45="v1", p48="true", p49=1,
)  # fmt: skip
BWD_DATA_FP32 = device_op(
    "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle", 51,
    p13="Default", p17=256, p18=128, p19=128, p20=32, p21=4, p22=4, p23=32, p24=32, p25=2, p26=2,
    p31=4, p38=4, p44=4, p46="Default",
)  # fmt: skip
BWD_WEIGHT_TWO_STAGE_3D = device_op(
    "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle", 46,
    p11="Default", p12=256, p13=64, p14=64, p15=32, p16=8, p17=32, p18=32, p19=1, p20=1,
    p25=4, p32=4, p38=4, p39="Intrawave", p40="v3", p41=1,
)  # fmt: skip
NATIVE_BWD_WEIGHT_TRAILING_0 = (
    "GroupedConvolutionBackwardWeightKernel<3,Default,NDHWGC,GKZYXC,EmptyTuple,NDHWGK,4,8,8,1,0,0,"
    "128,128,32,2,2,1,32,32,16,fp16,fp16,COMPUTE_V3,Intrawave,0,1,fp32,fp16,EmptyTuple,PassThrough,0>"
)


def write(root: Path, relative: str, *lines: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# hand-built fixture\n" + "\n".join(lines) + "\n")
    return path


def only_config(root: Path, relative: str, *lines: str):
    path = write(root, relative, *lines)
    result = read_legacy_file(root, path, WarpTileKConvention.CURRENT)
    assert result.count("skipped") == 0
    return result.configs


def test_fwd_v1_large_tensor_v3_3d_bf16(tmp_path: Path) -> None:
    v1, large, v3 = only_config(
        tmp_path, "forward/tests/ndhwgc_bf16.conf", FWD_V1_3D_BF16, FWD_LARGE_3D_BF16, FWD_V3_DIRECT_LOAD
    )
    assert (v1.dtype, v1.ndim_spatial, v1.direction) == (DataType.BF16, 3, Direction.FWD)
    # waves 128/(32*2) x 128/(32*2), wave_k 256/(64*4); warp k min(max(8, 16), 32)
    assert (v1.wave_m, v1.wave_n, v1.wave_k, v1.warp_tile_k) == (2, 2, 1, 16)
    assert (v1.vector_size_a, v1.vector_size_b, v1.vector_size_c, v1.num_groups_to_merge) == (8, 8, 4, 2)
    assert (v1.pipeline, v1.scheduler, v1.specialization) == (
        Pipeline.BASIC_V1,
        Scheduler.INTRAWAVE,
        Specialization.FILTER1X1_PAD0,
    )
    assert (
        large.split_image
        and large.num_groups_to_merge == 1
        and large.specialization is Specialization.DEFAULT
    )
    assert (large.wave_m, large.wave_n, large.wave_k) == (1, 1, 1)
    # direct-load V1 -> basic_async_v1; 16x16 half k_mfma 32 capped by tile_k 64 -> 32
    assert (v3.pipeline, v3.scheduler, v3.double_smem_buffer) == (
        Pipeline.BASIC_ASYNC_V1,
        Scheduler.INTERWAVE,
        False,
    )
    assert (v3.wave_m, v3.wave_n, v3.wave_k, v3.warp_tile_k) == (2, 2, 1, 32)


def test_bwd_data_fp32_warp_tile_k_conventions(tmp_path: Path) -> None:
    (config,) = only_config(tmp_path, "backward_data/profiler/nhwgc_fp32.conf", BWD_DATA_FP32)
    # fp32 32x32: k_mfma 2 in both conventions, K1 4 wins
    assert (config.dtype, config.warp_tile_k, config.wave_k) == (DataType.FP32, 4, 1)
    assert config.pipeline is Pipeline.BASIC_V1


def test_two_stage_and_native_trailing_zero_3d(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "backward_weight/tests/ndhwgc_fp16.conf",
        BWD_WEIGHT_TWO_STAGE_3D,
        NATIVE_BWD_WEIGHT_TRAILING_0,
    )
    result = read_legacy_file(tmp_path, path, WarpTileKConvention.CURRENT)
    two_stage, native = result.configs
    assert two_stage.two_stage and two_stage.pipeline is Pipeline.COMPV3 and two_stage.tile_k == 32
    assert (two_stage.wave_m, two_stage.wave_n, two_stage.wave_k) == (2, 2, 1)
    assert native.ndim_spatial == 3 and not native.streamk_enabled and not native.two_stage
    native_outcome = result.outcomes[1]
    assert native_outcome.canonical_text == NATIVE_BWD_WEIGHT_TRAILING_0.removesuffix(",0>") + ">"
    assert native.instance_string == native_outcome.canonical_text
    assert any("trailing ',0'" in note for note in native_outcome.notes)


def test_explicit_gemm_odd_vec_c_is_two_stage(tmp_path: Path) -> None:
    line = (
        "DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceBatchedGemmXdlUniversal<Default, CRR> BlkSize: 64, "
        "BlkTile: 16x16x64, WaveTile: 16x16, K1: 8x4, WaveMap: 1x1, VmemReadVec: 4x4xSeq(1), "
        "BlkGemmPipelineScheduler: Intrawave, BlkGemmPipelineVersion: v4, BlkGemmPipelinePrefetchStages: 1>"
    )
    (bf16,) = only_config(tmp_path, "backward_weight/tests/nhwgc_bf16.conf", line)
    (fp32,) = only_config(tmp_path, "backward_weight/profiler/nhwgc_fp32.conf", line)
    assert bf16.explicit_gemm and bf16.two_stage and not fp32.two_stage
    assert bf16.specialization is Specialization.FILTER1X1_STRIDE1_PAD0
    assert (bf16.pipeline, bf16.double_smem_buffer, bf16.warp_tile_k) == (Pipeline.COMPV4, True, 32)
    assert fp32.warp_tile_k == 4


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (FWD_V1_3D_BF16.rsplit(",", 1)[0] + ">", "has 48 arguments; expected 49"),
        ("DeviceGroupedConvFwdFoo<1,2>", "unknown device op 'DeviceGroupedConvFwdFoo'"),
        (FWD_V1_3D_BF16.replace("Filter1x1Pad0", "Filter9x9"), "specialization (argument 14) is 'Filter9x9'"),
        ("not a device op", "expected a device op"),
        (BWD_DATA_FP32, "bwd_data op in a fwd file"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, expected: str) -> None:
    path = write(tmp_path, "forward/tests/nhwgc_fp16.conf", FWD_V1_3D_BF16, line)
    with pytest.raises(LegacyFormatError) as caught:
        read_legacy_file(tmp_path, path, WarpTileKConvention.CURRENT)
    message = str(caught.value)
    assert message.startswith(f"{path}:3: ") and expected in message
    assert "\n" not in message


def test_unknown_file_name_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "forward/tests/nhwgc_fp8.conf", FWD_V1_3D_BF16)
    request = RulesetRequest.build(
        ruleset="tests", direction="fwd", dtype="fp16", ndim=2, legacy_dir=tmp_path
    )
    with pytest.raises(LegacyFormatError, match=r"nhwgc_fp8\.conf"):
        enumerate_ruleset(request)
