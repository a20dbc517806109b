"""nvcc's memory bound holds whatever -j says: the fake nvcc logs how many compiles ran when each started."""

from __future__ import annotations

import pytest
from build_sandbox import Sandbox

pytestmark = pytest.mark.build


def _overlaps(sandbox: Sandbox) -> list[int]:
    return [int(line) for line in (sandbox.cuda / "overlap.log").read_text().split()]


@pytest.mark.parametrize(("memory_gib", "jobs", "slots"), [(24, 8, 2), (12, 4, 1)])
def test_large_jobs_never_run_more_nvcc_than_memory_holds(
    sandbox: Sandbox, memory_gib: int, jobs: int, slots: int
) -> None:
    # chunk=25: 2 GiB + 25 x 0.4 GiB = 12 GiB per nvcc, so 24 GiB holds 2 and 12 GiB holds 1.
    (sandbox.cuda / "DELAY").write_text("0.15")
    sandbox.scons(f"-j{jobs}", f"memory={memory_gib}", "chunk=25", "profiler")
    overlaps = _overlaps(sandbox)
    assert len(overlaps) == len(sandbox.compiled_sources()) > jobs
    # Never above the slots, and (compiles last 0.15 s, there are many) the slots are used.
    assert max(overlaps) == slots


def test_the_limit_does_not_rebuild_or_depend_on_the_slot_count(built: Sandbox) -> None:
    # Slots are side effects, outside every signature: another slot count (memory=) rebuilds nothing.
    run = built.scons("memory=48", "profiler")
    assert built.calls() == []
    assert "`profiler' is up to date." in run.stdout
