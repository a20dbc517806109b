"""Option validation and help, through the real SConstruct: one line naming the bad input, exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest
from build_sandbox import REPO_ROOT

pytestmark = pytest.mark.build

OPTION_DEFAULTS = {
    "ruleset": "tiny",
    "arch": "sm_90a",
    "directions": "all",
    "dtypes": "all",
    "ndims": "all",
    "toolchain": "pinned",
    "cuda_root": "(empty)",
    "legacy_dir": "../shared/legacy/ck_builder_configs",
    "chunk": "25",
    "cache_dir": "(empty)",
    "jobs": "auto",
    "memory": "auto",
    "verbose": "0",
    "kernels": "(empty)",
    "exclude_kernels": "(empty)",
}


def _scons(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "SCons", "-Q", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def _error_line(run: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one error line, got: {run.stderr!r}"
    assert "Traceback" not in run.stderr
    return lines[0]


def test_misspelled_option_is_rejected_naming_the_valid_ones() -> None:
    run = _scons("rulset=tiny")
    assert run.returncode == 2
    line = _error_line(run)
    assert "'rulset'" in line
    assert "did you mean 'ruleset'" in line
    for name in OPTION_DEFAULTS:
        assert name in line


@pytest.mark.parametrize(
    ("argument", "bad", "accepted"),
    [
        ("ruleset=huge", "'huge'", ["tiny", "default", "tests", "profiler", "full", "full-tests"]),
        ("arch=sm_70", "'sm_70'", ["sm_90a", "sm_80"]),
        ("directions=fwd,bwd", "'bwd'", ["fwd", "bwd_data", "bwd_weight"]),
        ("dtypes=fp16,fp8", "'fp8'", ["fp16", "bf16", "fp32"]),
        ("ndims=4", "'4'", ["2", "3"]),
        ("chunk=0", "'0'", ["1 to 25"]),
        ("chunk=26", "'26'", ["1 to 25"]),
        ("chunk=many", "'many'", ["1 to 25"]),
        ("toolchain=clang", "'clang'", ["pinned", "system"]),
        ("jobs=-3", "'-3'", [">= 1"]),
        ("memory=lots", "'lots'", [">= 1"]),
        ("verbose=maybe", "'maybe'", ["0", "1"]),
        ("toolchain=system cuda_root=/nonexistent/cuda", "'/nonexistent/cuda'", ["bin/nvcc"]),
        ("kernels=Fwd_fp16", "'Fwd_fp16'", ["lowercase letters, digits, '_'", "joined by '*'"]),
        ("exclude_kernels=a,b-c", "'b-c'", ["lowercase letters, digits, '_'"]),
        ("kernels=**", "'**'", ["joined by '*'"]),
    ],
)
def test_bad_value_names_value_and_accepted_values(argument: str, bad: str, accepted: list[str]) -> None:
    run = _scons(*argument.split())
    assert run.returncode == 2
    line = _error_line(run)
    assert bad in line
    for value in accepted:
        assert value in line


def test_system_toolchain_needs_a_cuda_root() -> None:
    run = _scons("toolchain=system")
    assert run.returncode == 2
    assert "cuda_root" in _error_line(run)


def test_help_documents_every_option_with_its_default() -> None:
    run = _scons("-h")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    for name, default in OPTION_DEFAULTS.items():
        matching = [line for line in lines if line.strip().startswith(f"{name}=")]
        assert len(matching) == 1, f"{name} not documented once in:\n{run.stdout}"
        assert matching[0].endswith(f"[default: {default}]"), matching[0]
    for target in ("generate", "instances", "profiler", "check", "compiledb"):
        assert any(line.strip().startswith(f"{target} ") for line in lines), target


def test_help_says_the_nvcc_memory_bound_holds_whatever_jobs_says() -> None:
    run = _scons("-h")
    jobs_line = next(line for line in run.stdout.splitlines() if line.strip().startswith("jobs="))
    assert "whatever -j says" in jobs_line
    assert "2 GiB + 0.4 GiB x chunk" in jobs_line
