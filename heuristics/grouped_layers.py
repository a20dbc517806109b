"""ResNeXt- and RegNet-style grouped layers that CK's forward training set lacks at network scale.

CK's set holds its small-C/G shapes (C/G 8 to 32) at 16x16 with N <= 16 only, so a model trained on it never
sees where the merged-group kernels pay off: layers of 7x7 to 56x56 with 2 to 32 channels per group. This
list adds them, shaped like the networks' stages: the channel count doubles as the image halves (128 channels
at 56x56 ... 1024 at 7x7), every group width of ResNeXt and RegNet (2 to 32, and RegNet's 24, where the
group count follows from the stage's channels), 3x3 with padding 1 at stride 1, and at stride 2 the first
block of each stage. Batch 16 and 64, so that no layer is one of the benchmark tables' (those use batch 32:
`bench/problems/small_groups.csv`, the dev suite), which stay shapes the models never trained on.
"""

from __future__ import annotations

from generators.problem import ConvProblem

GROUP_WIDTHS: tuple[int, ...] = (2, 4, 8, 16, 24, 32)
REGNET_STAGES: tuple[tuple[int, int, int], ...] = (
    (48, 6, 56), (104, 13, 28), (208, 26, 14), (440, 55, 7),  # RegNetY-400MF, group width 8
    (160, 10, 14), (400, 25, 7),  # RegNetX-400MF, group width 16 (stages of 32 and 64 channels: G = 2, 4)
    (288, 18, 14), (672, 42, 7),  # RegNetX-800MF (64 and 128 channels: G = 4, 8)
    (144, 9, 28), (320, 20, 14), (784, 49, 7),  # RegNetY-800MF (64 channels: G = 4)
)  # fmt: skip
"""(channels, groups, output size) of torchvision's RegNet stages whose G is not a power of two (the stage
widths of the RegNet width rule with torchvision's parameters; bench/problems/regnet.csv holds the same layers
at N = 32): the direct merged-group kernels run them with a last block of fewer groups, which no other layer
needs."""
STAGES: tuple[tuple[int, int], ...] = ((56, 128), (28, 256), (14, 512), (7, 1024))  # (output size, channels)
BATCHES: tuple[int, ...] = (16, 64)
STRIDED_BATCH = 16


def _layer(
    batch: int, channels: int, width: int, size: int, stride: int, filt: int = 3, depth: int = 1
) -> ConvProblem:
    """A `filt` x `filt` layer of `width`-channel groups, "same" padding, `size` output pixels a side; with
    `depth` > 1 a 3D one of `depth` frames and a cubic filter (unit depth stride)."""
    groups = round(channels / width)
    depth_filt = filt if depth > 1 else 1
    return ConvProblem(
        N=batch,
        C=groups * width,
        K=groups * width,
        G=groups,
        Di=depth,
        Hi=size * stride,
        Wi=size * stride,
        Z=depth_filt,
        Y=filt,
        X=filt,
        stride_h=stride,
        stride_w=stride,
        pad_d=depth_filt // 2,
        pad_h=filt // 2,
        pad_w=filt // 2,
    )


def regnet_layers() -> list[ConvProblem]:
    """Each stage of REGNET_STAGES at stride 1 and its strided first block, N = 16 and 64."""
    return [
        _layer(batch, channels, channels // groups, size, stride)
        for channels, groups, size in REGNET_STAGES
        for stride in (1, 2)
        for batch in BATCHES
    ]


DEPTHWISE_STAGES: tuple[tuple[int, int, int, int], ...] = (
    # MobileNetV2
    (112, 32, 3, 1), (56, 96, 3, 2), (56, 144, 3, 1), (28, 144, 3, 2), (28, 192, 3, 1), (14, 192, 3, 2),
    (14, 384, 3, 1), (14, 576, 3, 1), (7, 576, 3, 2), (7, 960, 3, 1),
    # EfficientNet-B0
    (28, 144, 5, 2), (28, 240, 5, 1), (14, 240, 5, 2), (14, 672, 5, 1), (7, 672, 5, 2), (7, 1152, 5, 1),
    # ConvNeXt-T
    (56, 96, 7, 1), (28, 192, 7, 1), (14, 384, 7, 1), (7, 768, 7, 1), (28, 128, 7, 2), (14, 256, 7, 2),
)  # fmt: skip
"""(output size, channels, filter, stride) of the depthwise layers of MobileNetV2 (3x3), EfficientNet-B0 (5x5)
and ConvNeXt-T (7x7, and two 7x7 at stride 2, which ConvNeXt does not have), each at "same" padding: CK's
forward set holds depthwise layers at 3x3 stride 1 only, so a model trained on it ranks the 5x5 and 7x7 kernel
shapes, and the 3x3 ones at stride 2, blind."""


def depthwise_layers() -> list[ConvProblem]:
    """Each stage of DEPTHWISE_STAGES at N = 16 and 64."""
    return [
        _layer(batch, channels, 1, size, stride, filt)
        for size, channels, filt, stride in DEPTHWISE_STAGES
        for batch in BATCHES
    ]


DEPTHWISE_3D_LAYERS: tuple[tuple[int, int, int, int, int, int], ...] = (
    # 3x3x3, stride 1: X3D-style stages at 56^2 to 7^2
    (4, 24, 16, 56, 3, 1), (8, 48, 8, 56, 3, 1), (4, 96, 16, 28, 3, 1), (8, 108, 8, 28, 3, 1),
    (2, 144, 16, 28, 3, 1), (4, 192, 16, 14, 3, 1), (8, 216, 8, 14, 3, 1), (4, 240, 16, 14, 3, 1),
    (4, 480, 8, 7, 3, 1), (2, 64, 16, 112, 3, 1),
    # 3x3x3, stride 1x2x2: each stage's first block
    (4, 48, 16, 56, 3, 2), (8, 96, 8, 56, 3, 2), (4, 216, 16, 28, 3, 2), (8, 432, 8, 14, 3, 2),
    (2, 64, 16, 112, 3, 2),
    # 5x5x5 and 7x7x7, stride 1 and 1x2x2
    (4, 96, 8, 28, 5, 1), (4, 192, 8, 14, 5, 1), (2, 48, 8, 56, 5, 1), (8, 384, 8, 14, 5, 1),
    (4, 128, 8, 28, 5, 2), (4, 96, 8, 56, 5, 2),
    (4, 64, 8, 28, 7, 1), (2, 256, 8, 14, 7, 1), (4, 96, 8, 56, 7, 1),
    (4, 64, 8, 28, 7, 2), (2, 128, 8, 56, 7, 2),
)  # fmt: skip
"""(batch, channels, depth, input size, filter, stride in H and W) of 3D depthwise layers (cubic filter,
"same" padding, unit depth stride): the sets held no 3D depthwise layer, so the models ranked the 3D kernel
shapes by what they learnt in 2D and picked the 8x16 vec-4 forward shape at 0.47 of the best on X3D's
stride-2 layer (session 51). Batches of 2 to 8 and depths of 8 and 16, none a row of
`bench/problems/depthwise_3d.csv`."""


def depthwise_3d_layers() -> list[ConvProblem]:
    """Each entry of DEPTHWISE_3D_LAYERS."""
    return [
        _layer(batch, channels, 1, size // stride, stride, filt, depth)
        for batch, channels, depth, size, filt, stride in DEPTHWISE_3D_LAYERS
    ]


def network_layers() -> list[ConvProblem]:
    """Every layer the training sets append to the CK shapes, in their order: grouped_layers, regnet_layers,
    depthwise_layers, then depthwise_3d_layers."""
    return [*grouped_layers(), *regnet_layers(), *depthwise_layers(), *depthwise_3d_layers()]


def grouped_layers() -> list[ConvProblem]:
    """Every stage x group width x batch at stride 1, then each stage's strided first block (not the first
    stage's: a stem precedes it)."""
    unit = [
        _layer(batch, channels, width, size, 1)
        for width in GROUP_WIDTHS
        for size, channels in STAGES
        for batch in BATCHES
    ]
    strided = [
        _layer(STRIDED_BATCH, channels, width, size, 2)
        for width in GROUP_WIDTHS
        for size, channels in STAGES[1:]
    ]
    return unit + strided
