// Backward weight for merged small groups (issue 10, F3; docs/pipelines.md, "merged groups, bwd_weight"): a
// CTA owns num_groups_to_merge whole groups and reads each pixel tile once, all its channels, then multiplies
// every tap from shared memory. The implicit GEMM instead reads the input once per tap (through L2) and, where
// the groups are merged, computes the gm x gm block product and keeps its diagonal.
//
//   gmem dY --(TMA box, zero fill)--> smem dY tile: P pixels x Kc channels (the CTA's groups, and 8 more where
//                                     the row needs them)
//   gmem X  --(TMA box, zero fill = padding)--> smem X halo: the input window of those P pixels, Cc (+ 8) channels
//   per step and warp: dY^T fragments once (ldmatrix.trans), then per tap the shifted X window (ldmatrix.trans
//   with one row address per pixel) and mma.sync m16n8k16 into per-chain accumulators, added into fp32 sums
//   (fp32: TF32 m16n8k8 from 32-bit shared loads, since ldmatrix.trans moves 16-bit elements)
//
// A step is a tile of tile_h x tile_w output pixels of one (n, do), sized so that a stage holds about
// kStageBytes, or one MMA chain where a chain's pixels fill kChainStageBytes; a warp's work item is one 16 x 16
// block of the CTA's (Kc x Cc) gradient that meets a diagonal group block, for a chunk of at most kMaxTaps
// taps. Blocks off the diagonal are never computed; inside a block, rows and columns of other groups (C/G or
// K/G below 16) are the MMA's granularity and are discarded. Each MMA chain (kChainPixels / 16 MMAs) starts
// from zero and is added to the sums with a round-to-nearest FADD, so long reductions carry no round-toward-zero
// bias (docs/pipelines.md, "Accumulation"). Split-K splits the steps; every split writes its whole fp32 slice,
// which reduce_partials_kernel sums in a fixed order.
//
// One thread moves a stage as two tensor-map boxes (rank 5: channels, W, H, D, N), so the warps issue only the
// multiply. A box lands densely; ldmatrix reads 8 consecutive pixels' rows at one channel offset, which fall
// in 8 different bank groups when a row is an odd number of 16-byte chunks: where the CTA's channels make an
// even number, the box is 8 channels wider (they belong to the next group block, or lie outside the tensor
// and read zeros). fp32 lanes load single elements, pixels t and t + 4 of 8 at channels g and g + 8: rows of
// 8 or 24 words modulo 32 (8 channels wider where needed) put those 32 loads in 32 banks. A 16-channel block
// that runs past the CTA's channels reads the rest of the row or the next pixel's; no MMA result that reads
// them is kept. (TMA's 32/64/128-byte swizzles instead, with the XOR in
// every ldmatrix address, measured 20-30 % slower: docs/performance.md, session 34.)
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include <cute/arch/mma_sm80.hpp>
#include <cutlass/arch/barrier.h>

#include "tiledispatch/kernels/fast_division.hpp"
#include "tiledispatch/kernels/sm90/tma.hpp"
#include "tiledispatch/kernels/tf32.cuh"
#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::kernels {

struct MergedGroupBwdWeightPlan {
  static constexpr int kMaxBlocks = 64;  // 16 x 16 blocks of one CTA's (Kc x Cc) gradient that meet a group
  static constexpr int kMaxTaps = 9;     // taps of one work item: 9 x 8 fp32 sums a thread
  static constexpr int kTapBatch = 3;    // taps whose MMA chains a warp interleaves
  // The pixel tile's target: about kStageBytes a stage (small stages leave the boxes' latency exposed), but
  // one MMA chain where a chain's pixels take kChainStageBytes or more, where more rows measured slower (wide
  // channel runs; docs/performance.md, sessions 33 and 34).
  static constexpr int kStageBytes = 40 * 1024;
  static constexpr int kChainStageBytes = 24 * 1024;
  static constexpr int kMaxBox = 256;            // a tensor-map box's extent along each dimension
  // problem (pixel counts below 2^31: make_merged_group_bwd_weight_plan checks)
  int n, di, hi, wi, do_, ho, wo;
  int z, y, x, sd, sh, sw, pd, ph, pw, dd, dh, dw;
  int64_t c, k;
  int cg, kg, taps, gm, cc, kc;
  int group_blocks;  // CTA rows of gm groups: the last has G - (group_blocks - 1) gm
  int element_bytes;  // 2 (fp16, bf16) or 4 (fp32, multiplied as TF32)
  // step tiling
  int tile_h, tile_w, halo_d, halo_h, halo_w, pixels16;
  int steps_h, steps_w, steps, steps_per_split;
  FastDivisor by_steps_w, by_steps_h, by_do;  // a step's (n, do, row block, column block)
  int k_batch;
  // work items: blocks x tap chunks, kWarps a CTA
  int blocks_count, tap_chunks, chunk_taps, items;  // an item's taps: [chunk x chunk_taps, + chunk_taps) in taps
  uint16_t blocks[kMaxBlocks];  // (m block << 8) | n block
  // shared memory, in elements: per stage the dY tile, then the X halo (from 128-byte boundaries); after the
  // stages the halo row table and the stages' barriers
  int dy_pitch, x_pitch, halo_offset, stage_elems;
  uint32_t stage_tx_bytes;  // the bytes of a stage's two boxes
  size_t barrier_offset, smem_bytes;
};

// The stage boxes' tensor maps: the output gradient (K, Wo, Ho, Do, N) and the input (C, Wi, Hi, Di, N).
struct MergedGroupBwdWeightMaps {
  CUtensorMap output_grad;
  CUtensorMap input;
};

// The row pitch (elements) of `channels` channels in a stage: 16-bit, an odd number of 16-byte chunks
// (ldmatrix); fp32, 8 or 24 words modulo 32 (the lanes' single loads of pixels t, t + 4 at channels g, g + 8).
constexpr int merged_group_bwd_weight_row(int channels, int element_bytes) {
  return element_bytes == 2 ? sm90::conflict_free_row(channels) : channels % 16 == 8 ? channels : channels + 8;
}

// The plan of `p` for a CTA of `warps` warps and `stages` stages whose MMA chains are `chain_pixels` long (the
// smallest pixel tile), elements of `element_bytes` bytes. False where the kernel cannot run it: channel runs of
// the merged groups not a multiple of 8 (16-byte box rows and ldmatrix rows), C or K not whole 16-byte vectors,
// too many blocks, 2^31 pixels or more, a filter reach longer than a box, or no tile whose stages fit
// `smem_limit` bytes.
inline bool make_merged_group_bwd_weight_plan(const ConvProblem& p, int gm, int element_bytes, int warps, int stages,
                                              int chain_pixels, size_t smem_limit, int k_batch,
                                              MergedGroupBwdWeightPlan& plan) {
  plan = MergedGroupBwdWeightPlan{};
  plan.element_bytes = element_bytes;
  if (chain_pixels < 16) return false;
  const int64_t cg = p.C / p.G, kg = p.K / p.G;
  if ((gm * cg) % 8 != 0 || (gm * kg) % 8 != 0 || gm * cg > 128 || gm * kg > 128) return false;
  // A last block of fewer groups where gm does not divide G (RegNet's G = 13, 25, 55, ...): its boxes read
  // zeros past C and K and it writes only its groups' gradient. The tensor maps' pixel strides are 16-byte
  // multiples.
  const int64_t group_blocks = (p.G + gm - 1) / gm;
  if (group_blocks > 65535 || (p.C * element_bytes) % 16 != 0 || (p.K * element_bytes) % 16 != 0) return false;
  plan.group_blocks = int(group_blocks);
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
  plan.dy_pitch = merged_group_bwd_weight_row(plan.kc, element_bytes);
  plan.x_pitch = merged_group_bwd_weight_row(plan.cc, element_bytes);

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

  // The pixel tile: whole output rows where they fit (tile_w = Wo), as many as the stage target takes (at
  // least one MMA chain); fewer rows where the stages would not fit the shared memory.
  const int pixel_bytes = element_bytes * (plan.dy_pitch + plan.x_pitch);
  const int tile_pixels_target = chain_pixels * pixel_bytes >= MergedGroupBwdWeightPlan::kChainStageBytes
                                     ? chain_pixels
                                     : std::max(chain_pixels, MergedGroupBwdWeightPlan::kStageBytes / pixel_bytes);
  constexpr int kMaxBox = MergedGroupBwdWeightPlan::kMaxBox;
  // a filter's reach along each axis: the input window (halo) of one output pixel, at most a box
  const int reach_d = (plan.z - 1) * plan.dd + 1, reach_h = (plan.y - 1) * plan.dh + 1;
  const int reach_w = (plan.x - 1) * plan.dw + 1;
  if (std::max({reach_d, reach_h, reach_w}) > kMaxBox) return false;
  const auto shape_tile = [&](int tile_h, int tile_w) {
    plan.tile_h = tile_h, plan.tile_w = tile_w;
    plan.halo_d = reach_d;
    plan.halo_h = (tile_h - 1) * plan.sh + reach_h;
    plan.halo_w = (tile_w - 1) * plan.sw + reach_w;
    plan.pixels16 = (tile_h * tile_w + 15) / 16 * 16;  // the MMA's 16 rows
    const int halo_elems = plan.halo_d * plan.halo_h * plan.halo_w * plan.x_pitch;
    plan.halo_offset = plan.pixels16 * plan.dy_pitch;  // a multiple of 128 bytes: 16 rows of a multiple of 16
    plan.stage_elems = plan.halo_offset + (halo_elems + 63) / 64 * 64;
    plan.stage_tx_bytes = uint32_t(element_bytes * (tile_h * tile_w * plan.dy_pitch + halo_elems));
    // the stages, then the halo offset of each pixel of the tile (int32), then a barrier a stage
    plan.barrier_offset = size_t(stages) * size_t(plan.stage_elems) * element_bytes + size_t(plan.pixels16) * 4;
    plan.smem_bytes = plan.barrier_offset + size_t(stages) * sizeof(uint64_t);
    plan.steps_h = (plan.ho + tile_h - 1) / tile_h;
    plan.steps_w = (plan.wo + tile_w - 1) / tile_w;
    return plan.smem_bytes <= smem_limit && plan.halo_h <= kMaxBox;
  };
  // whole rows where they fit, and a halo row no longer than a box; fewer rows, then narrower ones (down to 16
  // pixels) where the stages do not fit
  int tile_w = std::min({plan.wo, tile_pixels_target, (kMaxBox - reach_w) / plan.sw + 1});
  int tile_h = std::min(plan.ho, std::max(1, tile_pixels_target / tile_w));
  while (!shape_tile(tile_h, tile_w)) {
    if (!sm90::shrink_direct_tile(tile_h, tile_w)) return false;
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

// The two tensor maps of `plan` over the tensors at `input` and `output_grad` (`dtype` elements). False where the
// driver refuses one.
inline bool encode_merged_group_bwd_weight_maps(const MergedGroupBwdWeightPlan& plan, DataType dtype,
                                                const void* input, const void* output_grad,
                                                MergedGroupBwdWeightMaps& maps) {
  const auto encode = [&](CUtensorMap& map, const void* base, uint64_t channels, int w, int h, int d,
                          uint32_t box_channels, int box_w, int box_h, int box_d) {
    const uint64_t extents[5] = {channels, uint64_t(w), uint64_t(h), uint64_t(d), uint64_t(plan.n)};
    const uint32_t box[5] = {box_channels, uint32_t(box_w), uint32_t(box_h), uint32_t(box_d), 1};
    return sm90::encode_tma_activation(map, dtype, base, extents, box);
  };
  return encode(maps.output_grad, output_grad, uint64_t(plan.k), plan.wo, plan.ho, plan.do_, uint32_t(plan.dy_pitch),
                plan.tile_w, plan.tile_h, 1) &&
         encode(maps.input, input, uint64_t(plan.c), plan.wi, plan.hi, plan.di, uint32_t(plan.x_pitch), plan.halo_w,
                plan.halo_h, plan.halo_d);
}

// ldmatrix .x4 .trans at a shared-memory byte address: the loops keep 32-bit addresses (a base per pixel chunk
// plus a tap's shift), not generic pointers converted at every load.
__device__ inline void ldmatrix_x4_trans(uint32_t address, uint32_t (&fragment)[4]) {
  asm volatile("ldmatrix.sync.aligned.x4.trans.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
               : "r"(address));
}

// A 32-bit shared-memory load at a byte address (TF32 fragments element by element); volatile, like the
// ldmatrix above, so that no load moves across the stage barriers.
__device__ inline uint32_t lds_b32(uint32_t address) {
  uint32_t value;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(value) : "r"(address));
  return value;
}

// Grid: (k_batch, ceil(items / warps), plan.group_blocks); kChainPixels = tile_k. `partial` (k_batch fp32 slices
// of the weight gradient) or `weight` receives every element of the CTA's groups. Thread 0 issues every stage's
// boxes; each warp waits for a stage on its barrier, and the block synchronises before a stage is refilled.
template <class Element, class Mma, int kThreads, int kStages, int kChainPixels>
__global__ void __launch_bounds__(kThreads)
    merged_group_bwd_weight_kernel(const MergedGroupBwdWeightPlan plan,
                                   const __grid_constant__ MergedGroupBwdWeightMaps maps, Element* __restrict__ weight,
                                   float* __restrict__ partial) {
  constexpr int kWarps = kThreads / 32;
  constexpr int kMaxTaps = MergedGroupBwdWeightPlan::kMaxTaps;
  constexpr int kMaxChunks = kChainPixels / 16;
  // fp32: two TF32 m16n8k8 k-steps of 8 pixels a 16-pixel chunk, each lane addressing B at pixels t and t + 4
  constexpr bool kTf32 = sizeof(Element) == 4;
  constexpr int kSteps = kTf32 ? 2 : 1, kRows = kTf32 ? 2 : 1;
  // Box destinations are 128-byte aligned (a name of its own: other kernels' dynamic shared memory declares 16).
  extern __shared__ __align__(128) unsigned char stage_bytes[];
  Element* smem = reinterpret_cast<Element*>(stage_bytes);
  uint64_t* full = reinterpret_cast<uint64_t*>(stage_bytes + plan.barrier_offset);

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int g0 = int(blockIdx.z) * plan.gm;
  const int split = int(blockIdx.x);
  const int first_step = split * plan.steps_per_split;
  const int count = max(0, min(plan.steps, first_step + plan.steps_per_split) - first_step);

  const int item = int(blockIdx.y) * kWarps + warp;
  const bool active = item < plan.items;  // warp 0 always is: the grid has ceil(items / warps) rows
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
  // 0, a real one: their dY rows are zero, written here once; the boxes fill only the tile's rows). The same
  // for every step.
  const int tile_pixels = plan.tile_h * plan.tile_w;
  uint32_t* halo_row = reinterpret_cast<uint32_t*>(stage_bytes + size_t(kStages) * plan.stage_elems * sizeof(Element));
  for (int p = int(threadIdx.x); p < plan.pixels16; p += kThreads) {
    const int pixel = p < tile_pixels ? (p / plan.tile_w) * plan.sh * plan.halo_w + (p % plan.tile_w) * plan.sw : 0;
    halo_row[p] = uint32_t(pixel * plan.x_pitch * int(sizeof(Element)));
  }
  const int pad_words = (plan.pixels16 - tile_pixels) * plan.dy_pitch * int(sizeof(Element)) / 4;
  for (int v = int(threadIdx.x); v < kStages * pad_words; v += kThreads) {
    uint32_t* pad = reinterpret_cast<uint32_t*>(smem + size_t(v / pad_words) * plan.stage_elems +
                                                size_t(tile_pixels) * plan.dy_pitch);
    pad[v % pad_words] = 0u;
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) cutlass::arch::ClusterBarrier::init(&full[s], 1u);
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();

  // A step's boxes: the dY tile at (its channels, column, row, do, n) and its input window, whose corner may lie
  // outside the input (the padding: zeros).
  const auto load_stage = [&](int step, int stage) {
    Element* dy_tile = smem + size_t(stage) * plan.stage_elems;
    uint32_t wb, hb, od;
    const int n = int(plan.by_do.divide(plan.by_steps_h.divide(plan.by_steps_w.divide(uint32_t(step), wb), hb), od));
    const int row0 = int(hb) * plan.tile_h, col0 = int(wb) * plan.tile_w;
    cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&full[stage], plan.stage_tx_bytes);
    sm90::tma_load_5d(&maps.output_grad, &full[stage], dy_tile, {g0 * plan.kg, col0, row0, int(od), n});
    sm90::tma_load_5d(&maps.input, &full[stage], dy_tile + plan.halo_offset,
                      {g0 * plan.cg, col0 * plan.sw - plan.pw, row0 * plan.sh - plan.ph, int(od) * plan.sd - plan.pd,
                       n});
  };

  float sums[kBatchedTaps][2][4] = {};
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages - 1 && s < count; ++s) load_stage(first_step + s, s);
  }
  // 16-bit: the ldmatrix rows this lane addresses; fp32: pixel t = lane % 4 at channel g = lane / 4 (A: output
  // channel mb x 16 + g, and + 8; B: input channel nb x 16 + g, and + 8 for the second n tile)
  const int a_channel = kTf32 ? mb * 16 + lane / 4 : mb * 16 + ((lane >> 3) & 1) * 8;
  const int b_channel = kTf32 ? nb * 16 + lane / 4 : nb * 16 + (lane >> 4) * 8;
  const int a_lane_pixel = kTf32 ? lane % 4 : (lane & 7) + ((lane >> 4) << 3);
  const int b_lane_pixel = kTf32 ? lane % 4 : (lane & 7) + ((lane >> 3) & 1) * 8;
  const uint32_t smem_base = uint32_t(__cvta_generic_to_shared(smem));
  for (int i = 0; i < count; ++i) {
    __syncthreads();  // every warp is done with the stage step i - 1 read, which the next boxes refill
    if (threadIdx.x == 0 && i + kStages - 1 < count) {
      load_stage(first_step + i + kStages - 1, (i + kStages - 1) % kStages);
    }
    if (!active) continue;
    cutlass::arch::ClusterBarrier::wait(&full[i % kStages], uint32_t(i / kStages) & 1u);
    // shared-memory byte addresses of this lane's A row and B channels in the stage
    const uint32_t dy_tile = smem_base + uint32_t(size_t(i % kStages) * plan.stage_elems * sizeof(Element));
    const uint32_t x_halo = dy_tile + uint32_t(plan.halo_offset * int(sizeof(Element)));
    const uint32_t a_lane = dy_tile + uint32_t((a_lane_pixel * plan.dy_pitch + a_channel) * int(sizeof(Element)));
    const uint32_t b_lane = x_halo + uint32_t(b_channel * int(sizeof(Element)));
    for (int chain = 0; chain < plan.pixels16; chain += kChainPixels) {
      const int chunks = min(kMaxChunks, (plan.pixels16 - chain) / 16);
      // dY^T (m = output channel, k = pixel) of every 16-pixel chunk of the chain: rows are pixels, transposed
      // (fp32: element by element, each 8-pixel k-step's pixels t and t + 4 at channels g and g + 8)
      uint32_t a[kMaxChunks][kSteps][4];
      uint32_t b_row[kMaxChunks][kSteps][kRows];  // this lane's B pixels of each chunk in the halo (addresses)
#pragma unroll
      for (int kk = 0; kk < kMaxChunks; ++kk) {
        if (kk >= chunks) break;
        if constexpr (kTf32) {
#pragma unroll
          for (int ks = 0; ks < kSteps; ++ks) {
            const int pixel = chain + kk * 16 + ks * 8;
            const uint32_t at = a_lane + uint32_t(pixel * plan.dy_pitch * 4), later = uint32_t(4 * plan.dy_pitch * 4);
            a[kk][ks][0] = tf32_bits(__uint_as_float(lds_b32(at)));
            a[kk][ks][1] = tf32_bits(__uint_as_float(lds_b32(at + 8 * 4)));
            a[kk][ks][2] = tf32_bits(__uint_as_float(lds_b32(at + later)));
            a[kk][ks][3] = tf32_bits(__uint_as_float(lds_b32(at + later + 8 * 4)));
            b_row[kk][ks][0] = b_lane + halo_row[pixel + b_lane_pixel];
            b_row[kk][ks][1] = b_lane + halo_row[pixel + b_lane_pixel + 4];
          }
        } else {
          ldmatrix_x4_trans(a_lane + uint32_t((chain + kk * 16) * plan.dy_pitch * int(sizeof(Element))), a[kk][0]);
          b_row[kk][0][0] = b_lane + halo_row[chain + kk * 16 + b_lane_pixel];
        }
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
#pragma unroll
            for (int ks = 0; ks < kSteps; ++ks) {
              uint32_t b[4];  // (n tile, k half): 16-bit pairs of pixels, or TF32 pixels t and t + 4
              if constexpr (kTf32) {
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                  b[i] = tf32_bits(__uint_as_float(lds_b32(b_row[kk][ks][i % 2] + tap_bytes[j0 + jj] + (i / 2) * 32)));
                }
              } else {
                ldmatrix_x4_trans(b_row[kk][0][0] + tap_bytes[j0 + jj], b);
              }
              const uint32_t(&ak)[4] = a[kk][ks];
#pragma unroll
              for (int nt = 0; nt < 2; ++nt) {
                float* d = chain_sums[jj][nt];
                Mma::fma(d[0], d[1], d[2], d[3], ak[0], ak[1], ak[2], ak[3], b[2 * nt], b[2 * nt + 1], d[0], d[1],
                         d[2], d[3]);
              }
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
        const bool kept =
            m < plan.kc && col < plan.cc && m_group == col_group && g0 * int64_t(plan.kg) + m < plan.k;
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
