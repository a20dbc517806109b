"""Selection quality over held-out groups: efficiency of the predicted best, and top-k hit rates."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict


class SelectionMetrics(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    groups: int
    mean_efficiency: float
    median_efficiency: float
    p10_efficiency: float
    worst_efficiency: float
    top1_accuracy: float
    top5_accuracy: float


class GroupOutcome(BaseModel):
    """One held-out (shape, dtype): the predicted best against the oracle (a point of the plot)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    group: int
    shape: int
    predicted_kernel: str
    predicted_tflops: float
    oracle_kernel: str
    oracle_tflops: float
    candidates: int
    predicted_split_k: int = 1
    oracle_split_k: int = 1

    @property
    def efficiency(self) -> float:
        return self.predicted_tflops / self.oracle_tflops


def group_outcomes(
    group: np.ndarray,
    shape: np.ndarray,
    score: np.ndarray,
    tflops: np.ndarray,
    kernels: tuple[str, ...],
    split_k: np.ndarray | None = None,
) -> list[GroupOutcome]:
    """One outcome per group; ``split_k`` (per row, default all 1) names the factor of a bwd_weight pick."""
    factors = np.ones(len(tflops), dtype=np.int64) if split_k is None else split_k
    outcomes = []
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        pick = rows[np.argmax(score[rows])]  # the first of equal scores, as the C++ ranker
        best = rows[np.argmax(tflops[rows])]
        outcomes.append(
            GroupOutcome(
                group=int(g),
                shape=int(shape[rows[0]]),
                predicted_kernel=kernels[pick],
                predicted_tflops=float(tflops[pick]),
                oracle_kernel=kernels[best],
                oracle_tflops=float(tflops[best]),
                candidates=len(rows),
                predicted_split_k=int(factors[pick]),
                oracle_split_k=int(factors[best]),
            )
        )
    return outcomes


def top_k_hit(group: np.ndarray, score: np.ndarray, tflops: np.ndarray, k: int) -> float:
    """Share of groups whose oracle TFLOP/s is reached by one of the k best-scored candidates."""
    hits = []
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        ranked = rows[np.argsort(-score[rows], kind="stable")][:k]
        hits.append(tflops[ranked].max() >= tflops[rows].max())
    return float(np.mean(hits))


def summarise(
    group: np.ndarray,
    shape: np.ndarray,
    score: np.ndarray,
    tflops: np.ndarray,
    kernels: tuple[str, ...],
    split_k: np.ndarray | None = None,
) -> tuple[SelectionMetrics, list[GroupOutcome]]:
    outcomes = group_outcomes(group, shape, score, tflops, kernels, split_k)
    eff = np.array([o.efficiency for o in outcomes])
    metrics = SelectionMetrics(
        groups=len(outcomes),
        mean_efficiency=float(eff.mean()),
        median_efficiency=float(np.median(eff)),
        p10_efficiency=float(np.percentile(eff, 10)),
        worst_efficiency=float(eff.min()),
        top1_accuracy=top_k_hit(group, score, tflops, 1),
        top5_accuracy=top_k_hit(group, score, tflops, 5),
    )
    return metrics, outcomes
