"""The shared library the real build produced (`scons ruleset=tiny check` links it; CI runs that first): it
loads without a GPU, lists exactly the instances of the generator's expected lists (name and instance string,
as the profiler's --verify-instances does for the static libraries), and selects without touching CUDA."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from runtime_build import REPO_ROOT

from tiledispatch import Registry

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
