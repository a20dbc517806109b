"""Per-direction LightGBM models: shape-grouped cross-validation, then a final fit on every shape, exported.

Targets: ``efficiency`` (default: TFLOP/s over the group's best, a scale-free regression target; the only one
that meets every target on the H100 sweep, docs/heuristics.md "Evaluation"), ``lambdarank`` (LightGBM's ranker
on 0..30 relevance = round(30 x efficiency)) or ``log_tflops`` (CK's log1p(TFLOP/s)). The final model uses
the mean early-stopped iteration count of the folds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from heuristics.dataset import Dataset, shape_folds
from heuristics.features import FEATURE_NAMES
from heuristics.metrics import GroupOutcome, SelectionMetrics, summarise
from heuristics.tree_model import MODEL_SUFFIX, TreeModel, from_lightgbm_dump

Target = Literal["efficiency", "log_tflops", "lambdarank"]


class TrainParams(BaseModel):
    """LightGBM settings (CK's, ck_conventions §7, with fewer and smaller trees so the files stay small)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    target: Target = "efficiency"
    folds: int = Field(5, ge=2)
    num_leaves: int = Field(31, ge=2)
    max_depth: int = 12
    max_rounds: int = Field(400, ge=1)
    early_stopping: int = Field(50, ge=1)
    learning_rate: float = Field(0.05, gt=0)
    min_child_samples: int = Field(10, ge=1)
    subsample: float = Field(0.85, gt=0, le=1)
    colsample_bytree: float = Field(0.85, gt=0, le=1)
    reg_alpha: float = 0.05
    reg_lambda: float = 0.5
    seed: int = 42


class ModelMeta(BaseModel):
    """What sits beside each exported model (``<direction>.json``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    direction: str
    feature_names: tuple[str, ...]
    params: TrainParams
    rounds: int
    rows: int
    shapes: int
    groups: int
    data_sha256: str
    lightgbm_version: str
    cv: SelectionMetrics


def _labels(data: Dataset, index: np.ndarray, target: Target) -> np.ndarray:
    if target == "log_tflops":
        return np.log1p(data.tflops[index])
    efficiency = data.efficiency[index]
    return np.rint(30 * efficiency).astype(int) if target == "lambdarank" else efficiency


def _lgb_dataset(lgb: ModuleType, data: Dataset, index: np.ndarray, target: Target) -> object:
    dataset = lgb.Dataset(
        data.features[index], label=_labels(data, index, target), free_raw_data=False, params={"verbose": -1}
    )
    if target == "lambdarank":
        _, counts = np.unique(data.group[index], return_counts=True)  # groups are contiguous and sorted
        dataset.set_group(counts)
    return dataset


def _booster_params(params: TrainParams) -> dict:
    return {
        "objective": "lambdarank" if params.target == "lambdarank" else "regression",
        "num_leaves": params.num_leaves,
        "max_depth": params.max_depth,
        "learning_rate": params.learning_rate,
        "min_child_samples": params.min_child_samples,
        "bagging_fraction": params.subsample,
        "bagging_freq": 1,
        "feature_fraction": params.colsample_bytree,
        "lambda_l1": params.reg_alpha,
        "lambda_l2": params.reg_lambda,
        "seed": params.seed,
        "deterministic": True,
        "force_row_wise": True,
        "num_threads": 1,
        "verbose": -1,
    }


def cross_validate(data: Dataset, params: TrainParams) -> tuple[SelectionMetrics, list[GroupOutcome], int]:
    """Held-out selection metrics over shape folds, the outcome per group, and the mean best iteration."""
    import lightgbm as lgb

    score = np.zeros(len(data.tflops))
    best_rounds = []
    for test in shape_folds(data.shape, params.folds, params.seed):
        train = np.setdiff1d(np.arange(len(data.tflops)), test)
        booster = lgb.train(
            _booster_params(params),
            _lgb_dataset(lgb, data, train, params.target),
            num_boost_round=params.max_rounds,
            valid_sets=[_lgb_dataset(lgb, data, test, params.target)],
            callbacks=[lgb.early_stopping(params.early_stopping, verbose=False)],
        )
        best_rounds.append(booster.best_iteration or params.max_rounds)
        score[test] = booster.predict(data.features[test], num_iteration=booster.best_iteration or None)
    metrics, outcomes = summarise(data.group, data.shape, score, data.tflops, data.kernels, data.split_k)
    return metrics, outcomes, max(1, round(float(np.mean(best_rounds))))


def fit_final(data: Dataset, params: TrainParams, rounds: int) -> tuple[TreeModel, object]:
    """The model on every row, exported; also returns the booster (tests compare its predictions)."""
    import lightgbm as lgb

    booster = lgb.train(
        _booster_params(params),
        _lgb_dataset(lgb, data, np.arange(len(data.tflops)), params.target),
        num_boost_round=rounds,
    )
    return from_lightgbm_dump(booster.dump_model(), data.direction, FEATURE_NAMES), booster


def data_digest(paths: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def train_direction(data: Dataset, params: TrainParams, digest: str, out_dir: Path) -> ModelMeta:
    """Cross-validates, fits the final model, writes ``<dir>.trees``, ``<dir>.json``, ``<dir>_eval.csv``."""
    import lightgbm as lgb

    metrics, outcomes, rounds = cross_validate(data, params)
    model, _ = fit_final(data, params, rounds)
    meta = ModelMeta(
        direction=data.direction,
        feature_names=FEATURE_NAMES,
        params=params,
        rounds=rounds,
        rows=len(data.tflops),
        shapes=int(np.unique(data.shape).size),
        groups=int(np.unique(data.group).size),
        data_sha256=digest,
        lightgbm_version=lgb.__version__,
        cv=metrics,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{data.direction}{MODEL_SUFFIX}").write_text(model.to_text(), encoding="utf-8")
    (out_dir / f"{data.direction}.json").write_text(
        json.dumps(meta.model_dump(), indent=1) + "\n", encoding="utf-8"
    )
    (out_dir / f"{data.direction}_eval.csv").write_text(outcomes_csv(outcomes), encoding="utf-8")
    return meta


def outcomes_csv(outcomes: Sequence[GroupOutcome]) -> str:
    lines = [
        "group,shape,candidates,predicted_kernel,predicted_split_k,predicted_tflops,"
        "oracle_kernel,oracle_split_k,oracle_tflops,efficiency"
    ]
    lines += [
        f"{o.group},{o.shape},{o.candidates},{o.predicted_kernel},{o.predicted_split_k},"
        f"{o.predicted_tflops:.6g},{o.oracle_kernel},{o.oracle_split_k},{o.oracle_tflops:.6g},{o.efficiency:.6f}"
        for o in outcomes
    ]
    return "\n".join(lines) + "\n"
