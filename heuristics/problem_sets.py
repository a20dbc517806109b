"""Per-direction problem sets derived from CK's forward training shapes and ``grouped_layers``.

``forward_synthetic_extended.csv`` (1,886 rows, the upstream forward training set) lists layer shapes; 104
rows repeat an earlier one. ``heuristics.grouped_layers`` appends 66 network-scale grouped layers after them
(so the CK shapes keep their indices), then 44 RegNet layers whose G is not a power of two
(``regnet_layers``), 44 depthwise layers (``depthwise_layers``) and 26 3D depthwise ones
(``depthwise_3d_layers``). Every layer that trains runs all three directions on the same shape, so each
direction's set is the same de-duplicated shape list, in first-seen order, with a ``name`` column
(``<dir>_<index>``). The backward sets therefore hold exactly the layers the forward set holds, which keeps
the three models' evaluations comparable shape for shape. ``sample`` picks a deterministic subset for a
shorter sweep."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Sequence

from generators.problem import CSV_COLUMNS, ConvProblem

DIRECTIONS: tuple[str, ...] = ("fwd", "bwd_data", "bwd_weight")


def unique_shapes(problems: Sequence[ConvProblem]) -> list[ConvProblem]:
    """The problems with repeated shapes removed, first occurrence kept."""
    seen: set[tuple[int, ...]] = set()
    unique = []
    for problem in problems:
        key = tuple(getattr(problem, c) for c in CSV_COLUMNS)
        if key not in seen:
            seen.add(key)
            unique.append(problem)
    return unique


def sample(problems: Sequence[ConvProblem], count: int | None, seed: int) -> list[ConvProblem]:
    """``count`` problems chosen with a seeded generator, kept in their original order (all when None)."""
    if count is None or count >= len(problems):
        return list(problems)
    chosen = sorted(random.Random(seed).sample(range(len(problems)), count))
    return [problems[i] for i in chosen]


def direction_set(problems: Sequence[ConvProblem], direction: str) -> list[ConvProblem]:
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r} (accepted: {', '.join(DIRECTIONS)})")
    return [p.model_copy(update={"name": f"{direction}_{i}"}) for i, p in enumerate(unique_shapes(problems))]


def to_csv(problems: Sequence[ConvProblem]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("name", *CSV_COLUMNS))
    for p in problems:
        writer.writerow((p.name, *(getattr(p, c) for c in CSV_COLUMNS)))
    return out.getvalue()
