"""``TorchBackend``: a Registry's kernels as ``torch.library`` custom ops with autograd.

Three ops per backend (forward, backward data, backward weight), each with a fake (meta) implementation so
that ``torch.compile`` traces through them; autograd maps the forward's backward onto bwd_data and
bwd_weight. Tensors are handed to the kernels in channels_last memory (NHWGC / GKYXC / NHWGK); every op
returns channels_last outputs, on the kernel path and on the PyTorch fallback alike, so the fake and the real
strides agree. Problems no kernel supports (or tensors the kernels cannot take: CPU, float64, ...) run with
PyTorch's own convolution, with one warning per backend.

This module deliberately does not use ``from __future__ import annotations``: torch.library infers each op's
schema from its annotations.
"""

import collections
import uuid
import warnings
from collections.abc import Callable, Sequence

import torch
from torch.nn import functional
from torch.nn import grad as nn_grad

from generators.enums import Direction

from ..errors import UnsupportedProblemError
from ..kernels import Launch
from ..problem import Problem
from ..registry import Registry
from .problems import TORCH_DTYPES, conv_problem, output_shape


def memory_format(ndim: int) -> torch.memory_format:
    return torch.channels_last_3d if ndim == 3 else torch.channels_last


def channels_last(t: torch.Tensor) -> torch.Tensor:
    """`t` in channels_last memory with a 16-byte aligned start (a fresh copy only when needed)."""
    fmt = memory_format(t.dim() - 2)
    t = t.contiguous(memory_format=fmt)
    if t.data_ptr() % 16:
        t = t.clone(memory_format=fmt)
    return t


class TorchBackend:
    """The custom ops over one Registry. ``namespace`` names the torch.library namespace (default: unique)."""

    def __init__(self, registry: Registry, namespace: str | None = None) -> None:
        self.registry = registry
        self.namespace = namespace or f"tiledispatch_{uuid.uuid4().hex[:8]}"
        # Why convolutions ran with PyTorch, with how often (bounded: one entry per distinct reason).
        self.fallbacks: collections.Counter[str] = collections.Counter()
        self._launches: dict[tuple[Problem, int], Launch | None] = {}
        self.conv_fwd, self.conv_bwd_data, self.conv_bwd_weight = self._define_ops()

    # -- kernel choice -------------------------------------------------------------------------------
    def launch_for(self, problem: Problem, device: int) -> Launch | None:
        """The kernel and split-K factor that run `problem` on CUDA device `device` (``Registry.plan``), or
        None when no kernel supports it (memoised per problem and device)."""
        key = (problem, device)
        if key not in self._launches:
            sms = self.registry.device_sm_count(device) if problem.direction is Direction.BWD_WEIGHT else None
            try:
                self._launches[key] = self.registry.plan(problem, sms=sms)
            except UnsupportedProblemError:
                self._launches[key] = None
        return self._launches[key]

    def _plan(
        self, tensors: Sequence[torch.Tensor], problem_of: Callable[[], Problem]
    ) -> tuple[Problem, Launch] | None:
        """The problem and its launch, or None (after recording why) to fall back to PyTorch."""
        why = None
        if any(not t.is_cuda for t in tensors):
            why = "tensors are not on a CUDA device"
        elif len({t.dtype for t in tensors}) != 1 or str(tensors[0].dtype) not in TORCH_DTYPES:
            why = f"dtypes {sorted({str(t.dtype) for t in tensors})} (kernels take one of fp16, bf16, fp32)"
        problem = launch = None
        if why is None:
            try:
                problem = problem_of()
            except ValueError as error:  # e.g. an empty batch: PyTorch handles it (or raises its own error)
                why = f"not a kernel problem ({' '.join(str(error).split())})"
        if problem is not None:
            launch = self.launch_for(problem, tensors[0].device.index)
            if launch is None:
                why = f"no kernel in {self.registry.path.name} supports {problem.describe()}"
        if why is None:
            return problem, launch
        self.fallbacks[why] += 1
        if self.fallbacks.total() == 1:
            warnings.warn(
                f"tiledispatch: {why}; running PyTorch's convolution instead (warned once per backend; "
                "see TorchBackend.fallbacks for later ones)",
                RuntimeWarning,
                stacklevel=4,
            )
        return None

    def _run(
        self, x: torch.Tensor, w: torch.Tensor, y: torch.Tensor, planned: tuple[Problem, Launch]
    ) -> None:
        problem, launch = planned
        self.registry.run(x, w, y, problem, kernel=launch.kernel.name, split_k=launch.split_k)

    # -- the ops ----------------------------------------------------------------------------------------
    def _define_ops(self) -> tuple:
        backend = self
        ns = self.namespace

        def problem(
            x_shape: Sequence[int],
            w_shape: Sequence[int],
            params: tuple,
            direction: Direction,
            dtype: torch.dtype,
        ) -> Problem:
            stride, padding, dilation, groups = params
            return conv_problem(
                x_shape, w_shape, stride, padding, dilation, groups, direction, TORCH_DTYPES[str(dtype)]
            )

        @torch.library.custom_op(f"{ns}::conv_fwd", mutates_args=())
        def conv_fwd(
            x: torch.Tensor,
            w: torch.Tensor,
            stride: list[int],
            padding: list[int],
            dilation: list[int],
            groups: int,
        ) -> torch.Tensor:
            params = (stride, padding, dilation, groups)
            fmt = memory_format(x.dim() - 2)
            plan = backend._plan([x, w], lambda: problem(x.shape, w.shape, params, Direction.FWD, x.dtype))
            if plan is None:
                conv = functional.conv3d if x.dim() == 5 else functional.conv2d
                return conv(x, w, None, stride, padding, dilation, groups).contiguous(memory_format=fmt)
            y = torch.empty(output_shape(plan[0]), dtype=x.dtype, device=x.device, memory_format=fmt)
            backend._run(channels_last(x), channels_last(w), y, plan)
            return y

        @conv_fwd.register_fake
        def _(x, w, stride, padding, dilation, groups):
            spatial = [
                (size + 2 * p - d * (f - 1) - 1) // s + 1
                for size, f, s, p, d in zip(x.shape[2:], w.shape[2:], stride, padding, dilation, strict=True)
            ]
            return torch.empty(
                [x.shape[0], w.shape[0], *spatial],
                dtype=x.dtype,
                device=x.device,
                memory_format=memory_format(x.dim() - 2),
            )

        @torch.library.custom_op(f"{ns}::conv_bwd_data", mutates_args=())
        def conv_bwd_data(
            grad_y: torch.Tensor,
            w: torch.Tensor,
            input_shape: list[int],
            stride: list[int],
            padding: list[int],
            dilation: list[int],
            groups: int,
        ) -> torch.Tensor:
            params = (stride, padding, dilation, groups)
            fmt = memory_format(grad_y.dim() - 2)
            plan = backend._plan(
                [grad_y, w], lambda: problem(input_shape, w.shape, params, Direction.BWD_DATA, w.dtype)
            )
            if plan is None:
                fn = nn_grad.conv3d_input if grad_y.dim() == 5 else nn_grad.conv2d_input
                return fn(input_shape, w, grad_y, stride, padding, dilation, groups).contiguous(
                    memory_format=fmt
                )
            grad_x = torch.empty(input_shape, dtype=w.dtype, device=w.device, memory_format=fmt)
            gy, wc = channels_last(grad_y), channels_last(w)
            backend._run(grad_x, wc, gy, plan)
            return grad_x

        @conv_bwd_data.register_fake
        def _(grad_y, w, input_shape, stride, padding, dilation, groups):
            fmt = memory_format(grad_y.dim() - 2)
            return torch.empty(input_shape, dtype=w.dtype, device=w.device, memory_format=fmt)

        @torch.library.custom_op(f"{ns}::conv_bwd_weight", mutates_args=())
        def conv_bwd_weight(
            x: torch.Tensor,
            grad_y: torch.Tensor,
            weight_shape: list[int],
            stride: list[int],
            padding: list[int],
            dilation: list[int],
            groups: int,
        ) -> torch.Tensor:
            params = (stride, padding, dilation, groups)
            fmt = memory_format(x.dim() - 2)
            plan = backend._plan(
                [x, grad_y], lambda: problem(x.shape, weight_shape, params, Direction.BWD_WEIGHT, x.dtype)
            )
            if plan is None:
                fn = nn_grad.conv3d_weight if x.dim() == 5 else nn_grad.conv2d_weight
                return fn(x, weight_shape, grad_y, stride, padding, dilation, groups).contiguous(
                    memory_format=fmt
                )
            grad_w = torch.empty(weight_shape, dtype=x.dtype, device=x.device, memory_format=fmt)
            xc, gy = channels_last(x), channels_last(grad_y)
            backend._run(xc, grad_w, gy, plan)
            return grad_w

        @conv_bwd_weight.register_fake
        def _(x, grad_y, weight_shape, stride, padding, dilation, groups):
            fmt = memory_format(x.dim() - 2)
            return torch.empty(weight_shape, dtype=x.dtype, device=x.device, memory_format=fmt)

        def setup_context(ctx, inputs, output) -> None:
            x, w, stride, padding, dilation, groups = inputs
            ctx.save_for_backward(x, w)
            ctx.params = (stride, padding, dilation, groups)

        def backward(ctx, grad_y):
            x, w = ctx.saved_tensors
            grad_x = grad_w = None
            if ctx.needs_input_grad[0]:
                grad_x = conv_bwd_data(grad_y, w, list(x.shape), *ctx.params)
            if ctx.needs_input_grad[1]:
                grad_w = conv_bwd_weight(x, grad_y, list(w.shape), *ctx.params)
            return grad_x, grad_w, None, None, None, None

        conv_fwd.register_autograd(backward, setup_context=setup_context)
        return conv_fwd, conv_bwd_data, conv_bwd_weight

    # -- the functional API ---------------------------------------------------------------------------
    def conv(
        self,
        x: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None = None,
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
    ) -> torch.Tensor:
        """``torch.nn.functional.conv2d``/``conv3d`` (chosen by ``x.dim()``) with this backend's kernels."""
        from .problems import expand

        if x.dim() not in (4, 5):
            raise ValueError(f"input has {x.dim()} dimensions, expected 4 (N, C, H, W) or 5 (N, C, D, H, W)")
        if weight.dim() != x.dim():
            raise ValueError(f"weight has {weight.dim()} dimensions, input {x.dim()}: they must match")
        ndim = x.dim() - 2
        if isinstance(padding, str):
            raise ValueError(f"padding={padding!r}: pass explicit (symmetric) padding sizes")
        if not isinstance(groups, int) or groups < 1:
            raise ValueError(f"groups={groups!r}: expected a positive int")
        if x.shape[1] != weight.shape[1] * groups:
            raise ValueError(
                f"input has {x.shape[1]} channels, weight expects {weight.shape[1]} x groups {groups}"
            )
        y = self.conv_fwd(
            x,
            weight,
            expand(stride, ndim, "stride"),
            expand(padding, ndim, "padding"),
            expand(dilation, ndim, "dilation"),
            groups,
        )
        if bias is not None:
            y = y + bias.view(1, -1, *([1] * ndim))
        return y
