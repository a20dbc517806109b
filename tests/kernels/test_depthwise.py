"""Depthwise instances of the three directions: compiled instance strings, exact is_supported (CPU), the
bwd_weight workspace, and the GPU check (reference comparison, poisoned outputs, bit-identical bwd_weight)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from generators.config import DepthwiseConfig
from tests.kernels.arch_include import arch_include
from tests.kernels.conftest import REPO_ROOT, compile_and_run
from tests.kernels.gpu_toolchain import find_nvcc


@pytest.fixture(scope="module")
def support_lines(nvcc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    source = REPO_ROOT / "tests" / "kernels" / "depthwise_support.cu"
    output = compile_and_run(
        nvcc,
        source,
        tmp_path_factory.mktemp("dw"),
        ["--expt-relaxed-constexpr", "-gencode=arch=compute_90a,code=sm_90a"],
    )
    return dict(line.split(" ", 1) for line in output.splitlines())


def _config(
    dtype: str,
    tile: int,
    filt: int,
    stride: int,
    pad: int,
    nb: int,
    sub: tuple[int, int],
    vec: int,
    direction: str = "fwd",
) -> DepthwiseConfig:
    return DepthwiseConfig(
        direction=direction,
        dtype=dtype,
        tile_h=tile,
        tile_w=tile,
        filter=filt,
        stride_h=stride,
        stride_w=stride,
        pad_h=pad,
        pad_w=pad,
        nbatch=nb,
        sub_h=sub[0],
        sub_w=sub[1],
        in_vec=vec,
        out_vec=vec,
    )


def test_compiled_instance_strings_match_the_generator(support_lines: dict[str, str]) -> None:
    assert support_lines["string_a"] == _config("fp16", 8, 3, 1, 1, 8, (2, 2), 2).instance_string
    assert support_lines["string_b"] == _config("bf16", 32, 5, 2, 2, 1, (2, 8), 8).instance_string
    assert support_lines["string_e"] == _config("fp16", 16, 3, 2, 1, 8, (2, 2), 8, "bwd_data").instance_string
    assert (
        support_lines["string_f"] == _config("bf16", 16, 5, 1, 2, 4, (2, 4), 4, "bwd_weight").instance_string
    )
    assert support_lines["string_e"].startswith(
        "GroupedConvolutionBackwardDataKernel<2,Default,Depthwise,8,8,8,"
    )
    assert support_lines["string_f"].startswith(
        "GroupedConvolutionBackwardWeightKernel<2,Default,Depthwise,4,4,4,"
    )


def test_backward_signatures(support_lines: dict[str, str]) -> None:
    """The backward instances sign as their direction and the depthwise family (enumerator positions of
    runtime/types.hpp): the registry routes bwd_data/bwd_weight depthwise problems to them, and selection
    prefers the depthwise family."""
    text = (REPO_ROOT / "instances" / "include" / "tiledispatch" / "runtime" / "types.hpp").read_text()

    def position(enum: str, member: str) -> int:
        body = text.split(f"enum class {enum} {{")[1].split("}")[0]
        return [m.strip().split(" ")[0] for m in body.split(",")].index(member)

    depthwise = position("KernelFamily", "kDepthwise")
    assert support_lines["signature_e"] == f"{position('ConvDirection', 'kBwdData')} {depthwise}"
    assert support_lines["signature_f"] == f"{position('ConvDirection', 'kBwdWeight')} {depthwise}"


def test_bwd_weight_workspace(support_lines: dict[str, str]) -> None:
    """One fp32 partial per (chunk, tap, padded channel): 2 images x 2x2 tiles of 16x16 over the 20x20 dY
    are 8 (image, tile) items; 64 channels are 4 slices of 16, so up to 4096 / 4 chunks: 8 x 25 taps x 64."""
    assert int(support_lines["f_workspace"]) == 8 * 25 * 64 * 4


def test_3d_instance_string_and_signature(support_lines: dict[str, str]) -> None:
    """NDim, the instance string's first field, and the signature's ndim come from the traits' kNDim."""
    assert support_lines["string_g"].startswith(
        "GroupedConvolutionForwardKernel<3,Default,Depthwise,8,8,8,64,8,16,3,3,"
    )
    assert support_lines["signature_g"] == "3"


def test_3d_bwd_weight_workspace(support_lines: dict[str, str]) -> None:
    """A 3D chunk holds every depth tap's partials: 2 images x 4 dY slices x 2x2 tiles of 16x16 over
    20x20 are 32 items; 64 channels are 4 slices of 16, and 3 depth taps per (slice, chunk): up to
    4096 / 12 chunks, so 32 chunks x 27 taps x 64 channels."""
    assert int(support_lines["h_workspace"]) == 32 * 27 * 64 * 4


def test_dilated_bwd_weight_workspace(support_lines: dict[str, str]) -> None:
    """Dilation 2x2 splits the 20x20 dY into four 10x10 residues, one 16x16 tile each: every residue launch
    has 2 (image, tile) items, so 4 x 2 chunks of 25 taps x 64 channels."""
    assert int(support_lines["f_workspace_dilated"]) == 4 * 2 * 25 * 64 * 4


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("a_match", "yes"),
        ("a_right_pad_zero", "yes"),
        ("a_odd_c", "no: C=3 is not a multiple of in_vec 2 and out_vec 2 (vectors run along the channels)"),
        ("a_filter", "no: filter 5x5, instance computes 3x3"),
        ("a_stride", "no: stride 2x2, instance computes 1x1"),
        ("a_pad", "no: left pad 0x0, instance computes 1x1"),
        ("a_grouped", "no: depthwise needs C/G == 1 and K/G == 1, got C/G=2 K/G=2"),
        ("a_dilation", "yes"),
        ("a_dilation_w", "yes"),
        ("a_dilation_stride", "yes"),
        (
            "a_dilation_stride3",
            "no: dilation 3x3 with stride 2x2: along each axis the dilation must be 1 or a multiple of "
            "the stride",
        ),
        ("a_dilation_pad", "no: left pad 1x1, instance computes 2x2 (its pad 1x1 times dilation 2x2)"),
        ("a_3d", "no: 3D problem, instance is 2D"),
        ("b_match", "yes"),
        (
            "b_c_not_multiple",
            "no: C=36 is not a multiple of in_vec 8 and out_vec 8 (vectors run along the channels)",
        ),
        ("c_smem", "no: needs 430352 bytes of shared memory, sm_90a allows 232448"),
        ("d_slice", "no: in_vec 8 does not divide the block's nbatch x out_vec = 4 channels"),
        ("b_misaligned", "no: input pointer not aligned to in_vec x element size"),
        ("b_k_batch", "no: k_batch 2: only 1 is supported"),
        ("e_match", "yes"),
        ("e_stride", "no: stride 1x1, instance computes 2x2"),
        ("e_pad", "no: left pad 2x2, instance computes 1x1"),
        (
            "e_dilation_stride",
            "no: stride 2x2 with dilation 2x2 runs at stride 1x1 (residue sub-problems), instance "
            "computes 2x2",
        ),
        ("e_misaligned", "no: output (dY) pointer not aligned to in_vec x element size"),
        ("f_match", "yes"),
        ("f_filter", "no: filter 7x7, instance computes 5x5"),
        ("f_odd_c", "no: C=6 is not a multiple of in_vec 4 and out_vec 4 (vectors run along the channels)"),
        ("f_no_workspace", "no: workspace of 0 bytes, needs 51200"),
        ("g_match", "yes"),
        ("g_depth_runtime", "yes"),
        ("g_2d", "no: 2D problem, instance is 3D"),
        ("g_filter_z5", "no: filter 5x3x3, instance computes 3x3x3"),
        ("g_images", f"no: an extent exceeds 2^31-1: {2**32}"),
    ],
)
def test_is_supported_is_exact(support_lines: dict[str, str], label: str, expected: str) -> None:
    assert support_lines[label] == expected


@pytest.mark.gpu
def test_depthwise_instances_match_the_reference(tmp_path: Path) -> None:
    nvcc = find_nvcc()  # the GPU machine has the system CUDA, not the pinned wheel
    gpu_check = REPO_ROOT / "bench" / "gpu_check"
    binary = tmp_path / "hand_depthwise_check"
    sources = [
        gpu_check / "hand_depthwise.cu",
        gpu_check / "hand_depthwise_bwd.cu",
        gpu_check / "hand_depthwise_check.cu",
        REPO_ROOT / "instances" / "src" / "registry.cpp",
    ]
    lib = nvcc.parent.parent / "lib"
    cmd = [
        str(nvcc),
        "-std=c++17",
        "-O3",
        "--expt-relaxed-constexpr",
        "-gencode=arch=compute_90a,code=sm_90a",
        f"-I{REPO_ROOT / 'instances' / 'include'}",
        f"-I{arch_include(tmp_path)}",
        f"-L{lib}",
        *map(str, sources),
        "-o",
        str(binary),
    ]
    built = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run([str(binary), "--no-timing"], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stdout[-4000:]
    summary = ran.stdout.splitlines()[-1]
    # every TD_HAND_DW* line registers one instance: a lost registration fails here
    declared = sum(
        len(re.findall(r"^TD_HAND_DW\w*\(", source.read_text(), re.MULTILINE)) for source in sources[:2]
    )
    assert summary.startswith(f"depthwise: instances {declared},") and summary.endswith("failed 0"), summary
    checked = int(summary.split("checked ")[1].split(",")[0])
    # 812 on the H100 (session 24), 270 before dilated problems ran: refusing dilation again fails here.
    assert checked >= 750
    # 32-byte vectors (two 16-byte accesses) in every direction: fp32 vec 8, 16-bit vec 16
    for instance in (
        "dw_fp32_16x16_f3s1_nb2_sub2x4_v8",
        "dw_fp16_16x16_f3s2_nb2_sub2x4_v16",
        "dwd_fp32_16x16_f3s1_nb2_sub2x4_v8",
        "dwd_bf16_16x16_f3s2_nb2_sub2x2_v16",
        "dww_fp32_16x16_f3s1_nb2_sub2x4_v8",
        "dww_fp16_16x16_f3s2_nb2_sub2x2_v16",
    ):
        passed = re.search(rf"^PASSED {instance} on (\d+) problems$", ran.stdout, re.MULTILINE)
        assert passed is not None and int(passed[1]) >= 2, instance
