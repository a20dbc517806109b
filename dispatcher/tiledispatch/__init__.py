"""tiledispatch: the Python runtime of the generated grouped-convolution kernels.

``Registry.build(ruleset="tiny")`` builds and loads a rule set's kernels; ``registry.select(problem)`` and
``registry.run(x, w, y, problem)`` pick and run one (``registry.plan(problem)``: the kernel and split-K
factor a run takes); ``tiledispatch.torch`` plugs them into PyTorch autograd.
"""

from generators.enums import DataType, Direction

from .build import BuildRequest
from .errors import BuildError, LibraryError, TensorError, TiledispatchError, UnsupportedProblemError
from .kernels import KernelInfo, Launch, SplitK, Support
from .problem import Problem
from .registry import Registry
from .selection import KernelSelector, LaunchSelector

__all__ = [
    "BuildError",
    "BuildRequest",
    "DataType",
    "Direction",
    "KernelInfo",
    "KernelSelector",
    "Launch",
    "LaunchSelector",
    "LibraryError",
    "Problem",
    "Registry",
    "SplitK",
    "Support",
    "TensorError",
    "TiledispatchError",
    "UnsupportedProblemError",
]
