"""The plug-in point for kernel selection on the Python side. A ``KernelSelector`` ranks the kernels that
support a problem (a learned, CK-style TFLOP/s predictor will implement it); without one, the registry asks
the C library's documented tile heuristic (docs/runtime.md, "Selection")."""

from __future__ import annotations

from typing import Protocol

from .kernels import KernelInfo
from .problem import Problem


class KernelSelector(Protocol):
    def select(self, problem: Problem, candidates: list[KernelInfo]) -> KernelInfo:
        """One of `candidates` (never empty; each supports `problem`)."""
        ...
