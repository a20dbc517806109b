// Forward and unit-stride backward data for merged small groups (issue 10, F3; docs/pipelines.md, "Merged
// groups, fwd and bwd_data"): a CTA owns num_groups_to_merge whole groups of C/G = K/G = 2, 4 or 8 channels and
// walks tiles of the pixels it writes. It reads each tile's window of the tensor it reads (the halo) once, all
// the groups' channels, and multiplies every tap from shared memory. The implicit GEMM instead reads every
// pixel once per tap (im2col through L2) and pairs groups into zero-filled blocks of its wider MMA.
//
//   gmem weights --(cp.async 16 B)--> smem, once --> smem B: taps x blocks of 8 channels, fragment order
//   gmem source --(cp.async 16 B, zero fill = padding)--> smem halo stages (a ring): the tile's window
//   per warp and 16-pixel chunk: per tap, A = 16 pixels of the shifted window (ldmatrix, one row address per
//   pixel: any stride, dilation, 3D), mma.sync m16n8k8 of each diagonal block into fp32 accumulators; the
//   result staged in shared memory and stored as 16-byte vectors of whole pixel rows
//
// Both directions are the same multiply: fwd reads the input and writes the output, B[c][k] = W[g][k][tap][c];
// bwd_data (stride 1) reads the output gradient with the taps flipped and the padding mirrored, B[k][c] =
// W[g][k][taps - 1 - tap][c]. A diagonal block of 8 channels is one group (C/G = 8) or 8 / (C/G) groups whose
// cross-group entries are zero (C/G = 2 and 4: the MMA's granularity). C/G = 16 and wider take the implicit
// GEMM's diagonal mode, which measured faster (docs/performance.md, session 32).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include <cute/arch/copy_sm75.hpp>
#include <cute/arch/copy_sm80.hpp>
#include <cute/arch/mma_sm80.hpp>

#include "tiledispatch/kernels/fast_division.hpp"
#include "tiledispatch/kernels/halo_tile.hpp"
#include "tiledispatch/kernels/implicit_gemm_config.hpp"
#include "tiledispatch/runtime/direction.hpp"
#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::kernels {

struct MergedGroupDirectPlan {
  // The tensor read (src: fwd input, bwd_data output gradient) and the tensor written (dst), both N x spatial x
  // `channels`; padding as the window of a dst pixel sees src (bwd_data: (f - 1) x dilation - pad).
  int n, src_d, src_h, src_w, dst_d, dst_h, dst_w;
  int z, y, x, sd, sh, sw, pd, ph, pw, dd, dh, dw;
  int taps, width, gm;  // width = C/G = K/G
  int64_t channels;
  bool flip;  // bwd_data: the weights' taps reversed
  // tiles of dst pixels, one (n, d) each; a CTA walks tiles first, first + ctas, ... of its groups
  int tile_h, tile_w, halo_d, halo_h, halo_w, pixels16, tiles_h, tiles_w;
  int tiles, ctas;
  FastDivisor by_tiles_w, by_tiles_h, by_dst_d;  // a tile's (n, d, row block, column block), per tile
  // shared memory: the weights in fragment order (32-bit words), the halo stages (elements, halo_pitch a
  // pixel), each pixel's halo row and tile position, each tap's shift in the halo; then at staging_offset the
  // weights as copied (elements), which each warp's 16 output pixels reuse once they are in fragment order
  int weight_words, raw_weight_elems, halo_pitch, halo_elems;
  size_t staging_offset, smem_bytes;
};

// Whether groups of `width` channels fit the kernel's diagonal blocks of 8 channels.
constexpr bool merged_group_direct_width(int64_t width) { return width == 2 || width == 4 || width == 8; }

// The plan of `p` in `direction` (fwd; bwd_data at unit stride) for a CTA of `channels` = gm x C/G channels,
// `stages` halo stages and tiles of about `tile_pixels` dst pixels. False where the kernel cannot run it: C/G !=
// K/G, C/G not 2, 4 or 8, src or dst of 2^31 pixels or more, or shared memory beyond
// `smem_limit`. The grid (`ctas` a group block) is set by merged_group_direct_grid.
inline bool make_merged_group_direct_plan(const ConvProblem& p, ConvDirection direction, int gm, int channels,
                                          int warps, int stages, int tile_pixels, size_t smem_limit,
                                          MergedGroupDirectPlan& plan) {
  plan = MergedGroupDirectPlan{};
  if (direction == ConvDirection::kBwdWeight || p.G % gm != 0 || p.G / gm > 65535 || p.C != p.K) return false;
  const int64_t width = p.C / p.G;
  if (!merged_group_direct_width(width) || width * gm != channels || channels % 16 != 0) return false;
  const bool bwd = direction == ConvDirection::kBwdData;
  if (bwd && (p.stride[0] != 1 || p.stride[1] != 1 || p.stride[2] != 1)) return false;
  constexpr int64_t kLimit = int64_t(INT32_MAX);
  if (p.N * p.input_spatial() > kLimit || p.N * p.output_spatial() > kLimit) return false;
  const auto out = p.output();
  const auto& src = bwd ? out : p.input;
  const auto& dst = bwd ? p.input : out;
  plan.n = int(p.N);
  plan.src_d = int(src[0]), plan.src_h = int(src[1]), plan.src_w = int(src[2]);
  plan.dst_d = int(dst[0]), plan.dst_h = int(dst[1]), plan.dst_w = int(dst[2]);
  plan.z = int(p.filter[0]), plan.y = int(p.filter[1]), plan.x = int(p.filter[2]);
  plan.sd = int(p.stride[0]), plan.sh = int(p.stride[1]), plan.sw = int(p.stride[2]);
  plan.dd = int(p.dilation[0]), plan.dh = int(p.dilation[1]), plan.dw = int(p.dilation[2]);
  const auto pad = [&](int i) {
    return int(bwd ? (p.filter[i] - 1) * p.dilation[i] - p.left_pad[i] : p.left_pad[i]);
  };
  plan.pd = pad(0), plan.ph = pad(1), plan.pw = pad(2);
  plan.taps = int(p.filter_spatial()), plan.width = int(width), plan.gm = gm;
  plan.channels = p.C;
  plan.flip = bwd;
  plan.halo_pitch = channels + 8;  // 16 bytes past the channels: ldmatrix rows of consecutive pixels in other banks
  plan.weight_words = plan.taps * channels * 4;  // 8 x 8 blocks of 16-bit pairs
  plan.raw_weight_elems = plan.taps * channels * plan.width;  // the CTA's groups of GKZYXC: contiguous

  // Whole dst rows where they fit the pixel target, the rows and columns then spread evenly over the tiles
  // (28 rows by 7, not 9, 9, 9 and 1).
  const auto shape_tile = [&](int tile_h, int tile_w) {
    set_halo_tile(plan, tile_h, tile_w);
    plan.halo_elems = plan.halo_d * plan.halo_h * plan.halo_w * plan.halo_pitch;
    plan.staging_offset = (size_t(plan.weight_words) * 4 + size_t(stages) * size_t(plan.halo_elems) * 2 +
                           size_t(2 * plan.pixels16 + plan.taps) * 4 + 15) / 16 * 16;
    plan.smem_bytes = plan.staging_offset + std::max(size_t(plan.raw_weight_elems) * 2,
                                                     size_t(warps) * 16 * (channels + 8) * 2);
    plan.tiles_h = (plan.dst_h + tile_h - 1) / tile_h;
    plan.tiles_w = (plan.dst_w + tile_w - 1) / tile_w;
    return plan.smem_bytes <= smem_limit;
  };
  const int tile_w = std::min(plan.dst_w, std::max(tile_pixels, 16));
  int tile_h = std::min(plan.dst_h, std::max(1, tile_pixels / tile_w));
  while (!shape_tile(tile_h, tile_w)) {
    if (--tile_h == 0) return false;
  }
  shape_tile((plan.dst_h + plan.tiles_h - 1) / plan.tiles_h, (plan.dst_w + plan.tiles_w - 1) / plan.tiles_w);
  const int64_t tiles = int64_t(plan.n) * plan.dst_d * plan.tiles_h * plan.tiles_w;
  if (tiles > kLimit) return false;
  plan.tiles = int(tiles);
  plan.ctas = 1;
  plan.by_tiles_w = FastDivisor::of(uint32_t(plan.tiles_w));
  plan.by_tiles_h = FastDivisor::of(uint32_t(plan.tiles_h));
  plan.by_dst_d = FastDivisor::of(uint32_t(plan.dst_d));
  return true;
}

// CTAs a group block: the `resident` CTAs the GPU holds at once spread over the G / gm group blocks, at most
// one a tile.
inline void merged_group_direct_grid(MergedGroupDirectPlan& plan, int64_t groups, int64_t resident) {
  const int64_t blocks = groups / plan.gm;
  plan.ctas = int(std::max<int64_t>(1, std::min<int64_t>(plan.tiles, resident / blocks)));
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

// Grid: (plan.ctas, G / gm); kChannels = gm x C/G. Every dst element of the CTA's groups in its tiles is written.
template <DataType kDataType, int kThreads, int kChannels, int kStages,
          class Element = typename ElementTypes<kDataType>::Global>
__global__ void __launch_bounds__(kThreads)
    merged_group_direct_kernel(const MergedGroupDirectPlan plan, const Element* __restrict__ src,
                               const Element* __restrict__ weight, Element* __restrict__ dst) {
  using Mma = typename MmaOp<kDataType, 8>::type;  // m16n8k8: one diagonal block of 8 channels
  static_assert(kChannels % 16 == 0, "whole ldmatrix rows of 16 channels");
  static_assert(kStages >= 2, "a ring of at least two halo stages");
  constexpr int kWarps = kThreads / 32;
  constexpr int kBlocks = kChannels / 8;   // diagonal blocks of 8 channels
  constexpr int kVectors = kChannels / 8;  // 16-byte vectors of a pixel
  static_assert(kThreads % kVectors == 0, "a thread copies one vector of every pixel it copies");
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  uint32_t* weight_smem = reinterpret_cast<uint32_t*>(smem_bytes);
  Element* halo_stages = reinterpret_cast<Element*>(weight_smem + plan.weight_words);
  Element* raw_weight = reinterpret_cast<Element*>(smem_bytes + plan.staging_offset);
  int* halo_row = reinterpret_cast<int*>(halo_stages + size_t(kStages) * plan.halo_elems);
  int* tile_pos = halo_row + plan.pixels16;  // (row << 16) | column of each tile pixel; past the tile, no row
  int* tap_shift = tile_pos + plan.pixels16;
  constexpr int kStagePitch = kChannels + 8;  // a staged pixel's elements: the 4-byte writes miss each other's banks
  uint32_t* staging = reinterpret_cast<uint32_t*>(smem_bytes + plan.staging_offset) +
                      (int(threadIdx.x) / 32) * (16 * kStagePitch / 2);

  const int g0 = int(blockIdx.y) * plan.gm;
  const int first = int(blockIdx.x);
  const int count = first < plan.tiles ? (plan.tiles - first + plan.ctas - 1) / plan.ctas : 0;

  // The CTA's weights as they are (contiguous in GKZYXC), the first copy group.
  {
    const Element* from = weight + int64_t(g0) * plan.width * plan.taps * plan.width;
    for (int v = int(threadIdx.x); v < plan.raw_weight_elems / 8; v += kThreads) {
      cute::SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>::copy(
          *reinterpret_cast<const cute::uint128_t*>(from + v * 8),
          *reinterpret_cast<cute::uint128_t*>(raw_weight + v * 8));
    }
    cute::cp_async_fence();
  }

  // The halo copies: a thread moves one 16-byte vector of a pixel's channels and walks the pixels kThreads /
  // kVectors apart, its coordinates advanced by carries; zero fill outside src.
  const int halo_plane = plan.halo_h * plan.halo_w, halo_pixels = plan.halo_d * halo_plane;
  const int c8 = int(threadIdx.x) % kVectors, pixel0 = int(threadIdx.x) / kVectors;
  constexpr int kPixelStep = kThreads / kVectors;
  const int step_z = kPixelStep / halo_plane, step_y = kPixelStep / plan.halo_w % plan.halo_h;
  const int step_x = kPixelStep % plan.halo_w;
  const Element* src_channels = src + int64_t(g0) * plan.width + c8 * 8;
  const auto tile_origin = [&](int tile, int& n, int& od, int& row0, int& col0) {
    uint32_t wb, hb, d;
    const uint32_t nd = plan.by_tiles_h.divide(plan.by_tiles_w.divide(uint32_t(tile), wb), hb);
    n = int(plan.by_dst_d.divide(nd, d)), od = int(d);
    row0 = int(hb) * plan.tile_h, col0 = int(wb) * plan.tile_w;
  };
  // The thread's first halo pixel and its offset in the image from the window's corner, the same every tile;
  // the walk's steps in the image (a step, and the carries into the next row and plane).
  const int hz0 = pixel0 / halo_plane, hy0 = pixel0 / plan.halo_w % plan.halo_h, hx0 = pixel0 % plan.halo_w;
  const int src_plane = plan.src_h * plan.src_w;
  const int at0 = (hz0 * plan.src_h + hy0) * plan.src_w + hx0;
  const int step_at = step_z * src_plane + step_y * plan.src_w + step_x;
  const int carry_x = plan.src_w - plan.halo_w, carry_y = src_plane - plan.halo_h * plan.src_w;
  const auto load_stage = [&](int tile, int stage) {
    int n, od, row0, col0;
    tile_origin(tile, n, od, row0, col0);
    const int id0 = od * plan.sd - plan.pd, ih0 = row0 * plan.sh - plan.ph, iw0 = col0 * plan.sw - plan.pw;
    const Element* image = src_channels + int64_t(n) * plan.src_d * src_plane * plan.channels;
    int hz = hz0, hy = hy0, hx = hx0;
    int at = (id0 * plan.src_h + ih0) * plan.src_w + iw0 + at0;  // the pixel's index in the image
    Element* to = halo_stages + size_t(stage) * plan.halo_elems + c8 * 8 + pixel0 * plan.halo_pitch;
    for (int pixel = pixel0; pixel < halo_pixels; pixel += kPixelStep) {
      const int id = id0 + hz, ih = ih0 + hy, iw = iw0 + hx;
      const bool valid = unsigned(id) < unsigned(plan.src_d) && unsigned(ih) < unsigned(plan.src_h) &&
                         unsigned(iw) < unsigned(plan.src_w);
      cute::SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<cute::uint128_t>::copy(
          *reinterpret_cast<const cute::uint128_t*>(valid ? image + int64_t(at) * plan.channels : src),
          *reinterpret_cast<cute::uint128_t*>(to), valid);
      to += kPixelStep * plan.halo_pitch;
      hx += step_x, hy += step_y, hz += step_z, at += step_at;
      if (hx >= plan.halo_w) hx -= plan.halo_w, ++hy, at += carry_x;
      if (hy >= plan.halo_h) hy -= plan.halo_h, ++hz, at += carry_y;
    }
  };
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < count) load_stage(first + s * plan.ctas, s);
    cute::cp_async_fence();
  }

  // The weights in fragment order, once, a warp per (tap, block): word (tap, block, lane) holds B rows k, k + 1
  // of column n of the block (m16n8k8: k = 2 (lane % 4), n = lane / 4), zero across groups.
  cute::cp_async_wait<kStages - 1>();
  __syncthreads();
  {
    const int lane = int(threadIdx.x) % 32, shift = __ffs(plan.width) - 1;  // widths are powers of two
    const uint16_t* bits = reinterpret_cast<const uint16_t*>(raw_weight);
    for (int item = int(threadIdx.x) / 32; item < plan.taps * kBlocks; item += kWarps) {
      const int tap = item / kBlocks, block = item % kBlocks;
      const int k = block * 8 + 2 * (lane % 4), nn = block * 8 + lane / 4;
      uint32_t word = 0;
      if (k >> shift == nn >> shift) {  // inside one group (k, k + 1 share it: widths are even)
        if (!plan.flip) {  // B[c][k] = W[g][k][tap][c]: c = k, k + 1 adjacent
          const int at = (nn * plan.taps + tap) * plan.width + (k & (plan.width - 1));
          word = uint32_t(bits[at]) | uint32_t(bits[at + 1]) << 16;
        } else {  // B[k][c] = W[g][k][flipped tap][c]: k, k + 1 a filter apart
          const int at = (k * plan.taps + (plan.taps - 1 - tap)) * plan.width + (nn & (plan.width - 1));
          word = uint32_t(bits[at]) | uint32_t(bits[at + plan.taps * plan.width]) << 16;
        }
      }
      weight_smem[item * 32 + lane] = word;
    }
  }
  // Each dst pixel of a tile as a halo pixel before the tap's shift (pixels past the tile read pixel 0), and each
  // tap's shift in elements.
  const int tile_pixels = plan.tile_h * plan.tile_w;
  for (int p = int(threadIdx.x); p < plan.pixels16; p += kThreads) {
    const int th = p / plan.tile_w, tw = p % plan.tile_w;
    halo_row[p] = p < tile_pixels ? th * plan.sh * plan.halo_w + tw * plan.sw : 0;
    tile_pos[p] = p < tile_pixels ? th << 16 | tw : 0x7fff << 16;
  }
  for (int tap = int(threadIdx.x); tap < plan.taps; tap += kThreads) {
    const int tz = tap / (plan.y * plan.x), ty = tap / plan.x % plan.y, tx = tap % plan.x;
    tap_shift[tap] = ((tz * plan.dd * plan.halo_h + ty * plan.dh) * plan.halo_w + tx * plan.dw) * plan.halo_pitch;
  }

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  Element* group_dst = dst + int64_t(g0) * plan.width;
  for (int i = 0; i < count; ++i) {
    cute::cp_async_wait<kStages - 2>();
    __syncthreads();  // tile i arrived everywhere, and every warp is done with the stage the next copy refills
    if (i + kStages - 1 < count) load_stage(first + (i + kStages - 1) * plan.ctas, (i + kStages - 1) % kStages);
    cute::cp_async_fence();
    const Element* halo = halo_stages + size_t(i % kStages) * plan.halo_elems;
    int n, od, row0, col0;
    tile_origin(first + i * plan.ctas, n, od, row0, col0);
    const int rows = min(plan.tile_h, plan.dst_h - row0), cols = min(plan.tile_w, plan.dst_w - col0);
    Element* tile_dst =
        group_dst + (((int64_t(n) * plan.dst_d + od) * plan.dst_h + row0) * plan.dst_w + col0) * plan.channels;
    for (int chunk = warp; chunk * 16 < plan.pixels16; chunk += kWarps) {
      float acc[kChannels / 8][4] = {};
      const Element* a_base = halo + halo_row[chunk * 16 + (lane & 15)] * plan.halo_pitch + (lane >> 4) * 8;
      for (int tap = 0; tap < plan.taps; ++tap) {
        const Element* a_pixel = a_base + tap_shift[tap];
        const uint32_t* b_tap = weight_smem + tap * (kBlocks * 32) + lane;
#pragma unroll
        for (int c16 = 0; c16 < kChannels / 16; ++c16) {
          uint32_t a[4];
          cute::SM75_U32x4_LDSM_N::copy(*reinterpret_cast<const cute::uint128_t*>(a_pixel + c16 * 16), a[0], a[1],
                                        a[2], a[3]);
#pragma unroll
          for (int h = 0; h < 2; ++h) {  // channels 0-7 of the 16 in a[0..1], 8-15 in a[2..3]
            float* d = acc[2 * c16 + h];
            Mma::fma(d[0], d[1], d[2], d[3], a[2 * h], a[2 * h + 1], b_tap[(2 * c16 + h) * 32], d[0], d[1], d[2],
                     d[3]);
          }
        }
      }
      // Accumulator (m, n) of m16n8: rows (pixels) lane / 4 and + 8, columns 2 (lane % 4) and + 1. Staged
      // through the warp's 16 pixels of shared memory, stored as 16-byte vectors of whole pixel rows.
#pragma unroll
      for (int t = 0; t < kChannels / 8; ++t) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          staging[((lane / 4 + 8 * half) * kStagePitch + t * 8) / 2 + lane % 4] =
              pack_pair<kDataType>(acc[t][2 * half], acc[t][2 * half + 1]);
        }
      }
      __syncwarp();
#pragma unroll
      for (int v = lane; v < 16 * kVectors; v += 32) {
        const int pos = tile_pos[chunk * 16 + v / kVectors], th = pos >> 16, tw = pos & 0xffff;
        if (th < rows && tw < cols) {
          *reinterpret_cast<uint4*>(tile_dst + int64_t(th * plan.dst_w + tw) * plan.channels + (v % kVectors) * 8) =
              *reinterpret_cast<const uint4*>(staging + ((v / kVectors) * kStagePitch + (v % kVectors) * 8) / 2);
        }
      }
      __syncwarp();
    }
  }
  cute::cp_async_wait<0>();
}

}  // namespace tiledispatch::kernels
