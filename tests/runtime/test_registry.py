"""The Python package over the test-double library: kernels, support with reasons, selection (heuristic and a
plugged-in selector), launch plans (split-K factors), and run()'s checks of tensors (shape, dtype,
channels-last layout, alignment, device) with stand-in device tensors that only describe themselves
(``__cuda_array_interface__``). CPU only."""

from __future__ import annotations

import fcntl
import importlib.util
import sys
import threading
import time
from math import prod
from pathlib import Path

import pytest
from pydantic import ValidationError

from tiledispatch import (
    BuildRequest,
    KernelInfo,
    Launch,
    LibraryError,
    Problem,
    Registry,
    SplitK,
    TensorError,
    UnsupportedProblemError,
)
from tiledispatch.build import run_build
from tiledispatch.errors import BuildError

FWD_128 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16"
PROBLEM = Problem(N=4, C=64, K=128, G=2, Hi=16, Wi=16, Y=3, X=3, pad_h=1, pad_w=1)


class DeviceTensor:
    """Describes a device tensor through __cuda_array_interface__ without owning memory (the fake kernels
    never dereference it)."""

    def __init__(
        self,
        shape: tuple[int, ...],
        address: int,
        typestr: str = "<f2",
        strides: tuple[int, ...] | None = None,
        device: int | None = None,
    ) -> None:
        itemsize = int(typestr[2:])
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (address, False),
            "strides": None if strides is None else tuple(s * itemsize for s in strides),
            "version": 3,
        }
        if device is not None:
            self.device = type("Device", (), {"id": device})()


def channels_last(shape: tuple[int, ...], address: int, **kwargs: object) -> DeviceTensor:
    """(N, C, H, W) logical shape stored N, H, W, C."""
    _, c, h, w = shape
    return DeviceTensor(shape, address, strides=(h * w * c, 1, w * c, c), **kwargs)


def nchw(shape: tuple[int, ...], address: int) -> DeviceTensor:
    return DeviceTensor(shape, address, strides=tuple(prod(shape[i + 1 :]) for i in range(len(shape))))


def tensors(problem: Problem = PROBLEM, **kwargs: object) -> tuple[DeviceTensor, DeviceTensor, DeviceTensor]:
    ho, wo = problem.output_spatial[1:]
    return (
        channels_last((problem.N, problem.C, problem.Hi, problem.Wi), 0x10000, **kwargs),
        channels_last((problem.K, problem.C // problem.G, problem.Y, problem.X), 0x20000, **kwargs),
        channels_last((problem.N, problem.K, ho, wo), 0x30000, **kwargs),
    )


def test_kernels_are_models_with_their_signature(registry: Registry) -> None:
    assert len(registry.kernels) == 7
    kernel = registry.kernel(FWD_128)
    assert isinstance(kernel, KernelInfo)
    assert (kernel.direction.value, kernel.dtype.value, kernel.ndim_spatial, kernel.family) == (
        "fwd",
        "fp16",
        2,
        "implicit_gemm",
    )
    assert kernel.instance_string.startswith("GroupedConvolutionForwardKernel<2,Default,NHWGC,GKYXC,")
    with pytest.raises(UnsupportedProblemError, match="no kernel named 'nope'"):
        registry.kernel("nope")
    assert registry.to_json()["kernel_count"] == 7


def test_supported_lists_every_kernel_with_its_reason(registry: Registry) -> None:
    narrow = PROBLEM.replace(C=8, K=8, G=2)
    verdicts = {v.kernel: v for v in registry.supported(narrow)}
    assert len(verdicts) == 7
    assert verdicts[FWD_128].reason == "C/G=4 is not a multiple of 8"
    supported = registry.supported(narrow, only_supported=True)
    assert [v.kernel for v in supported] == [
        "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_64x16x64_1x1x1_16x16x32_vec1_1_1"
    ]
    assert registry.select(narrow).name == supported[0].kernel


def test_select_raises_naming_the_problem(registry: Registry) -> None:
    with pytest.raises(UnsupportedProblemError, match=r"supports fwd bf16 2D G=2 N=4 K=128 C=64"):
        registry.select(PROBLEM.replace(dtype="bf16"))


def test_a_plugged_in_selector_chooses_among_supported_kernels(fake_library: Path) -> None:
    class Smallest:
        def select(self, problem: Problem, candidates: list[KernelInfo]) -> KernelInfo:
            self.seen = [c.name for c in candidates]
            return min(candidates, key=lambda c: len(c.name))

    selector = Smallest()
    registry = Registry.load(fake_library, selector=selector)
    chosen = registry.select(PROBLEM)
    assert len(selector.seen) == 3 and all("_fwd_fp16_" in name for name in selector.seen)
    assert chosen.name == min(selector.seen, key=len)


FP32_BWD_WEIGHT = (
    "grouped_conv_bwd_weight_fp32_nhwgc_2d_mem_cshuffle_intrawave_64x64x32_2x2x1_16x16x4_vec4_4_4"
)
BWD_WEIGHT = PROBLEM.replace(direction="bwd_weight", dtype="fp32")


def test_split_k_reports_the_candidates_and_the_preferred_factor(registry: Registry) -> None:
    offered = registry.split_k(BWD_WEIGHT, FP32_BWD_WEIGHT, sms=132)
    assert offered.kernel == registry.kernel(FP32_BWD_WEIGHT) and offered.sms == 132
    assert offered.candidates[0] == 1 and list(offered.candidates) == sorted(set(offered.candidates))
    # The doubles' rule: one work unit a group (G = 2), so one round holds up to 66 splits.
    assert offered.preferred in offered.candidates and offered.preferred * 2 <= 132
    assert registry.split_k(PROBLEM, FWD_128, sms=132).candidates == (1,)
    with pytest.raises(UnsupportedProblemError, match="C/G=3 is not a multiple of 4"):
        registry.split_k(BWD_WEIGHT.replace(C=6, K=6), FP32_BWD_WEIGHT, sms=132)
    with pytest.raises(ValueError, match=r"sms must be a positive int .* got 0"):
        registry.split_k(BWD_WEIGHT, FP32_BWD_WEIGHT, sms=0)
    with pytest.raises(ValidationError, match="preferred split-K 3 is not among"):
        SplitK(kernel=offered.kernel, sms=132, candidates=(1, 2), preferred=3)


def test_plan_without_a_launch_selector_is_the_librarys(registry: Registry) -> None:
    """The doubles' compiled-in bwd_weight model ranks factors 4 to 8 first (runtime_build.split_k_model); on
    a batch of 64 the instance's own rule takes 64 (132 SMs over G = 2 units)."""
    long = BWD_WEIGHT.replace(N=64)
    launch = registry.plan(long, sms=132)
    assert (launch.kernel, launch.split_k) == (registry.select(long), 4)
    assert registry.split_k(long, launch.kernel.name, sms=132).preferred == 64
    assert registry.plan(long, FP32_BWD_WEIGHT, sms=132).split_k == 4
    assert registry.plan(PROBLEM) == Launch(kernel=registry.select(PROBLEM), split_k=1)  # host-only
    with pytest.raises(UnsupportedProblemError, match="C/G=3 is not a multiple of 4"):
        registry.plan(BWD_WEIGHT.replace(C=6, K=6), FP32_BWD_WEIGHT, sms=132)
    with pytest.raises(UnsupportedProblemError, match="no kernel supports bwd_weight fp32"):
        registry.plan(BWD_WEIGHT.replace(C=6, K=6), sms=132)


class LargestSplit:
    """A LaunchSelector: the last option's largest factor (and, as a KernelSelector, the first kernel)."""

    def select(self, problem: Problem, candidates: list[KernelInfo]) -> KernelInfo:
        return candidates[0]

    def select_launch(self, problem: Problem, options: list[SplitK]) -> Launch:
        self.seen = options
        return Launch(kernel=options[-1].kernel, split_k=max(options[-1].candidates))


def test_a_launch_selector_chooses_kernel_and_factor(fake_library: Path) -> None:
    selector = LargestSplit()
    registry = Registry.load(fake_library, selector=selector)
    launch = registry.plan(BWD_WEIGHT, sms=132)
    assert [o.kernel.name for o in selector.seen] == [
        FP32_BWD_WEIGHT
    ]  # the supported fp32 bwd_weight kernels
    assert launch.split_k == max(selector.seen[0].candidates) > 1
    selector.select_launch = lambda problem, options: Launch(kernel=options[0].kernel, split_k=1000)
    with pytest.raises(UnsupportedProblemError, match="split-K 1000, which is not among the candidates"):
        registry.plan(BWD_WEIGHT, sms=132)


def test_run_without_split_k_follows_the_plan_for_the_tensors_device(
    registry: Registry, last_run, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = []
    monkeypatch.setattr(registry, "device_sm_count", lambda device=-1: asked.append(device) or 8)
    # Stand-in tensors name no device (-1: the current one); a named one makes the run set it, a CUDA call.
    registry.run(*tensors(BWD_WEIGHT, typestr="<f4"), BWD_WEIGHT, kernel=FP32_BWD_WEIGHT)
    assert (asked, last_run()["k_batch"]) == ([-1], registry.plan(BWD_WEIGHT, FP32_BWD_WEIGHT, sms=8).split_k)
    registry.run(*tensors(BWD_WEIGHT, typestr="<f4"), BWD_WEIGHT, kernel=FP32_BWD_WEIGHT, split_k=1)
    assert last_run()["k_batch"] == 1 and asked == [-1]  # a given factor asks no device


def test_problems_are_validated_naming_the_bad_value(registry: Registry) -> None:
    with pytest.raises(ValidationError, match="bad dtype 'fp64'; accepted: fp16, bf16, fp32"):
        registry.select({**PROBLEM.model_dump(), "dtype": "fp64"})
    with pytest.raises(ValidationError, match="C 64 is not divisible by G 3"):
        Problem(N=1, C=64, K=66, G=3, Hi=4, Wi=4, Y=1, X=1)
    with pytest.raises(TypeError, match=r"problem must be a tiledispatch\.Problem"):
        registry.select("fwd")  # type: ignore[arg-type]


def test_run_hands_pointers_and_stream_to_the_kernel(registry: Registry, last_run) -> None:
    x, w, y = tensors()
    kernel = registry.run(x, w, y, PROBLEM, stream=0x7000)
    seen = last_run()
    assert seen["name"] == kernel.name
    assert (seen["input"], seen["weight"], seen["output"], seen["stream"]) == (
        0x10000,
        0x20000,
        0x30000,
        0x7000,
    )


def test_run_accepts_row_major_nhwgc_tensors(registry: Registry, last_run) -> None:
    p = PROBLEM
    x = DeviceTensor((p.N, p.Hi, p.Wi, p.G, p.C // p.G), 0x10000)
    w = DeviceTensor((p.G, p.K // p.G, p.Y, p.X, p.C // p.G), 0x20000)
    y = DeviceTensor((p.N, p.Hi, p.Wi, p.K), 0x30000)
    registry.run(x, w, y, p, kernel=FWD_128)
    assert last_run()["name"] == FWD_128


def test_run_refuses_nchw_contiguous_input_with_the_fix(registry: Registry) -> None:
    x, w, y = tensors()
    x = nchw((PROBLEM.N, PROBLEM.C, PROBLEM.Hi, PROBLEM.Wi), 0x10000)
    with pytest.raises(TensorError, match=r"input: shape \(4, 64, 16, 16\) .* is contiguous NC\[D\]HW; .*"):
        registry.run(x, w, y, PROBLEM)
    with pytest.raises(TensorError, match=r"memory_format=torch.channels_last\)"):
        registry.run(x, w, y, PROBLEM)


def test_run_refuses_non_contiguous_views(registry: Registry) -> None:
    x, w, y = tensors()
    # Every other pixel of a wider image: channels-last order, but a gap between pixels.
    p = PROBLEM
    x = DeviceTensor(
        (p.N, p.C, p.Hi, p.Wi), 0x10000, strides=(p.Hi * p.Wi * 2 * p.C, 1, p.Wi * 2 * p.C, 2 * p.C)
    )
    with pytest.raises(TensorError, match="is not channels-last"):
        registry.run(x, w, y, p)


def test_run_refuses_wrong_shapes_dtypes_alignment_and_devices(registry: Registry) -> None:
    x, w, y = tensors()
    bad_y = channels_last((4, 128, 15, 15), 0x30000)
    with pytest.raises(
        TensorError, match=r"output: shape \(4, 128, 15, 15\) does not match the problem; expected"
    ):
        registry.run(x, w, bad_y, PROBLEM)
    x32, _, _ = tensors(typestr="<f4")
    with pytest.raises(TensorError, match="input: dtype <f4 does not match the problem's fp16"):
        registry.run(x32, w, y, PROBLEM)
    shifted = channels_last((4, 64, 16, 16), 0x10008)
    with pytest.raises(TensorError, match="input: data pointer 0x10008 is not 16-byte aligned"):
        registry.run(shifted, w, y, PROBLEM)
    on_1 = channels_last((4, 64, 16, 16), 0x10000, device=1)
    on_0 = channels_last((128, 32, 3, 3), 0x20000, device=0)
    with pytest.raises(
        TensorError, match="tensors are on different devices: input on cuda:1, weight on cuda:0"
    ):
        registry.run(on_1, on_0, y, PROBLEM)
    with pytest.raises(TensorError, match="input: list is not a device tensor"):
        registry.run([1.0], w, y, PROBLEM)


def test_run_checks_split_k_and_the_named_kernel(registry: Registry, last_run) -> None:
    x, w, y = tensors()
    with pytest.raises(ValueError, match="split_k=2: split-K is backward-weight only, problem is fwd"):
        registry.run(x, w, y, PROBLEM, split_k=2)
    with pytest.raises(ValueError, match="split_k must be a positive int, got 0"):
        registry.run(x, w, y, PROBLEM, split_k=0)
    narrow = PROBLEM.replace(C=8, K=8)
    small = tensors(narrow)
    with pytest.raises(UnsupportedProblemError, match="C/G=4 is not a multiple of 8"):
        registry.run(*small, narrow, kernel=FWD_128)
    bwd_weight = PROBLEM.replace(direction="bwd_weight", dtype="fp32")
    registry.run(*tensors(bwd_weight, typestr="<f4"), bwd_weight, split_k=3)
    assert last_run()["k_batch"] == 3


def test_run_reports_a_failed_launch(registry: Registry) -> None:
    with pytest.raises(LibraryError, match=r"TD_ERROR_CUDA: td_conv_run: .* launch: cudaErrorNoDevice"):
        registry.run(*tensors(), PROBLEM.with_direction("bwd_data"))


def test_load_refuses_missing_and_foreign_libraries(tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="no shared library at"):
        Registry.load(tmp_path / "libtiledispatch_tiny.so")
    foreign = tmp_path / "libforeign.so"
    foreign.write_bytes(b"not an ELF file")
    with pytest.raises(LibraryError, match="cannot load"):
        Registry.load(foreign)


def test_build_request_becomes_a_scons_command(tmp_path: Path) -> None:
    request = BuildRequest(
        ruleset="tiny", directions="fwd", dtypes=["fp16", "bf16"], max_workers=16, toolchain="system"
    )
    command = request.scons_command()
    assert command[3:] == [
        "ruleset=tiny",
        "arch=sm_90a",
        "directions=fwd",
        "dtypes=fp16,bf16",
        "ndims=2,3",
        "jobs=16",
        "toolchain=system",
        "cuda_root=/usr/local/cuda",
        "lib",
    ]
    assert request.library_path.name == "libtiledispatch_tiny.so"
    with pytest.raises(ValidationError, match="ruleset"):
        BuildRequest(ruleset="huge")
    with pytest.raises(BuildError, match="no SConstruct in"):
        Registry.build(repo_root=tmp_path)


def _build_sandbox_module():
    path = Path(__file__).resolve().parents[1] / "build" / "build_sandbox.py"
    spec = importlib.util.spec_from_file_location("runtime_build_sandbox", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_build_runs_scons_with_progress_and_reports_failures(tmp_path: Path) -> None:
    """Registry.build over the build tests' sandbox (fake nvcc): the progress lines arrive, the library
    target is built, and loading the fake nvcc's output (a shell script) fails with a clear error."""
    sandbox = _build_sandbox_module().make_sandbox(tmp_path / "repo")
    lines: list[str] = []
    with pytest.raises(LibraryError, match=r"cannot load .*libtiledispatch_tiny\.so"):
        Registry.build(
            ruleset="tiny",
            repo_root=sandbox.root,
            toolchain="system",
            cuda_root=sandbox.cuda,
            progress=lines.append,
        )
    assert any(line.endswith("link build/tiny-sm_90a/lib/libtiledispatch_tiny.so") for line in lines), lines
    assert any(line.startswith("tiledispatch: ") for line in lines)
    (sandbox.root / "instances" / "src" / "runtime.cpp").write_text("#error broken\n")
    (sandbox.cuda / "bin" / "nvcc").write_text("#!/bin/sh\necho 'nvcc: broken' >&2\nexit 1\n")
    with pytest.raises(BuildError, match=r"scons failed \(status 2\)"):
        Registry.build(
            ruleset="tiny",
            repo_root=sandbox.root,
            toolchain="system",
            cuda_root=sandbox.cuda,
            progress=lines.append,
        )


def test_builds_of_one_variant_wait_for_each_other(tmp_path: Path) -> None:
    """While another build holds the variant's lock (a second process, a pytest-xdist worker), a build says
    that it waits and starts nothing; once the lock is free it builds."""
    sandbox = _build_sandbox_module().make_sandbox(tmp_path / "repo")
    request = BuildRequest(ruleset="tiny", repo_root=sandbox.root, toolchain="system", cuda_root=sandbox.cuda)
    lines: list[str] = []
    waiting = threading.Event()

    def progress(line: str) -> None:
        lines.append(line)
        if line.startswith("waiting for another build of tiny-sm_90a"):
            waiting.set()

    built: list[Path] = []
    request.lock_path.parent.mkdir(parents=True)
    with request.lock_path.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        thread = threading.Thread(target=lambda: built.append(run_build(request, progress)))
        thread.start()
        assert waiting.wait(timeout=60), lines
        time.sleep(0.5)
        assert len(lines) == 1, lines  # no SCons output while the lock is held
        fcntl.flock(held, fcntl.LOCK_UN)
    thread.join(timeout=300)
    assert built == [request.library_path]
    assert any(line.startswith("tiledispatch: ") for line in lines), lines


def test_dlpack_tensors_are_read_and_host_memory_is_refused(registry: Registry) -> None:
    numpy = pytest.importorskip("numpy", reason="NumPy (a DLPack producer) is not installed")
    from tiledispatch.tensors import view_of

    host = numpy.zeros((4, 16, 16, 64), dtype=numpy.float16)  # NHWC, in host memory
    view = view_of("input", host[:, :, ::2])
    assert (view.shape, view.strides, view.dtype.value) == ((4, 16, 8, 64), (16384, 1024, 128, 1), "fp16")
    assert view.pointer == host.ctypes.data
    assert view.framework == "dlpack"
    with pytest.raises(TensorError, match="input: tensor is on dlpack device type 1, not on a CUDA device"):
        registry.run(host, *tensors()[1:], PROBLEM)
