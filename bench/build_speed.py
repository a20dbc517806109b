"""Build-speed numbers for docs/performance.md: cold build, no-op build, one-rule change, kernels per minute.

Runs the real SConstruct with the pinned toolchain in a fresh copy of the repository's tracked files (so the
working tree's build/ is not touched), with ``-j JOBS``:

1. cold: ``scons ruleset=RULESET profiler`` from nothing;
2. no-op: the same command again;
3. one-rule change: ``TINY_MIN`` in rulesets/selection.py goes up by one (one more instance per direction in
   ``tiny``), then the same command.

Kernels per minute per core = instances built / cold wall minutes / jobs (the cold time includes the runtime
library and the profiler, so this undercounts slightly). Prints a Markdown table and writes JSON if asked.

Usage: .venv/bin/python bench/build_speed.py [--jobs 2] [--ruleset tiny] [--json out.json]
"""

from __future__ import annotations

import argparse
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
RULE_FILE = Path("rulesets/selection.py")
RULE_BEFORE, RULE_AFTER = "TINY_MIN = 10", "TINY_MIN = 11"


class Step(BaseModel):
    name: str
    seconds: float
    units_compiled: int
    units_up_to_date: int


class BuildSpeed(BaseModel):
    ruleset: str
    jobs: int
    instances: int
    units: int
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
    compiled, up_to_date = int(summary.group(1)), int(summary.group(3))
    return Step(name=name, seconds=seconds, units_compiled=compiled, units_up_to_date=up_to_date)


def measure(ruleset: str, jobs: int) -> BuildSpeed:
    with tempfile.TemporaryDirectory(prefix="tiledispatch-build-speed-") as temporary:
        checkout = Path(temporary)
        _copy_tracked_files(checkout)
        arguments = [f"-j{jobs}", f"ruleset={ruleset}", f"legacy_dir={LEGACY_DIR}", "profiler"]
        steps = [_build(checkout, "cold", arguments), _build(checkout, "no-op", arguments)]
        gen = checkout / "build" / f"{ruleset}-sm_90a" / "gen"
        instances = sum(len(path.read_text().splitlines()) for path in gen.glob("expected_*.txt"))
        units = len(list(gen.glob("unit_*.cu")))
        rules = checkout / RULE_FILE
        text = rules.read_text()
        if RULE_BEFORE in text:
            rules.write_text(text.replace(RULE_BEFORE, RULE_AFTER))
            steps.append(_build(checkout, "one-rule change", arguments))
        else:
            note = f"note: '{RULE_BEFORE}' not found in {RULE_FILE}; one-rule change not measured"
            print(note, file=sys.stderr)
    cold_minutes = steps[0].seconds / 60
    return BuildSpeed(
        ruleset=ruleset,
        jobs=jobs,
        instances=instances,
        units=units,
        steps=steps,
        kernels_per_minute_per_core=instances / cold_minutes / jobs,
    )


def to_markdown(result: BuildSpeed) -> str:
    lines = [
        f"`{result.ruleset}`: {result.instances} instances in {result.units} units, `-j{result.jobs}`",
        "",
        "| step | wall time (s) | units compiled | units up to date |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {step.name} | {step.seconds:.1f} | {step.units_compiled} | {step.units_up_to_date} |"
        for step in result.steps
    ]
    lines += ["", f"kernels per minute per core (cold): {result.kernels_per_minute_per_core:.1f}"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--ruleset", default="tiny")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    try:
        result = measure(args.ruleset, args.jobs)
    except BenchError as error:
        print(error, file=sys.stderr)
        return 1
    print(to_markdown(result))
    if args.json:
        args.json.write_text(result.model_dump_json(indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
