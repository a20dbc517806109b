"""Build and run a CUDA check program for sm_90a with whichever nvcc this machine has: the pinned wheel here,
the system CUDA on the GPU machine (where the venv does not exist); CuTe from the cutlass_library package."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kernels.arch_include import arch_include

REPO_ROOT = Path(__file__).resolve().parents[2]
PINNED_NVCC = (
    Path(sys.prefix)
    / "lib"
    / f"python{sys.version_info.major}.{sys.version_info.minor}"
    / "site-packages"
    / "nvidia"
    / "cu13"
    / "bin"
    / "nvcc"
)


def find_nvcc() -> Path:
    for candidate in (PINNED_NVCC, Path("/usr/local/cuda/bin/nvcc")):
        if candidate.is_file():
            return candidate
    found = shutil.which("nvcc")
    if found is None:
        pytest.skip("no nvcc: neither the pinned wheel nor /usr/local/cuda nor PATH has one")
    return Path(found)


def find_cute() -> Path:
    try:
        import cutlass_library  # only GPU tests need it
    except ImportError:
        pytest.skip("cutlass_library (CuTe headers) is not installed")
    include = Path(cutlass_library.__file__).parent / "source" / "include"
    if not (include / "cute" / "tensor.hpp").is_file():
        pytest.skip(f"CuTe headers not found under {include}")
    return include


def build_and_run(source: Path, out_dir: Path, timeout_s: int = 900) -> str:
    """Compile `source` for sm_90a (instances/include, the generated arch header and CuTe on the include
    path), run it, return stdout."""
    nvcc = find_nvcc()
    binary = out_dir / source.stem
    cmd = [str(nvcc), "-std=c++17", "-O3", "--expt-relaxed-constexpr"]
    cmd += ["-gencode=arch=compute_90a,code=sm_90a"]
    cmd += ["-isystem", str(find_cute()), f"-I{REPO_ROOT / 'instances' / 'include'}"]
    cmd += [f"-I{arch_include(out_dir)}"]
    cmd += [f"-L{nvcc.parent.parent / 'lib'}", str(source), "-o", str(binary)]
    built = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout_s)
    assert built.returncode == 0, f"compile failed:\n{built.stderr[-4000:]}"
    ran = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=timeout_s)
    assert ran.returncode == 0, f"exit {ran.returncode}\n{ran.stdout[-4000:]}\n{ran.stderr[-2000:]}"
    return ran.stdout


SUMMARY_PART = re.compile(r"(\d+) ([a-z][a-z -]*)")


def summary_counts(line: str) -> dict[str, int]:
    """The counts of a check program's last line, ``<n> checked, <n> <what>, ..., <n> failures``, by name."""
    counts: dict[str, int] = {}
    for part in line.split(", "):
        match = SUMMARY_PART.fullmatch(part)
        assert match is not None, f"not a check summary: {line!r}"
        counts[match[2]] = int(match[1])
    assert "failures" in counts, f"no failure count in the check summary: {line!r}"
    return counts


def passed_check(output: str) -> tuple[list[str], dict[str, int]]:
    """The lines and summary counts of a check program's output; fails, naming its FAIL lines, unless the
    summary reports 0 failures."""
    lines = output.splitlines()
    assert lines, "the check program printed nothing"
    counts = summary_counts(lines[-1])
    failed = [line for line in lines if line.startswith("FAIL")]
    assert counts["failures"] == 0, "\n".join(failed) or lines[-1]
    return lines, counts


def run_check(source_name: str, out_dir: Path) -> tuple[list[str], dict[str, int]]:
    """Build and run ``tests/kernels/<source_name>`` (build_and_run), print its output (shown with -rP: the
    per-case lines) and return passed_check of it."""
    output = build_and_run(REPO_ROOT / "tests" / "kernels" / source_name, out_dir)
    print(output)
    return passed_check(output)
