"""The predicted-vs-oracle plot as text, for environments without matplotlib (it is not a requirement).

Both axes are log10 TFLOP/s (the sweep spans three orders of magnitude), the grey diagonal of the PNG is the
``/`` characters: a point on it is a group where the predicted best ran as fast as the oracle best, a point
below it lost that much. Each cell shows how many groups fall into it (1-9, ``#`` for 10 or more)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict


class PlotPoint(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    oracle_tflops: float
    predicted_tflops: float


def _cell(value: float, low: float, high: float, cells: int) -> int:
    return min(cells - 1, int((math.log10(value) - low) / (high - low) * cells))


def scatter(points: Sequence[PlotPoint], title: str, width: int = 60, height: int = 24) -> str:
    """A ``height`` x ``width`` character scatter of log10 predicted (rows) over log10 oracle (columns)."""
    positive = [p for p in points if p.oracle_tflops > 0 and p.predicted_tflops > 0]
    if not positive:
        return f"{title}: no points\n"
    values = [v for p in positive for v in (p.oracle_tflops, p.predicted_tflops)]
    # Whole decades, so the axis labels are round numbers and the diagonal runs corner to corner.
    low, high = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    high = max(high, low + 1)
    counts = [[0] * width for _ in range(height)]
    for p in positive:
        row = height - 1 - _cell(p.predicted_tflops, low, high, height)
        counts[row][_cell(p.oracle_tflops, low, high, width)] += 1
    lines = [
        f"{title}: predicted best (rows) vs oracle best (columns), log10 TFLOP/s, {len(positive)} groups"
    ]
    for r in range(height):
        diagonal = round((height - 1 - r + 0.5) / height * width - 0.5)
        cells = [
            ("#" if n >= 10 else str(n)) if n else ("/" if c == diagonal else " ")
            for c, n in enumerate(counts[r])
        ]
        label = f"1e{high:<3}" if r == 0 else f"1e{low:<3}" if r == height - 1 else "     "
        lines.append(f"{label}|{''.join(cells)}")
    lines.append("     +" + "-" * width)
    lines.append(f"      1e{low}{' ' * (width - 4 - len(str(low)) - len(str(high)))}1e{high}")
    return "\n".join(lines) + "\n"


# Bin edges of the efficiency histogram: the thresholds (70 %, 88 %, 95 %, 97 %) among them.
EFFICIENCY_BINS: tuple[float, ...] = (0.0, 0.5, 0.7, 0.88, 0.9, 0.95, 0.97, 0.99, 1.0)


def efficiency_histogram(points: Sequence[PlotPoint], width: int = 50) -> str:
    """Groups per efficiency bin (predicted / oracle TFLOP/s), the last bin being exactly the oracle."""
    eff = [p.predicted_tflops / p.oracle_tflops for p in points if p.oracle_tflops > 0]
    bins = list(itertools.pairwise(EFFICIENCY_BINS))
    counts = [sum(lo <= e < hi for e in eff) for lo, hi in bins] + [sum(e >= 1.0 for e in eff)]
    labels = [f"[{lo:4.0%}, {hi:4.0%})" for lo, hi in bins] + ["= oracle    "]
    scale = max(1, max(counts)) / width
    lines = ["efficiency (predicted / oracle TFLOP/s), groups per bin"]
    lines += [f"{label} {n:5d} {'*' * math.ceil(n / scale)}" for label, n in zip(labels, counts, strict=True)]
    return "\n".join(lines) + "\n"
