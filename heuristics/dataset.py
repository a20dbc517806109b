"""Sweep rows of one direction as a learning problem: features, targets and the groups to rank within.

A group is one (problem shape, dtype): the candidates a selection chooses among are that group's valid
measurements (kernel x split-K). Rows that are not valid, or have no positive TFLOP/s, are left out: the
runtime's is_supported is exact, so the model never has to learn what cannot run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from heuristics.features import feature_vector
from heuristics.kernel_traits import KernelNameError, kernel_traits
from heuristics.sweep_schema import SweepRow


class DatasetError(ValueError):
    """Sweep data that cannot be learned from (one line)."""


class Dataset(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    direction: str
    features: np.ndarray  # rows x features
    tflops: np.ndarray
    group: np.ndarray  # group id per row, groups contiguous
    shape: np.ndarray  # shape id per row (the held-out unit)
    split_k: np.ndarray  # split-K factor per row (1 outside bwd_weight)
    kernels: tuple[str, ...]

    @property
    def efficiency(self) -> np.ndarray:
        """TFLOP/s over the best of the row's group."""
        best = np.zeros(self.group.max() + 1)
        np.maximum.at(best, self.group, self.tflops)
        return self.tflops / best[self.group]


def build_dataset(rows: Sequence[SweepRow], direction: str) -> Dataset:
    usable = [r for r in rows if r.direction == direction and r.status == "valid" and (r.tflops or 0) > 0]
    if not usable:
        raise DatasetError(f"no valid {direction} measurements with TFLOP/s > 0 in the sweep data")
    usable.sort(key=lambda r: (r.shape_key, r.dtype, r.kernel, r.split_k))
    group_ids: dict[tuple, int] = {}
    shape_ids: dict[tuple, int] = {}
    features, tflops, group, shape, split_k = [], [], [], [], []
    for r in usable:
        try:
            traits = kernel_traits(r.kernel)
        except KernelNameError as error:
            raise DatasetError(str(error)) from None
        features.append(feature_vector(r.problem, direction, r.dtype, traits, r.split_k))
        tflops.append(r.tflops)
        group.append(group_ids.setdefault((r.shape_key, r.dtype), len(group_ids)))
        shape.append(shape_ids.setdefault(r.shape_key, len(shape_ids)))
        split_k.append(r.split_k)
    return Dataset(
        direction=direction,
        features=np.asarray(features, dtype=np.float64),
        tflops=np.asarray(tflops, dtype=np.float64),
        group=np.asarray(group),
        shape=np.asarray(shape),
        split_k=np.asarray(split_k, dtype=np.int64),
        kernels=tuple(r.kernel for r in usable),
    )


def shape_folds(shape: np.ndarray, folds: int, seed: int) -> list[np.ndarray]:
    """GroupKFold by shape: each shape's rows fall in exactly one fold's test part (seeded shuffle)."""
    shapes = np.unique(shape)
    if len(shapes) < folds:
        raise DatasetError(f"{len(shapes)} shapes cannot be split into {folds} folds")
    order = np.random.default_rng(seed).permutation(shapes)
    fold_of_shape = np.empty(shapes.max() + 1, dtype=np.int64)
    fold_of_shape[order] = np.arange(len(order)) % folds
    return [np.flatnonzero(fold_of_shape[shape] == f) for f in range(folds)]
