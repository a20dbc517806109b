"""tiledispatch.torch without a GPU: the custom ops, their fake (meta) implementations, autograd and
torch.compile, exercised through the PyTorch fallback that CPU tensors take. Skipped where PyTorch is not
installed (CI installs only requirements.txt); the GPU tests cover the kernel path."""

from __future__ import annotations

import warnings

import pytest

from tiledispatch import Registry

torch = pytest.importorskip("torch", reason="PyTorch is not installed (CI installs requirements.txt only)")

from tiledispatch.torch import Conv2d, Conv3d, TorchBackend, conv2d, conv3d  # noqa: E402


@pytest.fixture
def backend(registry: Registry) -> TorchBackend:
    return TorchBackend(registry)


def test_cpu_tensors_fall_back_to_pytorch_with_one_warning(backend: TorchBackend) -> None:
    x = torch.randn(2, 8, 7, 7)
    w = torch.randn(16, 4, 3, 3)
    with pytest.warns(RuntimeWarning, match="tensors are not on a CUDA device; running PyTorch's"):
        y = conv2d(x, w, padding=1, groups=2, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y2 = conv2d(x, w, padding=1, groups=2, backend=backend)
    assert torch.allclose(y, torch.nn.functional.conv2d(x, w, padding=1, groups=2), atol=1e-5)
    assert torch.equal(y, y2)
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert backend.fallbacks == {"tensors are not on a CUDA device": 2}


def test_autograd_runs_backward_data_and_weight_ops(backend: TorchBackend) -> None:
    x = torch.randn(2, 8, 9, 9, dtype=torch.float64, requires_grad=True)
    w = torch.randn(8, 2, 3, 3, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(8, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = conv2d(x, w, bias, stride=2, padding=1, groups=4, backend=backend)
        grad_y = torch.randn_like(y)
        y.backward(grad_y)
    x_ref, w_ref, b_ref = (t.detach().clone().requires_grad_(True) for t in (x, w, bias))
    torch.nn.functional.conv2d(x_ref, w_ref, b_ref, stride=2, padding=1, groups=4).backward(grad_y)
    for got, want in ((x.grad, x_ref.grad), (w.grad, w_ref.grad), (bias.grad, b_ref.grad)):
        assert torch.allclose(got, want, atol=1e-10)
    assert backend.fallbacks.total() == 3  # fwd, bwd_data, bwd_weight


def test_gradcheck_through_the_custom_ops(backend: TorchBackend) -> None:
    x = torch.randn(1, 4, 5, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 2, 3, 3, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.autograd.gradcheck(lambda a, b: backend.conv(a, b, None, 1, 1, 1, 2), (x, w))


def test_opcheck_fake_and_real_implementations_agree(backend: TorchBackend) -> None:
    x = torch.randn(2, 4, 6, 6)
    w = torch.randn(6, 2, 3, 3)
    grad_y = torch.randn(2, 6, 6, 6)
    params = ([1, 1], [1, 1], [1, 1], 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.library.opcheck(backend.conv_fwd, (x, w, *params))
        torch.library.opcheck(backend.conv_bwd_data, (grad_y, w, list(x.shape), *params))
        torch.library.opcheck(backend.conv_bwd_weight, (x, grad_y, list(w.shape), *params))


def test_torch_compile_traces_the_ops_without_graph_breaks(backend: TorchBackend) -> None:
    layer = Conv2d(8, 8, 3, padding=1, groups=4, backend=backend)
    x = torch.randn(2, 8, 6, 6)
    compiled = torch.compile(layer, backend="aot_eager", fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = compiled(x)
    expected = torch.nn.functional.conv2d(x, layer.weight, layer.bias, padding=1, groups=4)
    assert torch.allclose(out, expected, atol=1e-5)


def test_modules_keep_weights_channels_last_and_refuse_what_kernels_cannot_do(backend: TorchBackend) -> None:
    layer = Conv3d(4, 8, 3, padding=1, backend=backend)
    assert layer.weight.is_contiguous(memory_format=torch.channels_last_3d)
    x = torch.randn(1, 4, 4, 5, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = layer(x)
        y3 = conv3d(x, layer.weight, layer.bias, padding=1, backend=backend)
    assert torch.allclose(y, torch.nn.functional.conv3d(x, layer.weight, layer.bias, padding=1), atol=1e-5)
    assert torch.equal(y, y3)
    with pytest.raises(ValueError, match="padding_mode='reflect': only 'zeros' is supported"):
        Conv2d(4, 4, 3, padding=1, padding_mode="reflect", backend=backend)
    with pytest.raises(ValueError, match="padding='same': pass explicit"):
        Conv2d(4, 4, 3, padding="same", backend=backend)
    with pytest.raises(ValueError, match="conv2d: input has 5 dimensions"):
        conv2d(x, layer.weight, backend=backend)
    with pytest.raises(ValueError, match="input has 4 channels, weight expects 2 x groups 1"):
        backend.conv(torch.randn(1, 4, 5, 5), torch.randn(4, 2, 3, 3))
    with pytest.raises(ValueError, match=r"stride=\(1, 2, 3\): expected an int or 2 ints"):
        backend.conv(torch.randn(1, 4, 5, 5), torch.randn(4, 4, 3, 3), stride=(1, 2, 3))


def test_problems_the_kernels_cannot_express_fall_back(backend: TorchBackend) -> None:
    """An empty batch is no kernel problem (N >= 1): the plan falls back instead of raising."""

    class CudaLike:
        is_cuda = True
        dtype = torch.float16

    def empty_batch() -> object:
        from tiledispatch.torch.problems import conv_problem

        return conv_problem((0, 8, 4, 4), (8, 8, 1, 1), [1, 1], [0, 0], [1, 1], 1, "fwd", "fp16")

    with pytest.warns(RuntimeWarning, match=r"not a kernel problem \(1 validation error for Problem N"):
        assert backend._plan([CudaLike()], empty_batch) is None
