"""The C API (tiledispatch/c_api.h) over the test-double instances: listing, errors as codes with messages,
is_supported with reasons, selection, workspace, split-K factors, run argument checks and pass-through, JSON
export, and no CUDA call before the first run. CPU only."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from runtime_build import REPO_ROOT

from tiledispatch.native import CArgs, CKernelInfo, NativeLibrary, to_c_problem
from tiledispatch.problem import Problem

FAKE_NAMES = sorted(
    [
        "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16",
        "grouped_conv_fwd_fp16_nhwgc_2d_mem_cshuffle_interwave_64x64x32_2x2x1_16x16x32",
        "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_64x16x64_1x1x1_16x16x32_vec1_1_1",
        "grouped_conv_fwd_fp32_ndhwgc_3d_compv3_cshuffle_intrawave_128x64x32_2x2x1_32x32x8_vec4_4_4",
        "grouped_conv_bwd_data_fp16_nhwgc_2d_compv3_cshuffle_intrawave_64x64x32_2x2x1_32x32x16",
        "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16_2stage",
        "grouped_conv_bwd_weight_fp32_nhwgc_2d_mem_cshuffle_intrawave_64x64x32_2x2x1_16x16x4_vec4_4_4",
    ]
)
FWD_128 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16"
TWO_STAGE = "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16_2stage"
FP32_BWD_WEIGHT = (
    "grouped_conv_bwd_weight_fp32_nhwgc_2d_mem_cshuffle_intrawave_64x64x32_2x2x1_16x16x4_vec4_4_4"
)
# Statuses of c_api.h.
TD_OK, INVALID_ARGUMENT, INVALID_PROBLEM, NOT_INITIALIZED, UNKNOWN_KERNEL = 0, 1, 2, 3, 4
NOT_SUPPORTED, NO_KERNEL, BAD_ARGUMENTS, CUDA = 5, 6, 7, 8
K_BATCH_AUTO = -1

BIG = Problem(N=64, C=256, K=256, Hi=56, Wi=56, Y=3, X=3, pad_h=1, pad_w=1)
SMALL = Problem(N=1, C=32, K=32, Hi=4, Wi=4, Y=1, X=1)


@pytest.fixture
def lib(fake_library: Path) -> ctypes.CDLL:
    """The raw library with the prototypes NativeLibrary sets (it also calls td_conv_init)."""
    return NativeLibrary(fake_library)._lib


def last_error(lib: ctypes.CDLL) -> str:
    return lib.td_conv_last_error().decode()


def test_kernels_are_listed_by_name_with_instance_strings(lib: ctypes.CDLL) -> None:
    count = ctypes.c_size_t()
    assert lib.td_conv_get_kernel_count(ctypes.byref(count)) == TD_OK
    assert count.value == len(FAKE_NAMES)
    infos = []
    for i in range(count.value):
        info = CKernelInfo()
        assert lib.td_conv_kernel_info(i, ctypes.byref(info)) == TD_OK
        infos.append(info)
    assert [info.name.decode() for info in infos] == FAKE_NAMES
    fwd3d = infos[FAKE_NAMES.index(FAKE_NAMES[-1])]
    assert fwd3d.instance_string.decode().startswith("GroupedConvolutionForwardKernel<3,Default,NDHWGC,")
    assert (fwd3d.direction, fwd3d.dtype, fwd3d.ndim_spatial, fwd3d.family) == (0, 2, 3, b"implicit_gemm")
    index = ctypes.c_size_t()
    assert lib.td_conv_find_kernel(FWD_128.encode(), ctypes.byref(index)) == TD_OK
    assert index.value == FAKE_NAMES.index(FWD_128)


def test_ck_names_are_exported_symbols(lib: ctypes.CDLL) -> None:
    for suffix in (
        "init",
        "is_supported",
        "select_kernel",
        "run",
        "get_kernel_count",
        "export_registry_json",
    ):
        assert hasattr(lib, f"conv_dispatcher_{suffix}"), suffix
    count = ctypes.c_size_t()
    assert lib.conv_dispatcher_get_kernel_count(ctypes.byref(count)) == TD_OK
    assert count.value == len(FAKE_NAMES)


def test_errors_are_codes_with_messages(lib: ctypes.CDLL) -> None:
    info = CKernelInfo()
    assert lib.td_conv_kernel_info(99, ctypes.byref(info)) == INVALID_ARGUMENT
    assert last_error(lib) == "index 99 out of range (7 kernels)"
    assert lib.td_conv_get_kernel_count(None) == INVALID_ARGUMENT
    assert last_error(lib) == "count is NULL"
    index = ctypes.c_size_t()
    assert lib.td_conv_find_kernel(b"grouped_conv_nonesuch", ctypes.byref(index)) == UNKNOWN_KERNEL
    assert "grouped_conv_nonesuch" in last_error(lib)
    assert lib.td_conv_status_name(CUDA) == b"TD_ERROR_CUDA"
    # A success clears the message.
    assert lib.td_conv_get_kernel_count(ctypes.byref(ctypes.c_size_t())) == TD_OK
    assert last_error(lib) == ""


def test_calls_after_cleanup_fail_cleanly_and_init_restores(lib: ctypes.CDLL) -> None:
    assert lib.td_conv_cleanup() == TD_OK
    try:
        assert lib.td_conv_get_kernel_count(ctypes.byref(ctypes.c_size_t())) == NOT_INITIALIZED
        assert "td_conv_init" in last_error(lib)
    finally:
        assert lib.td_conv_init() == TD_OK
    assert lib.td_conv_init() == TD_OK  # idempotent


def test_invalid_problems_name_the_bad_value(lib: ctypes.CDLL) -> None:
    problem = to_c_problem(SMALL)
    problem.stride[1] = 0
    assert lib.td_conv_problem_validate(ctypes.byref(problem)) == INVALID_PROBLEM
    assert last_error(lib) == "problem: stride along H must be >= 1, got 0"
    problem = to_c_problem(SMALL)
    problem.direction = 7
    assert lib.td_conv_problem_validate(ctypes.byref(problem)) == INVALID_ARGUMENT
    assert "problem.direction 7" in last_error(lib)
    assert lib.td_conv_problem_validate(None) == INVALID_ARGUMENT


def is_supported(lib: ctypes.CDLL, name: str, problem: Problem) -> tuple[int, str]:
    supported, reason = ctypes.c_int(-1), ctypes.c_char_p()
    c_problem = to_c_problem(problem)
    status = lib.td_conv_is_supported(
        name.encode(), ctypes.byref(c_problem), ctypes.byref(supported), ctypes.byref(reason)
    )
    assert status == TD_OK, last_error(lib)
    return supported.value, reason.value.decode()


def test_is_supported_gives_the_reason(lib: ctypes.CDLL) -> None:
    assert is_supported(lib, FWD_128, BIG) == (1, "")
    odd = Problem(N=2, C=6, K=16, G=2, Hi=8, Wi=8, Y=3, X=3)
    assert is_supported(lib, FWD_128, odd) == (0, "C/G=3 is not a multiple of 8")
    assert is_supported(lib, FWD_128, BIG.with_direction("bwd_data")) == (
        0,
        "kernel direction fwd, problem direction bwd_data",
    )
    assert is_supported(lib, FWD_128, BIG.replace(dtype="bf16"))[1] == (
        "kernel dtype fp16, problem dtype bf16"
    )
    three_d = BIG.replace(spatial_dims=3)
    assert is_supported(lib, FWD_128, three_d)[1] == "kernel is 2D, problem is 3D"


def select(lib: ctypes.CDLL, problem: Problem) -> tuple[int, str]:
    name = ctypes.c_char_p()
    c_problem = to_c_problem(problem)
    status = lib.td_conv_select_kernel(ctypes.byref(c_problem), ctypes.byref(name))
    return status, (name.value or b"").decode()


def test_selection_follows_the_documented_heuristic(lib: ctypes.CDLL) -> None:
    # Large dense layer: every fp16 tile fills exactly; 128x128 has the best reuse (docs/runtime.md).
    assert select(lib, BIG) == (TD_OK, FWD_128)
    # 32 output pixels x 32 channels: a 64x16 tile wastes least and keeps more SMs busy.
    assert select(lib, SMALL)[1].endswith("_64x16x64_1x1x1_16x16x32_vec1_1_1")
    # C/G = 4: only the vector-1 instance supports it.
    narrow = Problem(N=8, C=16, K=16, G=4, Hi=32, Wi=32, Y=3, X=3, pad_h=1, pad_w=1)
    assert select(lib, narrow)[1].endswith("_vec1_1_1")


def test_selection_without_candidates_says_so(lib: ctypes.CDLL) -> None:
    status, _ = select(lib, BIG.replace(dtype="bf16"))
    assert status == NO_KERNEL
    assert last_error(lib).startswith("no kernel supports fwd bf16 2D G=1 N=64 K=256 C=256")


def workspace(lib: ctypes.CDLL, name: str, problem: Problem, k_batch: int) -> int:
    size = ctypes.c_size_t(12345)
    c_problem = to_c_problem(problem)
    assert (
        lib.td_conv_workspace_size(name.encode(), ctypes.byref(c_problem), k_batch, ctypes.byref(size)) == 0
    )
    return size.value


def test_workspace_size_of_two_stage_is_the_fp32_weight(lib: ctypes.CDLL) -> None:
    problem = BIG.replace(direction="bwd_weight", dtype="bf16")
    assert workspace(lib, TWO_STAGE, problem, 1) == 256 * 256 * 9 * 4
    assert workspace(lib, FWD_128, BIG, 1) == 0


# The fp32 bwd_weight double (vector 4) on G = 4: four work units (the doubles' rule: one a group), each
# reducing N x output pixels = 64 x 56 x 56.
SPLIT_PROBLEM = BIG.replace(direction="bwd_weight", dtype="fp32", G=4)


def split_k(
    lib: ctypes.CDLL, name: str, problem: Problem, sms: int, capacity: int = 64
) -> tuple[int, int, list[int], int]:
    """(status, preferred, the factors written, the count reported); unwritten slots stay poisoned (-9)."""
    preferred, count = ctypes.c_int32(-7), ctypes.c_size_t(12345)
    factors = (ctypes.c_int32 * max(capacity, 1))(*[-9] * max(capacity, 1))
    c_problem = to_c_problem(problem)
    status = lib.td_conv_split_k(
        name.encode(),
        ctypes.byref(c_problem),
        sms,
        ctypes.byref(preferred),
        factors if capacity else None,
        capacity,
        ctypes.byref(count),
    )
    return status, preferred.value, list(factors)[:capacity], count.value


def test_split_k_offers_ascending_candidates_and_prefers_one_round(lib: ctypes.CDLL) -> None:
    for sms in (132, 114, 78):
        status, preferred, factors, count = split_k(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, sms)
        assert status == TD_OK, last_error(lib)
        written = factors[:count]
        assert written[0] == 1 and written == sorted(set(written)) and factors[count:] == [-9] * (64 - count)
        # Preferred: a candidate whose 4 x k units fit one round on the SMs, and no larger candidate does.
        assert preferred in written and preferred * 4 <= sms
        assert all(k * 4 > sms for k in written if k > preferred), (sms, preferred, written)
    # By hand: 132 SMs over 4 units is 33 splits (6,082 of the 200,704 reduced elements each).
    assert split_k(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, 132)[1] == 33
    assert split_k(lib, FWD_128, BIG, 132)[1:] == (1, [1] + [-9] * 63, 1)


def test_split_k_fills_at_most_the_capacity_and_refuses_bad_arguments(lib: ctypes.CDLL) -> None:
    _, preferred, full, count = split_k(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, 132)
    assert count > 2
    assert split_k(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, 132, capacity=2) == (
        TD_OK,
        preferred,
        full[:2],
        count,
    )
    assert split_k(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, 132, capacity=0)[::3] == (TD_OK, count)
    c_problem = to_c_problem(SPLIT_PROBLEM)
    preferred_out, count_out = ctypes.c_int32(), ctypes.c_size_t()
    status = lib.td_conv_split_k(
        FP32_BWD_WEIGHT.encode(),
        ctypes.byref(c_problem),
        132,
        ctypes.byref(preferred_out),
        None,
        3,
        ctypes.byref(count_out),
    )
    assert (status, last_error(lib)) == (INVALID_ARGUMENT, "factors is NULL with capacity 3")
    assert split_k(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, -1)[0] == INVALID_ARGUMENT
    assert last_error(lib) == "sms -1 is negative (0: the current device's count)"
    odd = SPLIT_PROBLEM.replace(C=24, K=24, G=4)
    assert split_k(lib, FP32_BWD_WEIGHT, odd, 132)[0] == NOT_SUPPORTED
    assert last_error(lib) == f"{FP32_BWD_WEIGHT} does not support the problem: C/G=6 is not a multiple of 4"


def plan(lib: ctypes.CDLL, name: str | None, problem: Problem, sms: int) -> tuple[int, str | None, int]:
    """(status, chosen kernel, split-K) of td_conv_plan."""
    chosen, k_batch = ctypes.c_char_p(), ctypes.c_int32(-7)
    c_problem = to_c_problem(problem)
    status = lib.td_conv_plan(
        name.encode() if name else None,
        ctypes.byref(c_problem),
        sms,
        ctypes.byref(chosen),
        ctypes.byref(k_batch),
    )
    return status, chosen.value.decode() if chosen.value else None, k_batch.value


def test_plan_ranks_the_split_k_candidates_with_the_compiled_in_model(lib: ctypes.CDLL) -> None:
    """The doubles' bwd_weight model (runtime_build.split_k_model) scores factors 4 to 8 highest; of the
    fp32 double's candidates (1, 2, 4, 8, 16, 32, 33, 64 on 132 SMs) 4 comes first, where the instance's own
    rule prefers 33."""
    assert split_k(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, 132)[2][:8] == [1, 2, 4, 8, 16, 32, 33, 64]
    assert plan(lib, None, SPLIT_PROBLEM, 132) == (TD_OK, FP32_BWD_WEIGHT, 4)
    assert plan(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, 132) == (TD_OK, FP32_BWD_WEIGHT, 4)
    # 8 SMs over 4 units: the candidates stop at 2 (one round), and the model's +1 above 1 picks it.
    assert split_k(lib, FP32_BWD_WEIGHT, SPLIT_PROBLEM, 8)[2][:3] == [1, 2, 4]
    # fwd has no model compiled in: the tile heuristic chooses, at split-K 1.
    assert plan(lib, None, BIG, 132) == (TD_OK, FWD_128, 1)


def test_plan_refuses_what_cannot_run(lib: ctypes.CDLL) -> None:
    odd = SPLIT_PROBLEM.replace(C=24, K=24, G=4)
    assert plan(lib, FP32_BWD_WEIGHT, odd, 132)[0] == NOT_SUPPORTED
    assert plan(lib, None, odd, 132)[0] == NO_KERNEL
    assert last_error(lib).startswith("no kernel supports bwd_weight fp32 2D G=4")
    assert plan(lib, None, SPLIT_PROBLEM, -1)[0] == INVALID_ARGUMENT
    assert last_error(lib) == "sms -1 is negative (0: the current device's count)"


def test_k_batch_auto_takes_the_plans_factor_on_the_running_device(lib: ctypes.CDLL, last_run) -> None:
    sms = ctypes.c_int32()
    has_gpu = lib.td_conv_device_sm_count(-1, ctypes.byref(sms)) == TD_OK
    before = last_run()["runs"]
    args = CArgs(0x1000, 0x2000, 0x3000, None, 0, K_BATCH_AUTO, -1, None)
    for name in (FP32_BWD_WEIGHT, None):
        status = run(lib, name, SPLIT_PROBLEM, args)
        if has_gpu:
            assert status == TD_OK, last_error(lib)
            seen = last_run()
            assert (seen["name"], seen["k_batch"]) == plan(lib, name, SPLIT_PROBLEM, sms.value)[1:]
        else:  # the factor needs the device's SM count: a CUDA error, and nothing launched
            assert status == CUDA
            assert "cudaGetDevice" in last_error(lib) or "multiprocessor count" in last_error(lib)
            assert last_run()["runs"] == before


def test_workspace_at_k_batch_auto_needs_a_supported_problem(lib: ctypes.CDLL) -> None:
    size = ctypes.c_size_t()
    odd = to_c_problem(SPLIT_PROBLEM.replace(C=24, K=24, G=4))
    status = lib.td_conv_workspace_size(
        FP32_BWD_WEIGHT.encode(), ctypes.byref(odd), K_BATCH_AUTO, ctypes.byref(size)
    )
    assert status == NOT_SUPPORTED and "C/G=6 is not a multiple of 4" in last_error(lib)
    status = lib.td_conv_workspace_size(FP32_BWD_WEIGHT.encode(), ctypes.byref(odd), -3, ctypes.byref(size))
    assert (status, last_error(lib)) == (
        INVALID_ARGUMENT,
        "k_batch -3 is negative and not TD_K_BATCH_AUTO (-1)",
    )


def run(lib: ctypes.CDLL, name: str | None, problem: Problem, args: CArgs | None) -> int:
    c_problem = to_c_problem(problem)
    pointer = ctypes.byref(args) if args is not None else None
    return lib.td_conv_run(name.encode() if name else None, ctypes.byref(c_problem), pointer)


def test_run_passes_pointers_stream_and_split_k_through(lib: ctypes.CDLL, last_run) -> None:
    before = last_run()["runs"]
    args = CArgs(0x1000, 0x2000, 0x3000, None, 0, 0, -1, 0x4000)
    assert run(lib, None, BIG, args) == TD_OK, last_error(lib)
    seen = last_run()
    assert seen["runs"] == before + 1
    assert seen["name"] == FWD_128
    assert (seen["input"], seen["weight"], seen["output"], seen["stream"]) == (0x1000, 0x2000, 0x3000, 0x4000)
    assert seen["k_batch"] == 1  # 0 means no split
    fp32_bwd_weight = FP32_BWD_WEIGHT
    problem = BIG.replace(direction="bwd_weight", dtype="fp32")
    args = CArgs(0x1000, 0x2000, 0x3000, None, 0, 4, -1, None)
    assert run(lib, fp32_bwd_weight, problem, args) == TD_OK, last_error(lib)
    assert last_run()["k_batch"] == 4


def test_run_refuses_bad_arguments_before_any_launch(lib: ctypes.CDLL, last_run) -> None:
    before = last_run()["runs"]
    misaligned = CArgs(0x1008, 0x2000, 0x3000, None, 0, 0, -1, None)
    assert run(lib, FWD_128, BIG, misaligned) == BAD_ARGUMENTS
    assert last_error(lib) == "args.input is not 16-byte aligned"
    null = CArgs(0x1000, None, 0x3000, None, 0, 0, -1, None)
    assert run(lib, FWD_128, BIG, null) == BAD_ARGUMENTS
    assert last_error(lib) == "args.weight is NULL"
    split = CArgs(0x1000, 0x2000, 0x3000, None, 0, 2, -1, None)
    assert run(lib, FWD_128, BIG, split) == BAD_ARGUMENTS
    assert "split-K is backward-weight only" in last_error(lib)
    odd = Problem(N=2, C=6, K=16, G=2, Hi=8, Wi=8, Y=3, X=3)
    assert run(lib, FWD_128, odd, CArgs(0x1000, 0x2000, 0x3000, None, 0, 0, -1, None)) == NOT_SUPPORTED
    assert last_error(lib) == f"{FWD_128} does not support the problem: C/G=3 is not a multiple of 8"
    assert run(lib, FWD_128, BIG, None) == INVALID_ARGUMENT
    below_auto = CArgs(0x1000, 0x2000, 0x3000, None, 0, -2, -1, None)
    assert run(lib, FWD_128, BIG, below_auto) == INVALID_ARGUMENT
    assert last_error(lib) == "args.k_batch -2 is negative and not TD_K_BATCH_AUTO (-1)"
    assert last_run()["runs"] == before


def test_a_failed_launch_is_a_cuda_status_not_an_abort(lib: ctypes.CDLL) -> None:
    problem = BIG.with_direction("bwd_data")
    assert run(lib, None, problem, CArgs(0x1000, 0x2000, 0x3000, None, 0, 0, -1, None)) == CUDA
    assert last_error(lib).startswith(f"{FAKE_NAMES[0]} launch: cudaErrorNoDevice")


def test_a_caller_workspace_is_used_as_given(lib: ctypes.CDLL, last_run) -> None:
    problem = BIG.replace(direction="bwd_weight", dtype="bf16")
    need = 256 * 256 * 9 * 4
    args = CArgs(0x1000, 0x2000, 0x3000, 0x8000, need, 0, -1, None)
    assert run(lib, TWO_STAGE, problem, args) == TD_OK, last_error(lib)
    assert (last_run()["workspace"], last_run()["workspace_bytes"]) == (0x8000, need)
    short = CArgs(0x1000, 0x2000, 0x3000, 0x8000, need - 1, 0, -1, None)
    assert run(lib, TWO_STAGE, problem, short) == BAD_ARGUMENTS
    assert last_error(lib).endswith(f"workspace of {need} bytes required")


def test_registry_json_lists_every_kernel(lib: ctypes.CDLL) -> None:
    text = ctypes.c_char_p()
    assert lib.td_conv_export_registry_json(ctypes.byref(text)) == TD_OK
    exported = json.loads(text.value)
    assert exported["api_version"] == 2
    assert exported["kernel_count"] == len(FAKE_NAMES)
    assert [k["name"] for k in exported["kernels"]] == FAKE_NAMES
    first = exported["kernels"][0]
    assert set(first) == {"name", "instance_string", "direction", "dtype", "ndim_spatial", "family"}
    assert (first["direction"], first["dtype"], first["ndim_spatial"]) == ("bwd_data", "fp16", 2)


_PROBE = textwrap.dedent(
    """
    import ctypes, sys
    from tiledispatch import Registry, Problem
    from tiledispatch.native import CArgs
    registry = Registry.load(sys.argv[1])
    problem = Problem(N=64, C=256, K=256, Hi=56, Wi=56, Y=3, X=3, pad_h=1, pad_w=1)
    registry.supported(problem)
    registry.select(problem)
    registry.to_json()
    bwd_weight = problem.replace(direction="bwd_weight", dtype="bf16")
    name = registry.select(bwd_weight).name
    registry.workspace_bytes(bwd_weight, name)
    registry.split_k(bwd_weight, name, sms=132)
    registry.plan(bwd_weight, sms=132)
    if sys.argv[2] == "run":  # no workspace given: the library allocates one, which needs CUDA
        try:
            registry._library.run(name, bwd_weight, (0x1000, 0x2000, 0x3000), 1, -1, 0)
        except Exception as error:
            print(error)
    """
)


def _cuda_driver_lookups(library: Path, mode: str) -> list[str]:
    env = {
        **os.environ,
        "LD_DEBUG": "libs",
        "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{REPO_ROOT / 'dispatcher'}",
    }
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(library), mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return [line for line in result.stderr.splitlines() if "find library=libcuda.so" in line]


def test_nothing_touches_cuda_before_the_first_run(fake_library: Path) -> None:
    assert _cuda_driver_lookups(fake_library, "list") == []
    # Control: a run that allocates its workspace does call CUDA, so the probe sees calls when there are some.
    assert _cuda_driver_lookups(fake_library, "run") != []


def test_the_header_is_valid_c99(tmp_path: Path) -> None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc, gcc) on PATH")
    source = tmp_path / "use_c_api.c"
    source.write_text(
        '#include "tiledispatch/c_api.h"\n'
        "int main(void) {\n"
        "  size_t count = 0;\n"
        "  td_conv_problem problem = {0};\n"
        "  (void)problem;\n"
        "  return td_conv_get_kernel_count(&count) == TD_OK ? 0 : conv_dispatcher_cleanup();\n"
        "}\n"
    )
    include = REPO_ROOT / "instances" / "include"
    result = subprocess.run(
        [
            compiler,
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
            f"-I{include}",
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
