"""bench/build_speed.py --per-instance on the CPU, without compiling CUDA: the least-squares line, the budget
and memory verdicts, the instance selection, the rendered units, the nvcc command against the build's own,
and bad command lines (one line, status 2, no traceback)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from build_sandbox import REPO_ROOT, Sandbox

from generators.emit import render_direction

SCRIPT = REPO_ROOT / "bench" / "build_speed.py"
GIB = 1 << 30


@pytest.fixture(scope="module")
def bs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_speed"] = module
    spec.loader.exec_module(module)
    return module


def run(bs: ModuleType, instances: int, cpu: float, gib: float):
    return bs.CompileRun(
        direction=None,
        variant=None,
        instances=instances,
        names=[f"k{i}" for i in range(instances)],
        wall_seconds=cpu,
        cpu_seconds=cpu,
        peak_rss_bytes=int(gib * GIB),
        load_before=0.0,
        load_after=0.0,
    )


def test_fit_recovers_an_exact_line(bs: ModuleType) -> None:
    fit = bs.fit_line([(n, 12.0 + 3.5 * n) for n in (1, 2, 4, 8)])
    assert fit.fixed == pytest.approx(12.0)
    assert fit.per_instance == pytest.approx(3.5)
    assert fit.max_residual == pytest.approx(0.0, abs=1e-9)
    assert fit.at(25) == pytest.approx(12.0 + 3.5 * 25)


def test_fit_is_least_squares(bs: ModuleType) -> None:
    """By hand for (1, 10), (2, 14), (4, 17), (8, 31): mean x 3.75, mean y 18, Sxx 28.75, Sxy 84, so slope
    84 / 28.75 = 2.922 and fixed 18 - 3.75 * 2.922 = 7.043; and the normal equations hold (residuals sum to
    zero and are orthogonal to the instance counts)."""
    points = [(1, 10.0), (2, 14.0), (4, 17.0), (8, 31.0)]
    fit = bs.fit_line(points)
    assert fit.per_instance == pytest.approx(84 / 28.75)
    assert fit.fixed == pytest.approx(18 - 3.75 * 84 / 28.75)
    residuals = [y - fit.at(x) for x, y in points]
    assert sum(residuals) == pytest.approx(0.0, abs=1e-9)
    assert sum(x * r for (x, _), r in zip(points, residuals, strict=True)) == pytest.approx(0.0, abs=1e-9)
    assert fit.max_residual == pytest.approx(max(abs(r) for r in residuals))


@pytest.mark.parametrize("points", [[], [(4, 1.0)], [(4, 1.0), (4, 2.0), (4, 3.0)]])
def test_fit_needs_two_instance_counts(bs: ModuleType, points: list) -> None:
    with pytest.raises(ValueError, match="two different instance counts"):
        bs.fit_line(points)


@pytest.mark.parametrize(
    ("fixed", "per_instance", "within"),
    [(30.0, 6.0, True), (10.0, 3.0, True), (30.5, 1.0, False), (5.0, 6.1, False)],
)
def test_time_budget_is_30_s_per_unit_and_6_s_per_instance(bs, fixed, per_instance, within) -> None:
    line = bs.LineFit(fixed=fixed, per_instance=per_instance, max_residual=0.0)
    assert bs.within_time_budget(line) is within


@pytest.mark.parametrize(
    ("instances", "cpu", "within"), [(0, 30.0, True), (0, 30.5, False), (25, 180.0, True), (25, 181.0, False)]
)
def test_a_unit_is_within_budget_under_30_s_plus_6_s_per_instance(bs, instances, cpu, within) -> None:
    assert bs.unit_within_budget(run(bs, instances, cpu, 1.0)) is within


def test_memory_verdict_against_the_slot_limiter(bs: ModuleType) -> None:
    # memory_per_nvcc(n) = 2 GiB + n * 400 MiB (site_scons/tiledispatch_build/jobs.py).
    below = [run(bs, 0, 9.0, 0.6), run(bs, 1, 17.0, 1.0), run(bs, 8, 35.0, 1.5)]
    flat = bs.fit_line([(r.instances, r.peak_rss_bytes / GIB) for r in below[1:]])
    verdict = bs.memory_verdict(below, [flat])
    assert verdict.upper_bound
    assert verdict.worst_measured_ratio == pytest.approx(1.0 / (2 + 400 / 1024))
    assert verdict.assumed_at_chunk_gib == pytest.approx(2 + 25 * 400 / 1024)
    # One unit above the line it is assumed to stay under.
    over = [*below, run(bs, 2, 20.0, 2.9)]
    assert not bs.memory_verdict(over, [flat]).upper_bound
    # Every unit measured is under it, but the line grows faster: a full unit of 25 would not be.
    steep = bs.LineFit(fixed=1.0, per_instance=0.5, max_residual=0.0)
    verdict = bs.memory_verdict(below, [flat, steep])
    assert not verdict.upper_bound
    assert verdict.fitted_at_chunk_gib == pytest.approx(13.5)


def test_samples_nest_and_do_not_depend_on_the_input_order(bs: ModuleType) -> None:
    configs = bs.hopper_configs(bs.Direction.FWD, bs.Variant.COOPERATIVE)
    chosen = {count: bs.sample(configs, count) for count in (1, 2, 4, 8)}
    for count in (1, 2, 4):
        assert {c.name for c in chosen[count]} < {c.name for c in chosen[2 * count]}
    for picked in chosen.values():
        names = [c.name for c in picked]
        assert names == sorted(set(names))
    assert bs.sample(list(reversed(configs)), 8) == chosen[8]
    # Unlike evenly spaced picks of the sorted list (two tiles, aliased), a sample mixes tiles and pipelines.
    assert len({(c.tile_m, c.tile_n, c.tile_k) for c in chosen[8]}) >= 4
    assert len({c.pipeline for c in chosen[8]}) == 2
    with pytest.raises(ValueError, match=f"cannot pick {len(configs) + 1} of {len(configs)} "):
        bs.sample(configs, len(configs) + 1)


@pytest.mark.parametrize("direction", ["fwd", "bwd_data", "bwd_weight"])
def test_selected_instances_take_the_hopper_path_as_their_variant(bs: ModuleType, direction: str) -> None:
    spec = bs.get_arch(bs.ARCH)
    for variant in bs.Variant:
        configs = bs.hopper_configs(bs.Direction(direction), variant)
        # The default counts must be satisfiable for every direction and variant.
        assert len(configs) >= max(bs.DEFAULT_COUNTS)
        for config in configs:
            plan = bs.hopper_plan(config, spec)
            assert isinstance(plan, bs.HopperPlan), (config.name, plan)
            assert config.dtype is bs.DataType.FP16
            assert plan.ping_pong is (variant is bs.Variant.PING_PONG)
            assert (config.num_wave_groups == 2) is plan.ping_pong
            assert plan.consumer_warpgroups == 2


def test_units_render_as_the_build_renders_them(bs: ModuleType) -> None:
    configs = bs.sample(bs.hopper_configs(bs.Direction.BWD_WEIGHT, bs.Variant.COOPERATIVE), 4)
    names = [c.name for c in configs]
    rendered = render_direction(configs, bs.Direction.BWD_WEIGHT, bs.ARCH, chunk=len(names))
    text = bs.unit_text(bs.Direction.BWD_WEIGHT, names)
    # Whenever the build's chunking puts these names into one unit, it is this file, byte for byte.
    units = {path: body for path, body in rendered.items() if path.startswith("unit_")}
    if len(units) == 1:
        assert next(iter(units.values())) == text
    for name in names:
        assert f'#include "kernels/{name}.hpp"' in text
        assert f"std::make_unique<{name}>()" in text
    header = rendered[bs.header_path(names[0])]
    fixed = bs.headers_only_text(header)
    assert '#include "tiledispatch/kernels/implicit_gemm_instance.hpp"' in fixed
    assert "kernels/grouped_conv" not in fixed and "make_unique" not in fixed


def test_nvcc_command_is_the_builds(bs: ModuleType, built: Sandbox) -> None:
    """The command the bench runs is td_nvcc's NVCCCOM: same tools and flags in the same order, include roots
    instances/include and the generated directory; only the paths of the files differ."""
    built.scons("compiledb")
    entries = json.loads((built.build / "compile_commands.json").read_text())
    entry = next(e for e in entries if Path(e["file"]).name.startswith("unit_"))
    toolchain = bs.resolve_toolchain("system", built.cuda)
    ours = bs.nvcc_command(toolchain, Path("/tmp/gen"), Path("/tmp/u.cu"), Path("/tmp/u.o"))

    def shape(words: list[str]) -> list[str]:
        shaped, previous = [], ""
        for word in words:
            if previous in ("-c", "-o"):
                word = "FILE"
            elif word.startswith("-I"):
                word = "-I(instances)" if word.rstrip("/").endswith("instances/include") else "-I(gen)"
            shaped.append(word)
            previous = word
        return shaped

    assert shape(entry["command"].split()) == shape(ours)
    assert set(bs.compile_flags(bs.ARCH)) <= set(ours)


def test_defaults(bs: ModuleType) -> None:
    _, request = bs.parse_arguments(["--per-instance"])
    assert request.counts == (1, 2, 4, 8)
    assert request.directions == tuple(bs.Direction)
    assert request.variants == (bs.Variant.COOPERATIVE, bs.Variant.PING_PONG)
    assert request.core == max(os.sched_getaffinity(0))
    args, request = bs.parse_arguments(["--jobs", "3"])
    assert request is None and args.jobs == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--per-instance", "--counts", "1,x"], "counts.1: Input should be a valid integer"),
        (["--per-instance", "--counts", "0,2"], "counts.0: Input should be greater than 0"),
        (["--per-instance", "--counts", "4,2"], "instance counts 4,2 are not ascending"),
        (["--per-instance", "--counts", "2,2"], "instance count 2 given twice"),
        (["--per-instance", "--counts", "4"], "at least two instance counts"),
        (["--per-instance", "--counts", ","], "no instance count given"),
        (["--per-instance", "--counts", "1,26"], "instance count 26 is above the unit size 25"),
        (["--per-instance", "--directions", "fwd,up"], "directions.1: Input should be 'fwd', 'bwd_data'"),
        (["--per-instance", "--directions", "fwd,fwd"], "direction fwd given twice"),
        (
            ["--per-instance", "--variants", "solo"],
            "variants.0: Input should be 'cooperative' or 'ping-pong'",
        ),
        (["--per-instance", "--core", "4096"], "core 4096 is not one this process may run on"),
        (["--per-instance", "--jobs", "2"], "--jobs does not apply"),
        (["--counts", "1,2"], "--counts only apply with --per-instance"),
        (["--core", "0", "--variants", "ping-pong"], "--variants, --core only apply with --per-instance"),
        (["--jobs", "0"], "--jobs 0: at least 1"),
        (["--per-instance", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_command_lines_get_one_line(bs, capsys, argv: list[str], message: str) -> None:
    with pytest.raises(bs.UsageError, match=re.escape(message)):
        bs.parse_arguments(argv)
    assert bs.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("build_speed.py: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
