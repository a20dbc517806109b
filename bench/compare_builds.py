"""Two builds of the profiler side by side: a baseline and a change, on the same GPU in the same run.

Both profilers sweep the same CK problem table (every instance each holds, each verified against the
reference) in alternating rounds, baseline then change, so that both see the same clocks and the same state of
the GPU. Prints, for every problem, direction and dtype, each build's best verified instance (its fastest
round) and the change's TFLOP/s over the baseline's; then, over every (instance, split-K, problem, direction,
dtype) that both builds ran and verified, the geometric mean, the smallest and the largest of the baseline's
time over the change's (above 1: the change is faster), and the pairs that moved most. Any result that failed
its check, in either build, is listed and makes the exit status 1. Writes the report (compare_builds.md),
every pair (compare_builds.csv) and each sweep's JSON to --out-dir.

Usage: python bench/compare_builds.py PROBLEMS.csv --baseline PROFILER --change PROFILER [--rounds 2]
       [--directions fwd,bwd_data,bwd_weight] [--dtypes fp16,bf16,fp32] [--ndims 2,3] [--instances REGEX]
       [--warmup 5] [--repeat 20] [--out-dir build/compare_builds]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]
for entry in (REPO_ROOT, REPO_ROOT / "bench"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))  # run as a script from anywhere: the repository's own packages
from compare_cudnn import (  # noqa: E402
    Problem,
    Selection,
    UsageError,
    UsageParser,
    add_table_options,
    best_ours,
    check_out_dir,
    exit_status_of,
    geomean,
    problem_table_text,
    run_profiler_sweep,
    selection,
    verified_valid,
)

from generators.atomic_files import write_atomic  # noqa: E402

BUILDS = ("baseline", "change")
MOVED = 5
"""Pairs listed at each end of the report: those the change slowed most and sped up most."""

Records = Sequence[dict[str, object]]
PairKey = tuple[int, str, str, str, int]  # problem index, direction, dtype, kernel, split-K


class Pair(BaseModel):
    """One instance on one problem, timed (its fastest round) and verified in both builds."""

    model_config = ConfigDict(frozen=True)

    problem: str
    direction: str
    dtype: str
    kernel: str
    split_k: int
    baseline_ms: float
    change_ms: float

    @property
    def speedup(self) -> float:
        return self.baseline_ms / self.change_ms


class BestRow(BaseModel):
    """Each build's best verified instance on one problem, direction and dtype (None: it ran none)."""

    model_config = ConfigDict(frozen=True)

    problem: str
    direction: str
    dtype: str
    baseline_tflops: float | None
    baseline_kernel: str
    change_tflops: float | None
    change_kernel: str

    @property
    def ratio(self) -> float | None:
        if self.baseline_tflops is None or self.change_tflops is None:
            return None
        return self.change_tflops / self.baseline_tflops


def fastest_latencies(records: Iterable[dict[str, object]]) -> dict[PairKey, float]:
    """The smallest latency (ms) of every verified instance result over all the build's rounds."""
    fastest: dict[PairKey, float] = {}
    for r in records:
        if not verified_valid(r) or r.get("latency_ms") is None:
            continue
        key = (
            int(r["problem_idx"]),
            str(r["direction"]),
            str(r["dtype"]),
            str(r["kernel"]),
            int(r["split_k"]),
        )
        latency = float(r["latency_ms"])
        fastest[key] = min(latency, fastest.get(key, latency))
    return fastest


def failed_results(
    build: str, problems: Sequence[Problem], records: Iterable[dict[str, object]]
) -> list[str]:
    """One line per result that failed its check or its run (not those the instance does not support)."""
    lines = []
    for r in records:
        if r.get("status") == "failed" or (r.get("status") == "valid" and not verified_valid(r)):
            where = f"{problems[int(r['problem_idx'])].name} {r['direction']} {r['dtype']}"
            reason = r.get("reason") or "verification failed"
            lines.append(f"{build}: {r['kernel']} (split-K {r.get('split_k', 1)}) on {where}: {reason}")
    return sorted(set(lines))


def pairs_of(problems: Sequence[Problem], baseline: Records, change: Records) -> list[Pair]:
    """Every (instance, split-K, problem, direction, dtype) verified in both builds, in table order."""
    before, after = fastest_latencies(baseline), fastest_latencies(change)
    return [
        Pair(
            problem=problems[key[0]].name,
            direction=key[1],
            dtype=key[2],
            kernel=key[3],
            split_k=key[4],
            baseline_ms=before[key],
            change_ms=after[key],
        )
        for key in sorted(before.keys() & after.keys())
    ]


def best_rows(
    problems: Sequence[Problem],
    directions: Sequence[str],
    dtypes: Sequence[str],
    baseline: Records,
    change: Records,
) -> list[BestRow]:
    """Per problem, direction and dtype, each build's fastest verified instance over its rounds."""
    before, after = best_ours(baseline), best_ours(change)
    rows = []
    for p in problems:
        for direction in directions:
            for dtype in dtypes:
                key = (p.index, direction, dtype)
                if key not in before and key not in after:
                    continue
                a, b = before.get(key), after.get(key)
                rows.append(
                    BestRow(
                        problem=p.name,
                        direction=direction,
                        dtype=dtype,
                        baseline_tflops=a[0] if a else None,
                        baseline_kernel=a[1] if a else "-",
                        change_tflops=b[0] if b else None,
                        change_kernel=b[1] if b else "-",
                    )
                )
    return rows


def format_report(
    rows: Sequence[BestRow], pairs: Sequence[Pair], failures: Sequence[str], rounds: int
) -> str:
    """The Markdown report: best instance per row, then the pairs' summary, then any failure."""
    out = io.StringIO()
    out.write(f"Best verified instance of each build (fastest of {rounds} rounds), TFLOP/s\n\n")
    out.write("| problem | direction | dtype | baseline | change | change / baseline | change's kernel |\n")
    out.write("|---|---|---|---:|---:|---:|---|\n")
    for r in rows:
        base = "-" if r.baseline_tflops is None else f"{r.baseline_tflops:.1f}"
        new = "-" if r.change_tflops is None else f"{r.change_tflops:.1f}"
        ratio = "-" if r.ratio is None else f"{r.ratio:.3f}"
        out.write(
            f"| {r.problem} | {r.direction} | {r.dtype} | {base} | {new} | {ratio} | {r.change_kernel} |\n"
        )
    ratios = [r.ratio for r in rows if r.ratio is not None]
    if ratios:
        mean = geomean(ratios)
        out.write(f"\nBest per row, change / baseline: geometric mean {mean:.3f} over {len(ratios)} rows\n")
    if pairs:
        speedups = [p.speedup for p in pairs]
        out.write(
            f"Every instance both builds verified, baseline time / change time: geometric mean "
            f"{geomean(speedups):.3f}, smallest {min(speedups):.3f}, largest {max(speedups):.3f} "
            f"over {len(pairs)} pairs\n"
        )
        ranked = sorted(pairs, key=lambda p: p.speedup)
        moved = ranked if len(ranked) <= 2 * MOVED else [*ranked[:MOVED], *ranked[-MOVED:]]
        out.write("\n| baseline / change | baseline ms | change ms | kernel | split-K | problem | direction ")
        out.write("| dtype |\n")
        out.write("|---:|---:|---:|---|---:|---|---|---|\n")
        for p in moved:
            out.write(
                f"| {p.speedup:.3f} | {p.baseline_ms:.4f} | {p.change_ms:.4f} | {p.kernel} | {p.split_k} | "
                f"{p.problem} | {p.direction} | {p.dtype} |\n"
            )
    else:
        out.write("\nNo instance was verified in both builds.\n")
    if failures:
        out.write(f"\n{len(failures)} results failed:\n")
        out.writelines(f"- {line}\n" for line in failures)
    return out.getvalue()


def pairs_csv(pairs: Sequence[Pair]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["problem", "direction", "dtype", "kernel", "split_k", "baseline_ms", "change_ms", "speedup"]
    )
    for p in pairs:
        writer.writerow(
            [
                p.problem,
                p.direction,
                p.dtype,
                p.kernel,
                p.split_k,
                p.baseline_ms,
                p.change_ms,
                f"{p.speedup:.4f}",
            ]
        )
    return out.getvalue().encode()


def main(argv: Sequence[str] | None = None) -> int:
    parser = UsageParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problems", type=Path, help="CK problem table (CSV, optional name column)")
    parser.add_argument("--baseline", type=Path, required=True, help="the baseline's tiledispatch_profiler")
    parser.add_argument("--change", type=Path, required=True, help="the change's tiledispatch_profiler")
    parser.add_argument("--rounds", type=int, default=2, help="sweeps of each build, alternating (default 2)")
    add_table_options(parser, dtypes="fp16,bf16,fp32", out_dir="build/compare_builds")
    parser.add_argument("--instances", default="", help="regex passed to both profilers' --instances")
    try:
        args = parser.parse_args(argv)
        chosen = selection(args)
        for build in BUILDS:
            profiler = getattr(args, build)
            if not profiler.is_file() or not os.access(profiler, os.X_OK):
                raise UsageError(f"--{build} '{profiler}' is not an executable file")
        if args.rounds < 1:
            raise UsageError(f"--rounds {args.rounds}: accepted >= 1")
        check_out_dir(args.out_dir)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        parser.print_usage(sys.stderr)
        return 2
    return exit_status_of(lambda: _run(args, chosen), args.out_dir)


def _run(args: argparse.Namespace, chosen: Selection) -> int:
    problems, directions, dtypes = chosen.problems, chosen.directions, chosen.dtypes
    extra = ["--warmup", str(args.warmup), "--repeat", str(args.repeat)]
    if args.instances:
        extra += ["--instances", args.instances]
    records: dict[str, list[dict[str, object]]] = {build: [] for build in BUILDS}
    # The sweeps write into a scratch folder; the output folder appears only once there are results.
    with tempfile.TemporaryDirectory(prefix="compare_builds.") as scratch:
        swept = Path(scratch) / "problems.csv"
        swept.write_text(problem_table_text(problems), encoding="utf-8")
        sweeps = []
        for round_index in range(args.rounds):
            for build in BUILDS:
                print(
                    f"[progress] round {round_index + 1}/{args.rounds}: {build}", file=sys.stderr, flush=True
                )
                json_path = Path(scratch) / f"{build}_{round_index + 1}.json"
                profiler = getattr(args, build)
                records[build] += run_profiler_sweep(profiler, swept, directions, dtypes, json_path, extra)
                sweeps.append(json_path)
        for json_path in sweeps:
            write_atomic(args.out_dir / json_path.name, json_path.read_bytes())
    baseline, change = records["baseline"], records["change"]
    failures = failed_results("baseline", problems, baseline) + failed_results("change", problems, change)
    pairs = pairs_of(problems, baseline, change)
    report = format_report(
        best_rows(problems, directions, dtypes, baseline, change), pairs, failures, args.rounds
    )
    print(report)
    write_atomic(args.out_dir / "compare_builds.md", report.encode())
    write_atomic(args.out_dir / "compare_builds.csv", pairs_csv(pairs))
    print(f"wrote {args.out_dir / 'compare_builds.md'} and {args.out_dir / 'compare_builds.csv'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
