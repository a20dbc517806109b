// Forward and backward data for merged small groups (issue 10, F3; docs/pipelines.md, "Merged groups, fwd and
// bwd_data"): a CTA owns num_groups_to_merge whole groups of C/G = K/G = 2, 4, 8 or 16 channels and walks tiles
// of the pixels it writes. It reads each tile's window of the tensor it reads (the halo) once, all the groups'
// channels, and multiplies every tap from shared memory. The implicit GEMM instead reads every pixel once per
// tap (im2col through L2) and pairs groups into zero-filled blocks of its wider MMA.
//
//   gmem weights --(cp.async 16 B)--> smem, once --> smem B: taps x blocks of 8 columns, fragment order
//   gmem source --(one TMA box a tile, zeros outside = padding)--> smem halo stages (a ring): the tile's window
//   per warp and 16-pixel chunk: per tap, A = 16 pixels of the shifted window (ldmatrix, one row address per
//   pixel: any stride, dilation, 3D), mma.sync m16n8k8 of each diagonal block (m16n8k16 of each group of 16;
//   fp32: TF32 m16n8k8, two for a group of 16) into fp32 accumulators; the result staged in shared memory and
//   stored as 16-byte vectors of whole pixel rows
//
// Both directions are the same multiply: fwd reads the input and writes the output, B[c][k] = W[g][k][tap][c];
// bwd_data reads the output gradient with the taps reversed, B[k][c] = W[g][k][tap][c], and at stride s > 1
// by stride phases: a tile holds pixels of one phase, which multiplies only the taps that meet an output pixel
// (a phase without taps stores zeros). A diagonal block of 8 channels is one group (C/G = 8) or 8 / (C/G)
// groups whose cross-group entries are zero (C/G = 2 and 4: the MMA's granularity); a group of 16 is one
// m16n8k16 per 8 of its output columns. C/G = 32 and wider take the implicit GEMM's diagonal mode.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include <cute/arch/copy_sm75.hpp>
#include <cute/arch/copy_sm80.hpp>
#include <cute/arch/mma_sm80.hpp>
#include <cutlass/arch/barrier.h>

#include "tiledispatch/kernels/fast_division.hpp"
#include "tiledispatch/kernels/implicit_gemm_config.hpp"
#include "tiledispatch/kernels/sm90/tma.hpp"
#include "tiledispatch/kernels/stride_phases.hpp"
#include "tiledispatch/kernels/tf32.cuh"
#include "tiledispatch/runtime/direction.hpp"
#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::kernels {

// One axis of phase a: dst pixel q * dst_stride + a (q < extent) reads src pixels q * src_stride + origin +
// j * dilation for its taps j < taps, tap j being weight tap wbase + j * wstep along the axis. fwd has one
// phase (weight taps in order); bwd_data reads the output gradient with the taps reversed and, at stride s, has
// s phases an axis, each the run of taps that meets an output pixel (stride_phases.hpp).
struct DirectPhaseAxis {
  int extent, origin, taps, dilation, wbase, wstep;
};

struct MergedGroupDirectPlan {
  static constexpr int kMaxStride = StridePhases::kMaxStride;
  static constexpr int kMaxBox = 256;  // a TMA box's extent along any dimension
  // The tensor read (src: fwd input, bwd_data output gradient) and the tensor written (dst), both N x spatial x
  // `channels`.
  int n, src_d, src_h, src_w, dst_d, dst_h, dst_w;
  int src_stride[3], dst_stride[3];  // fwd: the convolution's stride and 1; bwd_data: 1 and the stride
  int y, x;                          // the filter's extents in H and W (a weight tap is (tz * y + ty) * x + tx)
  int taps, width, gm;               // width = C/G = K/G
  int groups, group_blocks;          // G, and the CTA rows of gm groups: the last has G - (group_blocks - 1) gm
  int element_bytes;                 // 2 (fp16, bf16) or 4 (fp32, multiplied as TF32)
  int64_t channels;
  bool transposed;  // bwd_data: B[k][c] = W[g][k][tap][c]; fwd: B[c][k]
  int phases;       // indexed (a_d * s_h + a_h) * s_w + a_w; each axis' phase a is axis[i][a]
  DirectPhaseAxis axis[3][kMaxStride];
  // tiles of dst pixels of one phase and one (n, d): tile_h x tile_w of the phase's rows and columns; a CTA
  // walks tiles first, first + ctas, ... of its groups
  int tile_h, tile_w, halo_d, halo_h, halo_w, pixels16, tiles_h, tiles_w, depth;
  int tiles, ctas;
  FastDivisor by_tiles_w, by_tiles_h, by_depth, by_n;  // a tile's (phase, n, d, row block, column block)
  FastDivisor by_stride_w, by_stride_h;                 // a phase's residues
  // shared memory: the weights in fragment order (32-bit words), the halo stages (elements, halo_pitch a
  // pixel, each from a 128-byte boundary), each pixel's halo row and tile position, each phase's first tap
  // entry, each tap entry's shift in the halo and weight tap, at barrier_offset a barrier a stage; then at
  // staging_offset the weights as copied (elements), which each warp's 16 output pixels reuse once they are in
  // fragment order
  int weight_words, raw_weight_elems, halo_pitch, halo_elems;
  uint32_t stage_tx_bytes;  // the bytes of a stage's box: halo_pitch channels of every halo pixel
  size_t barrier_offset, staging_offset, smem_bytes;

  TD_HOST_DEVICE void residues(int phase, int (&a)[3]) const {
    uint32_t rh, rw;
    a[0] = int(by_stride_h.divide(by_stride_w.divide(uint32_t(phase), rw), rh));
    a[1] = int(rh), a[2] = int(rw);
  }
};

// Whether groups of `width` channels of `element_bytes` bytes fit the kernel's diagonal blocks: 8 channels (C/G
// = 2, 4, 8) or 16, and in fp32 32 (16-bit C/G = 32 takes the Hopper path's diagonal mode, which fp32 lacks).
constexpr bool merged_group_direct_width(int64_t width, int element_bytes) {
  return width == 2 || width == 4 || width == 8 || width == 16 || (width == 32 && element_bytes == 4);
}

// The diagonal blocks' K for groups of `width` channels: a block of 8 (m16n8k8), or the whole group, m16n8k16 a
// group of 16 (fp32: TF32 m16n8k8, two for a group of 16, four for 32).
constexpr int merged_group_direct_block_k(int64_t width) { return width >= 16 ? int(width) : 8; }

// The B fragment words a lane holds per (tap entry, block of 8 output columns): kBlockK x 8 elements over 32
// lanes.
constexpr int merged_group_direct_b_words(int block_k, int element_bytes) { return block_k * element_bytes / 16; }

// Where a configuration that can run a problem on this kernel does: everywhere but 16-bit C/G = 16 fwd at a
// stride above 1, whose window of twice the tile's width the implicit GEMM's diagonal mode reads faster by
// im2col boxes (H200, resnext50_32x4d_s2_28: 54.3 against 43.3 TFLOP/s; docs/performance.md, session 35). fp32
// has no such mode (the Hopper path multiplies 16-bit types only).
constexpr bool merged_group_direct_preferred(int64_t width, ConvDirection direction, bool strided, DataType dtype) {
  return dtype == DataType::kFp32 || !(width == 16 && direction == ConvDirection::kFwd && strided);
}

// The plan of `p` in `direction` (fwd; bwd_data at strides up to StridePhases::kMaxStride) for a CTA of
// `channels` = gm x C/G channels of `element_bytes` bytes, `warps` warps, `stages` halo stages and tiles of
// about `tile_pixels` dst pixels. False where the kernel cannot run it: C/G != K/G, C/G not 2, 4, 8 or 16 (fp32:
// or 32), C not whole 16-byte vectors, src or dst of 2^31 pixels or more, a filter reach or CTA channels beyond
// a box's 256, or shared memory beyond `smem_limit`. The grid (`ctas` a group block) is set by
// merged_group_direct_grid.
inline bool make_merged_group_direct_plan(const ConvProblem& p, ConvDirection direction, int gm, int channels,
                                          int element_bytes, int warps, int stages, int tile_pixels,
                                          size_t smem_limit, MergedGroupDirectPlan& plan) {
  plan = MergedGroupDirectPlan{};
  plan.element_bytes = element_bytes;
  if (direction == ConvDirection::kBwdWeight || p.C != p.K) return false;
  const int64_t width = p.C / p.G;
  if (!merged_group_direct_width(width, element_bytes) || width * gm != channels || channels % 16 != 0) return false;
  // A last block of fewer groups where gm does not divide G (RegNet's G = 13, 25, 55, ...): its boxes read
  // zeros past C and it stores only its groups' channels, whole 16-byte vectors where a pixel is.
  const int64_t group_blocks = (p.G + gm - 1) / gm;
  if (group_blocks > 65535 || (p.C * element_bytes) % 16 != 0) return false;
  constexpr int64_t kLimit = int64_t(INT32_MAX);
  if (p.N * p.input_spatial() > kLimit || p.N * p.output_spatial() > kLimit) return false;
  const bool bwd = direction == ConvDirection::kBwdData;
  StridePhases phases;
  if (bwd && !make_stride_phases(p, phases)) {
    if (p.stride[0] != 1 || p.stride[1] != 1 || p.stride[2] != 1) return false;  // beyond kMaxStride
    phases.count = 1;  // unit stride: one phase of every tap
    for (int i = 0; i < 3; ++i) {
      phases.stride[i] = 1;
      phases.axis[i][0] = {0, int(p.filter[i]), 1, int(p.left_pad[i]), int(p.dilation[i]), int(p.input[i])};
    }
  }
  const auto out = p.output();
  const auto& src = bwd ? out : p.input;
  const auto& dst = bwd ? p.input : out;
  plan.n = int(p.N);
  plan.src_d = int(src[0]), plan.src_h = int(src[1]), plan.src_w = int(src[2]);
  plan.dst_d = int(dst[0]), plan.dst_h = int(dst[1]), plan.dst_w = int(dst[2]);
  plan.y = int(p.filter[1]), plan.x = int(p.filter[2]);
  plan.taps = int(p.filter_spatial()), plan.width = int(width), plan.gm = gm;
  plan.groups = int(p.G), plan.group_blocks = int(group_blocks);
  plan.channels = p.C;
  plan.transposed = bwd;
  plan.phases = bwd ? phases.count : 1;
  int max_taps[3] = {}, max_dilation_span[3] = {};
  for (int i = 0; i < 3; ++i) {
    plan.src_stride[i] = bwd ? 1 : int(p.stride[i]);
    plan.dst_stride[i] = bwd ? phases.stride[i] : 1;
    for (int a = 0; a < plan.dst_stride[i]; ++a) {
      DirectPhaseAxis& axis = plan.axis[i][a];
      if (!bwd) {
        axis = {int(dst[i]), -int(p.left_pad[i]), int(p.filter[i]), int(p.dilation[i]), 0, 1};
      } else {  // tap j of the run reads q + pad - j x dilation: reversed, q + origin + j' x dilation
        const PhaseAxis& run = phases.axis[i][a];
        const int last = run.taps - 1;
        axis = {run.extent, run.pad - last * run.dilation, run.taps, run.dilation, run.first_tap + last * run.step,
                -run.step};
      }
      max_taps[i] = std::max(max_taps[i], axis.taps);
      max_dilation_span[i] = std::max(max_dilation_span[i], std::max(axis.taps - 1, 0) * axis.dilation);
    }
  }
  // channels + a 16-byte chunk: channels is a multiple of 16
  plan.halo_pitch = sm90::conflict_free_row(channels, element_bytes);
  if (plan.halo_pitch > MergedGroupDirectPlan::kMaxBox) return false;
  plan.weight_words =  // B fragments' words: 32 lanes a (tap, block of 8 columns)
      plan.taps * channels * 4 * merged_group_direct_b_words(merged_group_direct_block_k(width), element_bytes);
  plan.raw_weight_elems = plan.taps * channels * plan.width;  // the CTA's groups of GKZYXC: contiguous

  // The phases' largest extents; whole rows where they fit the pixel target, the rows and columns then spread
  // evenly over the tiles (28 rows by 7, not 9, 9, 9 and 1).
  int extent[3] = {};
  for (int i = 0; i < 3; ++i) {
    for (int a = 0; a < plan.dst_stride[i]; ++a) extent[i] = std::max(extent[i], plan.axis[i][a].extent);
  }
  plan.depth = extent[0];
  const auto shape_tile = [&](int tile_h, int tile_w) {
    plan.tile_h = tile_h, plan.tile_w = tile_w;
    plan.halo_d = max_dilation_span[0] + 1;
    plan.halo_h = (tile_h - 1) * plan.src_stride[1] + max_dilation_span[1] + 1;
    plan.halo_w = (tile_w - 1) * plan.src_stride[2] + max_dilation_span[2] + 1;
    plan.pixels16 = (tile_h * tile_w + 15) / 16 * 16;
    plan.halo_elems = (plan.halo_d * plan.halo_h * plan.halo_w * plan.halo_pitch + 63) / 64 * 64;
    plan.stage_tx_bytes = uint32_t(plan.halo_d * plan.halo_h * plan.halo_w * plan.halo_pitch * element_bytes);
    plan.barrier_offset =
        (size_t(plan.weight_words) * 4 + size_t(stages) * size_t(plan.halo_elems) * element_bytes +
         size_t(2 * plan.pixels16 + plan.phases + 1 + 2 * plan.taps) * 4 + 7) / 8 * 8;
    plan.staging_offset = (plan.barrier_offset + size_t(stages) * 8 + 15) / 16 * 16;
    plan.smem_bytes = plan.staging_offset + std::max(size_t(plan.raw_weight_elems) * element_bytes,
                                                     size_t(warps) * 16 * (channels + 8) * element_bytes);
    plan.tiles_h = (extent[1] + tile_h - 1) / tile_h;
    plan.tiles_w = (extent[2] + tile_w - 1) / tile_w;
    return plan.smem_bytes <= smem_limit && plan.halo_h <= MergedGroupDirectPlan::kMaxBox;
  };
  if (extent[0] == 0 || extent[1] == 0 || extent[2] == 0) return false;
  // a halo row and depth within a box's extent
  constexpr int kMaxBox = MergedGroupDirectPlan::kMaxBox;
  const int max_tile_w = (kMaxBox - 1 - max_dilation_span[2]) / plan.src_stride[2] + 1;
  if (max_dilation_span[0] + 1 > kMaxBox || max_tile_w < 1) return false;
  int tile_w = std::min({extent[2], std::max(tile_pixels, 16), max_tile_w});
  int tile_h = std::min(extent[1], std::max(1, tile_pixels / tile_w));
  while (!shape_tile(tile_h, tile_w)) {
    if (!sm90::shrink_direct_tile(tile_h, tile_w)) return false;
  }
  shape_tile((extent[1] + plan.tiles_h - 1) / plan.tiles_h, (extent[2] + plan.tiles_w - 1) / plan.tiles_w);
  const int64_t tiles = int64_t(plan.phases) * plan.n * plan.depth * plan.tiles_h * plan.tiles_w;
  if (tiles > kLimit) return false;
  plan.tiles = int(tiles);
  plan.ctas = 1;
  plan.by_tiles_w = FastDivisor::of(uint32_t(plan.tiles_w));
  plan.by_tiles_h = FastDivisor::of(uint32_t(plan.tiles_h));
  plan.by_depth = FastDivisor::of(uint32_t(plan.depth));
  plan.by_n = FastDivisor::of(uint32_t(plan.n));
  plan.by_stride_w = FastDivisor::of(uint32_t(plan.dst_stride[2]));
  plan.by_stride_h = FastDivisor::of(uint32_t(plan.dst_stride[1]));
  return true;
}

// The tensor map of the tensor `plan` reads (`dtype` elements at `src`: C, W, H, D, N), boxes of a stage's
// halo. False where the driver refuses it.
inline bool encode_merged_group_direct_map(const MergedGroupDirectPlan& plan, DataType dtype, const void* src,
                                           CUtensorMap& map) {
  const uint64_t extents[5] = {uint64_t(plan.channels), uint64_t(plan.src_w), uint64_t(plan.src_h),
                               uint64_t(plan.src_d), uint64_t(plan.n)};
  const uint32_t box[5] = {uint32_t(plan.halo_pitch), uint32_t(plan.halo_w), uint32_t(plan.halo_h),
                           uint32_t(plan.halo_d), 1};
  return sm90::encode_tma_activation(map, dtype, src, extents, box);
}

// CTAs a group block: the `resident` CTAs the GPU holds at once spread over the group blocks, at most one a
// tile.
inline void merged_group_direct_grid(MergedGroupDirectPlan& plan, int64_t resident) {
  plan.ctas = int(std::max<int64_t>(1, std::min<int64_t>(plan.tiles, resident / plan.group_blocks)));
}

// Two fp32 sums as the 32-bit pair of 16-bit elements a store writes (one cvt, no local memory).
template <DataType kDataType>
__device__ inline uint32_t pack_pair(float lo, float hi) {
  static_assert(kDataType != DataType::kFp32, "16-bit pairs");
  uint32_t pair;
  if constexpr (kDataType == DataType::kFp16) {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(hi), "f"(lo));
  }
  return pair;
}

// An A fragment of 16 pixels by ldmatrix x4 at each lane's row address; TF32 operands rounded.
__device__ inline void load_a(const void* row, uint32_t (&a)[4], bool tf32) {
  cute::SM75_U32x4_LDSM_N::copy(*reinterpret_cast<const cute::uint128_t*>(row), a[0], a[1], a[2], a[3]);
  if (tf32) {
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = tf32_bits(__uint_as_float(a[i]));
  }
}

// Grid: (plan.ctas, plan.group_blocks); kChannels = gm x C/G; kBlockK = merged_group_direct_block_k(C/G);
// kPhases: plan.phases > 1 (strided bwd_data). Thread 0 issues every tile's box; each warp waits for a stage on its
// barrier, and the block synchronises before a stage is refilled. The one-phase kernel drops the phases'
// lookups and empty-tile tests at compile time: with them it needs more than 128 registers at 256 threads and
// 64 channels, one CTA an SM instead of two, 14-18 % slower on the unit-stride rows (docs/performance.md,
// session 33). Every dst element of the CTA's groups is written (a phase without taps stores zeros).
template <DataType kDataType, int kThreads, int kChannels, int kBlockK, int kStages, bool kPhases,
          class Element = typename ElementTypes<kDataType>::Global>
__global__ void __launch_bounds__(kThreads)
    merged_group_direct_kernel(const MergedGroupDirectPlan plan, const __grid_constant__ CUtensorMap src_map,
                               const Element* __restrict__ weight, Element* __restrict__ dst) {
  constexpr bool kTf32 = kDataType == DataType::kFp32;
  // m16n8k8 (a block of 8) or m16n8k16 (a group of 16); TF32: m16n8k8, two for a group of 16
  using Mma = typename MmaOp<kDataType, kTf32 ? 8 : kBlockK>::type;
  static_assert(kChannels % 16 == 0, "whole ldmatrix rows of 16 channels");
  static_assert(kBlockK == 8 || kBlockK == 16 || (kTf32 && kBlockK == 32), "diagonal blocks of 8, 16 or 32");
  constexpr int kWords = merged_group_direct_b_words(kBlockK, int(sizeof(Element)));
  static_assert(kStages >= 2, "a ring of at least two halo stages");
  constexpr int kWarps = kThreads / 32;
  constexpr int kBlocks = kChannels / 8;                   // blocks of 8 columns (the MMA's n)
  constexpr int kVectorElems = 16 / int(sizeof(Element));  // elements of a 16-byte vector
  constexpr int kVectors = kChannels / kVectorElems;       // 16-byte vectors of a pixel
  constexpr int kSpan = 2 * kVectorElems;                  // channels of an ldmatrix x4 (32 bytes a pixel)
  // Box destinations are 128-byte aligned (a name of its own: other kernels' dynamic shared memory declares 16).
  extern __shared__ __align__(128) unsigned char halo_bytes[];
  uint32_t* weight_smem = reinterpret_cast<uint32_t*>(halo_bytes);
  Element* halo_stages = reinterpret_cast<Element*>(weight_smem + plan.weight_words);
  Element* raw_weight = reinterpret_cast<Element*>(halo_bytes + plan.staging_offset);
  uint64_t* full = reinterpret_cast<uint64_t*>(halo_bytes + plan.barrier_offset);
  int* halo_row = reinterpret_cast<int*>(halo_stages + size_t(kStages) * plan.halo_elems);
  int* tile_pos = halo_row + plan.pixels16;  // (row << 16) | column of each tile pixel; past the tile, no row
  int* phase_first = tile_pos + plan.pixels16;  // each phase's first tap entry, then the entries' count
  int* tap_shift = phase_first + plan.phases + 1;
  int* tap_weight = tap_shift + plan.taps;
  // a staged pixel's elements: 16-bit pairs (fp32: pairs of sums as 8 bytes) miss each other's banks
  constexpr int kStagePitch = kChannels + 8;
  constexpr int kStageWords = kStagePitch * int(sizeof(Element)) / 4;
  uint32_t* staging =
      reinterpret_cast<uint32_t*>(halo_bytes + plan.staging_offset) + (int(threadIdx.x) / 32) * (16 * kStageWords);

  const int g0 = int(blockIdx.y) * plan.gm;
  const int first = int(blockIdx.x);
  const int count = first < plan.tiles ? (plan.tiles - first + plan.ctas - 1) / plan.ctas : 0;
  // the last block's groups may end before gm: its weights past G are zeros, its stores stop at C (whole
  // vectors: the plan keeps C a multiple of one)
  const int groups_here = min(plan.gm, plan.groups - g0);
  const int vectors_here = groups_here * plan.width / kVectorElems;

  // The CTA's weights as they are (contiguous in GKZYXC).
  {
    const Element* from = weight + int64_t(g0) * plan.width * plan.taps * plan.width;
    const int weight_vectors = groups_here * plan.taps * plan.width * plan.width / kVectorElems;
    for (int v = int(threadIdx.x); v < plan.raw_weight_elems / kVectorElems; v += kThreads) {
      if (v < weight_vectors) {
        cute::SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>::copy(
            *reinterpret_cast<const cute::uint128_t*>(from + v * kVectorElems),
            *reinterpret_cast<cute::uint128_t*>(raw_weight + v * kVectorElems));
      } else {
        *reinterpret_cast<uint4*>(raw_weight + v * kVectorElems) = make_uint4(0, 0, 0, 0);
      }
    }
    cute::cp_async_fence();
  }

  // A tile's phase and origin, and the phase's extents left from that origin (rows, cols: at most the tile's;
  // none where the phase is empty there).
  struct Tile {
    int phase, n, d, row0, col0, rows, cols, taps;
    int a[3];  // the phase's residues
  };
  const auto locate = [&](int index) {
    Tile t;
    uint32_t wb, hb, d, n, phase = 0;
    const uint32_t nd = plan.by_tiles_h.divide(plan.by_tiles_w.divide(uint32_t(index), wb), hb);
    if constexpr (kPhases) {
      phase = plan.by_n.divide(plan.by_depth.divide(nd, d), n);
      plan.residues(int(phase), t.a);
    } else {
      n = plan.by_depth.divide(nd, d);
      t.a[0] = t.a[1] = t.a[2] = 0;
    }
    t.phase = int(phase), t.n = int(n), t.d = int(d);
    t.row0 = int(hb) * plan.tile_h, t.col0 = int(wb) * plan.tile_w;
    if constexpr (kPhases) {
      const bool in_depth = t.d < plan.axis[0][t.a[0]].extent;
      t.rows = in_depth ? min(plan.tile_h, plan.axis[1][t.a[1]].extent - t.row0) : 0;
      t.cols = min(plan.tile_w, plan.axis[2][t.a[2]].extent - t.col0);
      t.taps = plan.axis[0][t.a[0]].taps * plan.axis[1][t.a[1]].taps * plan.axis[2][t.a[2]].taps;
    } else {  // one phase: every tap, the tensor's own extents
      t.rows = min(plan.tile_h, plan.dst_h - t.row0), t.cols = min(plan.tile_w, plan.dst_w - t.col0);
      t.taps = plan.taps;
    }
    return t;
  };

  // A tile's window of src (the halo, all the CTA's channels and the next 8) as one box at its corner, which
  // may lie outside src (padding: zeros). A tile that reads nothing (a phase's tile past its extents or
  // without taps) only arrives, so each use of a stage completes one phase of its barrier.
  const auto load_stage = [&](int index, int stage) {
    const Tile t = locate(index);
    if (kPhases && (t.rows <= 0 || t.cols <= 0 || t.taps == 0)) {
      cutlass::arch::ClusterBarrier::arrive(&full[stage]);
      return;
    }
    const int id0 = t.d * plan.src_stride[0] + plan.axis[0][t.a[0]].origin;
    const int ih0 = t.row0 * plan.src_stride[1] + plan.axis[1][t.a[1]].origin;
    const int iw0 = t.col0 * plan.src_stride[2] + plan.axis[2][t.a[2]].origin;
    cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&full[stage], plan.stage_tx_bytes);
    sm90::tma_load_5d(&src_map, &full[stage], halo_stages + size_t(stage) * plan.halo_elems,
                      {g0 * plan.width, iw0, ih0, id0, t.n});
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) cutlass::arch::ClusterBarrier::init(&full[s], 1u);
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages - 1 && s < count; ++s) load_stage(first + s * plan.ctas, s);
  }
  if (threadIdx.x == 0) {  // each phase's tap entries, in phase order
    int entries = 0;
    for (int phase = 0; phase < plan.phases; ++phase) {
      int a[3];
      plan.residues(phase, a);
      phase_first[phase] = entries;
      entries += plan.axis[0][a[0]].taps * plan.axis[1][a[1]].taps * plan.axis[2][a[2]].taps;
    }
    phase_first[plan.phases] = entries;
  }

  // Each dst pixel of a tile as a halo pixel before the tap's shift (pixels past the tile read pixel 0), and
  // each tap entry's shift in the halo (elements) and weight tap (the phases partition the taps).
  cute::cp_async_wait<0>();
  __syncthreads();
  const int tile_pixels = plan.tile_h * plan.tile_w;
  for (int p = int(threadIdx.x); p < plan.pixels16; p += kThreads) {
    const int th = p / plan.tile_w, tw = p % plan.tile_w;
    halo_row[p] = p < tile_pixels ? th * plan.src_stride[1] * plan.halo_w + tw * plan.src_stride[2] : 0;
    tile_pos[p] = p < tile_pixels ? th << 16 | tw : 0x7fff << 16;
  }
  for (int e = int(threadIdx.x); e < phase_first[plan.phases]; e += kThreads) {
    int phase = 0;
    while (phase_first[phase + 1] <= e) ++phase;
    int a[3];
    plan.residues(phase, a);
    const DirectPhaseAxis az = plan.axis[0][a[0]], ay = plan.axis[1][a[1]], ax = plan.axis[2][a[2]];
    const int j = e - phase_first[phase];
    const int jz = j / (ay.taps * ax.taps), jy = j / ax.taps % ay.taps, jx = j % ax.taps;
    tap_shift[e] = ((jz * az.dilation * plan.halo_h + jy * ay.dilation) * plan.halo_w + jx * ax.dilation) *
                   plan.halo_pitch;
    tap_weight[e] = ((az.wbase + jz * az.wstep) * plan.y + ay.wbase + jy * ay.wstep) * plan.x + ax.wbase +
                    jx * ax.wstep;
  }

  // The weights in fragment order, once, in tap entry order, a warp per (entry, block): word r of (entry,
  // block, lane) holds, for the entry's weight tap and column n = lane / 4 of the block, B rows k, k + 1 (k =
  // 2 (lane % 4) + 8 r from the start of the block's kBlockK rows) or in fp32 row k = lane % 4 + 4 (r % 2) +
  // 8 (r / 2), rounded to TF32; zero across groups.
  __syncthreads();
  {
    const int lane = int(threadIdx.x) % 32, shift = __ffs(plan.width) - 1;  // widths are powers of two
    // B[c][k] = W[g][k][tap][c] (fwd) or B[k][c] = W[g][k][tap][c] (bwd_data): the element of row k, column nn
    const auto weight_at = [&](int tap, int k, int nn) {
      return plan.transposed ? (k * plan.taps + tap) * plan.width + (nn & (plan.width - 1))
                             : (nn * plan.taps + tap) * plan.width + (k & (plan.width - 1));
    };
    for (int item = int(threadIdx.x) / 32; item < plan.taps * kBlocks; item += kWarps) {
      const int tap = tap_weight[item / kBlocks], block = item % kBlocks, nn = block * 8 + lane / 4;
      const int k0 = block * 8 / kBlockK * kBlockK;
#pragma unroll
      for (int r = 0; r < kWords; ++r) {
        uint32_t word = 0;
        if constexpr (kTf32) {
          const int k = k0 + lane % 4 + 4 * (r % 2) + 8 * (r / 2);
          if (k >> shift == nn >> shift) word = tf32_bits(raw_weight[weight_at(tap, k, nn)]);
        } else {
          const int k = k0 + 2 * (lane % 4) + 8 * r;
          if (k >> shift == nn >> shift) {  // inside one group (k, k + 1 share it: widths are even)
            const uint16_t* bits = reinterpret_cast<const uint16_t*>(raw_weight);
            word = uint32_t(bits[weight_at(tap, k, nn)]) | uint32_t(bits[weight_at(tap, k + 1, nn)]) << 16;
          }
        }
        weight_smem[(item * 32 + lane) * kWords + r] = word;
      }
    }
  }

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  Element* group_dst = dst + int64_t(g0) * plan.width;
  for (int i = 0; i < count; ++i) {
    __syncthreads();  // every warp is done with the stage the next box refills
    if (threadIdx.x == 0 && i + kStages - 1 < count) {
      load_stage(first + (i + kStages - 1) * plan.ctas, (i + kStages - 1) % kStages);
    }
    cutlass::arch::ClusterBarrier::wait(&full[i % kStages], uint32_t(i / kStages) & 1u);
    const Tile t = locate(first + i * plan.ctas);
    if (kPhases && (t.rows <= 0 || t.cols <= 0)) continue;  // a phase's tile past its extents
    const Element* halo = halo_stages + size_t(i % kStages) * plan.halo_elems;
    const int entry_begin = kPhases ? phase_first[t.phase] : 0;
    const int entry_end = kPhases ? phase_first[t.phase + 1] : plan.taps;
    // dst pixel (q_d, q_h, q_w) of the phase is (q x dst_stride + residue) of the tensor
    const int dst_row_step = kPhases ? plan.dst_stride[1] * plan.dst_w : plan.dst_w;
    const int dst_col_step = kPhases ? plan.dst_stride[2] : 1;
    const int dst_d = kPhases ? t.d * plan.dst_stride[0] + t.a[0] : t.d;
    const int dst_row = kPhases ? t.row0 * plan.dst_stride[1] + t.a[1] : t.row0;
    const int dst_col = kPhases ? t.col0 * plan.dst_stride[2] + t.a[2] : t.col0;
    Element* tile_dst =
        group_dst + (((int64_t(t.n) * plan.dst_d + dst_d) * plan.dst_h + dst_row) * plan.dst_w + dst_col) *
                        plan.channels;
    for (int chunk = warp; chunk * 16 < plan.pixels16; chunk += kWarps) {
      float acc[kChannels / 8][4] = {};
      // lanes 0-15 address pixels 0-15 at the span's first 16 bytes, lanes 16-31 at its second: a[0..3] are
      // (pixels 0-7, 8-15) x (16-byte halves 0, 1), the A fragment of m16n8k16, of two m16n8k8 (16-bit), or of
      // TF32 m16n8k8 (8 channels)
      const Element* a_base =
          halo + halo_row[chunk * 16 + (lane & 15)] * plan.halo_pitch + (lane >> 4) * kVectorElems;
      for (int e = entry_begin; e < entry_end; ++e) {
        const Element* a_pixel = a_base + tap_shift[e];
        const uint32_t* b_tap = weight_smem + e * (kBlocks * 32 * kWords) + lane * kWords;
        if constexpr (kTf32) {  // a block or group of kBlockK channels: its spans, each into its 8-column blocks
          constexpr int kSpans = kBlockK / 8;
#pragma unroll
          for (int group = 0; group < kChannels / kBlockK; ++group) {
            uint32_t a[kSpans][4];
#pragma unroll
            for (int q = 0; q < kSpans; ++q) load_a(a_pixel + (group * kSpans + q) * kSpan, a[q], kTf32);
#pragma unroll
            for (int h = 0; h < kSpans; ++h) {
              float* d = acc[group * kSpans + h];
              const uint32_t* b = b_tap + (group * kSpans + h) * 32 * kWords;
#pragma unroll
              for (int q = 0; q < kSpans; ++q) {
                const uint2 bq = *reinterpret_cast<const uint2*>(b + 2 * q);
                Mma::fma(d[0], d[1], d[2], d[3], a[q][0], a[q][1], a[q][2], a[q][3], bq.x, bq.y, d[0], d[1], d[2],
                         d[3]);
              }
            }
          }
        } else {
          // A batch of up to 64 channels: every fragment of the batch loaded before its MMAs, so that the
          // loads are in flight together and the MMAs (independent accumulators) issue back to back (loaded
          // one at a time, each MMA waited on its own load; docs/performance.md, session 42).
          constexpr int kBatch = kChannels / 16 < 4 ? kChannels / 16 : 4;
#pragma unroll
          for (int c0 = 0; c0 < kChannels / 16; c0 += kBatch) {
            uint32_t a[kBatch][4];
            uint2 b[kBatch][2];
#pragma unroll
            for (int c = 0; c < kBatch; ++c) {
              load_a(a_pixel + (c0 + c) * kSpan, a[c], kTf32);
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int blk = 2 * (c0 + c) + h;
                // m16n8k8 (a block of 8) takes one B word, m16n8k16 (a group of 16) two
                b[c][h] = kBlockK == 8 ? make_uint2(b_tap[blk * 32], 0u)
                                       : *reinterpret_cast<const uint2*>(b_tap + blk * 64);
              }
            }
#pragma unroll
            for (int c = 0; c < kBatch; ++c) {
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                float* d = acc[2 * (c0 + c) + h];
                if constexpr (kBlockK == 8) {  // block h: channels 0-7 of the 16 in a[0..1], 8-15 in a[2..3]
                  Mma::fma(d[0], d[1], d[2], d[3], a[c][2 * h], a[c][2 * h + 1], b[c][h].x, d[0], d[1], d[2],
                           d[3]);
                } else {  // the group's 16 channels into its columns 8h to 8h + 7
                  Mma::fma(d[0], d[1], d[2], d[3], a[c][0], a[c][1], a[c][2], a[c][3], b[c][h].x, b[c][h].y,
                           d[0], d[1], d[2], d[3]);
                }
              }
            }
          }
        }
      }
      // Accumulator (m, n) of m16n8: rows (pixels) lane / 4 and + 8, columns 2 (lane % 4) and + 1. Staged
      // through the warp's 16 pixels of shared memory, stored as 16-byte vectors of whole pixel rows.
#pragma unroll
      for (int c = 0; c < kChannels / 8; ++c) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          uint32_t* row = staging + (lane / 4 + 8 * half) * kStageWords;
          if constexpr (kTf32) {
            *reinterpret_cast<float2*>(row + c * 8 + 2 * (lane % 4)) =
                make_float2(acc[c][2 * half], acc[c][2 * half + 1]);
          } else {
            row[c * 4 + lane % 4] = pack_pair<kDataType>(acc[c][2 * half], acc[c][2 * half + 1]);
          }
        }
      }
      __syncwarp();
#pragma unroll
      for (int v = lane; v < 16 * kVectors; v += 32) {
        const int pos = tile_pos[chunk * 16 + v / kVectors], th = pos >> 16, tw = pos & 0xffff;
        if (th < t.rows && tw < t.cols && v % kVectors < vectors_here) {
          *reinterpret_cast<uint4*>(tile_dst + int64_t(th * dst_row_step + tw * dst_col_step) * plan.channels +
                                    (v % kVectors) * kVectorElems) =
              *reinterpret_cast<const uint4*>(staging + (v / kVectors) * kStageWords + (v % kVectors) * 4);
        }
      }
      __syncwarp();
    }
  }
}

}  // namespace tiledispatch::kernels
