"""Ranking candidate kernels for one problem with the exported models (no LightGBM needed).

``rank(problem, kernels)`` ranks candidates: the kernels' direction and dtype come from their names (all must
share one direction), the model from ``heuristics/models/<direction>.trees`` (the committed models; see
heuristics/models/README.md). ``LearnedSelector`` plugs it into the Python runtime: ``Registry.select`` (a
kernel) and ``Registry.plan``, which ``Registry.run`` follows (a kernel and its split-K factor)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from generators.problem import ConvProblem
from heuristics.features import FEATURE_NAMES, feature_vector
from heuristics.kernel_traits import kernel_traits
from heuristics.tree_model import MODEL_SUFFIX, TreeModel, TreeModelError, load_model

if TYPE_CHECKING:  # the runtime's models; imported where a runtime calls in, so training needs no runtime
    from tiledispatch.kernels import Launch, SplitK

MODEL_DIR = Path(__file__).resolve().parent / "models"


class RankedKernel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kernel: str
    split_k: int
    score: float


@lru_cache(maxsize=8)
def load_checked_model(path: Path) -> TreeModel:
    """The model at ``path``, refused when its features are not ``FEATURE_NAMES`` (loaded once per path)."""
    if not path.is_file():
        # The one place a user meets a missing model: say where the committed ones live and how to rebuild.
        raise TreeModelError(
            f"{path}: cannot read: no such model file (the committed models are in {MODEL_DIR}; "
            "retrain: python -m heuristics train --data heuristics/data/*.csv.gz)"
        )
    model = load_model(path)
    if model.feature_names != FEATURE_NAMES:
        raise TreeModelError(f"{path}: its feature list differs from heuristics.features (retrain)")
    return model


def _direction_and_dtype(kernel: str) -> tuple[str, str]:
    rest = kernel.removeprefix("grouped_conv_")
    for direction in ("bwd_weight", "bwd_data", "fwd"):
        if rest.startswith(direction + "_"):
            dtype = rest[len(direction) + 1 :].removeprefix("depthwise_").split("_", 1)[0]
            return direction, dtype
    raise ValueError(f"{kernel!r} is not a kernel name")


def rank(
    problem: ConvProblem,
    kernels: Sequence[str],
    split_ks: Sequence[int] | Mapping[str, Sequence[int]] = (1,),
    model_dir: Path | None = None,
) -> list[RankedKernel]:
    """Every (kernel, split-K) pair, best predicted first; ties keep the input order. `split_ks`: the
    factors of every kernel, or each kernel's own (a mapping by name); bwd_weight only, others run at 1.

    Only pass kernels whose is_supported holds for the problem: the model was trained on supported runs.
    Raises ValueError for mixed directions or a bad name, TreeModelError when the model is missing or bad.
    """
    if not kernels:
        return []
    directions = {_direction_and_dtype(k)[0] for k in kernels}
    if len(directions) != 1:
        raise ValueError(f"kernels of several directions: {', '.join(sorted(directions))}")
    direction = directions.pop()
    model = load_checked_model((model_dir or MODEL_DIR) / f"{direction}{MODEL_SUFFIX}")

    def factors(kernel: str) -> Sequence[int]:
        if direction != "bwd_weight":
            return (1,)
        return split_ks[kernel] if isinstance(split_ks, Mapping) else split_ks

    pairs = [(k, s) for k in kernels for s in factors(k)]
    rows = [
        feature_vector(problem, direction, _direction_and_dtype(k)[1], kernel_traits(k), s) for k, s in pairs
    ]
    scores = model.predict(np.asarray(rows))
    order = np.argsort(-scores, kind="stable")
    return [RankedKernel(kernel=pairs[i][0], split_k=pairs[i][1], score=float(scores[i])) for i in order]


ItemT = TypeVar("ItemT")


def depthwise_first(items: Sequence[ItemT], name_of: Callable[[ItemT], str]) -> Sequence[ItemT]:
    """The depthwise kernels among `items` where there are any, else all: a depthwise kernel is specialised
    for G = C = K, and the models score implicit GEMM tiles too well on depthwise layers (the C library's
    selector applies the same rule)."""
    depthwise = [item for item in items if kernel_traits(name_of(item)).depthwise]
    return depthwise or items


class _Named(Protocol):
    @property
    def name(self) -> str: ...


KernelT = TypeVar("KernelT", bound=_Named)


class LearnedSelector:
    """The runtime's ``KernelSelector`` and ``LaunchSelector`` (dispatcher/tiledispatch/selection.py) backed
    by the exported models: ``Registry.load(library, selector=LearnedSelector())`` makes ``Registry.select``
    return the kernel the model ranks first among the supported candidates, and ``Registry.plan`` (which
    ``Registry.run`` follows when given no split-K) the first (kernel, split-K) pair among every supported
    kernel's own split-K candidates.

    ``select`` returns a kernel, not a factor, so it ranks bwd_weight kernels at split-K 1 unless ``split_ks``
    says otherwise (then a kernel counts with its best-scored factor)."""

    def __init__(self, model_dir: Path | None = None, split_ks: Sequence[int] = (1,)) -> None:
        self._model_dir = model_dir
        self._split_ks = tuple(split_ks)

    def select(self, problem: ConvProblem, candidates: Sequence[KernelT]) -> KernelT:
        if not candidates:
            raise ValueError("no candidate kernels to select from")
        candidates = depthwise_first(candidates, lambda c: c.name)
        ranked = rank(problem, [c.name for c in candidates], self._split_ks, self._model_dir)
        return next(c for c in candidates if c.name == ranked[0].kernel)

    def select_launch(self, problem: ConvProblem, options: Sequence[SplitK]) -> Launch:
        from tiledispatch.kernels import Launch

        if not options:
            raise ValueError("no candidate kernels to select from")
        options = depthwise_first(options, lambda o: o.kernel.name)
        by_name = {option.kernel.name: option for option in options}
        factors = {name: option.candidates for name, option in by_name.items()}
        best = rank(problem, list(by_name), factors, self._model_dir)[0]
        return Launch(kernel=by_name[best.kernel].kernel, split_k=best.split_k)
