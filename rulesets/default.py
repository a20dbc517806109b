"""``default``: the small hand-curated set the heuristic relies on (ck_conventions §5).

Seventeen tiles common to all three directions (ten with tile_k 32, five with tile_k 64 and two 16-wide ones
for the Hopper path), CK's default vectors (4, 8, 8 -- 2, 4, 4 in fp32), the first wave strategy of
``PREFERRED_WAVES`` that yields a warp tile; fwd on compv3 and compv4 (compv4 kept where the arch accepts it),
backward on compv3 and mem, and two-stage on and off where the direction has it (bwd_weight;
``generators.validity.two_stage_runs_direction``). fp16 and bf16 add ping-pong (num_wave_groups 2) twins of
the ``PING_PONG_TILES``, and fwd and bwd_data the merged-group tiles of the Hopper path
(``MERGED_GROUP_TILES``) and seven more on compv3 only for C/G = 2, 4, 8 and 16, which run the direct
merged-group kernel (``DIRECT_MERGED_GROUP_TILES``; fp32 fwd and bwd_data take those and two gm-2 tiles for
C/G = 16 on TF32 MMAs, ``FP32_DIRECT_MERGED_GROUP_TILES``), bwd_data a 16-wide tile for few input channels
(``NARROW_BWD_DATA_TILES``), fwd a 256-row tile for width-unfolded layers (``UNFOLDED_FWD_TILES``), bwd_weight
five 16- and 32-row tiles it runs transposed (``TRANSPOSED_BWD_WEIGHT_TILES``), seven for small C/G, six of
them merged groups that run the direct merged-group kernel where gm x K/G = tile_m
(``SMALL_CG_BWD_WEIGHT_TILES``), five more on one pipeline each whose four waves and 128-pixel chains run that
kernel faster, one of them gm 32 for C/G = 2 (``DIRECT_BWD_WEIGHT_TILES``; fp32 bwd_weight has these five
alone, with 64-pixel chains, and gm 2 for C/G = 32, ``FP32_DIRECT_BWD_WEIGHT_TILES``), and one gm-2 tile whose
merged groups come by TMA in 128-byte rows (``MERGED_TMA_BWD_WEIGHT_TILES``). Every direction adds its
depthwise direct kernels. 2D: filters 3, 5 and 7 x strides 1 and 2 on the shapes of ``DEFAULT_DEPTHWISE`` (two
per backward direction in fp32, four in fp32 forward, six to twelve for 16-bit types; some shapes serve only
some filters): twelve per request for fp32, and for fp16 and bf16 thirty-eight (fwd), thirty (bwd_data) and
eighteen (bwd_weight). 3D (cubic filter, docs/depthwise.md "3D"): filters 3, 5 and 7 x strides 1 and 2
on the shapes of ``DEFAULT_DEPTHWISE_3D``: in 16-bit types fwd 8x32 nb2 sub1x4 vec 8 and bwd_data 8x32 nb2
sub2x4 vec 8, each with the 8x16 nb4 vec-4 shape of its sub-tile for 3x3 (channel counts that are multiples of
4) and 8x28 nb2 vec 8 for 3x3, fwd 4x28 nb4 sub1x4 vec 8 for 3x3 and 5x5, bwd_data 4x28 nb4 sub2x4 vec 8 for
5x5, and bwd_weight 16x16 nb4 sub2x4 vec 8 for 3x3 beside vec 4 for 3/5/7 and 16x28 nb4 sub2x4 at vec 8 and
vec 4 for 3x3; in fp32 fwd 8x16 nb4 sub1x4 vec 4, bwd_data 8x16 nb4 sub2x4 vec 4 and bwd_weight 16x16 nb4
sub2x4 vec 4. fwd adds 8x16 nb2 sub1x4, whose halved channel slice fits stride 2: vec 8 for 7x7 in 16-bit
types, vec 4 for 5x5 and 7x7 in fp32. Candidates per request: sixteen (16-bit fwd), twelve (16-bit bwd_data
and bwd_weight), ten (fp32 fwd), six (fp32 bwd_data and bwd_weight), of which validity keeps fourteen (16-bit
fwd), eight (fp32 fwd) and every other one.

Arch rejections of ``default`` on sm_90a (summed over the 18 direction x dtype x ndim requests):
``shared_memory`` 18 -- the fp32 ``mem`` (4-stage) backward configurations of the tile_k 64 tiles
128x128x64 and larger need 256-384 KB of operand stages; their fp16/bf16 counterparts fit;
``depthwise_shared_memory`` 6 -- 3D depthwise, whose forward and bwd_data stages hold ``filter`` halo slices
and F x F x F weights: forward 7x7 stride 2 on 8x32 nb2 sub1x4 vec 8 in fp16 and bf16 (357 KB; its 5x5
stride 2 needs 223 KB and fits) and 5x5 stride 2 on 4x28 nb4 sub1x4 vec 8 (236 KB), 2 per dtype, and 5x5 and
7x7 stride 2 on 8x16 nb4 sub1x4 vec 4 in fp32 (248 and 392 KB), 2; 8x16 nb2 sub1x4 serves 7x7 (210 KB at
16-bit 7x7 stride 2, 124 and 200 KB at fp32 5x5 and 7x7 stride 2), 8x32 nb2 the 16-bit 5x5; every bwd_data
candidate fits. They never reach the build (``rulesets.enumerate`` keeps only
valid configurations).
"""

from __future__ import annotations

from collections.abc import Iterator

from generators import hopper
from generators.config import DepthwiseConfig, KernelConfig
from generators.enums import DataType, Direction, Pipeline
from generators.validity import two_stage_runs_direction
from rulesets import space
from rulesets.full import build_config, depthwise_configs, wave_warp_choices
from rulesets.space import DepthwiseShape, PipelineChoice
from rulesets.warp_tile import WarpTileKConvention

COMMON_TILES = space.parse_tiles(
    "32x64x32 32x128x32 64x32x32 64x64x32 64x128x32 128x32x32 128x64x32 128x128x32 128x256x32 256x128x32"
    # tile_k 64: a 128-byte swizzled row per stage for the Hopper path's wgmma (docs/pipelines.md)
    " 64x128x64 128x64x64 128x128x64 128x256x64 256x128x64"
    # tile_n and tile_k 16: grouped layers with 16 channels per group (RegNet) on the Hopper path, whose TMA
    # boxes keep a k-tile inside one group and one tap
    " 128x16x16 256x16x16"
)
# num_wave_groups 2: the Hopper path's two consumer warpgroups take turns on tiles of their own, one storing
# while the other multiplies (docs/pipelines.md, "num_wave_groups"); 4-wave tiles whose whole tile fits one
# warpgroup's 128 accumulators. Only the Hopper path runs them (validity rejects them elsewhere), so they are
# offered for its dtypes only.
PING_PONG_TILES = space.parse_tiles("128x128x64 64x256x64")
PING_PONG_WAVES = (2, 2, 1)
# num_groups_to_merge > 1 on the Hopper path (fwd and bwd_data): merged groups by diagonal blocks, one wgmma
# per group without zero MACs, where C/G and K/G are tile_k / gm and tile_n / gm (docs/pipelines.md, "merged
# groups"): 32/32 (ResNeXt's late stages, grouped video layers) and 16/16 (RegNet), which since session 35
# runs on the direct kernel wherever tile_k = tile_n = gm x 16 (below). Each (tile, gm, wave
# groups); the ping-pong twins hide the epilogue of these short tiles (9 k-tiles for a 3x3 filter). 256 rows
# of gm 2 (two warpgroups of 128) halve the B stages per output row: regnet_g14_28 fwd 33.6 -> 26.8 us on the
# H100, C/G = 16 at 56^2 67.1 -> 54.5 us (docs/performance.md, session 24).
MERGED_GROUP_TILES = (
    (space.parse_tiles("128x32x32")[0], 2, 1),
    (space.parse_tiles("256x32x32")[0], 2, 1),
    (space.parse_tiles("128x32x32")[0], 2, 2),
    (space.parse_tiles("128x64x64")[0], 4, 1),
    (space.parse_tiles("128x64x64")[0], 2, 1),
    (space.parse_tiles("128x64x64")[0], 2, 2),
)
MERGED_GROUP_DIRECTIONS = (Direction.FWD, Direction.BWD_DATA)
# Merged groups by the direct kernel (fwd and bwd_data, strided bwd_data by stride phases; docs/pipelines.md
# "Merged groups, fwd and bwd_data"): a CTA of gm groups reads each tile's input window once, where
# tile_k = tile_n = gm x C/G: C/G = 2 (gm 32), 4 (gm 16) and 8 (gm 8), each on compv3 only (the direct kernel
# has no pipeline of its own; compv3's two stages are its halo stages). tile_m is the tile's pixel target, in
# whole rows: 128 (2x56, 4x28) and 256 (4x56, 7x28); on the H100 (fp16, N = 32) 2x56 is the faster at 56^2
# (resnext50_32x4d_56 32.4 against 35.2 us), 7x28 at 28^2 (19.9 against 21.4). Best of `default` against the
# paired implicit GEMM: small C/G 1.21 -> 1.53 of cuDNN fwd, 1.29 -> 1.61 bwd_data (docs/performance.md,
# session 32). C/G = 16 runs the direct kernel on the merged tiles above whose tile_k = tile_n = gm x 16
# (128x32x32 and 256x32x32 gm 2, 128x64x64 gm 4) and on 256x64x64 gm 4, whose whole 14x14 images are the
# fastest tile of resnext50_32x4d_14 (H200: 15.7 against 16.8 us on 7x14; docs/performance.md, session 35).
# C/G = 2 (gm 32) ran channel-padded to 8 before: 0.1-0.3 TFLOP/s, on the direct kernel 4-17 (H200, 7-20x of
# cuDNN; docs/performance.md, session 40).
DIRECT_MERGED_GROUP_TILES = (
    *((tile, gm) for tile in space.parse_tiles("128x64x64 256x64x64") for gm in (32, 16, 8)),
    (space.parse_tiles("256x64x64")[0], 4),
)
# fp32 runs the direct kernel on TF32 m16n8k8 MMAs (two a block for C/G = 16, four for 32), off the Hopper
# path, so it has no merged tiles of the diagonal mode: the same tiles; for C/G = 16 where 4 does not divide G
# (RegNet's G = 14), 128x32x32 and 256x32x32 with gm 2; for C/G = 32 (ResNeXt's last stage), 128x64x64 and
# 256x64x64 with gm 2. On the H200 they took fp32 C/G <= 8 from 0.11 to 1.28 of cuDNN (fwd) and 0.09 to 1.87
# (bwd_data) (docs/performance.md, session 38).
FP32_DIRECT_MERGED_GROUP_TILES = (
    *DIRECT_MERGED_GROUP_TILES,
    *((tile, 2) for tile in space.parse_tiles("128x32x32 256x32x32 128x64x64 256x64x64")),
)
# bwd_weight tiles of 16 and 32 rows of K for grouped layers with K/G = 16 or 32: the Hopper path runs them
# transposed (wgmma M = the tile's taps x C/G columns, N = its K rows; docs/pipelines.md, "transposed
# bwd_weight"), where a tile_m of 64 or more would leave wgmma rows empty.
# One warpgroup along the tile's columns (1x2x1 waves) or two (1x4x1, 128 columns of 32 rows), never split
# along its 16 or 32 rows, wgmma's N here. 32x128x128 halves the k-tiles, each a fixed cost of the producer
# thread: on the H100 (fp16, C/G = K/G = 32) resnext_g32_7 14.5 us against 16.1 on 32x128x64, video_g8_3x3x3
# 14.0 against 15.2 (docs/performance.md, session 26).
TRANSPOSED_BWD_WEIGHT_TILES = tuple(
    zip(
        space.parse_tiles("16x64x64 16x128x64 32x64x64 32x128x64 32x128x128"),
        ((1, 2, 1), (1, 2, 1), (1, 2, 1), (1, 4, 1), (1, 4, 1)),
        strict=True,
    )
)
# bwd_weight for grouped layers with C/G = 4 and 8 (ResNeXt 32x4d and 32x8d, RegNetX-8), which CK's default
# vectors (4, 8, 8) leave without a kernel (C/G = 4) or on 16-row tiles that K/G fills a quarter or half of:
# merged groups fill the tile's rows (gm x K/G = tile_m) and give the activations 16 contiguous channels, so
# the vectors stay wide; the weights' run is C/G, hence vector_c 4 for C/G = 4. (tile, waves, gm, vectors):
# gm 2 at C/G = K/G = 8, gm 8 (or 4 where G is not a multiple of 8) at 4, and 4-wide vectors without merging
# for any C/G that is a multiple of 4. On the H100 they take C/G = 8 from 0.32 to 0.42 of cuDNN and C/G = 4
# from no kernel to 0.54 (docs/performance.md, session 9). Since session 10 the merged ones (and three more
# for C/G = K/G = 16 and 32: gm 2 on 32 and 64 rows, gm 4 on 64) run the direct merged-group kernel wherever
# gm x K/G = tile_m: each CTA reads its pixel tile once for every tap (docs/pipelines.md, "merged groups,
# bwd_weight").
SMALL_CG_BWD_WEIGHT_TILES = (
    (space.parse_tiles("16x64x64")[0], (1, 2, 1), 2, space.vector_strategy("UNIFORM_MAX")),  # 8, 8, 8
    (space.parse_tiles("32x64x64")[0], (1, 2, 1), 8, space.vector_strategy("MAX_AB_HALF_C")),  # 8, 8, 4
    (space.parse_tiles("16x64x64")[0], (1, 2, 1), 4, space.vector_strategy("MAX_AB_HALF_C")),
    (space.parse_tiles("16x64x64")[0], (1, 2, 1), 1, space.vector_strategy("HALF_UNIFORM")),  # 4, 4, 4
    (space.parse_tiles("32x64x64")[0], (1, 2, 1), 2, space.vector_strategy("UNIFORM_MAX")),  # K/G 16
    (space.parse_tiles("64x64x64")[0], (2, 2, 1), 2, space.vector_strategy("UNIFORM_MAX")),  # K/G 32
    (space.parse_tiles("64x64x64")[0], (1, 2, 1), 4, space.vector_strategy("UNIFORM_MAX")),  # K/G 16
)
# bwd_weight of C/G = K/G = 2, 4, 8 and 16 on the direct merged-group kernel with four waves (256 threads)
# and 128-pixel MMA chains (tile_k): gm x K/G = 64 rows on mem's four copy stages (gm 32 at C/G = 2, 16 at
# 4, 8 at 8), 32 (gm 2 at 16), and 128 (gm 16 at 8) on compv3's two, what 128 channels' stages leave room
# for. Wider CTAs read longer channel runs and give the warps more work per copied tile: on the H100 (fp16,
# G = 32, N = 32) resnext101_32x8d_56 67.4 us on 128 rows and 75.4 on 64 against 110.2 on the best 16- and
# 32-row tile (docs/performance.md, session 33). (tile, waves, gm, vectors, pipeline)
DIRECT_BWD_WEIGHT_TILES = tuple(
    (space.parse_tiles(tile)[0], (2, 2, 1), gm, space.vector_strategy(vectors), pipeline)
    for tile, gm, vectors, pipeline in (
        ("64x64x128", 8, "UNIFORM_MAX", Pipeline.MEM),  # 8, 8, 8
        ("64x64x128", 16, "MAX_AB_HALF_C", Pipeline.MEM),  # 8, 8, 4
        ("32x64x128", 2, "UNIFORM_MAX", Pipeline.MEM),
        ("128x64x128", 16, "UNIFORM_MAX", Pipeline.COMPV3),
        ("64x64x128", 32, "UNIFORM_MAX", Pipeline.MEM),  # C/G = K/G = 2: C/G 4's 64 channels a CTA
    )
)
# fp32 bwd_weight of C/G = K/G = 4, 8 and 16 on the same kernel (TF32 m16n8k8 from single 32-bit loads, each
# operand element once a k-step): 64-pixel chains, whose A fragments (8 registers a 16-pixel chunk, twice
# the 16-bit kernel's) keep it within the registers, on the same rows, CTAs and pipelines; and K/G = 32 on
# 64 rows of gm 2 (16-bit: the Hopper GEMM's 128-byte boxes).
FP32_DIRECT_BWD_WEIGHT_TILES = tuple(
    (space.parse_tiles(tile)[0], (2, 2, 1), gm, space.vector_strategy("UNIFORM_MAX"), pipeline)
    for tile, gm, pipeline in (
        ("64x64x64", 8, Pipeline.MEM),
        ("64x64x64", 16, Pipeline.MEM),
        ("32x64x64", 2, Pipeline.MEM),
        ("128x64x64", 16, Pipeline.COMPV3),
        ("64x64x64", 2, Pipeline.MEM),
        ("64x64x64", 32, Pipeline.MEM),
    )
)
# bwd_weight of grouped layers with C/G = K/G = 32 (ResNeXt's late stages, grouped video layers): gm 2
# merges two groups' 32-channel runs into one 128-byte TMA row (both operands); the Hopper kernel runs it
# instead of the direct merged-group kernel (implicit_gemm_instance.hpp, merged_by_tma). On the H100 (fp16,
# G = 32, 3x3, N = 32) 16.5 us on 7x7 and 34.3 on 14x14, beside 14.5 and 33.6 on 32x128x128 (transposed)
# and 32.0 and 69.5 on the direct kernel (docs/performance.md, sessions 25 and 26).
MERGED_TMA_BWD_WEIGHT_TILES = (
    (space.parse_tiles("64x128x64")[0], (2, 2, 1), 2, space.vector_strategy("UNIFORM_MAX")),
)
# bwd_data of layers with few input channels (a stem, C = 3 padded to 8 by the channel padding): GEMM N is
# C/G, so the 16-wide tile wastes least, and tile_k 64 with four waves (two consumer warpgroups) keeps the
# k-tiles few and long. On the H100 (fp16 stem 7x7 s2, N = 32) it took 449 us against 846 us on the best
# 128-wide tile and 1,814 us on 128x16x16 (docs/performance.md, session 21).
NARROW_BWD_DATA_TILES = ((space.parse_tiles("256x16x64")[0], (4, 1, 1)),)
# fwd of width-unfolded layers (a stem: C' = 32 on tile_k 32, GEMM N = K = 64): 256 rows on two warpgroups
# halve the B stages per output row. On the H100 the stem's GEMM (fp16, N = 32) took 51.9 us against 67.4-68.0
# on 128x64x32 (docs/performance.md, session 24).
UNFOLDED_FWD_TILES = ((space.parse_tiles("256x64x32")[0], (2, 2, 1)),)
PREFERRED_WAVES = ((2, 2, 1), (2, 1, 1), (1, 2, 1), (1, 1, 1))
DEFAULT_PIPELINES = {
    Direction.FWD: (PipelineChoice(Pipeline.COMPV3), PipelineChoice(Pipeline.COMPV4)),
    Direction.BWD_DATA: (PipelineChoice(Pipeline.COMPV3), PipelineChoice(Pipeline.MEM)),
    Direction.BWD_WEIGHT: (PipelineChoice(Pipeline.COMPV3), PipelineChoice(Pipeline.MEM)),
}

# Depthwise shapes per direction and dtype, each with the filters it serves (strides 1 and 2 for each): vec 8
# where 16 bytes allow it (fp16/bf16 fwd and bwd_data), else vec 4; bwd_weight on 128 threads, whose 7x7x4
# accumulators fit the registers. Forward, 16-bit (docs/performance.md, "16-bit depthwise forward: the shape
# of `default`"; H100): 8x16 nb4 sub2x4 for 3x3 and 5x5 (3x3 s1: 1.4-2.2x upstream's 16x16 nb8 sub1x4, whose
# 512 threads at up to 128 registers leave one CTA on an SM), where it spills at 7x7 (ptxas: 108 B at stride
# 1, 2.5 KB at stride 2); 8x16 nb4 sub1x4 for 7x7 (80 against upstream's 105 us on C=128 56^2, 86-117
# registers) and beside the first at 3x3 and 5x5, where it wins at stride 2 (5-8 %). fp32: the 16x16 nb4
# sub2x4 vec-4 shape that reached 2.85-2.96 TB/s on 3x3 (H200, docs/performance.md "Depthwise"), without 7x7,
# which spills there (3.5-4.8 KB a thread).
# Session 16's sweep of 10 shapes after the staging and prefetch changes (docs/performance.md, "Depthwise
# shapes after the pipelining change") adds 16x32 nb4 sub2x8 for 5x5 (1.12x on 5x5 s1 C=240 28^2). Session
# 47's sweep of 7x7 shapes (H200, "Session 47") adds two sub1x8 vec-4 shapes for 7x7: a filter row of vec-4
# weights leaves the registers for eight outputs a thread (64.6 against 77.4 us on C=128 56^2 for 8x32 nb4,
# 28.6 against 37.2 on ConvNeXt's C=192 28^2 for 16x32 nb4); 8x16 nb4 sub1x4 vec 8 stays the fastest at 14^2
# and at stride 2. fp32 7x7 takes 8x32 nb8 sub1x8 vec 2 (92 us on C=128 56^2, 2.8x cuDNN; 228-243 registers,
# no spill), the fastest fp32 shape of that sweep (its vec-4 shapes took 136-2,100 us).
# Session 50's sweep of tiles 28 and 56 wide (H200, docs/performance.md "Session 50"): 56 and 28 pixels are
# whole tiles of 28 columns where 16 and 32 leave a part-empty one; 7 rows tile the 28^2 outputs of stride 2.
# 8x28 nb4 sub1x4 at stride 1 (C=144 and 192 56^2: +5-7 % in 16 bits, +7-11 % in fp32; C=240 28^2 +15 %),
# 7x28 nb4 sub1x4 at stride 2 (+3-8 %), 8x56 nb4 sub1x8 vec 4 for 16-bit 7x7 (C=128 56^2 +5 %).
# Session 52 (H200, "Session 52"): once stride-1 sub-tiles of several rows walk their input rows once
# (Shape::kRowReuse), 8x28 nb4 sub2x4 vec 8 and nb8 sub4x4 vec 4 for 3x3 (C=144 / 192 56^2 +1-4 %),
# 8x28 nb8 sub2x4 vec 4 for 3x3 and 5x5 (C=240 28^2 +5 %), and 4x28 nb8 sub1x4 vec 4 for 5x5, whose stride-2
# slices of 32 channels run on twice the threads of nb4 vec 8 (depthwise_5x5_s2 +3-9 %).
_FWD_16BIT = (
    (DepthwiseShape(8, 16, 4, 2, 4, 8), (3, 5)),
    (DepthwiseShape(8, 16, 4, 1, 4, 8), (3, 5, 7)),
    (DepthwiseShape(16, 32, 4, 2, 8, 8), (5,)),
    (DepthwiseShape(8, 32, 4, 1, 8, 4), (7,)),
    (DepthwiseShape(16, 32, 4, 1, 8, 4), (7,)),
    (DepthwiseShape(8, 28, 4, 1, 4, 8), (3, 5, 7)),
    (DepthwiseShape(7, 28, 4, 1, 4, 8), (3, 5)),
    (DepthwiseShape(8, 56, 4, 1, 8, 4), (7,)),
    (DepthwiseShape(8, 28, 4, 2, 4, 8), (3,)),
    (DepthwiseShape(8, 28, 8, 2, 4, 4), (3, 5)),
    (DepthwiseShape(8, 28, 8, 4, 4, 4), (3,)),
    (DepthwiseShape(4, 28, 8, 1, 4, 4), (5,)),
)
_ALL_FILTERS = space.DEPTHWISE_BWD_FILTERS
_VEC4 = DepthwiseShape(16, 16, 4, 2, 4, 4)  # fp32 in every direction, 16-bit bwd_weight and 7x7 bwd_data
_FWD_FP32 = (
    (_VEC4, space.DEPTHWISE_FILTERS),
    (DepthwiseShape(8, 32, 8, 1, 8, 2), (7,)),
    (DepthwiseShape(8, 28, 4, 1, 4, 4), (3,)),
    (DepthwiseShape(7, 28, 4, 1, 4, 4), (3, 5)),
)
# Backward, 16-bit (docs/performance.md, "Depthwise backward shapes"; H100, fp16): bwd_data 16x32 nb4 sub2x4
# beside 16x16 nb8 sub2x2 for 3x3 and 5x5 (1.4-2.4x faster; it spills 112 B at 7x7 stride 1), bwd_weight vec 8
# beside vec 4 for 3x3 (1.05-1.3x faster; 5x5 and 7x7 spill at vec 8). Session 16's sweep adds, for 3x3
# bwd_data, 16x16 nb8 sub2x4 (1.12x on C=192 56^2, two-stage prefetching) and 8x32 nb4 sub2x4 (1.08x on
# C=144), and for 5x5 bwd_weight 16x16 nb4 sub1x4 vec 4 (1.35x at stride 2). Session 31
# (docs/performance.md, "Session 31"; bwd_weight in X-row order) adds bwd_weight 16x32 nb4 sub2x4 vec 8 for
# 3x3: 49.8 against 52.0 us on C=192 56^2 and 43.6 against 45.6 on C=144 (the 16x16 shape stays faster at
# C=32 112^2). Session 48's sweep of vec-4 shapes for 5x5 and 7x7 bwd_data (H200, docs/performance.md
# "Session 48") adds 16x32 nb4 sub2x8 vec 4 for 5x5 and 7x7 (dw7x7_s1_c128_56 71.7 against 142 us on 16x16 nb8
# sub2x2 vec 8, 7x7 stride 2 2.7x, depthwise_5x5_s2 1.29x) and 16x16 nb4 sub2x4 vec 4 for 7x7 (the fastest at
# 14^2: 21.6 against 40.5 us); 16x32 nb4 sub2x4 vec 8 compiles at 7x7 there without spilling but is second.
# Session 50's sweep of 28- and 56-wide tiles (H200, fp16 and fp32): bwd_data 8x28 nb4 sub2x4 vec 8 for 3x3
# and 5x5 (+1-3 %), 16x28 for 3x3 stride 2 (+3 %), 8x56 nb4 sub2x8 vec 4 for 5x5 and 7x7 (7x7 C=96/128 56^2
# +8-16 %, depthwise_5x5_s2 +6 %); bwd_weight 16x28 nb4 sub2x4 vec 8 for 3x3 (+1-2 %) and vec 4 for 5x5 and
# 7x7 (+1-3 %, 7x7 stride 2 +40 %); fp32 16x28 nb4 sub2x4 vec 4 in both backward directions (7x7 +4-12 %).
_BWD_DATA_16BIT = (
    (DepthwiseShape(16, 32, 4, 2, 4, 8), (3, 5)),
    (DepthwiseShape(16, 16, 8, 2, 2, 8), _ALL_FILTERS),
    (DepthwiseShape(16, 16, 8, 2, 4, 8), (3,)),
    (DepthwiseShape(8, 32, 4, 2, 4, 8), (3,)),
    (DepthwiseShape(16, 32, 4, 2, 8, 4), (5, 7)),
    (DepthwiseShape(8, 28, 4, 2, 4, 8), (3, 5)),
    (DepthwiseShape(16, 28, 4, 2, 4, 8), (3,)),
    (DepthwiseShape(8, 56, 4, 2, 8, 4), (5, 7)),
    (_VEC4, (7,)),
)
_BWD_WEIGHT_16BIT = (
    (DepthwiseShape(16, 16, 4, 2, 4, 8), (3,)),
    (DepthwiseShape(16, 32, 4, 2, 4, 8), (3,)),
    (DepthwiseShape(16, 28, 4, 2, 4, 8), (3,)),
    (DepthwiseShape(16, 28, 4, 2, 4, 4), (5, 7)),
    (_VEC4, _ALL_FILTERS),
    (DepthwiseShape(16, 16, 4, 1, 4, 4), (5,)),
)
_BWD_FP32 = ((_VEC4, _ALL_FILTERS), (DepthwiseShape(16, 28, 4, 2, 4, 4), _ALL_FILTERS))
DEFAULT_DEPTHWISE: dict[tuple[Direction, DataType], tuple[tuple[DepthwiseShape, tuple[int, ...]], ...]] = {
    (Direction.FWD, DataType.FP16): _FWD_16BIT,
    (Direction.FWD, DataType.BF16): _FWD_16BIT,
    (Direction.FWD, DataType.FP32): _FWD_FP32,
    (Direction.BWD_DATA, DataType.FP16): _BWD_DATA_16BIT,
    (Direction.BWD_DATA, DataType.BF16): _BWD_DATA_16BIT,
    (Direction.BWD_DATA, DataType.FP32): _BWD_FP32,
    (Direction.BWD_WEIGHT, DataType.FP16): _BWD_WEIGHT_16BIT,
    (Direction.BWD_WEIGHT, DataType.BF16): _BWD_WEIGHT_16BIT,
    (Direction.BWD_WEIGHT, DataType.FP32): _BWD_FP32,
}
# 3D depthwise (cubic filter; the fields describe the H x W plane, the depth axis is walked at run time;
# docs/depthwise.md, "3D"), filters 3, 5 and 7 x strides 1 and 2 per shape. The channel slices are smaller
# than the 2D shapes' (nb4 x vec 8 = 32 channels at most) because a forward or bwd_data stage holds ``filter``
# depth slices of the halo and F x F x F fp32 weights: the 2D forward's 8x16 nb4 sub2x4 at 7x7 would need 7
# slices of its halo. 16-bit fwd and bwd_data: 8x32 nb2 vec 8 (sub1x4 fwd, sub2x4 bwd_data, a whole number of
# stride phases) for 3x3, 5x5 and 7x7, and the 8x16 nb4 vec-4 shape for 3x3, so that a channel count that is a
# multiple of 4 but not of 8 has a kernel (X3D's 3x3x3 layer with C = 108). 16-bit bwd_weight: 16x16 nb4
# sub2x4 vec 8 for 3x3 (the register rule refuses 5x5 and 7x7 at vec 8) beside its vec-4 twin for 3/5/7. The
# sweep on the H100 (docs/performance.md, "3D depthwise"; fp16, 3x3x3, X3D's N=8 C=216 16x28x28 stride 1 and
# N=8 C=96 16x56x56 stride 1x2x2, kernel time, us) chose them: fwd 8x32 nb2 sub1x4 vec 8 102.6 / 130.9 against
# 8x16 nb4 sub1x4 vec 8 118.6 / 131.5, bwd_data 8x32 nb2 sub2x4 vec 8 114.6 / 70.5 against 8x16 nb4 sub2x4 vec
# 8 163.7 / 80.7, bwd_weight vec 8 148.7 / 134.2 against vec 4 171.0 / 223.6; the vec-4 8x16 shapes (fwd
# 122.8, bwd_data 143.9 on the first) stay for C = 108. The sweep measured 3x3x3 only: 8x32 nb2 at 5x5 and 7x7
# follows the 3x3 choice unmeasured. fp32 fwd and bwd_data: the 8x16 nb4 shapes at vec 4, whose 64 bytes per
# staged pixel equal the 16-bit vec 8's, with half its weight bytes: forward keeps 3x3 at both strides and 5x5
# and 7x7 at stride 1, bwd_data all six. Forward at stride 2 with the larger filters (16-bit 7x7 on 8x32 nb2,
# fp32 5x5 and 7x7 on 8x16 nb4) needs more than 227 KB; 8x16 nb2 sub1x4 stages 32 bytes a pixel (16 channels
# at 16-bit vec 8, 8 at fp32 vec 4) of an 8x16 plane (a 7x7 stride-2 slice of 21 x 40 x 32 bytes against 8x32
# nb2's 21 x 72 x 32 and 8x16 nb4 fp32's 21 x 40 x 64) and fits: vec 8 for 16-bit 7x7 (215504 bytes at stride
# 2, a slice in 8 TMA residue blocks), vec 4 for fp32 5x5 and 7x7 (126896 and 204528). Unmeasured; their
# stride-1 twins duplicate coverage (the profiler takes the best). bwd_weight handles one depth tap per block
# and keeps its 2D shared memory, so its 2D shapes serve. 28-wide shapes (H200 sweep of depthwise_3d.csv,
# fp16, two rounds, docs/performance.md "Session 51"; best of the old shapes -> best with them, us): fwd 4x28
# nb4 sub1x4 vec 8 for 3x3 and 5x5 (X3D stride 1x2x2 134.7 -> 75.2, dw5x5x5_c192_28 77.2 -> 71.3) and 8x28 nb2
# for 3x3 (c48_56 68.4 -> 66.1); bwd_data 8x28 nb2 sub2x4 for 3x3 (c48_56 78.4 -> 76.2) and 4x28 nb4 for 5x5
# (150.6 -> 136.9); bwd_weight 16x28 nb4 sub2x4 for 3x3, vec 4 (c48_56 117.4 -> 108.3) and vec 8 (stride 1x2x2
# 110.7 -> 103.6). They lose at 14^2 and 7^2, where the 8x16 shapes stay the best. What does not fit is
# refused by validity when ``default`` is enumerated (``rulesets.enumerate``), never built, and listed in the
# module docstring with its rule.
_FWD_3D_16BIT = (
    (DepthwiseShape(8, 32, 2, 1, 4, 8), _ALL_FILTERS),
    (DepthwiseShape(8, 16, 4, 1, 4, 4), (3,)),
    (DepthwiseShape(8, 16, 2, 1, 4, 8), (7,)),
    (DepthwiseShape(8, 28, 2, 1, 4, 8), (3,)),
    (DepthwiseShape(4, 28, 4, 1, 4, 8), (3, 5)),
)
_BWD_DATA_3D_16BIT = (
    (DepthwiseShape(8, 32, 2, 2, 4, 8), _ALL_FILTERS),
    (DepthwiseShape(8, 28, 2, 2, 4, 8), (3,)),
    (DepthwiseShape(4, 28, 4, 2, 4, 8), (5,)),
    (DepthwiseShape(8, 16, 4, 2, 4, 4), (3,)),
)
_BWD_WEIGHT_3D_16BIT = (
    (DepthwiseShape(16, 16, 4, 2, 4, 8), (3,)),
    (DepthwiseShape(16, 28, 4, 2, 4, 8), (3,)),
    (DepthwiseShape(16, 28, 4, 2, 4, 4), (3,)),
    (_VEC4, _ALL_FILTERS),
)
DEFAULT_DEPTHWISE_3D: dict[tuple[Direction, DataType], tuple[tuple[DepthwiseShape, tuple[int, ...]], ...]] = {
    (Direction.FWD, DataType.FP16): _FWD_3D_16BIT,
    (Direction.FWD, DataType.BF16): _FWD_3D_16BIT,
    (Direction.FWD, DataType.FP32): (
        (DepthwiseShape(8, 16, 4, 1, 4, 4), _ALL_FILTERS),
        (DepthwiseShape(8, 16, 2, 1, 4, 4), (5, 7)),
    ),
    (Direction.BWD_DATA, DataType.FP16): _BWD_DATA_3D_16BIT,
    (Direction.BWD_DATA, DataType.BF16): _BWD_DATA_3D_16BIT,
    (Direction.BWD_DATA, DataType.FP32): ((DepthwiseShape(8, 16, 4, 2, 4, 4), _ALL_FILTERS),),
    (Direction.BWD_WEIGHT, DataType.FP16): _BWD_WEIGHT_3D_16BIT,
    (Direction.BWD_WEIGHT, DataType.BF16): _BWD_WEIGHT_3D_16BIT,
    (Direction.BWD_WEIGHT, DataType.FP32): ((_VEC4, _ALL_FILTERS),),
}


def default_configs(
    direction: Direction, dtype: DataType, ndim: int, convention: WarpTileKConvention
) -> Iterator[KernelConfig | DepthwiseConfig]:
    two_stage_values = (False, True) if two_stage_runs_direction(direction) else (False,)
    ping_pong = PING_PONG_TILES if dtype in hopper.DTYPES else ()
    merges_groups = dtype in hopper.DTYPES and direction in MERGED_GROUP_DIRECTIONS
    merged = MERGED_GROUP_TILES if merges_groups else ()
    direct = DIRECT_MERGED_GROUP_TILES if dtype in hopper.DTYPES else FP32_DIRECT_MERGED_GROUP_TILES
    if direction not in MERGED_GROUP_DIRECTIONS:
        direct = ()
    hopper_bwd_weight = dtype in hopper.DTYPES and direction == Direction.BWD_WEIGHT
    transposed = TRANSPOSED_BWD_WEIGHT_TILES if hopper_bwd_weight else ()
    merged_bwd_weight = SMALL_CG_BWD_WEIGHT_TILES + MERGED_TMA_BWD_WEIGHT_TILES if hopper_bwd_weight else ()
    direct_bwd_weight = DIRECT_BWD_WEIGHT_TILES if hopper_bwd_weight else FP32_DIRECT_BWD_WEIGHT_TILES
    if direction is not Direction.BWD_WEIGHT:
        direct_bwd_weight = ()
    narrow = NARROW_BWD_DATA_TILES if dtype in hopper.DTYPES and direction == Direction.BWD_DATA else ()
    unfolded = UNFOLDED_FWD_TILES if dtype in hopper.DTYPES and direction == Direction.FWD else ()
    base = space.BASE_VECTOR
    variants = (
        [(tile, 1, 1, PREFERRED_WAVES, base) for tile in COMMON_TILES]
        + [(tile, 1, 1, (waves,), base) for tile, waves in transposed]
        + [(tile, 1, 1, (waves,), base) for tile, waves in narrow]
        + [(tile, 1, 1, (waves,), base) for tile, waves in unfolded]
        + [(tile, 2, 1, (PING_PONG_WAVES,), base) for tile in ping_pong]
        + [
            (tile, wave_groups, gm, (PING_PONG_WAVES,) if wave_groups == 2 else PREFERRED_WAVES, base)
            for tile, gm, wave_groups in merged
        ]
        + [(tile, 1, gm, (waves,), vector) for tile, waves, gm, vector in merged_bwd_weight]
    )
    pipelines = DEFAULT_PIPELINES[direction]
    variants_and_pipelines = (
        [(*variant, pipelines) for variant in variants]
        + [(tile, 1, gm, PREFERRED_WAVES, base, pipelines[:1]) for tile, gm in direct]
        + [
            (tile, 1, gm, (waves,), vector, (PipelineChoice(pipeline),))
            for tile, waves, gm, vector, pipeline in direct_bwd_weight
        ]
    )
    for tile, wave_groups, groups_to_merge, preferred, vector, pipeline_choices in variants_and_pipelines:
        choices = dict(wave_warp_choices(tile, dtype, convention))
        waves = next((w for w in preferred if w in choices), None)
        if waves is None:
            continue
        for choice in pipeline_choices:
            for two_stage in two_stage_values:
                yield build_config(
                    direction,
                    dtype,
                    ndim,
                    tile,
                    (waves, choices[waves]),
                    choice,
                    vector,
                    two_stage=two_stage,
                    num_wave_groups=wave_groups,
                    num_groups_to_merge=groups_to_merge,
                )
    depthwise = DEFAULT_DEPTHWISE if ndim == 2 else DEFAULT_DEPTHWISE_3D
    for shape, filters in depthwise.get((direction, dtype), ()):
        yield from depthwise_configs(direction, dtype, filters, (shape,), ndim=ndim)
