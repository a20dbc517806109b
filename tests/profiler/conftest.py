"""Fixtures of the profiler tests: the profiler, compiled once, against the test-double instances."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from profiler_build import FIXTURES, REPO_ROOT, build, find_nvcc, profiler_sources


def _require_nvcc() -> None:
    if find_nvcc() is None:
        pytest.skip("no nvcc: neither the pinned wheel nor a system CUDA is installed")


@pytest.fixture(scope="session")
def fake_profiler() -> Path:
    """The profiler linked with the CPU test-double registry."""
    _require_nvcc()
    return build("tiledispatch_profiler_fake", [*profiler_sources(), FIXTURES / "fake_instances.cpp"])


@pytest.fixture(scope="session")
def report_driver() -> Path:
    _require_nvcc()
    return build(
        "report_driver", [REPO_ROOT / "profiler" / "src" / "report.cpp", FIXTURES / "report_driver.cpp"]
    )


@pytest.fixture
def run_profiler(fake_profiler: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(fake_profiler), *args], capture_output=True, text=True, check=False, timeout=60, env=env
        )

    return run


@pytest.fixture(scope="session")
def gpu_profiler() -> Path:
    """The profiler linked with the GPU test-double instances (fixtures/gpu_instances.cu)."""
    _require_nvcc()
    return build("tiledispatch_profiler_gpu", [*profiler_sources(), FIXTURES / "gpu_instances.cu"])
