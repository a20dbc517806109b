"""The plug-in points for kernel selection on the Python side. A ``KernelSelector`` picks a kernel among those
that support a problem; a ``LaunchSelector`` also picks the split-K factor, among each kernel's own
candidates (``heuristics.select.LearnedSelector`` is both). Without a selector the registry asks the C
library's documented tile heuristic (docs/runtime.md, "Selection"); without a ``LaunchSelector`` a bwd_weight
run takes the chosen kernel's preferred factor (docs/runtime.md, "Split-K")."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .kernels import KernelInfo, Launch, SplitK
from .problem import Problem


class KernelSelector(Protocol):
    def select(self, problem: Problem, candidates: list[KernelInfo]) -> KernelInfo:
        """One of `candidates` (never empty; each supports `problem`)."""
        ...


@runtime_checkable
class LaunchSelector(Protocol):
    def select_launch(self, problem: Problem, options: list[SplitK]) -> Launch:
        """One of `options`' kernels with one of its candidate factors (`options` never empty; each kernel
        supports `problem`)."""
        ...
