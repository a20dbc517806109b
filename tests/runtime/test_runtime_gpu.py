"""GPU tests of the Python runtime (H100): every kernel of the built library against PyTorch's float64
convolution and its gradients (torch.nn.grad), the tensor checks on real tensors (non-contiguous, wrong
layout, CPU, misaligned), streams, CuPy and DLPack inputs, and the autograd / torch.compile path of
tiledispatch.torch.

The library is $TD_LIBRARY when set (e.g. a libtiledispatch_tiny.so built on a CPU machine; then every kernel
is a test of its own), else Registry.build(ruleset=$TD_RULESET or tiny) on this machine (one test over all).
Outputs are poisoned (NaN) before every run; inputs are fresh random normals; errors are relative L2
(fp16/bf16 <= 1e-2, fp32 as TF32 <= 2e-3)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable

import pytest
from gpu_problems import candidates, torch_args

from tiledispatch import KernelInfo, Problem, Registry, TensorError

torch = pytest.importorskip("torch", reason="the GPU runtime tests compare against PyTorch")
pytestmark = pytest.mark.gpu

TOLERANCE = {"fp16": 1e-2, "bf16": 1e-2, "fp32": 2e-3}
TORCH_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


@pytest.fixture(scope="session")
def gpu_registry() -> Registry:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible to PyTorch")
    path = os.environ.get("TD_LIBRARY")
    if path:
        return Registry.load(path)
    return Registry.build(ruleset=os.environ.get("TD_RULESET", "tiny"), max_workers=os.cpu_count())


def rel_l2(out: torch.Tensor, ref: torch.Tensor) -> float:
    out, ref = out.double(), ref.double()
    assert torch.isfinite(out).all(), "output holds NaN/Inf (poison left unwritten?)"
    return float((out - ref).norm() / ref.norm())


def fmt(ndim: int) -> torch.memory_format:
    return torch.channels_last_3d if ndim == 3 else torch.channels_last


class Tensors:
    """x, w, y of a problem on the GPU (channels_last), random inputs, the written tensor poisoned."""

    def __init__(self, problem: Problem, seed: int = 0) -> None:
        from tiledispatch.tensors import logical_shapes

        generator = torch.Generator(device="cuda").manual_seed(seed)
        dtype = TORCH_DTYPE[problem.dtype.value]
        memory_format = fmt(problem.ndim_spatial)
        shapes = logical_shapes(problem)

        def make(role: str) -> torch.Tensor:
            t = torch.randn(shapes[role], generator=generator, device="cuda", dtype=torch.float32).to(dtype)
            return t.contiguous(memory_format=memory_format)

        self.x, self.w, self.y = make("input"), make("weight"), make("output")
        written = {"fwd": self.y, "bwd_data": self.x, "bwd_weight": self.w}[problem.direction.value]
        written.fill_(float("nan"))
        self.problem = problem

    def result(self) -> torch.Tensor:
        return {"fwd": self.y, "bwd_data": self.x, "bwd_weight": self.w}[self.problem.direction.value]

    def reference(self) -> torch.Tensor:
        p, args = self.problem, torch_args(self.problem)
        three = p.ndim_spatial == 3
        x, w, y = self.x.double(), self.w.double(), self.y.double()
        if p.direction.value == "fwd":
            conv = torch.nn.functional.conv3d if three else torch.nn.functional.conv2d
            return conv(x, w, None, **args)
        if p.direction.value == "bwd_data":
            grad_input = torch.nn.grad.conv3d_input if three else torch.nn.grad.conv2d_input
            return grad_input(x.shape, w, y, **args)
        grad_weight = torch.nn.grad.conv3d_weight if three else torch.nn.grad.conv2d_weight
        return grad_weight(x, w.shape, y, **args)


def problem_for(registry: Registry, kernel: KernelInfo) -> Problem | None:
    for problem in candidates(kernel.ndim_spatial, kernel.direction.value, kernel.dtype.value):
        if registry.is_supported(problem, kernel.name).supported:
            return problem
    return None


def _kernel_names() -> list[str]:
    """Kernel names of $TD_LIBRARY, read at collection (no CUDA call); else one "*" standing for all."""
    path = os.environ.get("TD_LIBRARY")
    if path and os.path.isfile(path):
        return [kernel.name for kernel in Registry.load(path).kernels]
    return ["*"]


@pytest.mark.parametrize("kernel_name", _kernel_names())
def test_every_kernel_matches_pytorch(gpu_registry: Registry, kernel_name: str) -> None:
    names = [k.name for k in gpu_registry.kernels] if kernel_name == "*" else [kernel_name]
    tested = []
    for name in names:
        problem = problem_for(gpu_registry, gpu_registry.kernel(name))
        if problem is None:
            continue
        for seed in (0, 1):
            t = Tensors(problem, seed)
            gpu_registry.run(t.x, t.w, t.y, problem, kernel=name)
            torch.cuda.synchronize()
            error = rel_l2(t.result(), t.reference())
            assert error <= TOLERANCE[problem.dtype.value], (
                f"{name} on {problem.describe()}: rel L2 {error:.2e}"
            )
        tested.append(name)
    if not tested:
        pytest.skip(f"none of the candidate problems is supported by {kernel_name}")


def split_capable(registry: Registry) -> list[tuple[KernelInfo, Problem]]:
    """Every backward-weight kernel that splits K (implicit GEMM: not stream-K, not depthwise, which reduce
    in their own way) with a candidate problem it supports."""
    pairs = []
    for kernel in registry.kernels:
        if kernel.direction.value == "bwd_weight" and kernel.family == "implicit_gemm":
            problem = problem_for(registry, kernel)
            if problem is not None:
                pairs.append((kernel, problem))
    if not pairs:
        pytest.skip("no split-K capable backward-weight kernel supports a candidate problem")
    return pairs


def test_split_k_backward_weight_matches_pytorch(gpu_registry: Registry) -> None:
    for kernel, problem in split_capable(gpu_registry):
        for split_k in (1, 2, 3):
            t = Tensors(problem, split_k)
            gpu_registry.run(t.x, t.w, t.y, problem, kernel=kernel.name, split_k=split_k)
            torch.cuda.synchronize()
            error = rel_l2(t.result(), t.reference())
            assert error <= TOLERANCE[problem.dtype.value], f"{kernel.name} split_k {split_k}: {error:.2e}"


def test_runs_without_split_k_take_the_plans_factor(gpu_registry: Registry) -> None:
    """bwd_weight given no split-K runs ``plan``'s factor for this GPU: one of the kernel's candidates, the
    same pair from the library's compiled-in models as from the Python LearnedSelector; both runs match
    PyTorch, and some factor is a split."""
    from heuristics.select import LearnedSelector

    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    assert gpu_registry.device_sm_count() == sms
    learned = Registry.load(gpu_registry.path, selector=LearnedSelector())
    factors = []
    for kernel, small in split_capable(gpu_registry):
        # A batch 16 times larger: a reduction long enough to split (the candidates are a few hundred pixels).
        problem = small.replace(N=small.N * 16)
        if not gpu_registry.is_supported(problem, kernel.name).supported:
            problem = small
        offered = gpu_registry.split_k(problem, kernel.name)
        planned = gpu_registry.plan(problem, kernel.name)
        assert planned.split_k in offered.candidates
        assert learned.plan(problem, kernel.name) == planned
        for registry, name in ((gpu_registry, kernel.name), (learned, None)):
            t = Tensors(problem, 7)
            ran = registry.run(t.x, t.w, t.y, problem, kernel=name)
            torch.cuda.synchronize()
            error = rel_l2(t.result(), t.reference())
            assert error <= TOLERANCE[problem.dtype.value], f"{ran.name} on {problem.describe()}: {error:.2e}"
        factors.append(planned.split_k)
    assert max(factors) > 1, factors


def first_problem(registry: Registry, direction: str = "fwd") -> tuple[Problem, str]:
    # fp16 first: CuPy (through __cuda_array_interface__) has no bfloat16.
    for kernel in sorted(registry.kernels, key=lambda k: (k.dtype.value != "fp16", k.name)):
        if kernel.direction.value == direction and kernel.ndim_spatial == 2 and kernel.family != "depthwise":
            problem = problem_for(registry, kernel)
            if problem is not None:
                return problem, kernel.name
    pytest.skip(f"no 2D {direction} kernel supports a candidate problem")


def test_wrong_layouts_and_tensors_are_refused_clearly(gpu_registry: Registry) -> None:
    problem, name = first_problem(gpu_registry)
    t = Tensors(problem)
    with pytest.raises(TensorError, match=r"input: .* is contiguous NC\[D\]HW; .*channels_last"):
        gpu_registry.run(t.x.contiguous(), t.w, t.y, problem, kernel=name)
    wide = torch.empty(
        (problem.N, problem.C, problem.Hi, 2 * problem.Wi), device="cuda", dtype=t.x.dtype
    ).contiguous(memory_format=torch.channels_last)
    with pytest.raises(TensorError, match=r"input: .* is not channels-last"):
        gpu_registry.run(wide[..., ::2], t.w, t.y, problem, kernel=name)
    with pytest.raises(TensorError, match=r"input: tensor is on cpu, not on a CUDA device"):
        gpu_registry.run(t.x.cpu(), t.w, t.y, problem, kernel=name)
    other = torch.float32 if t.x.dtype != torch.float32 else torch.float16
    with pytest.raises(TensorError, match=r"weight: dtype torch\.float"):
        gpu_registry.run(t.x, t.w.to(other), t.y, problem, kernel=name)
    n, c, h, w = t.x.shape
    base = torch.empty(n * c * h * w + 16, device="cuda", dtype=t.x.dtype)
    shifted = base[1 : 1 + n * c * h * w].view(n, h, w, c).permute(0, 3, 1, 2)
    with pytest.raises(TensorError, match=r"input: data pointer .* is not 16-byte aligned"):
        gpu_registry.run(shifted, t.w, t.y, problem, kernel=name)
    assert torch.isnan(t.y).all(), "a refused run must not write"


def test_runs_on_the_given_stream(gpu_registry: Registry) -> None:
    problem, name = first_problem(gpu_registry)
    reference = Tensors(problem, 7)
    expected = reference.reference()
    stream = torch.cuda.Stream()
    handles: list[Callable[[torch.cuda.Stream], object]] = [
        lambda s: s,
        lambda s: s.cuda_stream,
        lambda s: None,
    ]
    for handle in handles:
        t = Tensors(problem, 7)
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):  # the default (None) is the current stream
            gpu_registry.run(t.x, t.w, t.y, problem, kernel=name, stream=handle(stream))
        stream.synchronize()
        assert rel_l2(t.y, expected) <= TOLERANCE[problem.dtype.value]


class DLPackOnly:
    """Exposes a tensor only through DLPack (no __cuda_array_interface__, not a torch.Tensor)."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self._tensor = tensor

    def __dlpack__(self, **kwargs: object) -> object:
        return self._tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._tensor.__dlpack_device__()


def nhwgc(t: torch.Tensor, problem: Problem, role: str) -> torch.Tensor:
    """The packed channels-last tensor (NHWGC / GKYXC / NHWGK) holding the same memory as `t`."""
    g = problem.G
    if role == "weight":
        k, cg, y, x = t.shape
        return t.permute(0, 2, 3, 1).reshape(g, k // g, y, x, cg).contiguous()
    n, c, h, w = t.shape
    return t.permute(0, 2, 3, 1).reshape(n, h, w, g, c // g).contiguous()


@pytest.mark.parametrize("wrapper", ["dlpack", "cupy"])
def test_dlpack_and_cupy_tensors_in_nhwgc(gpu_registry: Registry, wrapper: str) -> None:
    problem, name = first_problem(gpu_registry)
    if problem.dtype.value == "bf16" and wrapper == "cupy":
        pytest.skip("CuPy has no bfloat16")
    t = Tensors(problem, 3)
    x, w, y = nhwgc(t.x, problem, "input"), nhwgc(t.w, problem, "weight"), nhwgc(t.y, problem, "output")
    if wrapper == "cupy":
        cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
        args = (cupy.asarray(x), cupy.asarray(w), cupy.asarray(y))
        out = args[2]
    else:
        args = (DLPackOnly(x), DLPackOnly(w), DLPackOnly(y))
        out = y
    gpu_registry.run(*args, problem, kernel=name)
    torch.cuda.synchronize()
    result = torch.as_tensor(out, device="cuda") if wrapper == "cupy" else out
    expected = nhwgc(t.reference(), problem, "output")
    assert rel_l2(result, expected) <= TOLERANCE[problem.dtype.value]


@pytest.fixture
def backend(gpu_registry: Registry):
    from tiledispatch.torch import TorchBackend

    return TorchBackend(gpu_registry)


def autograd_problem(registry: Registry, dtype: str) -> Problem:
    """A 2D problem whose fwd, bwd_data and bwd_weight all have a kernel of `dtype`."""
    for problem in candidates(2, "fwd", dtype):
        if all(
            registry.supported(problem.with_direction(d), only_supported=True)
            for d in ("fwd", "bwd_data", "bwd_weight")
        ):
            return problem
    pytest.skip(f"no candidate problem has {dtype} kernels in all three directions")


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_autograd_matches_pytorch(gpu_registry: Registry, backend, dtype: str) -> None:
    problem = autograd_problem(gpu_registry, dtype)
    args = torch_args(problem)
    t = Tensors(problem, 11)
    x = t.x.detach().clone().requires_grad_(True)
    w = t.w.detach().clone().requires_grad_(True)
    bias = torch.randn(problem.K, device="cuda", dtype=x.dtype, requires_grad=True)
    grad_y = torch.randn(t.y.shape, device="cuda").to(x.dtype)
    y = backend.conv(x, w, bias, **args)
    y.backward(grad_y)
    x64 = t.x.detach().double().requires_grad_(True)
    w64 = t.w.detach().double().requires_grad_(True)
    b64 = bias.detach().double().requires_grad_(True)
    y64 = torch.nn.functional.conv2d(x64, w64, b64, **args)
    y64.backward(grad_y.double())
    assert not backend.fallbacks, backend.fallbacks
    tolerance = TOLERANCE[dtype]
    assert rel_l2(y, y64) <= tolerance
    assert rel_l2(x.grad, x64.grad) <= tolerance
    assert rel_l2(w.grad, w64.grad) <= tolerance
    assert rel_l2(bias.grad, b64.grad) <= tolerance


@pytest.mark.parametrize("compiler", ["aot_eager", "inductor"])
def test_module_and_torch_compile(gpu_registry: Registry, backend, compiler: str) -> None:
    from tiledispatch.torch import Conv2d

    problem = autograd_problem(gpu_registry, "fp16")
    args = torch_args(problem)
    layer = Conv2d(problem.C, problem.K, (problem.Y, problem.X), bias=False, backend=backend, **args)
    layer = layer.to(device="cuda", dtype=torch.float16)
    x = torch.randn(problem.N, problem.C, problem.Hi, problem.Wi, device="cuda", dtype=torch.float16)
    eager = layer(x)
    compiled = torch.compile(layer, backend=compiler, fullgraph=True)
    out = compiled(x)
    expected = torch.nn.functional.conv2d(x.double(), layer.weight.double(), None, **args)
    assert rel_l2(eager, expected) <= 1e-2
    assert rel_l2(out, expected) <= 1e-2
    assert not backend.fallbacks, backend.fallbacks
    torch.library.opcheck(
        backend.conv_fwd,
        (x, layer.weight.detach(), args["stride"], args["padding"], args["dilation"], args["groups"]),
    )


def test_unsupported_problems_fall_back_with_one_warning(backend) -> None:
    x = torch.randn(2, 6, 9, 9, device="cuda", dtype=torch.float16)  # C/G = 3: no kernel vectorises it
    w = torch.randn(6, 3, 3, 3, device="cuda", dtype=torch.float16)
    with pytest.warns(RuntimeWarning, match="running PyTorch's convolution instead"):
        y = backend.conv(x, w, None, 1, 1, 1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        backend.conv(x, w, None, 1, 1, 1, 2)
    assert backend.fallbacks.total() == 2
    expected = torch.nn.functional.conv2d(x.double(), w.double(), None, 1, 1, 1, 2)
    assert rel_l2(y, expected) <= 1e-2
