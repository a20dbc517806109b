"""``python -m heuristics {problems,sweep,merge,train,evaluate}``.

Exit status: 0 done; 1 some sweep batches failed twice (recorded as batch_failed); 2 bad input (one ``error:``
line); 3 ``--stop-after`` ended the sweep with batches left (run the same command again to resume).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

from pydantic import ValidationError

from generators.problem import ProblemFileError, load_problems
from heuristics.batch_runner import FatalSweepError
from heuristics.dataset import DatasetError, build_dataset
from heuristics.grouped_layers import network_layers
from heuristics.metrics import SelectionMetrics
from heuristics.problem_sets import DIRECTIONS, direction_set, sample, to_csv
from heuristics.sweep_schema import SweepFileError, read_sweep
from heuristics.train import Target, TrainParams, data_digest, train_direction
from heuristics.tree_model import MODEL_SUFFIX, TreeModelError

EXIT_USAGE = 2
EXIT_STOPPED = 3  # --stop-after ended the sweep with batches left: run it again to resume
DTYPES = ("fp16", "bf16", "fp32")


class CliError(Exception):
    """A one-line user error."""


def _list(text: str, accepted: Sequence[str], what: str) -> tuple[str, ...]:
    items = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in items if t not in accepted]
    if bad or not items:
        raise CliError(f"unknown {what} {','.join(bad) or repr(text)} (accepted: {', '.join(accepted)})")
    return items


def _split_k(text: str) -> tuple[int, ...] | Literal["auto"]:
    if text == "auto":
        return "auto"
    try:
        return _ints(text, "--split-k")
    except CliError:
        raise CliError(f"--split-k: {text!r} is neither auto nor a comma list of integers >= 1") from None


def _ints(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise CliError(f"{what}: {text!r} is not a comma list of integers") from None
    if any(v < 1 for v in values):
        raise CliError(f"{what}: values must be >= 1")
    return values


def cmd_problems(args: argparse.Namespace) -> int:
    problems = [*load_problems(args.source), *network_layers()]
    args.out.mkdir(parents=True, exist_ok=True)
    for direction in DIRECTIONS:
        chosen = direction_set(problems, direction)
        (args.out / f"{direction}.csv").write_text(to_csv(chosen), encoding="utf-8")
        print(f"{args.out / f'{direction}.csv'}: {len(chosen)} problems")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from heuristics.sweep import run_sweep
    from heuristics.sweep_plan import SweepConfig

    if not (args.profiler.is_file() and args.profiler.stat().st_mode & 0o111):
        raise CliError(
            f"profiler {args.profiler} not found or not executable (build it: scons ruleset=... profiler)"
        )
    problems = {}
    for direction in _list(args.directions, DIRECTIONS, "direction"):
        table = args.problems / f"{direction}.csv"
        problems[direction] = tuple(sample(load_problems(table), args.sample, args.seed))
    config = SweepConfig(
        profiler=args.profiler.resolve(),
        problems=problems,
        dtypes=_list(args.dtypes, DTYPES, "dtype"),
        out=args.out,
        batch_size=args.batch_size,
        timeout_s=args.timeout,
        split_k=_split_k(args.split_k),
        warmup=args.warmup,
        repeat=args.repeat,
        verify=args.verify == "1",
        gpus=tuple(g for g in args.gpus.split(",") if g) if args.gpus else (),
        scheduler=args.scheduler,
        retry_failed=args.retry_failed,
        stop_after_s=args.stop_after,
    )
    summary = run_sweep(config)
    print(
        f"sweep: {summary.rows_written} rows in {summary.batches} batches ({summary.failed_batches} failed), "
        f"{summary.wall_s:.0f} s wall, {summary.gpu_s:.0f} GPU-s"
    )
    if summary.finished_batches < summary.batches:
        return EXIT_STOPPED
    return 1 if summary.failed_batches else 0


def cmd_merge(args: argparse.Namespace) -> int:
    from heuristics.merge import merge_sweeps, write_merged

    (direction,) = _list(args.direction, DIRECTIONS, "direction")
    problem_set = load_problems(args.problems / f"{direction}.csv")
    rows, record = merge_sweeps(args.data, direction, problem_set)
    write_merged(rows, record, args.out)
    taken = ", ".join(
        f"{s.file}: {s.shapes_taken}/{s.shapes} shapes, {s.rows_taken} rows" for s in record.sources
    )
    print(f"{args.out}: {record.rows_written} rows, {record.shapes} shapes ({taken})")
    return 0


def _plot(eval_csv: Path) -> str:
    """Writes ``<dir>_eval_plot.txt`` (always) and ``<dir>_eval.png`` (where matplotlib is installed)."""
    import csv

    from heuristics.textplot import PlotPoint, efficiency_histogram, scatter

    with eval_csv.open(encoding="utf-8") as f:
        points = [
            PlotPoint(oracle_tflops=float(r["oracle_tflops"]), predicted_tflops=float(r["predicted_tflops"]))
            for r in csv.DictReader(f)
        ]
    text = eval_csv.with_name(eval_csv.stem + "_plot.txt")
    text.write_text(scatter(points, eval_csv.stem) + "\n" + efficiency_histogram(points), encoding="utf-8")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"plot: {text} (no PNG: matplotlib is not installed)"
    oracle = [p.oracle_tflops for p in points]
    predicted = [p.predicted_tflops for p in points]
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(oracle, predicted, s=6)
    top = max(oracle) * 1.05
    ax.plot([0, top], [0, top], color="grey", linewidth=0.8)
    ax.set_xlabel("oracle best TFLOP/s")
    ax.set_ylabel("predicted best TFLOP/s")
    ax.set_title(eval_csv.stem)
    png = eval_csv.with_suffix(".png")
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return f"plot: {text}, {png}"


def _metrics_line(direction: str, m: SelectionMetrics) -> str:
    return (
        f"{direction:<11} groups {m.groups:>5}  mean {m.mean_efficiency:7.2%}  "
        f"median {m.median_efficiency:7.2%}  "
        f"P10 {m.p10_efficiency:7.2%}  worst {m.worst_efficiency:7.2%}  top1 {m.top1_accuracy:6.1%}  "
        f"top5 {m.top5_accuracy:6.1%}"
    )


def cmd_train(args: argparse.Namespace) -> int:
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        raise CliError("train needs lightgbm (install requirements.txt)") from None

    params = TrainParams(target=args.target, folds=args.folds, max_rounds=args.max_rounds, seed=args.seed)
    rows = read_sweep(args.data)
    digest = data_digest(args.data)
    for direction in _list(args.directions, DIRECTIONS, "direction"):
        meta = train_direction(build_dataset(rows, direction), params, digest, args.out)
        print(
            _metrics_line(direction, meta.cv)
            + f"  ({meta.rounds} trees, held out by shape, {params.folds} folds)"
        )
        if args.plot:
            print(_plot(args.out / f"{direction}_eval.csv"))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from heuristics.metrics import summarise
    from heuristics.select import load_checked_model

    rows = read_sweep(args.data)
    for direction in _list(args.directions, DIRECTIONS, "direction"):
        data = build_dataset(rows, direction)
        score = load_checked_model(args.models / f"{direction}{MODEL_SUFFIX}").predict(data.features)
        metrics, _ = summarise(data.group, data.shape, score, data.tflops, data.kernels, data.split_k)
        print(_metrics_line(direction, metrics))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m heuristics", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("problems", help="derive the per-direction problem sets")
    s.add_argument("--source", type=Path, default=Path("../shared/problems/forward_synthetic_extended.csv"))
    s.add_argument("--out", type=Path, default=Path("heuristics/problem_sets"))
    s.set_defaults(run=cmd_problems)

    s = sub.add_parser("sweep", help="every instance x every problem x direction/dtype, on every GPU")
    s.add_argument(
        "--profiler", type=Path, required=True, help="build/<ruleset>-sm_90a/profiler/tiledispatch_profiler"
    )
    s.add_argument(
        "--problems", type=Path, default=Path("heuristics/problem_sets"), help="folder of <dir>.csv"
    )
    s.add_argument("--out", type=Path, required=True, help="result CSV; an existing one is resumed")
    s.add_argument("--directions", default=",".join(DIRECTIONS))
    s.add_argument("--dtypes", default=",".join(DTYPES))
    s.add_argument("--batch-size", type=int, default=8, help="problems per profiler process (8)")
    s.add_argument("--timeout", type=float, default=900.0, help="seconds before a batch counts as hung (900)")
    s.add_argument(
        "--split-k",
        default="1",
        help="bwd_weight split-K factors (1); auto: each instance's own candidates (the profiler's)",
    )
    s.add_argument("--warmup", type=int, default=5)
    s.add_argument("--repeat", type=int, default=20)
    s.add_argument("--verify", choices=("0", "1"), default="1")
    s.add_argument("--gpus", default="", help="device ids (default: CUDA_VISIBLE_DEVICES, else nvidia-smi)")
    s.add_argument("--scheduler", default=None, help="Dask scheduler ADDRESS (default: local processes)")
    s.add_argument("--sample", type=int, default=None, help="a seeded subset of N problems per direction")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--retry-failed", action="store_true", help="run the batch_failed problems again")
    s.add_argument(
        "--stop-after", type=float, default=None, help="start no batch after SECONDS (exit 3: resume)"
    )
    s.set_defaults(run=cmd_sweep)

    s = sub.add_parser("merge", help="one direction's sweeps as one file: per shape, the newest sweep's rows")
    s.add_argument(
        "--data", type=Path, nargs="+", required=True, help="sweep CSV files (.gz accepted), newest first"
    )
    s.add_argument("--direction", required=True)
    s.add_argument("--out", type=Path, required=True, help="merged CSV (gzip level 9 when it ends in .gz)")
    s.add_argument(
        "--problems", type=Path, default=Path("heuristics/problem_sets"), help="folder of <dir>.csv"
    )
    s.set_defaults(run=cmd_merge)

    s = sub.add_parser("train", help="cross-validate, fit and export one model per direction")
    s.add_argument("--data", type=Path, nargs="+", required=True, help="sweep CSV files (.gz accepted)")
    s.add_argument("--out", type=Path, default=Path("heuristics/models"))
    s.add_argument("--directions", default=",".join(DIRECTIONS))
    defaults = TrainParams()
    s.add_argument("--target", choices=get_args(Target), default=defaults.target)
    s.add_argument("--folds", type=int, default=defaults.folds)
    s.add_argument("--max-rounds", type=int, default=defaults.max_rounds)
    s.add_argument("--seed", type=int, default=defaults.seed)
    s.add_argument(
        "--plot",
        action="store_true",
        help="also write <dir>_eval_plot.txt (and <dir>_eval.png with matplotlib)",
    )
    s.set_defaults(run=cmd_train)

    s = sub.add_parser("evaluate", help="selection metrics of exported models on sweep data")
    s.add_argument("--data", type=Path, nargs="+", required=True)
    s.add_argument("--models", type=Path, default=Path("heuristics/models"))
    s.add_argument("--directions", default=",".join(DIRECTIONS))
    s.set_defaults(run=cmd_evaluate)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except ValidationError as error:
        first = error.errors()[0]
        print(f"error: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}", file=sys.stderr)
    except ProblemFileError as error:
        print(f"error: {error.errors[0]}", file=sys.stderr)
    except (CliError, SweepFileError, TreeModelError, DatasetError, FatalSweepError, OSError) as error:
        print(f"error: {str(error).splitlines()[0]}", file=sys.stderr)
    return EXIT_USAGE
