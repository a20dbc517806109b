"""What a sweep runs: the configuration, and its batches as a pure function of it and of what is done."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from generators.problem import ConvProblem
from heuristics.problem_sets import to_csv
from heuristics.sweep_schema import DirectionName, DtypeName


class SweepConfig(BaseModel):
    """Everything a sweep needs; the CLI builds it, the runners only read it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profiler: Path
    problems: dict[DirectionName, tuple[ConvProblem, ...]]
    dtypes: tuple[DtypeName, ...] = ("fp16", "bf16", "fp32")
    out: Path
    batch_size: PositiveInt = 8
    timeout_s: float = Field(900.0, gt=0)
    # bwd_weight split-K factors; "auto": the profiler tries each instance's own candidates (auto_split_k)
    split_k: tuple[PositiveInt, ...] | Literal["auto"] = (1,)
    warmup: int = Field(5, ge=0)
    repeat: PositiveInt = 20
    verify: bool = True
    gpus: tuple[str, ...] = ()
    scheduler: str | None = None
    retry_failed: bool = False
    stop_after_s: float | None = Field(None, gt=0)  # start no batch after this many seconds (resume later)


class Batch(BaseModel):
    """One profiler process: some problems of one direction and dtype (a fresh CUDA context)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    direction: DirectionName
    dtype: DtypeName
    problem_indices: tuple[int, ...]
    problems_csv: str  # the batch's problem table, rows in problem_indices order
    profiler: Path
    timeout_s: float
    args: tuple[str, ...]  # timing and verification flags

    @property
    def label(self) -> str:
        first, last = self.problem_indices[0], self.problem_indices[-1]
        return f"{self.direction} {self.dtype} problems {first}..{last}"

    def command(self, problems_file: Path, csv_file: Path) -> list[str]:
        return [
            str(self.profiler),
            "--direction",
            self.direction,
            "--dtype",
            self.dtype,
            "--problems",
            str(problems_file),
            "--csv",
            str(csv_file),
            *self.args,
        ]


def profiler_args(config: SweepConfig, direction: str) -> tuple[str, ...]:
    args = [
        "--warmup",
        str(config.warmup),
        "--repeat",
        str(config.repeat),
        "--verify",
        "1" if config.verify else "0",
    ]
    if direction == "bwd_weight" and config.split_k != "auto":
        args += ["--split-k", ",".join(str(k) for k in config.split_k)]
    return tuple(args)


def plan_batches(config: SweepConfig, done: Iterable[tuple[str, str, int]]) -> list[Batch]:
    """Batches over every (direction, dtype, problem) not in ``done``, ``batch_size`` problems each."""
    finished = set(done)
    batches = []
    for direction, problems in config.problems.items():
        for dtype in config.dtypes:
            todo = [i for i in range(len(problems)) if (direction, dtype, i) not in finished]
            for start in range(0, len(todo), config.batch_size):
                indices = tuple(todo[start : start + config.batch_size])
                batches.append(
                    Batch(
                        direction=direction,
                        dtype=dtype,
                        problem_indices=indices,
                        problems_csv=to_csv([problems[i] for i in indices]),
                        profiler=config.profiler,
                        timeout_s=config.timeout_s,
                        args=profiler_args(config, direction),
                    )
                )
    return batches


def jobs(config: SweepConfig) -> int:
    return sum(len(p) for p in config.problems.values()) * len(config.dtypes)
