"""The shared library the real build produced (`scons ruleset=tiny check` links it; CI runs that first): it
loads without a GPU, lists exactly the instances of the generator's expected lists (name and instance string,
as the profiler's --verify-instances does for the static libraries), selects without touching CUDA, and plans
with the models compiled into it exactly as the Python selector ranks with the committed files."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from runtime_build import REPO_ROOT

from tiledispatch import Problem, Registry

VARIANT = REPO_ROOT / "build" / "tiny-sm_90a"
LIBRARY = VARIANT / "lib" / "libtiledispatch_tiny.so"


@pytest.fixture(scope="module")
def built() -> Registry:
    if not LIBRARY.is_file():
        pytest.skip(f"{LIBRARY.relative_to(REPO_ROOT)} not built (scons ruleset=tiny check builds it)")
    return Registry.load(LIBRARY)


def test_the_library_lists_exactly_the_expected_instances(built: Registry) -> None:
    lists = [VARIANT / "gen" / f"expected_{direction}.txt" for direction in ("fwd", "bwd_data", "bwd_weight")]
    if not all(path.is_file() for path in lists):
        pytest.skip("the generator's expected_<dir>.txt lists are not beside the library (a carried copy?)")
    expected = set()
    for path in lists:
        lines = path.read_text().splitlines()
        expected |= {tuple(line.split("\t")) for line in lines if line}
    listed = {(kernel.name, kernel.instance_string) for kernel in built.kernels}
    assert listed == expected
    assert {kernel.direction.value for kernel in built.kernels} == {"fwd", "bwd_data", "bwd_weight"}


def test_every_kernel_name_states_its_signature(built: Registry) -> None:
    for kernel in built.kernels:
        assert kernel.name.startswith(f"grouped_conv_{kernel.direction.value}_"), kernel.name
        assert f"_{kernel.dtype.value}_" in kernel.name, kernel.name
        assert f"_{kernel.ndim_spatial}d_" in kernel.name, kernel.name


def test_selection_makes_no_cuda_call() -> None:
    if not LIBRARY.is_file():
        pytest.skip(f"{LIBRARY.relative_to(REPO_ROOT)} not built")
    probe = (
        "import sys\n"
        "from tiledispatch import Problem, Registry\n"
        "registry = Registry.load(sys.argv[1])\n"
        "problem = Problem(N=8, C=256, K=256, G=32, Hi=28, Wi=28, Y=3, X=3, pad_h=1, pad_w=1)\n"
        "for direction in ('fwd', 'bwd_data', 'bwd_weight'):\n"
        "    registry.supported(problem.with_direction(direction))\n"
        "    print(registry.select(problem.with_direction(direction)).name)\n"
    )
    env = {
        **os.environ,
        "LD_DEBUG": "libs",
        "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{REPO_ROOT / 'dispatcher'}",
    }
    result = subprocess.run(
        [sys.executable, "-c", probe, str(LIBRARY)], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert [line.split("_")[2] for line in result.stdout.splitlines()] == ["fwd", "bwd", "bwd"]
    assert [line for line in result.stderr.splitlines() if "find library=libcuda.so" in line] == []


def test_the_compiled_in_models_plan_as_the_python_selector_ranks(built: Registry) -> None:
    """The C library's plan (embedded heuristics/models) and LearnedSelector's (the same files read by
    Python) pick the same (kernel, split-K) pair on grouped, dense and strided layers in every direction."""
    from heuristics.select import LearnedSelector

    learned = Registry.load(LIBRARY, selector=LearnedSelector())
    layers = [
        Problem(N=32, C=256, K=256, G=32, Hi=28, Wi=28, Y=3, X=3, pad_h=1, pad_w=1),
        Problem(N=16, C=512, K=128, Hi=28, Wi=28, Y=1, X=1),
        Problem(N=8, C=128, K=256, Hi=56, Wi=56, Y=3, X=3, pad_h=1, pad_w=1, stride_h=2, stride_w=2),
    ]
    planned = 0
    for layer in layers:
        for direction in ("fwd", "bwd_data", "bwd_weight"):
            for dtype in ("fp16", "bf16", "fp32"):
                problem = layer.replace(direction=direction, dtype=dtype)
                if not built.supported(problem, only_supported=True):
                    continue
                ours, python = built.plan(problem, sms=132), learned.plan(problem, sms=132)
                assert (ours.kernel.name, ours.split_k) == (python.kernel.name, python.split_k), (
                    problem.describe()
                )
                planned += 1
    assert planned >= 9


def test_a_supported_depthwise_kernel_is_planned_on_depthwise_layers(built: Registry) -> None:
    """On MobileNet-style depthwise layers (tiny's depthwise kernels are 5x5, stride 1 or 2) the library plans
    a depthwise kernel wherever one supports the layer, whatever the models would rank first among the
    implicit-GEMM tiles that also run it."""
    layer = Problem(N=8, C=64, K=64, G=64, Hi=56, Wi=56, Y=5, X=5, pad_h=2, pad_w=2)
    planned = 0
    for stride in (1, 2):
        for direction in ("fwd", "bwd_data", "bwd_weight"):
            for dtype in ("fp16", "bf16", "fp32"):
                problem = layer.replace(direction=direction, dtype=dtype, stride_h=stride, stride_w=stride)
                families = {
                    built.kernel(s.kernel).family for s in built.supported(problem, only_supported=True)
                }
                if "depthwise" not in families:
                    continue
                assert built.plan(problem, sms=132).kernel.family == "depthwise", problem.describe()
                assert built.select(problem).family == "depthwise", problem.describe()
                planned += 1
    assert planned >= 3, f"tiny's depthwise kernels support {planned} of the layers"


def padded_bytes(elements: int) -> int:
    """A padded tensor in the workspace: fp16 elements, rounded up to 256 bytes."""
    return (elements * 2 + 255) // 256 * 256


def test_channels_padded_to_the_vectors(built: Registry) -> None:
    """An RGB stem (C = 3), which no vector of the 16-bit implicit-GEMM instances (4/8/8) divides, runs on
    every instance that runs the same layer with C = 8, in every direction, its channels padded to 8 in the
    workspace: fwd holds the padded input and weights there. fwd instances of tile_k 32 run it width-unfolded
    instead (X*C = 21 channels rounded up to 32 over an input of the output's width, 15: docs/pipelines.md,
    "Width unfolding") and hold that input and weights. K = 5, which no output vector divides, stays without a
    kernel (docs/pipelines.md, "Channels padded to the vectors"). Host only: support and fwd workspace make no
    CUDA call."""
    stem = Problem(N=2, C=3, K=64, G=1, Hi=37, Wi=29, Y=7, X=7, stride_h=2, stride_w=2, pad_h=3, pad_w=3)
    gemm = [k.name for k in built.kernels if "_fp16_nhwgc_2d_" in k.name]
    for direction in ("fwd", "bwd_data", "bwd_weight"):
        names = {name for name in gemm if name.startswith(f"grouped_conv_{direction}_fp16")}

        def running(problem: Problem, names: set[str] = names, direction: str = direction) -> set[str]:
            verdicts = built.supported(problem.with_direction(direction), only_supported=True)
            return {s.kernel for s in verdicts} & names

        wide = running(stem.replace(C=8))
        assert wide, f"no fp16 2D implicit-GEMM {direction} instance of tiny runs the C = 8 layer"
        assert running(stem) == wide
        assert not running(stem.replace(K=5))
    padded = padded_bytes(2 * 37 * 29 * 8) + padded_bytes(64 * 7 * 7 * 8)
    unfolded = padded_bytes(2 * 37 * 15 * 32) + padded_bytes(64 * 7 * 32)
    fwd = {s.kernel for s in built.supported(stem, only_supported=True)} & set(gemm)
    tile_k = {name: int(re.search(r"_(\d+)x(\d+)x(\d+)_", name)[3]) for name in fwd}
    assert 32 in tile_k.values() and any(k != 32 for k in tile_k.values()), tile_k
    for name in fwd:
        expected = unfolded if tile_k[name] == 32 else padded
        assert built.workspace_bytes(stem, name) == expected, name
        assert built.workspace_bytes(stem.replace(C=16), name) == 0, name
