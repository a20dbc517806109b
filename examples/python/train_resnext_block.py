"""Trains a small ResNeXt-style network (stem, two bottleneck blocks with 32-group 3x3 convolutions, pooled
classifier) for a few SGD steps twice from the same initial weights: once with tiledispatch.torch
convolutions, once with PyTorch's (cuDNN). Prints both loss curves, their largest relative difference, and the
median time per training step of each. GPU only:

    python3 examples/python/train_resnext_block.py --library build/tiny-sm_90a/lib/libtiledispatch_tiny.so

Exit status 1 when the loss curves differ by more than the tolerance (--tolerance).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

from example_support import main_guard, parse_args, registry_from, require_cuda, torch_dtype


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    parser.add_argument("--batch", type=int, default=32, help="images per step (default 32)")
    parser.add_argument("--size", type=int, default=32, help="image height and width (default 32)")
    parser.add_argument("--tolerance", type=float, default=None, help="largest relative loss difference")


def build_model(conv2d: type, backend_kwargs: dict, dtype: object):
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        """ResNeXt bottleneck: 1x1 reduce, 3x3 with 32 groups, 1x1 expand, residual."""

        def __init__(self, channels: int, width: int, groups: int = 32) -> None:
            super().__init__()
            self.reduce = conv2d(channels, width, 1, bias=False, **backend_kwargs)
            self.bn1 = nn.BatchNorm2d(width)
            self.grouped = conv2d(width, width, 3, padding=1, groups=groups, bias=False, **backend_kwargs)
            self.bn2 = nn.BatchNorm2d(width)
            self.expand = conv2d(width, channels, 1, bias=False, **backend_kwargs)
            self.bn3 = nn.BatchNorm2d(channels)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = torch.relu(self.bn1(self.reduce(x)))
            out = torch.relu(self.bn2(self.grouped(out)))
            return torch.relu(x + self.bn3(self.expand(out)))

    model = nn.Sequential(
        conv2d(16, 128, 3, padding=1, bias=False, **backend_kwargs),
        nn.BatchNorm2d(128),
        nn.ReLU(),
        Bottleneck(128, 256),
        Bottleneck(128, 256),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(128, 10),
    )
    return model.to(device="cuda", dtype=dtype, memory_format=torch.channels_last)


def train(model, data, labels, steps: int) -> tuple[list[float], list[float]]:
    import torch

    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses, times = [], []
    for _ in range(steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(data).float(), labels)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
        losses.append(float(loss))
    return losses, times


def main() -> int:
    args = parse_args("Train a ResNeXt-style block with tiledispatch.torch and with PyTorch.", options)
    if args.steps < 2 or args.batch < 1 or args.size < 4:
        raise ValueError(
            f"need --steps >= 2, --batch >= 1, --size >= 4; got {args.steps}, {args.batch}, {args.size}"
        )
    import torch
    from torch import nn

    from tiledispatch.torch import Conv2d, TorchBackend

    require_cuda()
    registry = registry_from(args)
    backend = TorchBackend(registry)
    dtype = torch_dtype(args.dtype)
    torch.manual_seed(0)
    reference = build_model(nn.Conv2d, {}, dtype)
    ours = build_model(Conv2d, {"backend": backend}, dtype)
    ours.load_state_dict(copy.deepcopy(reference.state_dict()))
    data = torch.randn(args.batch, 16, args.size, args.size, device="cuda").to(dtype)
    data = data.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, 10, (args.batch,), device="cuda")

    our_losses, our_times = train(ours, data, labels, args.steps)
    ref_losses, ref_times = train(reference, data, labels, args.steps)
    worst = max(abs(a - b) / max(abs(b), 1e-6) for a, b in zip(our_losses, ref_losses, strict=True))
    tolerance = args.tolerance if args.tolerance is not None else (1e-2 if args.dtype == "fp32" else 3e-2)
    print(f"{'step':>4} {'tiledispatch':>13} {'pytorch':>10}")
    for step, (a, b) in enumerate(zip(our_losses, ref_losses, strict=True)):
        print(f"{step:>4} {a:>13.5f} {b:>10.5f}")
    print(f"largest relative loss difference {worst:.2e} (tolerance {tolerance:.0e})")
    # The first steps include selection, warm-up and cuDNN autotuning: time the second half.
    half = args.steps // 2
    print(
        f"time per training step ({args.dtype}, batch {args.batch}, {args.size}x{args.size}): "
        f"tiledispatch {statistics.median(our_times[half:]):.2f} ms, "
        f"PyTorch/cuDNN {statistics.median(ref_times[half:]):.2f} ms"
    )
    if backend.fallbacks:
        reasons = sorted(backend.fallbacks)
        print(f"{backend.fallbacks.total()} convolutions ran with PyTorch (no kernel): {reasons}")
    return 0 if worst <= tolerance else 1


if __name__ == "__main__":
    main_guard(main)
