"""A build recovers from anything (issue 11): killed, dry-run or disturbed, the next plain build succeeds and
its outputs are byte-identical to a clean build's.

Each scenario runs the real generator and rule set ``tiny`` (all three directions) with the fake nvcc of
``fixture_repo`` (compiles, archives and links take milliseconds, so a scenario costs a few seconds). The
build is killed the way a cancelled CI job or Ctrl-C kills it: a signal to its whole process group, at a
moment the test observes (the generate step running, a compile or the link half-written, via the fake
nvcc's SLOW / SLOWLINK hooks). Then ``scons ruleset=tiny profiler check`` must succeed, print no traceback,
leave no temporary file, and leave ``build/`` as a clean build leaves it (file set, bytes, permissions; the
sandbox path is normalised, SCons's database and the plan memos' digests are not compared).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from build_sandbox import SCONS, Sandbox, make_real_sandbox

pytestmark = pytest.mark.build

VARIANT = "tiny-sm_90a"
TIMEOUT_S = 120
NOT_COMPARED = ("sconsign.dblite",)


def _args(sandbox: Sandbox, *targets: str) -> list[str]:
    return [
        f"cuda_root={sandbox.cuda}",
        "toolchain=system",
        "ruleset=tiny",
        f"legacy_dir={sandbox.root / 'legacy'}",
        *targets,
    ]


def _build(sandbox: Sandbox, *extra: str) -> str:
    run = subprocess.run(
        [*SCONS, *_args(sandbox, *extra)],
        cwd=sandbox.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, f"scons {' '.join(extra)} failed ({run.returncode}):\n{output}"
    assert "Traceback" not in output, output
    return output


def _snapshot(sandbox: Sandbox) -> dict[str, tuple[int, bytes]]:
    """Relative path -> (permission bits, bytes with the sandbox path replaced) of every file in build/."""
    root = sandbox.root / "build" / VARIANT
    marker = str(sandbox.root).encode()
    files: dict[str, tuple[int, bytes]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if relative in NOT_COMPARED:
            continue
        data = path.read_bytes()
        if path.name.startswith("plan_") and path.suffix == ".json":
            data = b"memo"  # holds digests of absolute paths and mtimes; its reading is tested below
        files[relative] = (path.stat().st_mode & 0o777, data.replace(marker, b"<sandbox>"))
    return files


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, bytes]]:
    """What a clean ``scons ruleset=tiny profiler check`` leaves in build/."""
    sandbox = make_real_sandbox(tmp_path_factory.mktemp("clean") / "checkout", VARIANT)
    _build(sandbox, "profiler", "check")
    return _snapshot(sandbox)


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return make_real_sandbox(tmp_path / "checkout", VARIANT)


def _partial_file(folder: Path, pattern: str) -> Callable[[], bool]:
    """True once a file matching ``pattern`` under ``folder`` holds the fake nvcc's half-written output."""

    def seen() -> bool:
        for path in folder.rglob(pattern):
            try:
                if path.read_bytes().startswith(b"partial"):
                    return True
            except OSError:
                continue
        return False

    return seen


def _interrupt(sandbox: Sandbox, line_starts: str, ready: Callable[[], bool], sig: signal.Signals) -> str:
    """Start a build, wait for an output line starting with ``line_starts`` and then for ``ready()``, and
    send ``sig`` to the build's process group. Returns what the build printed."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [*SCONS, *_args(sandbox, "profiler", "check")],
        cwd=sandbox.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    printed = []
    deadline = time.monotonic() + TIMEOUT_S
    try:
        for line in process.stdout:
            printed.append(line)
            if line.startswith(line_starts):
                break
        else:
            pytest.fail(f"the build ended before printing {line_starts!r}:\n{''.join(printed)}")
        while not ready():
            assert time.monotonic() < deadline, f"never ready to interrupt:\n{''.join(printed)}"
            time.sleep(0.02)
        os.killpg(process.pid, sig)
        rest, _ = process.communicate(timeout=TIMEOUT_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode != 0, "the interrupted build claims success"
    return "".join(printed) + rest


def _recover_and_compare(sandbox: Sandbox, clean: dict[str, tuple[int, bytes]]) -> None:
    for hook in ("SLOW", "SLOWLINK"):
        (sandbox.cuda / hook).unlink(missing_ok=True)
    _build(sandbox, "profiler", "check")
    build = sandbox.root / "build" / VARIANT
    assert not sorted(build.rglob("*.tdtmp")), "temporary files left behind"
    umask = os.umask(0)
    os.umask(umask)
    written = [*build.glob("plan_*.json"), *(p for p in (build / "gen").rglob("*") if p.is_file())]
    modes = {p.stat().st_mode & 0o777 for p in written}
    assert modes == {0o666 & ~umask}, f"generated files not created with the umask: {sorted(map(oct, modes))}"
    recovered = _snapshot(sandbox)
    assert sorted(recovered) == sorted(clean)
    differing = [path for path in clean if recovered[path] != clean[path]]
    assert not differing, f"differ from a clean build: {differing}"
    # A second build has nothing to do.
    assert "[1/" not in _build(sandbox, "profiler", "check")


def _always() -> bool:
    return True


SIGNALS = [signal.SIGINT, signal.SIGKILL]


@pytest.mark.parametrize("sig", SIGNALS, ids=["sigint", "sigkill"])
def test_killed_during_generate(sandbox: Sandbox, clean: dict[str, tuple[int, bytes]], sig) -> None:
    _interrupt(sandbox, "generate ", _always, sig)
    _recover_and_compare(sandbox, clean)


@pytest.mark.parametrize("sig", SIGNALS, ids=["sigint", "sigkill"])
def test_killed_during_a_compile(sandbox: Sandbox, clean: dict[str, tuple[int, bytes]], sig) -> None:
    (sandbox.cuda / "SLOW").write_text("60")
    _interrupt(sandbox, "[", _partial_file(sandbox.root / "build", "*.o"), sig)
    _recover_and_compare(sandbox, clean)


@pytest.mark.parametrize("sig", SIGNALS, ids=["sigint", "sigkill"])
def test_killed_during_the_link(sandbox: Sandbox, clean: dict[str, tuple[int, bytes]], sig) -> None:
    (sandbox.cuda / "SLOWLINK").write_text("60")
    ready = _partial_file(sandbox.root / "build", "tiledispatch_profiler")
    _interrupt(sandbox, "link ", ready, sig)
    _recover_and_compare(sandbox, clean)


def test_deleted_truncated_and_corrupt_state(sandbox: Sandbox, clean: dict[str, tuple[int, bytes]]) -> None:
    _build(sandbox, "profiler", "check")
    build = sandbox.root / "build" / VARIANT
    gen = build / "gen"
    (gen / "register_fwd.cpp").unlink()
    (gen / "expected_bwd_data.txt").unlink()
    next(gen.glob("unit_bwd_weight_*.cu")).write_bytes(b"")
    header = next((gen / "kernels").glob("grouped_conv_fwd_*.hpp"))
    header.write_bytes(header.read_bytes()[:40])
    (build / "plan_fwd.json").write_bytes(b"\x00\xff not json")
    (build / "plan_bwd_data.json").write_text('{"key": "0", "plan": ')
    (build / "plan_bwd_weight.json").write_text('{"unexpected": true}')
    # Temporaries of a writer that was killed (no process has this id: above the kernel's pid_max).
    (gen / ".register_fwd.cpp.99999999.0badc0de.tdtmp").write_text("half")
    (build / ".plan_fwd.json.99999999.0badc0de.tdtmp").write_text("half")
    _recover_and_compare(sandbox, clean)


def test_a_dry_run_then_a_build(sandbox: Sandbox, clean: dict[str, tuple[int, bytes]]) -> None:
    _build(sandbox, "-n", "profiler", "check")
    _recover_and_compare(sandbox, clean)


def test_a_deleted_build_directory_after_a_build(
    sandbox: Sandbox, clean: dict[str, tuple[int, bytes]]
) -> None:
    _build(sandbox, "profiler", "check")
    shutil.rmtree(sandbox.root / "build" / VARIANT / "gen")
    _build(sandbox, "-n", "profiler")
    _recover_and_compare(sandbox, clean)
