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

``--per-instance`` measures instead the compile cost of one unit of the Hopper path, one nvcc at a time on one
core (issue 9, item 5): a headers-only unit (what every instance header includes, an empty unit function;
compiled twice, the first a page-cache warm-up) and units of 1, 2, 4 and 8 fp16 instances of ``default`` per
direction, cooperative (both consumer warpgroups on one tile) and ping-pong (``num_wave_groups`` 2) apart.
Instances are the configurations that ``generators.hopper`` puts on the Hopper path (2D and 3D), sampled by
name hash (``sample``: the same on every run, mixed tiles and pipelines, each unit a subset of the next
larger). Headers, units and the arch header are rendered by the generator's own code (``generators.emit``,
``driver.build_api``), and nvcc gets the build's command (``NVCCCOM`` of ``site_scons/site_tools/td_nvcc.py``:
the pinned toolchain, ``tiledispatch_build.flags``). Per unit: wall, user + sys CPU seconds and peak resident
memory (``wait4`` rusage of the nvcc process tree: the largest of its processes, which nvcc runs one after
another). Then a least-squares line per direction and configuration and over all: fixed seconds per unit +
seconds per instance, fixed GiB + GiB per instance, held against the budgets (30 s + 6 s per instance, one
core) and against the slot limiter's ``memory_per_nvcc``.

Usage: .venv/bin/python bench/build_speed.py [--jobs 2] [--json out.json]
       .venv/bin/python bench/build_speed.py --per-instance [--counts 1,2,4,8]
           [--directions fwd,bwd_data,bwd_weight] [--variants cooperative,ping-pong] [--core N]
           [--json out.json]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from enum import Enum
from pathlib import Path
from typing import NoReturn

from pydantic import BaseModel, ConfigDict, PositiveInt, ValidationError, field_validator

REPO_ROOT = Path(__file__).resolve().parents[1]
# Run by path, this script has bench/ on sys.path: the per-instance mode imports the generator (repository
# root) and the build's pure pieces (site_scons), as site_scons/site_init.py makes them importable for SCons.
for _root in (REPO_ROOT, REPO_ROOT / "site_scons"):
    if str(_root) not in sys.path:
        sys.path.insert(0, str(_root))

from tiledispatch_build.flags import compile_flags  # noqa: E402
from tiledispatch_build.jobs import GIB, machine_memory, memory_per_nvcc  # noqa: E402
from tiledispatch_build.toolchain import (  # noqa: E402
    HERMETIC_ENV,
    Toolchain,
    ToolchainError,
    resolve_toolchain,
)

from driver.build_api import GenerateRequest, collect_configs, generate_arch_header  # noqa: E402
from generators.arch import get_arch  # noqa: E402
from generators.chunking import DEFAULT_CHUNK, unit_id  # noqa: E402
from generators.config import KernelConfig  # noqa: E402
from generators.emit import (  # noqa: E402
    UNIT_TEMPLATE,
    banner,
    header_path,
    render_instance_header,
    template_environment,
    write_files,
)
from generators.enums import DataType, Direction  # noqa: E402
from generators.hopper import HopperPlan, hopper_plan  # noqa: E402

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


# --- per-instance mode (issue 9, item 5) --------------------------------------------------------------------

ARCH = "sm_90a"
RULESET = "default"
DTYPE = DataType.FP16
NDIMS = (2, 3)
FIXED_BUDGET_SECONDS = 30.0
PER_INSTANCE_BUDGET_SECONDS = 6.0
DEFAULT_COUNTS = (1, 2, 4, 8)


class UsageError(ValueError):
    """Bad command-line input: one line, exit status 2."""


class Variant(str, Enum):
    """How the Hopper kernel uses its two consumer warpgroups (``generators.hopper.HopperPlan``): both on one
    tile, or each on tiles of its own in turn (``num_wave_groups`` 2). The 16-wide tiles with one consumer
    warpgroup are neither."""

    COOPERATIVE = "cooperative"
    PING_PONG = "ping-pong"

    def matches(self, plan: HopperPlan) -> bool:
        if self is Variant.PING_PONG:
            return plan.ping_pong
        return not plan.ping_pong and plan.consumer_warpgroups == 2


def _once(values: tuple, what: str) -> tuple:
    if not values:
        raise ValueError(f"no {what} given")
    repeated = sorted({str(v.value if isinstance(v, Enum) else v) for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"{what} {', '.join(repeated)} given twice; each once")
    return values


class PerInstanceRequest(BaseModel):
    """What ``--per-instance`` measures; checked completely before anything is generated or compiled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    counts: tuple[PositiveInt, ...] = DEFAULT_COUNTS
    directions: tuple[Direction, ...] = tuple(Direction)
    variants: tuple[Variant, ...] = tuple(Variant)
    core: int

    @field_validator("counts")
    @classmethod
    def _counts(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        _once(value, "instance count")
        if list(value) != sorted(value):
            raise ValueError(f"instance counts {','.join(map(str, value))} are not ascending")
        if len(value) < 2:
            raise ValueError("a line needs at least two instance counts")
        if value[-1] > DEFAULT_CHUNK:
            # The build never puts more into one unit (generators.chunking): a larger one is not a real unit.
            raise ValueError(f"instance count {value[-1]} is above the unit size {DEFAULT_CHUNK}")
        return value

    @field_validator("directions")
    @classmethod
    def _directions(cls, value: tuple[Direction, ...]) -> tuple[Direction, ...]:
        return _once(value, "direction")

    @field_validator("variants")
    @classmethod
    def _variants(cls, value: tuple[Variant, ...]) -> tuple[Variant, ...]:
        return _once(value, "variant")

    @field_validator("core")
    @classmethod
    def _core(cls, value: int) -> int:
        allowed = sorted(os.sched_getaffinity(0))
        if value not in allowed:
            raise ValueError(
                f"core {value} is not one this process may run on ({', '.join(map(str, allowed))})"
            )
        return value

    @classmethod
    def build(cls, **fields: object) -> PerInstanceRequest:
        """Construct, turning a validation failure into one ``UsageError`` line naming the bad value."""
        try:
            return cls(**fields)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            message = str(first.get("ctx", {}).get("error", first["msg"]))
            raise UsageError(f"{where}: {message}") from None


class CompileRun(BaseModel):
    """One nvcc of one unit: ``direction`` and ``variant`` are None for the headers-only unit."""

    direction: Direction | None
    variant: Variant | None
    instances: int
    names: list[str]
    wall_seconds: float
    cpu_seconds: float
    peak_rss_bytes: int
    load_before: float
    load_after: float


class LineFit(BaseModel):
    """``y = fixed + per_instance * instances``, least squares, and its largest absolute residual."""

    fixed: float
    per_instance: float
    max_residual: float

    def at(self, instances: float) -> float:
        return self.fixed + self.per_instance * instances


class SeriesFit(BaseModel):
    """The lines of one direction and variant (both None: every unit with instances together)."""

    direction: Direction | None
    variant: Variant | None
    cpu_seconds: LineFit
    wall_seconds: LineFit
    memory_gib: LineFit


class MemoryVerdict(BaseModel):
    """Whether ``jobs.memory_per_nvcc`` bounds every measured peak and every fitted line up to a full unit."""

    upper_bound: bool
    worst_measured_ratio: float
    """Largest measured peak / ``memory_per_nvcc(instances)`` over the units."""
    fitted_at_chunk_gib: float
    """Largest fitted peak of a ``DEFAULT_CHUNK``-instance unit over the series."""
    assumed_at_chunk_gib: float


class PerInstanceResult(BaseModel):
    date: str
    machine: str
    cores: int
    core: int
    nvcc: str
    flags: list[str]
    commit: str
    headers_only: CompileRun
    runs: list[CompileRun]
    series: list[SeriesFit]
    pooled: SeriesFit
    within_time_budget: bool
    """Every fitted line (CPU seconds) has fixed <= 30 s and per instance <= 6 s."""
    units_within_budget: bool
    """Every unit measured took at most 30 s + 6 s per instance: the budget without the line model, which a
    curve that flattens (shared templates, a peak set by the largest kernel) does not follow exactly."""
    memory: MemoryVerdict
    total_wall_seconds: float


def fit_line(points: Sequence[tuple[float, float]]) -> LineFit:
    """Least-squares line through ``(instances, value)`` points; needs two different instance counts."""
    if len({x for x, _ in points}) < 2:
        raise ValueError("a line needs points at two different instance counts at least")
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    slope = sxy / sxx
    fixed = mean_y - slope * mean_x
    residual = max(abs(y - (fixed + slope * x)) for x, y in points)
    return LineFit(fixed=fixed, per_instance=slope, max_residual=residual)


def fit_series(runs: Sequence[CompileRun], direction: Direction | None, variant: Variant | None) -> SeriesFit:
    return SeriesFit(
        direction=direction,
        variant=variant,
        cpu_seconds=fit_line([(r.instances, r.cpu_seconds) for r in runs]),
        wall_seconds=fit_line([(r.instances, r.wall_seconds) for r in runs]),
        memory_gib=fit_line([(r.instances, r.peak_rss_bytes / GIB) for r in runs]),
    )


def within_time_budget(fit: LineFit) -> bool:
    """Issue 9's compile budget on one core: at most 30 s fixed per unit and 6 s per instance."""
    return fit.fixed <= FIXED_BUDGET_SECONDS and fit.per_instance <= PER_INSTANCE_BUDGET_SECONDS


def unit_within_budget(run: CompileRun) -> bool:
    """One unit's CPU seconds against the budget's line for its size."""
    return run.cpu_seconds <= FIXED_BUDGET_SECONDS + PER_INSTANCE_BUDGET_SECONDS * run.instances


def memory_verdict(runs: Sequence[CompileRun], lines: Sequence[LineFit]) -> MemoryVerdict:
    """``memory_per_nvcc`` stays an upper bound if no measured unit and no fitted line (extrapolated to a full
    unit of ``DEFAULT_CHUNK`` instances, the size the slot limiter is given) goes above it."""
    ratios = [r.peak_rss_bytes / memory_per_nvcc(r.instances) for r in runs]
    fitted = max(line.at(DEFAULT_CHUNK) for line in lines)
    assumed = memory_per_nvcc(DEFAULT_CHUNK) / GIB
    return MemoryVerdict(
        upper_bound=max(ratios) <= 1.0 and fitted <= assumed,
        worst_measured_ratio=max(ratios),
        fitted_at_chunk_gib=fitted,
        assumed_at_chunk_gib=assumed,
    )


def sample(configs: Sequence[KernelConfig], count: int) -> list[KernelConfig]:
    """The first ``count`` of ``configs`` in the order of their names' hashes (blake2b, as the chunking hashes
    names), returned sorted by name as a unit lists them. A pseudo-random sample that is the same on every
    run and for any input order, mixes tiles, pipelines, 2D / 3D and two-stage (the sorted list has them in
    long runs, which evenly spaced picks alias), and nests: a unit of 8 holds the unit of 4, so the slope
    between them is the cost of the added instances, not of a different choice."""
    if not 1 <= count <= len(configs):
        raise ValueError(f"cannot pick {count} of {len(configs)} instances")
    ordered = sorted(configs, key=lambda c: hashlib.blake2b(c.name.encode(), digest_size=8).digest())
    return sorted(ordered[:count], key=lambda c: c.name)


def hopper_configs(direction: Direction, variant: Variant) -> list[KernelConfig]:
    """The fp16 configurations of ``default`` (2D and 3D) that the Hopper path builds as ``variant``, sorted
    by name; the same enumeration the build runs (``driver.build_api.collect_configs``)."""
    request = GenerateRequest(ruleset=RULESET, arch=ARCH, direction=direction, dtypes=(DTYPE,), ndims=NDIMS)
    spec = get_arch(ARCH)
    chosen = []
    for config in collect_configs(request):
        plan = hopper_plan(config, spec) if isinstance(config, KernelConfig) else None
        if isinstance(plan, HopperPlan) and variant.matches(plan):
            chosen.append(config)
    return chosen


def unit_text(direction: Direction, names: Sequence[str]) -> str:
    """A unit as ``generators.emit.render_direction`` writes it (its template, its id from its first name);
    rendered here because content-defined chunking would not put exactly these names into one unit."""
    return (
        template_environment()
        .get_template(UNIT_TEMPLATE)
        .render(
            banner=banner(UNIT_TEMPLATE),
            names=list(names),
            direction=direction.value,
            unit_id=unit_id(names[0]),
        )
    )


def headers_only_text(instance_header: str) -> str:
    """The fixed part of a unit: what an instance header includes, and the unit template with no instance."""
    includes = [line for line in instance_header.splitlines() if line.startswith("#include")]
    empty = (
        template_environment()
        .get_template(UNIT_TEMPLATE)
        .render(banner=banner(UNIT_TEMPLATE), names=[], direction="headers_only", unit_id="0")
    )
    return "\n".join(includes) + "\n" + empty


def nvcc_command(toolchain: Toolchain, gen_dir: Path, source: Path, output: Path) -> list[str]:
    """The build's compile (``NVCCCOM`` in site_scons/site_tools/td_nvcc.py: nvcc and host compiler of the
    toolchain, ``compile_flags``, CuTe as ``-isystem``, ``CPPPATH`` = instances/include and the generated
    directory)."""
    return [
        str(toolchain.nvcc),
        "-ccbin",
        str(toolchain.host_compiler),
        *compile_flags(ARCH),
        "-isystem",
        str(toolchain.cute_include),
        f"-I{REPO_ROOT / 'instances' / 'include'}",
        f"-I{gen_dir}",
        "-c",
        str(source),
        "-o",
        str(output),
    ]


def _pin(core: int) -> None:
    # In the child before exec: nvcc and every process it starts (cudafe++, cicc, ptxas, g++) inherit it.
    os.sched_setaffinity(0, {core})


def compile_measured(command: list[str], core: int, log: Path) -> tuple[float, float, int]:
    """Run one nvcc pinned to ``core``; return wall seconds, user + sys CPU seconds, peak resident bytes."""
    started = time.perf_counter()
    with log.open("w") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=HERMETIC_ENV,
            preexec_fn=functools.partial(_pin, core),
        )
        # wait4, not getrusage(RUSAGE_CHILDREN): its usage is this nvcc's process tree alone, whereas
        # RUSAGE_CHILDREN's ru_maxrss is the largest over every child this script has waited for so far.
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise BenchError(
            f"nvcc failed with status {process.returncode}:\n{' '.join(command)}\n{log.read_text()[-4000:]}"
        )
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024  # ru_maxrss is in KiB on Linux


def _commit() -> str:
    """HEAD, marked when the sources that decide a unit's compile (kernels, generator) differ from it."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "instances", "generators", "rulesets"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return head.stdout.strip() + (" (instances/generators/rulesets modified)" if dirty else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def measure_per_instance(request: PerInstanceRequest) -> PerInstanceResult:
    try:
        toolchain = resolve_toolchain("pinned", None)
    except ToolchainError as error:
        raise BenchError(str(error)) from None
    spec = get_arch(ARCH)
    selections: dict[tuple[Direction, Variant], list[KernelConfig]] = {}
    for direction in request.directions:
        for variant in request.variants:
            configs = hopper_configs(direction, variant)
            if len(configs) < request.counts[-1]:
                raise BenchError(
                    f"{direction.value} {variant.value}: {len(configs)} {DTYPE.value} instances of {RULESET} "
                    f"take the Hopper path, fewer than the {request.counts[-1]} asked for"
                )
            selections[(direction, variant)] = configs
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tiledispatch-compile-time-") as temporary:
        root = Path(temporary)
        gen = root / "gen"
        generate_arch_header(gen)
        used = {
            c.name: c for configs in selections.values() for n in request.counts for c in sample(configs, n)
        }
        headers = {header_path(name): render_instance_header(c, spec) for name, c in used.items()}
        write_files(gen, headers)

        def run(
            name: str, text: str, direction: Direction | None, variant: Variant | None, names: list[str]
        ) -> CompileRun:
            source = root / f"{name}.cu"
            source.write_text(text)
            load_before = os.getloadavg()[0]
            wall, cpu, peak = compile_measured(
                nvcc_command(toolchain, gen, source, root / f"{name}.o"), request.core, root / f"{name}.log"
            )
            result = CompileRun(
                direction=direction,
                variant=variant,
                instances=len(names),
                names=names,
                wall_seconds=wall,
                cpu_seconds=cpu,
                peak_rss_bytes=peak,
                load_before=load_before,
                load_after=os.getloadavg()[0],
            )
            print(
                f"{name}: wall {wall:.1f} s, user+sys {cpu:.1f} s, peak {peak / GIB:.2f} GiB", file=sys.stderr
            )
            return result

        headers_only = headers_only_text(next(iter(headers.values())))
        # The first compile reads CuTe and the kernel headers from disk: a warm-up, so no unit pays for it.
        run("warmup_headers_only", headers_only, None, None, [])
        fixed = run("headers_only", headers_only, None, None, [])
        runs = []
        for (direction, variant), configs in selections.items():
            for count in request.counts:
                names = [c.name for c in sample(configs, count)]
                runs.append(
                    run(
                        f"{direction.value}_{variant.value}_{count}",
                        unit_text(direction, names),
                        direction,
                        variant,
                        names,
                    )
                )
    series = [fit_series([r for r in runs if (r.direction, r.variant) == key], *key) for key in selections]
    pooled = fit_series(runs, None, None)
    return PerInstanceResult(
        date=date.today().isoformat(),
        machine=f"{_cpu_model()}, {os.cpu_count()} cores, {machine_memory() / GIB:.0f} GiB",
        cores=len(os.sched_getaffinity(0)),
        core=request.core,
        nvcc=next(
            (line for line in toolchain.identity.splitlines() if "release" in line), toolchain.identity
        ),
        flags=compile_flags(ARCH),
        commit=_commit(),
        headers_only=fixed,
        runs=runs,
        series=series,
        pooled=pooled,
        within_time_budget=all(within_time_budget(s.cpu_seconds) for s in [*series, pooled]),
        units_within_budget=all(unit_within_budget(r) for r in [fixed, *runs]),
        memory=memory_verdict([fixed, *runs], [s.memory_gib for s in [*series, pooled]]),
        total_wall_seconds=time.perf_counter() - started,
    )


def _label(value: Enum | None, absent: str) -> str:
    return absent if value is None else str(value.value)


def per_instance_markdown(result: PerInstanceResult) -> str:
    per_instance_gib = (memory_per_nvcc(1) - memory_per_nvcc(0)) / GIB
    verdict = result.memory
    lines = [
        f"{result.date}, {result.machine}; one nvcc at a time pinned to core {result.core}; "
        f"commit {result.commit}",
        f"{result.nvcc}; flags `{' '.join(result.flags)}`; {DTYPE.value} instances of `{RULESET}` on the "
        f"Hopper path; {result.total_wall_seconds / 60:.1f} min in all",
        "",
        "| unit | configuration | instances | wall (s) | user + sys (s) | peak RSS (GiB) "
        "| limiter assumes (GiB) | load avg before / after |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for run in [result.headers_only, *result.runs]:
        lines.append(
            f"| {_label(run.direction, 'headers only')} | {_label(run.variant, '-')} | {run.instances} "
            f"| {run.wall_seconds:.1f} | {run.cpu_seconds:.1f} | {run.peak_rss_bytes / GIB:.2f} "
            f"| {memory_per_nvcc(run.instances) / GIB:.2f} | {run.load_before:.1f} / {run.load_after:.1f} |"
        )
    lines += [
        "",
        "Least squares over the units with instances (user + sys CPU seconds; a "
        f"{DEFAULT_CHUNK}-instance unit from the same line):",
        "",
        "| direction | configuration | fixed s / unit | s / instance | max residual (s) | fixed GiB "
        f"| GiB / instance | {DEFAULT_CHUNK} instances: s, GiB |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for fit in [*result.series, result.pooled]:
        cpu, memory = fit.cpu_seconds, fit.memory_gib
        lines.append(
            f"| {_label(fit.direction, 'all')} | {_label(fit.variant, 'all')} | {cpu.fixed:.1f} "
            f"| {cpu.per_instance:.2f} | {cpu.max_residual:.1f} | {memory.fixed:.2f} "
            f"| {memory.per_instance:.3f} "
            f"| {cpu.at(DEFAULT_CHUNK):.0f} s, {memory.at(DEFAULT_CHUNK):.1f} GiB |"
        )
    budget = "met by every line" if result.within_time_budget else "MISSED by at least one line"
    units = "every unit within it" if result.units_within_budget else "at least one unit OVER it"
    bound = "an upper bound" if verdict.upper_bound else "NOT an upper bound"
    lines += [
        "",
        f"Budget (one core, <= {FIXED_BUDGET_SECONDS:.0f} s fixed per unit, "
        f"<= {PER_INSTANCE_BUDGET_SECONDS:.0f} s per instance, CPU seconds): {budget}; "
        f"{units} (user + sys <= {FIXED_BUDGET_SECONDS:.0f} + {PER_INSTANCE_BUDGET_SECONDS:.0f} x "
        "instances).",
        f"`memory_per_nvcc` ({memory_per_nvcc(0) / GIB:.2f} GiB + {per_instance_gib:.2f} GiB per instance): "
        f"{bound}; largest measured / assumed {verdict.worst_measured_ratio:.2f}; a {DEFAULT_CHUNK}-instance "
        f"unit fits to at most {verdict.fitted_at_chunk_gib:.1f} GiB against "
        f"{verdict.assumed_at_chunk_gib:.1f} GiB assumed.",
        "",
        "Instances (the largest unit of each series; each smaller unit is a subset of the next):",
    ]
    for fit in result.series:
        largest = max(
            (r for r in result.runs if (r.direction, r.variant) == (fit.direction, fit.variant)),
            key=lambda r: r.instances,
        )
        lines.append(f"- {_label(fit.direction, '')} {_label(fit.variant, '')}: {', '.join(largest.names)}")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _split(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(part.strip() for part in text.split(",") if part.strip())


def parse_arguments(argv: Sequence[str]) -> tuple[argparse.Namespace, PerInstanceRequest | None]:
    """The options, and the per-instance request when ``--per-instance`` is given; ``UsageError`` (one line)
    on anything bad, before any work starts."""
    parser = _Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, help="whole-build mode: scons -j (default 2)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--per-instance", action="store_true", help="compile cost per unit and per instance")
    parser.add_argument("--counts", help="per-instance: instances per unit (default 1,2,4,8)")
    parser.add_argument("--directions", help="per-instance: comma-separated (default all three)")
    parser.add_argument("--variants", help="per-instance: cooperative,ping-pong (default both)")
    parser.add_argument(
        "--core", type=int, help="per-instance: the core nvcc runs on (default the last allowed)"
    )
    args = parser.parse_args(argv)
    per_instance_options = {"counts": args.counts, "directions": args.directions, "variants": args.variants}
    if not args.per_instance:
        given = [
            f"--{name}"
            for name, value in [*per_instance_options.items(), ("core", args.core)]
            if value is not None
        ]
        if given:
            raise UsageError(f"{', '.join(given)} only apply with --per-instance")
        if args.jobs is not None and args.jobs < 1:
            raise UsageError(f"--jobs {args.jobs}: at least 1")
        return args, None
    if args.jobs is not None:
        raise UsageError("--per-instance runs one nvcc at a time on one core; --jobs does not apply")
    fields: dict[str, object] = {
        name: _split(value) for name, value in per_instance_options.items() if value is not None
    }
    fields["core"] = max(os.sched_getaffinity(0)) if args.core is None else args.core
    return args, PerInstanceRequest.build(**fields)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args, request = parse_arguments(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"build_speed.py: error: {error}", file=sys.stderr)
        return 2
    try:
        if request is not None:
            result: BaseModel = measure_per_instance(request)
            print(per_instance_markdown(result))
        else:
            result = measure(args.jobs or 2)
            print(to_markdown(result))
    except BenchError as error:
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # nvcc, in the same process group, got the SIGINT too; the temporary directory is already removed.
        print("build_speed.py: interrupted", file=sys.stderr)
        return 130
    if args.json:
        args.json.write_text(result.model_dump_json(indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
