"""tiledispatch kernels in PyTorch: custom ops with autograd, ``torch.compile``-safe.

    backend = TorchBackend(Registry.build(ruleset="tiny"))
    layer = Conv2d(64, 64, 3, padding=1, groups=32, backend=backend).cuda()
    y = conv2d(x, w, padding=1, groups=32, backend=backend)

Inputs may be in any memory format; the kernels receive channels_last copies (NHWGC) and the outputs are
channels_last. Problems no kernel supports run with PyTorch's convolution, with one warning per backend.
"""

from .backend import TorchBackend
from .modules import Conv2d, Conv3d, conv2d, conv3d

__all__ = ["Conv2d", "Conv3d", "TorchBackend", "conv2d", "conv3d"]
