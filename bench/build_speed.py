"""Build-speed numbers for docs/performance.md: cold build, no-op build, one-rule change, kernels per minute.

Runs the real SConstruct with the pinned toolchain in a fresh copy of the repository's tracked files and of
the legacy .conf directory (so neither the working tree's build/ nor ../shared is touched), with ``-j JOBS``:

1. cold: ``scons ruleset=tiny profiler check`` from nothing (every unit, the runtime, the profiler link, the
   instance-string check);
2. no-op: the same command again, and ``scons ruleset=tiny profiler`` (must say up to date);
3. one-rule change, on a small legacy rule set so that no Python source is edited: the ``bwd_data`` fp16 2D
   library of ``ruleset=tests`` is built (setup, timed but not the figure), then one line of the copied
   ``backward_data/tests/nhwgc_fp16.conf`` that holds one instance is removed and the library rebuilt.

Kernels per minute per core = instances / cold wall minutes / jobs (the cold time includes the runtime, the
profiler and the check, so this undercounts). The load average is recorded around every step, since another
process may share the cores. Prints a Markdown table and writes JSON if asked.

Usage: .venv/bin/python bench/build_speed.py [--jobs 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

REPO_ROOT = Path(__file__).resolve().parents[1]
LEGACY_DIR = REPO_ROOT.parent / "shared" / "legacy" / "ck_builder_configs"
SUMMARY = re.compile(r"tiledispatch: (\d+) units compiled, (\d+) from cache, (\d+) up to date")
CHANGED_CONF = Path("backward_data/tests/nhwgc_fp16.conf")
CHANGE_SELECTION = ["ruleset=tests", "directions=bwd_data", "dtypes=fp16", "ndims=2"]
CHANGE_TARGET = "build/tests-sm_90a/lib/libbwd_data_instances.a"


class Step(BaseModel):
    name: str
    command: str
    seconds: float
    units_compiled: int
    units_up_to_date: int
    up_to_date_message: bool
    load_before: float
    load_after: float


class BuildSpeed(BaseModel):
    jobs: int
    cores: int
    instances: int
    units: int
    removed_line: str
    changed_units: list[str]
    steps: list[Step]
    kernels_per_minute_per_core: float


class BenchError(RuntimeError):
    """A build step failed; the message carries its output."""


def _copy_tracked_files(destination: Path) -> None:
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True, text=True
    ).stdout
    for relative in filter(None, listing.split("\0")):
        source = REPO_ROOT / relative
        if source.is_file():
            target = destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _build(checkout: Path, name: str, arguments: list[str]) -> Step:
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "SCons", *arguments], cwd=checkout, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        raise BenchError(f"{name} build failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}")
    summary = SUMMARY.search(run.stdout)
    if summary is None:
        raise BenchError(f"{name}: no summary line in the output:\n{run.stdout[-2000:]}")
    return Step(
        name=name,
        command="scons " + " ".join(arguments),
        seconds=seconds,
        units_compiled=int(summary.group(1)),
        units_up_to_date=int(summary.group(3)),
        up_to_date_message="is up to date." in run.stdout,
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )


def _instance_names(checkout: Path, legacy_dir: Path) -> set[str]:
    """bwd_data fp16 2D instances of ``tests`` from ``legacy_dir``, enumerated by the copied generator."""
    script = (
        "import sys; from driver.build_api import GenerateRequest, collect_configs; "
        "r = GenerateRequest(ruleset='tests', direction='bwd_data', dtypes=('fp16',), ndims=(2,), "
        "legacy_dir=sys.argv[1]); print('\\n'.join(c.name for c in collect_configs(r)))"
    )
    command = [sys.executable, "-c", script, str(legacy_dir)]
    run = subprocess.run(command, cwd=checkout, capture_output=True, text=True, check=True)
    return set(run.stdout.split())


def _remove_one_instance_line(checkout: Path, legacy_dir: Path) -> str:
    """Remove the middle-most line of the .conf whose removal takes away exactly one instance; return it."""
    conf = legacy_dir / CHANGED_CONF
    lines = conf.read_text().splitlines(keepends=True)
    before = _instance_names(checkout, legacy_dir)
    order = sorted(range(len(lines)), key=lambda index: abs(index - len(lines) // 2))
    for index in order:
        conf.write_text("".join(lines[:index] + lines[index + 1 :]))
        if len(before - _instance_names(checkout, legacy_dir)) == 1:
            return lines[index].strip()
    conf.write_text("".join(lines))
    raise BenchError(f"no line of {CHANGED_CONF} holds exactly one instance")


def _unit_texts(gen: Path) -> dict[str, str]:
    """Each generated unit's text by name, for telling which units a change rewrote."""
    return {path.name: path.read_text() for path in gen.glob("unit_*.cu")}


def _describe(name: str, text: str) -> str:
    instances = text.count('#include "kernels/')
    return f"{name} ({instances} instances)"


def measure(jobs: int) -> BuildSpeed:
    with tempfile.TemporaryDirectory(prefix="tiledispatch-build-speed-") as temporary:
        checkout = Path(temporary) / "checkout"
        legacy = Path(temporary) / "legacy"
        _copy_tracked_files(checkout)
        shutil.copytree(LEGACY_DIR, legacy)
        common = [f"-j{jobs}", f"legacy_dir={legacy}"]
        tiny = [*common, "ruleset=tiny"]
        steps = [
            _build(checkout, "cold (tiny, profiler + check)", [*tiny, "profiler", "check"]),
            _build(checkout, "no-op (tiny, profiler + check)", [*tiny, "profiler", "check"]),
            _build(checkout, "no-op (tiny, profiler)", [*tiny, "profiler"]),
        ]
        gen = checkout / "build" / "tiny-sm_90a" / "gen"
        instances = sum(len(path.read_text().splitlines()) for path in gen.glob("expected_*.txt"))
        units = len(list(gen.glob("unit_*.cu")))
        change = [*common, *CHANGE_SELECTION, CHANGE_TARGET]
        steps.append(_build(checkout, "setup: tests bwd_data fp16 2D library", change))
        change_gen = checkout / "build" / "tests-sm_90a" / "gen"
        before = _unit_texts(change_gen)
        removed = _remove_one_instance_line(checkout, legacy)
        steps.append(_build(checkout, "one-rule change (one .conf line removed)", change))
        after = _unit_texts(change_gen)
        changed = [_describe(name, text) for name, text in sorted(after.items()) if before.get(name) != text]
    return BuildSpeed(
        jobs=jobs,
        cores=len(os.sched_getaffinity(0)),
        instances=instances,
        units=units,
        removed_line=removed,
        changed_units=changed,
        steps=steps,
        kernels_per_minute_per_core=instances / (steps[0].seconds / 60) / jobs,
    )


def to_markdown(result: BuildSpeed) -> str:
    lines = [
        f"`tiny`: {result.instances} instances in {result.units} units; "
        f"`-j{result.jobs}` on {result.cores} cores",
        "",
        "| step | wall time (s) | units compiled | units up to date | load avg (1 min) before / after |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {step.name} | {step.seconds:.1f} | {step.units_compiled} | {step.units_up_to_date} "
        f"| {step.load_before:.1f} / {step.load_after:.1f} |"
        for step in result.steps
    ]
    lines += [
        "",
        f"removed line: `{result.removed_line[:80]}...`",
        f"units rewritten by the change: {', '.join(result.changed_units) or 'none'}",
        f"kernels per minute per core (cold): {result.kernels_per_minute_per_core:.1f}",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    try:
        result = measure(args.jobs)
    except BenchError as error:
        print(error, file=sys.stderr)
        return 1
    print(to_markdown(result))
    if args.json:
        args.json.write_text(result.model_dump_json(indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
