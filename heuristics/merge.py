"""Several sweeps of one direction as one training file: per shape, the rows of the first file that has it.

The rule, newest first: ``merge_sweeps([newer, older, ...])`` keeps every row of the first file, then, from
each later file, the rows of the shapes no earlier file holds. A shape is never mixed from two sweeps (its
candidates must be timed in one run of one kernel set, or the group's best would compare sweeps, not
kernels). ``problem_idx`` becomes the shape's index in the direction's full problem set
(``heuristics/problem_sets/<dir>.csv``): each sweep numbers the shapes of its own ``--sample``, so the sweeps'
indices name different shapes; the set's index names one shape in every file. Rows are validated on reading
(``read_sweep``) and written in set order, each shape's rows in their sweep order.

The record written beside the output (``<out>.meta.json``, ``MergeRecord``) names the rule, each source's
sha256, its sweep record (``<source>.meta.json``) and what was taken from it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from generators.problem import CSV_COLUMNS, ConvProblem
from heuristics.sweep_schema import SweepFileError, SweepRow, format_rows, read_sweep

RULE = (
    "per shape, the rows of the first source that holds it (sources newest first); problem_idx is the "
    "shape's index in heuristics/problem_sets/<direction>.csv"
)


class MergeSource(BaseModel):
    """One input file and what the merge took from it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    sha256: str
    shapes: int  # shapes the file holds
    shapes_taken: int
    rows_taken: int
    sweep_record: dict | None  # the sweep's own <file>.meta.json, when it sits beside the file


class MergeRecord(BaseModel):
    """``<out>.meta.json``: how the merged file was made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    direction: str
    rule: str
    sources: tuple[MergeSource, ...]
    shapes: int
    rows_written: int


def _shape_key(problem: ConvProblem) -> tuple[int, ...]:
    return tuple(getattr(problem, c) for c in CSV_COLUMNS)


def sweep_record_of(path: Path) -> dict | None:
    """The sweep's record: ``<path>.meta.json``, or for ``x.csv.gz`` also ``x.csv.meta.json``."""
    candidates = [path.with_name(path.name + ".meta.json")]
    if path.suffix == ".gz":
        candidates.append(path.with_name(path.stem + ".meta.json"))
    for candidate in candidates:
        if candidate.is_file():
            return json.loads(candidate.read_text(encoding="utf-8"))
    return None


def merge_sweeps(
    sources: Sequence[Path], direction: str, problem_set: Sequence[ConvProblem]
) -> tuple[list[SweepRow], MergeRecord]:
    """The merged rows of ``direction`` and their record; ``SweepFileError`` (one line) on unusable input."""
    set_index = {}
    for index, problem in enumerate(problem_set):
        set_index.setdefault(_shape_key(problem), index)
    taken: dict[tuple[int, ...], list[SweepRow]] = {}
    records = []
    for path in sources:
        rows = read_sweep([path])
        by_shape: dict[tuple[int, ...], list[SweepRow]] = {}
        for line, row in enumerate(rows, start=2):
            if row.direction != direction:
                raise SweepFileError(f"{path}:{line}: direction {row.direction}, the merge is of {direction}")
            if row.status == "batch_failed":
                # A failed batch is not a measurement of the shape: it would hide the older sweep's rows.
                raise SweepFileError(
                    f"{path}:{line}: batch_failed row (run the sweep with --retry-failed first)"
                )
            if row.shape_key not in set_index:
                raise SweepFileError(
                    f"{path}:{line}: shape {row.shape_key} is not in the {direction} problem set"
                )
            by_shape.setdefault(row.shape_key, []).append(row)
        new = {key: shape_rows for key, shape_rows in by_shape.items() if key not in taken}
        taken.update(new)
        records.append(
            MergeSource(
                file=path.name,
                sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                shapes=len(by_shape),
                shapes_taken=len(new),
                rows_taken=sum(len(r) for r in new.values()),
                sweep_record=sweep_record_of(path),
            )
        )
    merged = [
        row.model_copy(update={"problem_idx": set_index[key]})
        for key in sorted(taken, key=set_index.__getitem__)
        for row in taken[key]
    ]
    record = MergeRecord(
        direction=direction, rule=RULE, sources=tuple(records), shapes=len(taken), rows_written=len(merged)
    )
    return merged, record


def write_merged(rows: Sequence[SweepRow], record: MergeRecord, out: Path) -> None:
    """``out`` (gzip level 9 when it ends in .gz; no name or time in the header, so the bytes are
    reproducible) and ``<out>.meta.json``."""
    text = format_rows(rows, header=True).encode("utf-8")
    out.write_bytes(gzip.compress(text, compresslevel=9, mtime=0) if out.suffix == ".gz" else text)
    out.with_name(out.name + ".meta.json").write_text(
        json.dumps(record.model_dump(), indent=1) + "\n", encoding="utf-8"
    )
