"""Fixtures for the kernel-library tests: the pinned nvcc and the include paths."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kernels.arch_include import arch_include

REPO_ROOT = Path(__file__).resolve().parents[2]
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


@pytest.fixture(scope="session")
def nvcc() -> Path:
    path = SITE / "nvidia" / "cu13" / "bin" / "nvcc"
    if not path.is_file():
        pytest.skip(f"pinned nvcc not found at {path}")
    return path


@pytest.fixture(scope="session")
def cute_include() -> Path:
    path = SITE / "cutlass_library" / "source" / "include"
    if not (path / "cute" / "tensor.hpp").is_file():
        pytest.skip(f"CuTe headers not found under {path}")
    return path


def compile_and_run(nvcc: Path, source: Path, out_dir: Path, extra: list[str]) -> str:
    """Compile one host program with the pinned nvcc (include instances/include and the generated arch header)
    and return its stdout."""
    binary = out_dir / source.stem
    lib = nvcc.parent.parent / "lib"  # the wheel's libcudart_static.a
    # `extra` first, so that an include directory there can stand in for a header of instances/include.
    cmd = [str(nvcc), "-std=c++17", *extra, f"-I{REPO_ROOT / 'instances' / 'include'}"]
    cmd += [f"-I{arch_include(out_dir)}", f"-L{lib}"]
    cmd += [str(source), "-o", str(binary)]
    built = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert built.returncode == 0, f"compile failed:\n{built.stderr[-4000:]}"
    ran = subprocess.run([str(binary)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def run_host_program(source: Path, out_dir: Path, timeout_s: int = 300) -> subprocess.CompletedProcess[str]:
    """Compile a host-only C++ test program with g++ (instances/include on the include path) and run it; its
    exit status and output are the caller's to judge."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no host C++ compiler (g++) on PATH")
    binary = out_dir / source.stem
    include = f"-I{REPO_ROOT / 'instances' / 'include'}"
    built = subprocess.run(
        [compiler, "-std=c++17", "-O1", include, str(source), "-o", str(binary)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    return subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=timeout_s)


def run_host_check(source: Path, out_dir: Path, least_checked: int) -> str:
    """Run a host check program (run_host_program) that prints "checked N mismatches M": it must exit 0 with
    no mismatches after more than `least_checked` comparisons. Returns its stdout for further counts."""
    ran = run_host_program(source, out_dir)
    found = re.search(r"checked (\d+) mismatches (\d+)", ran.stdout)
    assert found, ran.stdout + ran.stderr
    checked, mismatches = int(found[1]), int(found[2])
    assert mismatches == 0 and ran.returncode == 0, ran.stdout[-3000:]
    assert checked > least_checked, f"only {checked} comparisons"
    return ran.stdout
