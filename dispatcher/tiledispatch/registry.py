"""``Registry``: the kernels of one built rule set, loaded from ``libtiledispatch_<ruleset>.so``.

Loading, listing, support queries and selection are host-only; CUDA is touched first by ``run``, or by a
bwd_weight ``plan`` / ``split_k`` that is not told the GPU's SM count (lazy initialisation: build in worker
processes, load anywhere). The library handle belongs to the Registry object.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from generators.enums import Direction

from .build import BuildRequest, run_build
from .errors import LibraryError, TensorError, UnsupportedProblemError
from .kernels import KernelInfo, Launch, SplitK, Support
from .native import NativeLibrary
from .problem import Problem
from .selection import KernelSelector, LaunchSelector
from .tensors import check_views, view_of


def _as_problem(problem: Problem | dict[str, Any]) -> Problem:
    if isinstance(problem, Problem):
        return problem
    if isinstance(problem, dict):
        return Problem.model_validate(problem)
    raise TypeError(
        f"problem must be a tiledispatch.Problem or a dict of its fields, got {type(problem).__name__}"
    )


def _stream_handle(stream: object, tensor: object, device: int) -> int:
    """A cudaStream_t as an integer: an int as given, a torch/CuPy stream object, or (None) the current
    stream of the tensors' framework (PyTorch, CuPy), else the legacy default stream."""
    if stream is None:
        module = type(tensor).__module__.split(".")[0]
        if module == "torch":
            import torch

            return int(torch.cuda.current_stream(device if device >= 0 else None).cuda_stream)
        if module == "cupy":
            import cupy

            return int(cupy.cuda.get_current_stream().ptr)
        return 0
    if isinstance(stream, int):
        return stream
    for attribute in ("cuda_stream", "ptr", "handle"):
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return handle
    raise TypeError(f"stream {stream!r} is not an int, a torch.cuda.Stream or a cupy Stream")


class Registry:
    """The kernels of one shared library: ``Registry.load(path)`` or ``Registry.build(...)``."""

    def __init__(self, library: NativeLibrary, selector: KernelSelector | None = None) -> None:
        self._library = library
        self._selector = selector
        self._kernels = tuple(
            KernelInfo.model_validate(library.kernel_info(i)) for i in range(library.kernel_count())
        )
        self._by_name = {kernel.name: kernel for kernel in self._kernels}

    @classmethod
    def load(cls, path: str | Path, selector: KernelSelector | None = None) -> Registry:
        """Loads a built ``libtiledispatch_<ruleset>.so`` (no CUDA call)."""
        return cls(NativeLibrary(path), selector)

    @classmethod
    def build(
        cls,
        ruleset: str = "tiny",
        directions: str | Iterable[str] | None = None,
        dtypes: str | Iterable[str] | None = None,
        ndims: int | Iterable[int] | None = None,
        max_workers: int | None = None,
        arch: str = "sm_90a",
        progress: Callable[[str], None] | None = None,
        **options: Any,
    ) -> Registry:
        """Builds the rule set's shared library with SCons (``max_workers`` parallel jobs; progress lines to
        ``progress``, default stderr) and loads it. ``options``: ``toolchain``, ``cuda_root``, ``repo_root``
        (see ``BuildRequest``)."""
        fields: dict[str, Any] = {"ruleset": ruleset, "arch": arch, "max_workers": max_workers, **options}
        for name, value in (("directions", directions), ("dtypes", dtypes), ("ndims", ndims)):
            if value is not None:
                fields[name] = value if isinstance(value, str | int) else tuple(value)
        return cls.load(run_build(BuildRequest.model_validate(fields), progress))

    @property
    def path(self) -> Path:
        return self._library.path

    @property
    def kernels(self) -> tuple[KernelInfo, ...]:
        """Every kernel, ordered by name."""
        return self._kernels

    def kernel(self, name: str) -> KernelInfo:
        try:
            return self._by_name[name]
        except KeyError:
            raise UnsupportedProblemError(f"no kernel named {name!r} in {self.path.name}") from None

    def to_json(self) -> dict[str, Any]:
        """The C API's registry export (CK's conv_dispatcher_export_registry_json), parsed."""
        return json.loads(self._library.registry_json())

    def supported(self, problem: Problem | dict[str, Any], only_supported: bool = False) -> list[Support]:
        """For every kernel (or only those that support it): does it compute `problem`, and if not, why."""
        problem = _as_problem(problem)
        self._library.validate(problem)
        verdicts = []
        for kernel in self._kernels:
            ok, reason = self._library.is_supported(kernel.name, problem)
            if ok or not only_supported:
                verdicts.append(Support(kernel=kernel.name, supported=ok, reason=reason))
        return verdicts

    def is_supported(self, problem: Problem | dict[str, Any], kernel: str) -> Support:
        problem = _as_problem(problem)
        self.kernel(kernel)
        ok, reason = self._library.is_supported(kernel, problem)
        return Support(kernel=kernel, supported=ok, reason=reason)

    def select(self, problem: Problem | dict[str, Any]) -> KernelInfo:
        """The kernel that runs `problem` when none is named: the selector's choice if one was given, else the
        C library's tile heuristic. ``UnsupportedProblemError`` when no kernel supports it."""
        problem = _as_problem(problem)
        try:
            if self._selector is None:
                return self._by_name[self._library.select(problem)]
            candidates = [self._by_name[s.kernel] for s in self.supported(problem, only_supported=True)]
        except LibraryError as error:
            if error.status == "TD_ERROR_NO_KERNEL":
                raise UnsupportedProblemError(
                    f"no kernel in {self.path.name} supports {problem.describe()}"
                ) from None
            raise
        if not candidates:
            raise UnsupportedProblemError(f"no kernel in {self.path.name} supports {problem.describe()}")
        chosen = self._selector.select(problem, candidates)
        if chosen.name not in {c.name for c in candidates}:
            raise UnsupportedProblemError(
                f"the selector chose {chosen.name}, which is not among the candidates"
            )
        return chosen

    def workspace_bytes(
        self, problem: Problem | dict[str, Any], kernel: str, split_k: int | None = None
    ) -> int:
        """Device workspace `kernel` needs for `problem` at split-K factor `split_k` (None: no split)."""
        problem = _as_problem(problem)
        self.kernel(kernel)
        return self._library.workspace_size(kernel, problem, split_k or 1)

    def device_sm_count(self, device: int = -1) -> int:
        """The multiprocessor count of CUDA device `device` (-1: the current one). A CUDA call."""
        return self._library.device_sm_count(device)

    def _sm_count(self, sms: int | None) -> int:
        """`sms` checked, or (None) the current device's count."""
        if sms is None:
            return self.device_sm_count()
        if not isinstance(sms, int) or sms < 1:
            raise ValueError(f"sms must be a positive int (a GPU's multiprocessor count), got {sms!r}")
        return sms

    def split_k(self, problem: Problem | dict[str, Any], kernel: str, sms: int | None = None) -> SplitK:
        """The split-K factors `kernel` offers for `problem` on a GPU of `sms` multiprocessors (None: the
        current device's count, a CUDA call), and the one it prefers. ``UnsupportedProblemError`` when the
        kernel does not support the problem."""
        problem = _as_problem(problem)
        info = self.kernel(kernel)
        count = self._sm_count(sms)
        try:
            preferred, candidates = self._library.split_k(kernel, problem, count)
        except LibraryError as error:
            if error.status == "TD_ERROR_NOT_SUPPORTED":
                raise UnsupportedProblemError(str(error)) from None
            raise
        return SplitK(kernel=info, sms=count, candidates=candidates, preferred=preferred)

    def plan(
        self, problem: Problem | dict[str, Any], kernel: str | None = None, sms: int | None = None
    ) -> Launch:
        """What ``run`` launches for `problem` when it is given no ``split_k``, on a GPU of `sms`
        multiprocessors (None: the current device's count, a CUDA call; used by bwd_weight only): `kernel` or
        the selected one, and its split-K factor. A ``LaunchSelector`` picks the pair among every supported
        kernel's candidates; otherwise the kernel comes from ``select`` and the factor from the C library's
        plan (``td_conv_plan``: its compiled-in models rank the kernel's candidates). Outside bwd_weight:
        host-only, split-K 1."""
        problem = _as_problem(problem)
        if problem.direction is not Direction.BWD_WEIGHT:
            return Launch(kernel=self._chosen(problem, kernel), split_k=1)
        count = self._sm_count(sms)
        if not isinstance(self._selector, LaunchSelector):
            name = None if kernel is None and self._selector is None else self._chosen(problem, kernel).name
            try:
                chosen, split_k = self._library.plan(name, problem, count)
            except LibraryError as error:
                if error.status in ("TD_ERROR_NOT_SUPPORTED", "TD_ERROR_NO_KERNEL"):
                    raise UnsupportedProblemError(str(error)) from None
                raise
            return Launch(kernel=self.kernel(chosen), split_k=split_k)
        names = [kernel] if kernel is not None else [s.kernel for s in self.supported(problem, True)]
        if not names:
            raise UnsupportedProblemError(f"no kernel in {self.path.name} supports {problem.describe()}")
        options = {name: self.split_k(problem, name, count) for name in names}
        launch = self._selector.select_launch(problem, list(options.values()))
        chosen = options.get(launch.kernel.name)
        if chosen is None or launch.split_k not in chosen.candidates:
            raise UnsupportedProblemError(
                f"the selector chose {launch.kernel.name} at split-K {launch.split_k}, which is not among "
                "the candidates"
            )
        return launch

    def _chosen(self, problem: Problem, kernel: str | None) -> KernelInfo:
        """`kernel` when it supports `problem` (else ``UnsupportedProblemError`` with its reason), or the
        selected kernel."""
        if kernel is None:
            return self.select(problem)
        verdict = self.is_supported(problem, kernel)
        if not verdict.supported:
            raise UnsupportedProblemError(f"{kernel} does not support {problem.describe()}: {verdict.reason}")
        return self.kernel(kernel)

    def run(
        self,
        x: object,
        w: object,
        y: object,
        problem: Problem | dict[str, Any],
        kernel: str | None = None,
        split_k: int | None = None,
        stream: object = None,
    ) -> KernelInfo:
        """Runs `problem` on device tensors (PyTorch, CuPy, anything with ``__cuda_array_interface__`` or
        DLPack): `x` input (N, C, [D,] H, W) channels-last or NHWGC, `w` weight (K, C/G, [Z,] Y, X)
        channels-last or GKYXC, `y` output. fwd writes `y`, bwd_data writes `x`, bwd_weight writes `w`.
        `split_k` (bwd_weight): None takes ``plan``'s factor for the tensors' GPU. Asynchronous on `stream`
        (default: the framework's current stream). Returns the kernel that ran."""
        problem = _as_problem(problem)
        if split_k is not None and (not isinstance(split_k, int) or split_k < 1):
            raise ValueError(f"split_k must be a positive int, got {split_k!r}")
        if split_k not in (None, 1) and problem.direction is not Direction.BWD_WEIGHT:
            raise ValueError(
                f"split_k={split_k}: split-K is backward-weight only, problem is {problem.direction.value}"
            )
        views = [view_of("input", x), view_of("weight", w), view_of("output", y)]
        device = check_views(views, problem)
        if split_k is None:
            sms = self.device_sm_count(device) if problem.direction is Direction.BWD_WEIGHT else None
            launch = self.plan(problem, kernel, sms)
        else:
            launch = Launch(kernel=self._chosen(problem, kernel), split_k=split_k)
        handle = _stream_handle(stream, x, device)
        try:
            self._library.run(
                launch.kernel.name,
                problem,
                (views[0].pointer, views[1].pointer, views[2].pointer),
                launch.split_k,
                device,
                handle,
            )
        except LibraryError as error:
            if error.status == "TD_ERROR_BAD_ARGUMENTS":
                raise TensorError(str(error)) from None
            raise
        return launch.kernel

    def __repr__(self) -> str:
        return f"Registry({self.path}, {len(self._kernels)} kernels)"
