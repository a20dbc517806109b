"""Incremental behaviour of the build (DESIGN decision 7), on the synthetic repository with a fake nvcc.

Each test compares what the fake nvcc compiled with what an independent reading of the sandbox says must be
compiled (units whose bytes changed, units that include an edited header, ...).
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from build_sandbox import Sandbox

pytestmark = pytest.mark.build

PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] nvcc (\S+)$")
SUMMARY = re.compile(
    r"^tiledispatch: (\d+) units compiled, (\d+) from cache, (\d+) up to date \(of (\d+)\) in [\d.]+ s$"
)
# Objects outside the generated units: instances/src/runtime.cpp, profiler/src/main.cpp and the runtime's
# compiled-in selection models (generated; the sandbox has no models, so it embeds none).
OTHER_SOURCES = ["embedded_models.cpp", "main.cpp", "runtime.cpp"]


def _summary(output: str) -> tuple[int, int, int, int]:
    matches = [SUMMARY.match(line) for line in output.splitlines()]
    found = [match for match in matches if match]
    assert len(found) == 1, output
    return tuple(int(group) for group in found[0].groups())  # type: ignore[return-value]


def _snapshot(paths: list[Path]) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in paths}


def _all_sources(sandbox: Sandbox) -> list[str]:
    return sorted([path.name for path in sandbox.units()] + OTHER_SOURCES)


def test_cold_build_compiles_every_unit_with_progress_and_summary(sandbox: Sandbox) -> None:
    run = sandbox.scons("profiler")
    expected = _all_sources(sandbox)
    assert sandbox.compiled_sources() == expected
    progress = [PROGRESS.match(line) for line in run.stdout.splitlines()]
    shown = [match for match in progress if match]
    assert sorted(match.group(3) for match in shown) == expected
    assert sorted(int(match.group(1)) for match in shown) == list(range(1, len(expected) + 1))
    assert {int(match.group(2)) for match in shown} == {len(expected)}
    assert _summary(run.stdout) == (len(expected), 0, 0, len(expected))
    # Quiet: no raw command line reaches the output.
    assert "-gencode" not in run.stdout


def test_noop_build_does_nothing_and_says_up_to_date(built: Sandbox) -> None:
    run = built.scons("profiler")
    assert built.calls() == []
    assert "`profiler' is up to date." in run.stdout
    total = len(_all_sources(built))
    assert _summary(run.stdout) == (0, 0, total, total)


def test_changing_one_rule_recompiles_only_changed_units(built: Sandbox) -> None:
    before = _snapshot(built.units())
    rules = built.root / "rulesets" / "tiny.txt"
    rules.write_text(rules.read_text() + "fwd fp16 kfwd05x alpha\n")
    built.scons("check")
    after = _snapshot(built.units())
    changed = sorted(name for name, text in after.items() if before.get(name) != text)
    assert changed, "the rule change should change at least one unit"
    assert len(changed) < len(after) // 2
    assert built.compiled_sources() == changed


def test_removing_one_rule_recompiles_only_changed_units(built: Sandbox) -> None:
    before = _snapshot(built.units())
    rules = built.root / "rulesets" / "tiny.txt"
    rules.write_text("".join(line + "\n" for line in rules.read_text().splitlines() if "kbwdd03" not in line))
    built.scons("check")
    after = _snapshot(built.units())
    changed = sorted(name for name, text in after.items() if before.get(name) != text)
    assert changed
    assert built.compiled_sources() == changed


def _includes_template(sandbox: Sandbox, unit: Path, template: str) -> bool:
    """Whether a unit includes ``template`` through its generated kernel headers (read independently)."""
    for header in re.findall(r'#include "(kernels/[^"]+)"', unit.read_text()):
        if f"tiledispatch/kernels/{template}.hpp" in (sandbox.gen / header).read_text():
            return True
    return False


def test_editing_one_template_header_recompiles_only_its_includers(built: Sandbox) -> None:
    header = built.root / "instances" / "include" / "tiledispatch" / "kernels" / "beta.hpp"
    header.write_text(header.read_text() + "// a comment that changes the header's bytes\n")
    built.scons("profiler")
    includers = sorted(unit.name for unit in built.units() if _includes_template(built, unit, "beta"))
    assert includers, "the fixture must have units that use the beta template"
    assert len(includers) < len(built.units())
    assert built.compiled_sources() == includers


def test_an_arch_spec_edit_regenerates_the_arch_header_and_recompiles_its_includers(built: Sandbox) -> None:
    """The arch header is generated (build_api.generate_arch_header) into the generated directory; the alpha
    kernels include it, the beta ones do not."""
    header = built.gen / "tiledispatch" / "generated" / "arch_traits.hpp"
    assert "232448" in header.read_text()
    spec = built.root / "generators" / "arch_spec.txt"
    spec.write_text("sm_90a smem_per_block_bytes=1\n")
    built.scons("profiler")
    assert "smem_per_block_bytes=1\n" in header.read_text()
    includers = [unit.name for unit in built.units() if _includes_template(built, unit, "alpha")]
    assert includers and len(includers) < len(built.units())
    runtime = built.root / "instances" / "src" / "runtime.cpp"
    assert "tiledispatch/kernels/alpha.hpp" in runtime.read_text()
    assert built.compiled_sources() == sorted([*includers, runtime.name])


def test_a_generator_edit_that_leaves_the_arch_header_alone_recompiles_nothing(built: Sandbox) -> None:
    api = built.root / "driver" / "build_api.py"
    api.write_text(api.read_text() + "# a comment\n")
    run = built.scons("profiler")
    assert "generate arch header" in run.stdout  # its sources changed, so the action ran ...
    assert built.calls() == []  # ... and rewrote nothing: no unit recompiles


def test_changing_nvcc_flags_recompiles_everything(built: Sandbox) -> None:
    flags = built.root / "site_scons" / "tiledispatch_build" / "flags.py"
    flags.write_text(flags.read_text().replace('"-O3",', '"-O3", "-lineinfo",'))
    built.scons("profiler")
    assert built.compiled_sources() == _all_sources(built)
    assert all("-lineinfo" in call for call in built.calls() if " -c " in call)


def test_changing_the_toolchain_version_recompiles_everything(built: Sandbox) -> None:
    (built.cuda / "VERSION").write_text("fake nvcc, release 13.0, V13.0.99\n")
    built.scons("profiler")
    assert built.compiled_sources() == _all_sources(built)


def _expected_object(unit: Path) -> bytes:
    """What the fake nvcc writes for a unit: a digest line, then the unit's text."""
    text = unit.read_bytes()
    return f"obj {hashlib.sha256(text).hexdigest()}\n".encode() + text


def test_build_killed_mid_compile_ends_correct_after_restart(sandbox: Sandbox) -> None:
    sandbox.scons("generate")
    (sandbox.cuda / "SLOW").write_text("30")
    command = [sys.executable, "-m", "SCons", "-j1", "toolchain=system", f"cuda_root={sandbox.cuda}", "check"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    process = subprocess.Popen(command, cwd=sandbox.root, start_new_session=True, **quiet)
    try:
        deadline = time.monotonic() + 60
        # The fake nvcc writes a partial object and sleeps: kill while the first unit is half written.
        while not sandbox.compiled_sources() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sandbox.compiled_sources(), "the build never started compiling"
        time.sleep(0.3)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    half_written = [path for path in sandbox.compiled_objects() if path.read_bytes() == b"partial\n"]
    assert half_written, "the kill should leave a half-written object behind"
    (sandbox.cuda / "SLOW").unlink()
    sandbox.scons("check")
    by_stem = {unit.stem: unit for unit in sandbox.units()}
    objects = {path.stem: path for path in sandbox.build.glob("obj/*/*.o") if path.stem in by_stem}
    assert sorted(objects) == sorted(by_stem)
    for stem, obj in objects.items():
        assert obj.read_bytes() == _expected_object(by_stem[stem]), stem
    sandbox.reset_calls()
    sandbox.scons("check")
    assert sandbox.calls() == []


def _enumerations(sandbox: Sandbox) -> list[str]:
    log = sandbox.root / "enumerations.log"
    return sorted(log.read_text().splitlines()) if log.is_file() else []


def test_a_rule_change_enumerates_each_direction_once(built: Sandbox) -> None:
    # plan (SConstruct read) and generate (action) share one enumeration; a no-op build needs none (memo).
    (built.root / "enumerations.log").unlink(missing_ok=True)
    built.scons("profiler")
    assert _enumerations(built) == []
    rules = built.root / "rulesets" / "tiny.txt"
    rules.write_text(rules.read_text() + "fwd fp16 kfwd05x alpha\n")
    built.scons("profiler")
    assert _enumerations(built) == ["bwd_data", "bwd_weight", "fwd"]
    assert "kfwd05x" in (built.gen / "expected_fwd.txt").read_text()


def test_generate_enumerates_itself_when_the_plan_came_from_the_memo(sandbox: Sandbox) -> None:
    # compiledb plans without generating; the later build finds the memo and must still write every file.
    sandbox.scons("compiledb")
    assert not sandbox.gen.exists()
    (sandbox.root / "enumerations.log").unlink()
    sandbox.scons("check")
    assert _enumerations(sandbox) == ["bwd_data", "bwd_weight", "fwd"]
    assert sandbox.units()
