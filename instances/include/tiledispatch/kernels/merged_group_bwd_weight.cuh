// Backward weight for merged small groups (issue 10, F3; docs/pipelines.md, "merged groups, bwd_weight"): a
// CTA owns num_groups_to_merge whole groups and reads each pixel tile once, all its channels, then multiplies
// every tap from shared memory. The implicit GEMM instead reads the input once per tap (through L2) and, where
// the groups are merged, computes the gm x gm block product and keeps its diagonal.
//
//   gmem dY --(cp.async 16 B, zero fill)--> smem dY tile: P pixels x Kc channels (the CTA's groups)
//   gmem X  --(cp.async 16 B, zero fill = padding)--> smem X halo: the input window of those P pixels, Cc channels
//   per step and warp: dY^T fragments once (ldmatrix.trans), then per tap the shifted X window (ldmatrix.trans
//   with one row address per pixel) and mma.sync m16n8k16 into per-chain accumulators, added into fp32 sums
//
// A step is a tile of tile_h x tile_w output pixels of one (n, do), sized so that a stage holds about
// kStageBytes (small stages leave the copies' latency exposed); a warp's work item is one 16 x 16 block of the
// CTA's (Kc x Cc) gradient that meets a diagonal group block, for a chunk of at most kMaxTaps taps. Blocks off
// the diagonal are never computed; inside a block, rows and columns of other groups (C/G or K/G below 16) are
// the MMA's granularity and are discarded. Each MMA chain (kChainPixels / 16 MMAs) starts from zero and is
// added to the sums with a round-to-nearest FADD, so long reductions carry no round-toward-zero bias
// (docs/pipelines.md, "Accumulation"). Split-K splits the steps; every split writes its whole fp32 slice, which
// reduce_partials_kernel sums in a fixed order.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include <cute/arch/copy_sm80.hpp>
#include <cute/arch/mma_sm80.hpp>

#include "tiledispatch/kernels/fast_division.hpp"
#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::kernels {

struct MergedGroupBwdWeightPlan {
  static constexpr int kMaxBlocks = 64;  // 16 x 16 blocks of one CTA's (Kc x Cc) gradient that meet a group
  static constexpr int kMaxTaps = 9;     // taps of one work item: 9 x 8 fp32 sums a thread
  static constexpr int kTapBatch = 3;    // taps whose MMA chains a warp interleaves
  static constexpr int kStageBytes = 24 * 1024;  // the pixel tile's target: four stages leave room for two CTAs
  // problem (pixel counts below 2^31: make_merged_group_bwd_weight_plan checks)
  int n, di, hi, wi, do_, ho, wo;
  int z, y, x, sd, sh, sw, pd, ph, pw, dd, dh, dw;
  int64_t c, k;
  int cg, kg, taps, gm, cc, kc;
  // step tiling
  int tile_h, tile_w, halo_d, halo_h, halo_w, pixels16;
  int steps_h, steps_w, steps, steps_per_split;
  FastDivisor by_steps_w, by_steps_h, by_do;  // a step's (n, do, row block, column block)
  int k_batch;
  // work items: blocks x tap chunks, kWarps a CTA
  int blocks_count, tap_chunks, chunk_taps, items;  // an item's taps: [chunk x chunk_taps, + chunk_taps) in taps
  uint16_t blocks[kMaxBlocks];  // (m block << 8) | n block
  // shared memory, in elements: per stage the dY tile, then the X halo
  int dy_pitch, x_pitch, stage_elems;
  size_t smem_bytes;
};

// The plan of `p` for a CTA of `warps` warps and `stages` stages whose MMA chains are `chain_pixels` long (the
// smallest pixel tile). False where the kernel cannot run it: channel runs of the merged groups not a multiple
// of 8 (16-byte copies and ldmatrix rows), too many blocks, 2^31 pixels or more, or no tile whose stages fit
// `smem_limit` bytes.
inline bool make_merged_group_bwd_weight_plan(const ConvProblem& p, int gm, int warps, int stages, int chain_pixels,
                                              size_t smem_limit, int k_batch, MergedGroupBwdWeightPlan& plan) {
  plan = MergedGroupBwdWeightPlan{};
  if (p.G % gm != 0 || chain_pixels < 16) return false;
  const int64_t cg = p.C / p.G, kg = p.K / p.G;
  if ((gm * cg) % 8 != 0 || (gm * kg) % 8 != 0 || gm * cg > 128 || gm * kg > 128) return false;
  const auto out = p.output();
  constexpr int64_t kLimit = int64_t(INT32_MAX);
  if (p.N * p.input_spatial() > kLimit || p.N * p.output_spatial() > kLimit) return false;
  plan.n = int(p.N);
  plan.di = int(p.input[0]), plan.hi = int(p.input[1]), plan.wi = int(p.input[2]);
  plan.do_ = int(out[0]), plan.ho = int(out[1]), plan.wo = int(out[2]);
  plan.z = int(p.filter[0]), plan.y = int(p.filter[1]), plan.x = int(p.filter[2]);
  plan.sd = int(p.stride[0]), plan.sh = int(p.stride[1]), plan.sw = int(p.stride[2]);
  plan.pd = int(p.left_pad[0]), plan.ph = int(p.left_pad[1]), plan.pw = int(p.left_pad[2]);
  plan.dd = int(p.dilation[0]), plan.dh = int(p.dilation[1]), plan.dw = int(p.dilation[2]);
  plan.c = p.C, plan.k = p.K;
  plan.cg = int(cg), plan.kg = int(kg), plan.taps = int(p.filter_spatial()), plan.gm = gm;
  plan.cc = int(gm * cg), plan.kc = int(gm * kg);
  // Row pitches 16 bytes longer than the channels: ldmatrix rows of consecutive pixels fall in different
  // banks, and a 16-row block that runs past the last channel stays inside its row.
  plan.dy_pitch = plan.kc + 8, plan.x_pitch = plan.cc + 8;

  for (int mb = 0; mb * 16 < plan.kc; ++mb) {
    for (int nb = 0; nb * 16 < plan.cc; ++nb) {
      const int m_first = mb * 16 / plan.kg, m_last = (std::min(mb * 16 + 15, plan.kc - 1)) / plan.kg;
      const int n_first = nb * 16 / plan.cg, n_last = (std::min(nb * 16 + 15, plan.cc - 1)) / plan.cg;
      if (m_last < n_first || n_last < m_first) continue;
      if (plan.blocks_count == MergedGroupBwdWeightPlan::kMaxBlocks) return false;
      plan.blocks[plan.blocks_count++] = uint16_t((mb << 8) | nb);
    }
  }
  // Tap chunks: at most kMaxTaps taps an item, enough chunks that the CTA's warps all have one, and whole tap
  // batches in each where the filter has that many taps (9 taps in two chunks: 6 and 3, not 5 and 4, which
  // batches of 3 would pad to 12 MMA chains).
  constexpr int kMaxTaps = MergedGroupBwdWeightPlan::kMaxTaps, kTapBatch = MergedGroupBwdWeightPlan::kTapBatch;
  const int min_chunks = (plan.taps + kMaxTaps - 1) / kMaxTaps;
  const int fill_chunks = (warps + plan.blocks_count - 1) / plan.blocks_count;
  const int chunks = std::max(min_chunks, fill_chunks), balanced = (plan.taps + chunks - 1) / chunks;
  const int whole_batches = (balanced + kTapBatch - 1) / kTapBatch * kTapBatch;
  plan.chunk_taps = plan.taps < kTapBatch ? balanced : std::min(kMaxTaps, whole_batches);
  plan.tap_chunks = (plan.taps + plan.chunk_taps - 1) / plan.chunk_taps;
  plan.items = plan.blocks_count * plan.tap_chunks;

  // The pixel tile: whole output rows where they fit (tile_w = Wo), as many as a stage of about kStageBytes
  // holds (at least one MMA chain); fewer rows where the stages would not fit the shared memory.
  const int pixel_bytes = 2 * (plan.dy_pitch + plan.x_pitch);
  const int tile_pixels_target = std::max(chain_pixels, MergedGroupBwdWeightPlan::kStageBytes / pixel_bytes);
  const auto shape_tile = [&](int tile_h, int tile_w) {
    plan.tile_h = tile_h, plan.tile_w = tile_w;  // reading a window (halo) of the input at the filter's reach
    plan.halo_d = (plan.z - 1) * plan.dd + 1;
    plan.halo_h = (tile_h - 1) * plan.sh + (plan.y - 1) * plan.dh + 1;
    plan.halo_w = (tile_w - 1) * plan.sw + (plan.x - 1) * plan.dw + 1;
    plan.pixels16 = (tile_h * tile_w + 15) / 16 * 16;  // the MMA's 16 rows
    plan.stage_elems = plan.pixels16 * plan.dy_pitch + plan.halo_d * plan.halo_h * plan.halo_w * plan.x_pitch;
    // the stages, then the halo offset of each pixel of the tile (int32)
    plan.smem_bytes = size_t(stages) * size_t(plan.stage_elems) * 2 + size_t(plan.pixels16) * 4;
    plan.steps_h = (plan.ho + tile_h - 1) / tile_h;
    plan.steps_w = (plan.wo + tile_w - 1) / tile_w;
    return plan.smem_bytes <= smem_limit;
  };
  const int tile_w = std::min(plan.wo, tile_pixels_target);
  int tile_h = std::min(plan.ho, std::max(1, tile_pixels_target / tile_w));
  while (!shape_tile(tile_h, tile_w)) {
    if (--tile_h == 0) return false;
  }
  // The same number of steps with the rows and columns spread evenly: 28 rows by 7, not 9, 9, 9 and 1.
  shape_tile((plan.ho + plan.steps_h - 1) / plan.steps_h, (plan.wo + plan.steps_w - 1) / plan.steps_w);
  plan.steps = plan.n * plan.do_ * plan.steps_h * plan.steps_w;  // at most N x Do x Ho x Wo
  plan.by_steps_w = FastDivisor::of(uint32_t(plan.steps_w));
  plan.by_steps_h = FastDivisor::of(uint32_t(plan.steps_h));
  plan.by_do = FastDivisor::of(uint32_t(plan.do_));
  plan.k_batch = std::max(k_batch, 1);
  plan.steps_per_split = (plan.steps + plan.k_batch - 1) / plan.k_batch;
  return true;
}

// ldmatrix .x4 .trans at a shared-memory byte address: the loops keep 32-bit addresses (a base per pixel chunk
// plus a tap's shift), not generic pointers converted at every load.
__device__ inline void ldmatrix_x4_trans(uint32_t address, uint32_t (&fragment)[4]) {
  asm volatile("ldmatrix.sync.aligned.x4.trans.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
               : "r"(address));
}

// Grid: (k_batch, ceil(items / warps), G / gm); kChainPixels = tile_k. `partial` (k_batch fp32 slices of the
// weight gradient) or `weight` receives every element of the CTA's groups.
template <class Element, class Mma, int kThreads, int kStages, int kChainPixels>
__global__ void __launch_bounds__(kThreads)
    merged_group_bwd_weight_kernel(const MergedGroupBwdWeightPlan plan, const Element* __restrict__ input,
                                   const Element* __restrict__ output_grad, Element* __restrict__ weight,
                                   float* __restrict__ partial) {
  constexpr int kWarps = kThreads / 32;
  constexpr int kMaxTaps = MergedGroupBwdWeightPlan::kMaxTaps;
  constexpr int kMaxChunks = kChainPixels / 16;
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  Element* smem = reinterpret_cast<Element*>(smem_bytes);

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int g0 = int(blockIdx.z) * plan.gm;
  const int split = int(blockIdx.x);
  const int first_step = split * plan.steps_per_split;
  const int count = max(0, min(plan.steps, first_step + plan.steps_per_split) - first_step);

  const int item = int(blockIdx.y) * kWarps + warp;
  const bool active = item < plan.items;
  const int block = active ? plan.blocks[item / plan.tap_chunks] : 0;
  const int mb = block >> 8, nb = block & 0xFF;
  const int chunk = item % plan.tap_chunks;
  const int tap0 = chunk * plan.chunk_taps;
  const int ntaps = active ? min(plan.chunk_taps, plan.taps - tap0) : 0;
  const int halo_plane = plan.halo_h * plan.halo_w;
  // Taps in batches of kTapBatch whose MMA chains interleave (independent accumulators hide the MMA latency);
  // a batch's slots past the item's taps repeat its last tap and are not kept.
  constexpr int kTapBatch = MergedGroupBwdWeightPlan::kTapBatch;
  constexpr int kBatchedTaps = (kMaxTaps + kTapBatch - 1) / kTapBatch * kTapBatch;
  uint32_t tap_bytes[kBatchedTaps];  // a tap's shift in the halo, in bytes
#pragma unroll
  for (int j = 0; j < kBatchedTaps; ++j) {
    const int t = max(0, min(tap0 + min(j, ntaps - 1), plan.taps - 1));
    const int tz = t / (plan.y * plan.x), ty = (t / plan.x) % plan.y, tx = t % plan.x;
    tap_bytes[j] = uint32_t((tz * plan.dd * halo_plane + ty * plan.dh * plan.halo_w + tx * plan.dw) * plan.x_pitch *
                            int(sizeof(Element)));
  }

  // Each pixel of the tile as a halo pixel before the tap's shift, in bytes (pixels past the tile read pixel
  // 0, a real one: their dY rows are zero). The same for every step.
  const int tile_pixels = plan.tile_h * plan.tile_w;
  uint32_t* halo_row = reinterpret_cast<uint32_t*>(smem_bytes + size_t(kStages) * plan.stage_elems * sizeof(Element));
  for (int p = int(threadIdx.x); p < plan.pixels16; p += kThreads) {
    const int pixel = p < tile_pixels ? (p / plan.tile_w) * plan.sh * plan.halo_w + (p % plan.tile_w) * plan.sw : 0;
    halo_row[p] = uint32_t(pixel * plan.x_pitch * int(sizeof(Element)));
  }

  // The copies: a thread moves one 16-byte vector of a pixel's channels and walks the pixels kThreads / vectors
  // apart, its coordinates advanced by carries (no division per copy).
  const int dy_vectors = plan.kc / 8, dy_pixel_step = kThreads / dy_vectors;
  const int dy_c8 = int(threadIdx.x) % dy_vectors, dy_first = int(threadIdx.x) / dy_vectors;
  const int dy_dh = dy_pixel_step / plan.tile_w, dy_dw = dy_pixel_step % plan.tile_w;
  const int x_vectors = plan.cc / 8, x_pixel_step = kThreads / x_vectors;
  const int x_c8 = int(threadIdx.x) % x_vectors, x_first = int(threadIdx.x) / x_vectors;
  const int x_dz = x_pixel_step / halo_plane, x_dy = x_pixel_step / plan.halo_w % plan.halo_h;
  const int x_dx = x_pixel_step % plan.halo_w;
  const int halo_pixels = plan.halo_d * halo_plane;
  const Element* dy_channels = output_grad + int64_t(g0) * plan.kg + dy_c8 * 8;
  const Element* x_channels = input + int64_t(g0) * plan.cg + x_c8 * 8;

  // The walks' steps in the tensors' pixel indices (a step, and the carries into the next row and plane).
  const int dy_step_at = dy_dh * plan.wo + dy_dw, dy_carry = plan.wo - plan.tile_w;
  const int x_plane = plan.hi * plan.wi;
  const int x_step_at = x_dz * x_plane + x_dy * plan.wi + x_dx;
  const int x_carry_w = plan.wi - plan.halo_w, x_carry_h = x_plane - plan.halo_h * plan.wi;
  const uint32_t k_stride = uint32_t(plan.k), c_stride = uint32_t(plan.c);  // channels a pixel, below 2^31
  // the thread's first pixel of every step: in the dY tile and in the halo
  const int dy_th0 = dy_first / plan.tile_w, dy_tw0 = dy_first % plan.tile_w;
  const int x_hz0 = x_first / halo_plane, x_hy0 = x_first / plan.halo_w % plan.halo_h, x_hx0 = x_first % plan.halo_w;

  auto load_stage = [&](int step, int stage) {
    Element* dy_tile = smem + size_t(stage) * plan.stage_elems;
    Element* x_halo = dy_tile + plan.pixels16 * plan.dy_pitch;
    uint32_t wb, hb, od;
    const int n = int(plan.by_do.divide(plan.by_steps_h.divide(plan.by_steps_w.divide(uint32_t(step), wb), hb), od));
    const int row0 = int(hb) * plan.tile_h, col0 = int(wb) * plan.tile_w;
    const int rows = min(plan.tile_h, plan.ho - row0), cols = min(plan.tile_w, plan.wo - col0);
    if (dy_first < dy_pixel_step) {
      int th = dy_th0, tw = dy_tw0;
      int at = ((n * plan.do_ + int(od)) * plan.ho + row0 + th) * plan.wo + col0 + tw;
      for (int p = dy_first; p < plan.pixels16; p += dy_pixel_step) {
        const bool valid = th < rows && tw < cols;  // pixels past the tile have th >= tile_h
        const Element* src = valid ? dy_channels + uint64_t(uint32_t(at)) * k_stride : output_grad;
        cute::SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<cute::uint128_t>::copy(
            *reinterpret_cast<const cute::uint128_t*>(src),
            *reinterpret_cast<cute::uint128_t*>(dy_tile + p * plan.dy_pitch + dy_c8 * 8), valid);
        tw += dy_dw, th += dy_dh, at += dy_step_at;
        if (tw >= plan.tile_w) tw -= plan.tile_w, ++th, at += dy_carry;
      }
    }
    if (x_first < x_pixel_step) {
      const int id0 = int(od) * plan.sd - plan.pd, ih0 = row0 * plan.sh - plan.ph, iw0 = col0 * plan.sw - plan.pw;
      int hz = x_hz0, hy = x_hy0, hx = x_hx0;
      int at = ((n * plan.di + id0 + hz) * plan.hi + ih0 + hy) * plan.wi + iw0 + hx;  // may start outside
      for (int p = x_first; p < halo_pixels; p += x_pixel_step) {
        const int id = id0 + hz, ih = ih0 + hy, iw = iw0 + hx;
        const bool valid = unsigned(id) < unsigned(plan.di) && unsigned(ih) < unsigned(plan.hi) &&
                           unsigned(iw) < unsigned(plan.wi);
        const Element* src = valid ? x_channels + uint64_t(uint32_t(at)) * c_stride : input;
        cute::SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<cute::uint128_t>::copy(
            *reinterpret_cast<const cute::uint128_t*>(src),
            *reinterpret_cast<cute::uint128_t*>(x_halo + p * plan.x_pitch + x_c8 * 8), valid);
        hx += x_dx, hy += x_dy, hz += x_dz, at += x_step_at;
        if (hx >= plan.halo_w) hx -= plan.halo_w, ++hy, at += x_carry_w;
        if (hy >= plan.halo_h) hy -= plan.halo_h, ++hz, at += x_carry_h;
      }
    }
  };

  float sums[kBatchedTaps][2][4] = {};
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < count) load_stage(first_step + s, s);
    cute::cp_async_fence();
  }
  const int a_channel = mb * 16 + ((lane >> 3) & 1) * 8, b_channel = nb * 16 + (lane >> 4) * 8;
  const int a_lane_pixel = (lane & 7) + ((lane >> 4) << 3), b_lane_pixel = (lane & 7) + ((lane >> 3) & 1) * 8;
  const uint32_t smem_base = uint32_t(__cvta_generic_to_shared(smem));
  for (int i = 0; i < count; ++i) {
    cute::cp_async_wait<kStages - 2>();
    __syncthreads();
    if (i + kStages - 1 < count) load_stage(first_step + i + kStages - 1, (i + kStages - 1) % kStages);
    cute::cp_async_fence();
    if (!active) continue;
    // shared-memory byte addresses of this lane's A row and B channels in the stage
    const uint32_t dy_tile = smem_base + uint32_t(size_t(i % kStages) * plan.stage_elems * sizeof(Element));
    const uint32_t x_halo = dy_tile + uint32_t(plan.pixels16 * plan.dy_pitch * int(sizeof(Element)));
    const uint32_t a_lane = dy_tile + uint32_t((a_lane_pixel * plan.dy_pitch + a_channel) * int(sizeof(Element)));
    const uint32_t b_lane = x_halo + uint32_t(b_channel * int(sizeof(Element)));
    for (int chain = 0; chain < plan.pixels16; chain += kChainPixels) {
      const int chunks = min(kMaxChunks, (plan.pixels16 - chain) / 16);
      // dY^T (m = output channel, k = pixel) of every 16-pixel chunk of the chain: rows are pixels, transposed.
      uint32_t a[kMaxChunks][4];
      uint32_t b_row[kMaxChunks];  // this lane's B pixel of each chunk in the halo (address)
#pragma unroll
      for (int kk = 0; kk < kMaxChunks; ++kk) {
        if (kk >= chunks) break;
        ldmatrix_x4_trans(a_lane + uint32_t((chain + kk * 16) * plan.dy_pitch * int(sizeof(Element))), a[kk]);
        b_row[kk] = b_lane + halo_row[chain + kk * 16 + b_lane_pixel];
      }
#pragma unroll
      for (int j0 = 0; j0 < kMaxTaps; j0 += kTapBatch) {
        if (j0 >= ntaps) break;
        float chain_sums[kTapBatch][2][4] = {};
#pragma unroll
        for (int kk = 0; kk < kMaxChunks; ++kk) {
          if (kk >= chunks) break;
#pragma unroll
          for (int jj = 0; jj < kTapBatch; ++jj) {
            uint32_t b[4];
            ldmatrix_x4_trans(b_row[kk] + tap_bytes[j0 + jj], b);
#pragma unroll
            for (int nt = 0; nt < 2; ++nt) {
              float* d = chain_sums[jj][nt];
              Mma::fma(d[0], d[1], d[2], d[3], a[kk][0], a[kk][1], a[kk][2], a[kk][3], b[2 * nt], b[2 * nt + 1],
                       d[0], d[1], d[2], d[3]);
            }
          }
        }
#pragma unroll
        for (int jj = 0; jj < kTapBatch; ++jj) {
#pragma unroll
          for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) sums[j0 + jj][nt][e] += chain_sums[jj][nt][e];
          }
        }
      }
    }
  }
  cute::cp_async_wait<0>();
  if (!active) return;

  // Accumulator (m, n) of m16n8: rows lane/4 and +8, columns 2 (lane % 4) and +1. Keep the diagonal blocks:
  // each element's offset in the gradient without its tap, or -1 off the diagonal and past the channels.
  int64_t offset[2][2][2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = mb * 16 + lane / 4 + h * 8, m_group = m / plan.kg;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = nb * 16 + nt * 8 + 2 * (lane % 4) + e, col_group = col / plan.cg;
        const bool kept = m < plan.kc && col < plan.cc && m_group == col_group;
        offset[h][nt][e] = kept ? (int64_t(g0) * plan.kg + m) * plan.taps * plan.cg + (col - col_group * plan.cg)
                                : -1;
      }
    }
  }
  float* slice = partial != nullptr ? partial + int64_t(split) * (plan.k * plan.taps * plan.cg) : nullptr;
#pragma unroll
  for (int j = 0; j < kMaxTaps; ++j) {
    if (j >= ntaps) break;
    const int64_t tap = int64_t(tap0 + j) * plan.cg;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t base = offset[e >> 1][nt][e & 1];
        if (base < 0) continue;
        if (slice != nullptr) {
          slice[base + tap] = sums[j][nt][e];
        } else {
          weight[base + tap] = Element(sums[j][nt][e]);
        }
      }
    }
  }
}

}  // namespace tiledispatch::kernels
