"""Runs one batch in a fresh profiler process: a crash or a hang is retried once, then recorded as failed.

A batch is self-contained (problem table as text, profiler path, flags), so the same function runs in a local
per-GPU thread and in a Dask worker. The profiler writes its CSV only when it finishes (or, when the CUDA
context is lost, what it had); a batch counts as done only when the process ended normally: exit 0, or exit 1
(an instance failed verification or launch, which its rows record) without a lost context.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from heuristics.sweep_plan import Batch
from heuristics.sweep_schema import SweepFileError, SweepRow, parse_row

ATTEMPTS = 2
FATAL_MARKERS = ("no usable CUDA GPU", "no CUDA GPU found")
LOST_CONTEXT_MARKER = "CUDA context is lost"


class FatalSweepError(RuntimeError):
    """The profiler cannot run at all (missing, usage error, no GPU): retrying other batches is pointless."""


class BatchOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    batch: Batch
    rows: tuple[SweepRow, ...]
    attempts: int
    failure: str = ""  # empty when the batch succeeded
    device: str = ""
    seconds: float = 0.0


def _profiler_rows(text: str, batch: Batch, source: str) -> list[SweepRow]:
    reader = csv.DictReader(io.StringIO(text))
    rows = []
    for record in reader:
        where = f"{source}:{reader.line_num}"
        try:
            local = int(record["problem_idx"])
            record["problem_idx"] = str(batch.problem_indices[local])
        except (KeyError, ValueError, IndexError):
            raise SweepFileError(
                f"{where}: problem_idx {record.get('problem_idx')!r} is not in the batch"
            ) from None
        wanted = {k: record.get(k) or "" for k in SweepRow.model_fields}
        rows.append(parse_row(wanted, where))
    return rows


def _failed_rows(batch: Batch, reason: str) -> tuple[SweepRow, ...]:
    reader = csv.DictReader(io.StringIO(batch.problems_csv))
    rows = []
    for index, record in zip(batch.problem_indices, reader, strict=True):
        values = {k: v for k, v in record.items() if k != "name"}
        rows.append(
            SweepRow(
                kernel="",
                problem_idx=index,
                direction=batch.direction,
                dtype=batch.dtype,
                status="batch_failed",
                reason=reason,
                **values,
            )
        )
    return tuple(rows)


def _attempt(batch: Batch, env: dict[str, str]) -> tuple[list[SweepRow] | None, str]:
    """One profiler process: (rows, "") on success, (None, why) on a crash or a hang."""
    with tempfile.TemporaryDirectory(prefix="td-sweep-") as tmp:
        problems, out = Path(tmp) / "problems.csv", Path(tmp) / "results.csv"
        problems.write_text(batch.problems_csv, encoding="utf-8")
        try:
            done = subprocess.run(
                batch.command(problems, out),
                env=env,
                capture_output=True,
                text=True,
                timeout=batch.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None, f"timed out after {batch.timeout_s:g} s"
        except OSError as error:
            raise FatalSweepError(f"cannot run the profiler {batch.profiler}: {error.strerror}") from None
        last_error = next((ln for ln in reversed(done.stderr.splitlines()) if ln.startswith("error:")), "")
        if done.returncode == 2 or any(m in done.stderr for m in FATAL_MARKERS):
            raise FatalSweepError(
                f"the profiler refused the batch ({batch.label}): {last_error or done.returncode}"
            )
        if done.returncode not in (0, 1) or LOST_CONTEXT_MARKER in done.stderr or not out.exists():
            return None, f"exit {done.returncode}" + (f": {last_error}" if last_error else "")
        return _profiler_rows(out.read_text(encoding="utf-8"), batch, f"{batch.label} results"), ""


def run_batch(batch: Batch, gpu: str | None = None) -> BatchOutcome:
    """Runs the batch on ``gpu`` (CUDA_VISIBLE_DEVICES; None keeps the caller's), retrying a failure once."""
    env = dict(os.environ)
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    device = env.get("CUDA_VISIBLE_DEVICES", "")
    started = time.monotonic()
    reasons = []
    for attempt in range(1, ATTEMPTS + 1):
        rows, why = _attempt(batch, env)
        if rows is not None:
            return BatchOutcome(
                batch=batch,
                rows=tuple(rows),
                attempts=attempt,
                device=device,
                seconds=time.monotonic() - started,
            )
        reasons.append(why)
    failure = "; ".join(f"attempt {i}: {r}" for i, r in enumerate(reasons, start=1))
    return BatchOutcome(
        batch=batch,
        rows=_failed_rows(batch, failure),
        attempts=ATTEMPTS,
        failure=failure,
        device=device,
        seconds=time.monotonic() - started,
    )
