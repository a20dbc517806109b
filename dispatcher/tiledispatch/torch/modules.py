"""``conv2d``/``conv3d`` functions and ``Conv2d``/``Conv3d`` modules over a TorchBackend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .backend import TorchBackend, memory_format


def conv2d(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    *,
    backend: TorchBackend,
) -> torch.Tensor:
    """``torch.nn.functional.conv2d`` on tiledispatch kernels (autograd: bwd_data + bwd_weight kernels)."""
    if x.dim() != 4:
        raise ValueError(f"conv2d: input has {x.dim()} dimensions, expected 4 (N, C, H, W)")
    return backend.conv(x, weight, bias, stride, padding, dilation, groups)


def conv3d(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    *,
    backend: TorchBackend,
) -> torch.Tensor:
    """``torch.nn.functional.conv3d`` on tiledispatch kernels."""
    if x.dim() != 5:
        raise ValueError(f"conv3d: input has {x.dim()} dimensions, expected 5 (N, C, D, H, W)")
    return backend.conv(x, weight, bias, stride, padding, dilation, groups)


def _prepare(module: torch.nn.Conv2d | torch.nn.Conv3d, ndim: int) -> None:
    """Refuses what the kernels cannot express, and keeps the weight in channels_last memory (GKYXC) so that
    no forward copies it (optimizers update it in place, preserving the format)."""
    if module.padding_mode != "zeros":
        raise ValueError(f"padding_mode={module.padding_mode!r}: only 'zeros' is supported")
    if isinstance(module.padding, str):
        raise ValueError(f"padding={module.padding!r}: pass explicit (symmetric) padding sizes")
    module.weight.data = module.weight.data.contiguous(memory_format=memory_format(ndim))


class Conv2d(torch.nn.Conv2d):
    """``torch.nn.Conv2d`` on tiledispatch kernels: ``Conv2d(64, 64, 3, padding=1, groups=32, backend=b)``."""

    def __init__(self, *args: Any, backend: TorchBackend, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _prepare(self, 2)
        self.backend = backend

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        args = (self.bias, self.stride, self.padding, self.dilation, self.groups)
        return self.backend.conv(x, self.weight, *args)


class Conv3d(torch.nn.Conv3d):
    """``torch.nn.Conv3d`` with tiledispatch kernels."""

    def __init__(self, *args: Any, backend: TorchBackend, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _prepare(self, 3)
        self.backend = backend

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        args = (self.bias, self.stride, self.padding, self.dilation, self.groups)
        return self.backend.conv(x, self.weight, *args)
