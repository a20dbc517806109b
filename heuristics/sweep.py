"""The sweep: resume from the output file, run the missing batches on local GPUs or a Dask cluster, append.

Local: one thread per visible GPU, each running its batches one after another in fresh profiler processes
pinned to its GPU with CUDA_VISIBLE_DEVICES. Dask (``scheduler`` set, or a client given): every batch is a
task that asks for one ``GPU`` resource; start one single-threaded worker per GPU, each with its own
CUDA_VISIBLE_DEVICES and ``--resources GPU=1`` (docs/heuristics.md). Only the caller writes the output file:
whole batches, appended and flushed as they finish, so a killed sweep loses at most the batches in flight.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from heuristics.batch_runner import BatchOutcome, FatalSweepError, run_batch
from heuristics.sweep_plan import Batch, SweepConfig, jobs, plan_batches
from heuristics.sweep_schema import SWEEP_COLUMNS, SweepFileError, format_rows, iter_sweep_rows


class SweepSummary(BaseModel):
    """Written beside the output as ``<out>.meta.json``: what ran, where, and how long."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    jobs: int
    resumed_jobs: int
    batches: int
    finished_batches: int
    failed_batches: int
    rows_written: int
    wall_s: float
    gpu_s: float
    devices: tuple[str, ...]
    backend: str
    # A resumed sweep runs in slices that share one output: these count every slice that wrote to it (as
    # far as its .meta.json records them), this one included.
    runs: int = 1
    rows_all_runs: int
    wall_s_all_runs: float
    gpu_s_all_runs: float

    @model_validator(mode="before")
    @classmethod
    def _one_run_totals(cls, data: Any) -> Any:
        """A record without totals (written before they existed) is one run: its totals are its own counts."""
        if isinstance(data, dict):
            data = dict(data)
            for total, own in (("rows_all_runs", "rows_written"), ("wall_s_all_runs", "wall_s"),
                               ("gpu_s_all_runs", "gpu_s")):  # fmt: skip
                data.setdefault(total, data.get(own))
        return data


def visible_gpus() -> tuple[str, ...]:
    """CUDA_VISIBLE_DEVICES when set, else the indices nvidia-smi lists; empty when neither names a GPU."""
    if (env := os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()) != "":
        return tuple(g.strip() for g in env.split(",") if g.strip())
    if shutil.which("nvidia-smi") is None:
        return ()
    listed = subprocess.run(
        ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
    )
    return (
        tuple(line.strip() for line in listed.stdout.splitlines() if line.strip())
        if listed.returncode == 0
        else ()
    )


def load_progress(out: Path, retry_failed: bool) -> set[tuple[str, str, int]]:
    """Jobs the output already holds. A torn last line is cut off; with ``retry_failed`` the batch_failed
    rows are removed so their problems run again. Creates the file with its header when absent."""
    header = ",".join(SWEEP_COLUMNS) + "\n"
    if not out.exists() or out.stat().st_size == 0:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(header, encoding="utf-8")
        return set()
    text = out.read_text(encoding="utf-8")
    if not text.startswith(header):
        raise SweepFileError(f"{out}:1: not a sweep file of this schema (expected header {header.strip()})")
    complete = text[: text.rfind("\n") + 1]
    rows = list(iter_sweep_rows(complete, str(out)))
    kept = [r for r in rows if not (retry_failed and r.status == "batch_failed")]
    if complete != text or len(kept) != len(rows):
        out.write_text(header + format_rows(kept, header=False), encoding="utf-8")
    return {(r.direction, r.dtype, r.problem_idx) for r in kept}


def _local_outcomes(batches: list[Batch], gpus: tuple[str, ...], deadline: float) -> Iterator[BatchOutcome]:
    todo: queue.Queue[Batch] = queue.Queue()
    for batch in batches:
        todo.put(batch)
    done: queue.Queue[BatchOutcome | FatalSweepError] = queue.Queue()
    stop = threading.Event()

    def worker(gpu: str) -> None:
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                batch = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put(run_batch(batch, gpu))
            except FatalSweepError as error:
                stop.set()
                done.put(error)
                return

    threads = [threading.Thread(target=worker, args=(gpu,), daemon=True) for gpu in gpus]
    for thread in threads:
        thread.start()
    try:
        while True:
            try:
                item = done.get(timeout=0.2)
            except queue.Empty:
                if any(thread.is_alive() for thread in threads):
                    continue
                if done.empty():
                    return
                item = done.get()
            if isinstance(item, FatalSweepError):
                raise item
            yield item
    finally:
        stop.set()
        for thread in threads:
            thread.join()


def _dask_outcomes(batches: list[Batch], client: object, deadline: float) -> Iterator[BatchOutcome]:
    from distributed import as_completed

    futures = [client.submit(run_batch, batch, None, resources={"GPU": 1}, pure=False) for batch in batches]
    try:
        for future in as_completed(futures):
            if future.cancelled():
                continue
            yield future.result()
            if time.monotonic() >= deadline:
                client.cancel([f for f in futures if f.status == "pending"])
    finally:
        client.cancel(futures)


def _previous_summary(meta: Path) -> SweepSummary | None:
    """The record of the slices before this one; None where there is none or it does not parse (the counts
    then start again at this run, which the record's `runs` shows)."""
    try:
        return SweepSummary.model_validate_json(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def run_sweep(
    config: SweepConfig, client: object | None = None, report: Callable[[str], None] = print
) -> SweepSummary:
    """Runs what the output file lacks; ``client`` (a distributed.Client) overrides ``config.scheduler``."""
    started = time.monotonic()
    deadline = started + config.stop_after_s if config.stop_after_s else float("inf")
    done = load_progress(config.out, config.retry_failed)
    batches = plan_batches(config, done)
    if client is None and config.scheduler:
        from distributed import Client

        client = Client(config.scheduler)
    if client is not None:
        outcomes, backend, devices = _dask_outcomes(batches, client, deadline), "dask", ()
    else:
        devices = config.gpus or visible_gpus()
        if not devices and batches:
            raise FatalSweepError(
                "no GPU visible (CUDA_VISIBLE_DEVICES unset and nvidia-smi lists none); give --gpus"
            )
        outcomes, backend = _local_outcomes(batches, devices, deadline), "local"
    report(
        f"sweep: {jobs(config)} jobs, {len(done)} already in {config.out}, {len(batches)} batches to run "
        f"on {backend} {','.join(devices)}"
    )
    rows_written = failed = finished = 0
    gpu_s = 0.0
    seen_devices = set(devices)
    with config.out.open("a", encoding="utf-8") as out:
        for n, outcome in enumerate(outcomes, start=1):
            out.write(format_rows(outcome.rows, header=False))
            out.flush()
            os.fsync(out.fileno())
            rows_written += len(outcome.rows)
            failed += bool(outcome.failure)
            gpu_s += outcome.seconds
            finished += 1
            seen_devices.add(outcome.device)
            state = f"FAILED ({outcome.failure})" if outcome.failure else f"{len(outcome.rows)} rows"
            retry = " after a retry" if outcome.attempts > 1 and not outcome.failure else ""
            report(
                f"[{n}/{len(batches)}] {outcome.batch.label} on GPU {outcome.device or '?'}: {state}{retry}, "
                f"{outcome.seconds:.1f} s"
            )
    if finished < len(batches):
        report(f"sweep: stopped after {config.stop_after_s:g} s with {len(batches) - finished} batches left; "
               "run the same command again to resume")  # fmt: skip
    meta = config.out.with_name(config.out.name + ".meta.json")
    before = _previous_summary(meta) if done else None
    wall_s = time.monotonic() - started
    summary = SweepSummary(
        jobs=jobs(config),
        resumed_jobs=len(done),
        batches=len(batches),
        finished_batches=finished,
        failed_batches=failed,
        rows_written=rows_written,
        wall_s=wall_s,
        gpu_s=gpu_s,
        devices=tuple(sorted(d for d in seen_devices if d)),
        backend=backend,
        runs=1 + (before.runs if before else 0),
        rows_all_runs=rows_written + (before.rows_all_runs if before else 0),
        wall_s_all_runs=wall_s + (before.wall_s_all_runs if before else 0.0),
        gpu_s_all_runs=gpu_s + (before.gpu_s_all_runs if before else 0.0),
    )
    meta.write_text(json.dumps(summary.model_dump(), indent=1) + "\n", encoding="utf-8")
    return summary
