"""Hermeticity (DESIGN decision 6): a fixed tool environment, a cache shared by checkouts, stable outputs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from build_sandbox import Sandbox, make_sandbox

pytestmark = pytest.mark.build


def test_caller_environment_does_not_reach_the_tools(sandbox: Sandbox, tmp_path: Path) -> None:
    decoy = tmp_path / "decoy_bin"
    decoy.mkdir()
    for tool in ("nvcc", "g++", "gcc"):
        (decoy / tool).write_text("#!/bin/sh\necho decoy >&2\nexit 1\n")
        (decoy / tool).chmod(0o755)
    decoys = {
        "PATH": f"{decoy}:{os.environ['PATH']}",
        "CUDA_HOME": "/decoy/cuda",
        "CUDA_PATH": "/decoy/cuda",
        "CC": "decoy-cc",
        "CXX": "decoy-c++",
        "NVCC_PREPEND_FLAGS": "-decoy",
        "NVCC_APPEND_FLAGS": "-decoy",
        "CPATH": "/decoy/include",
    }
    sandbox.scons("profiler", env={**os.environ, **decoys})
    seen = dict(line.split("=", 1) for line in (sandbox.cuda / "env.log").read_text().splitlines())
    assert seen["PATH"] == "/usr/bin:/bin"
    assert not (set(decoys) - {"PATH"}) & set(seen)
    assert not any("decoy" in value for value in seen.values())


def test_tools_run_by_absolute_path(built: Sandbox) -> None:
    built.scons("verbose=1", "-c", "profiler")
    run = built.scons("verbose=1", "profiler")
    compile_lines = [line for line in run.stdout.splitlines() if " -c " in line]
    assert compile_lines
    for line in compile_lines:
        tool = re.sub(r"^\[\d+/\d+\] ", "", line).split()[0]
        assert tool == str(built.cuda / "bin" / "nvcc")
        assert "-ccbin /usr/bin/g++" in line


def test_second_checkout_builds_from_the_cache_without_compiling(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = make_sandbox(tmp_path / "first")
    first.scons(f"cache_dir={cache}", "check")
    assert first.compiled_sources()
    second = make_sandbox(tmp_path / "second")
    run = second.scons(f"cache_dir={cache}", "check")
    assert second.calls() == [], "a clean second checkout must not call the compiler"
    total = len(second.units()) + 3  # main.cpp, runtime.cpp, embedded_models.cpp
    assert re.search(rf"tiledispatch: 0 units compiled, {total} from cache, 0 up to date", run.stdout)
    assert (second.build / "profiler" / "tiledispatch_profiler").read_bytes() == (
        first.build / "profiler" / "tiledispatch_profiler"
    ).read_bytes()


def test_generated_files_are_byte_identical_across_checkouts(tmp_path: Path) -> None:
    first, second = make_sandbox(tmp_path / "a"), make_sandbox(tmp_path / "b")
    for sandbox in (first, second):
        sandbox.scons("generate")
    files_a = sorted(path.relative_to(first.gen) for path in first.gen.rglob("*") if path.is_file())
    files_b = sorted(path.relative_to(second.gen) for path in second.gen.rglob("*") if path.is_file())
    assert files_a == files_b
    assert all((first.gen / path).read_bytes() == (second.gen / path).read_bytes() for path in files_a)


def test_check_fails_when_an_expected_instance_is_missing(built: Sandbox) -> None:
    # A generator that predicts an instance no unit builds: the profiler's verification must catch it, and the
    # edit to the generator's source alone must be enough to rerun generation and the check.
    api = built.root / "driver" / "build_api.py"
    api.write_text(api.read_text().replace("expected = sorted(", 'expected = ["kfwd_not_built"] + sorted('))
    run = built.scons("check", check=False)
    assert run.returncode != 0
    assert "missing kfwd_not_built" in run.stderr


def test_compiledb_lists_every_compiled_unit(built: Sandbox) -> None:
    built.scons("compiledb")
    entries = json.loads((built.build / "compile_commands.json").read_text())
    assert sorted(Path(entry["file"]).name for entry in entries) == sorted(
        [unit.name for unit in built.units()] + ["embedded_models.cpp", "main.cpp", "runtime.cpp"]
    )
    for entry in entries:
        assert entry["command"].startswith(str(built.cuda / "bin" / "nvcc"))
        assert f"-o {entry['output']}" in entry["command"]
