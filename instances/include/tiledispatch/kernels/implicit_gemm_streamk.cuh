// Stream-K backward weight (ck_conventions §1: streamk_enabled, streamk_reduction, streamk_persistent).
//
// The bwd_weight GEMM has a small M x N and a huge K (N*Do*Ho*Wo). Stream-K numbers every MAC-loop iteration
// (one GEMM-K tile of one output tile; output tiles run over tile_m, then tile_n, then merged-group block) and
// splits the `total` iterations evenly over `workers` = SMs x resident blocks per SM: worker w owns
// [begin(w), begin(w+1)), the first total % workers workers one iteration more. A worker's range, cut at tile
// boundaries, gives its pieces (work units):
//   - a piece that covers a whole tile (all its K) is written by the normal epilogue;
//   - the others ("partial pieces": at most the first and the last of a worker) store raw fp32 accumulators
//     in workspace slot 2*w (the worker's first piece) or 2*w + 1 (its last piece).
// Persistent: one CTA per worker, looping over its pieces. Data-parallel: one CTA per (worker, piece), the
// same pieces. Both produce the same partial sums, and the reduction runs after the main kernel (stream
// order: every partial has landed) in a fixed order, with plain loads and stores, never float atomics:
//   - linear: one CTA per tile adds its pieces in worker order, converts, stores;
//   - tree:   log2 rounds of pairwise sums (piece i += piece i + 2^r for i % 2^(r+1) == 0), then the CTA of
//             each tile converts piece 0 and stores.
// Results are therefore bit-identical run to run, and between persistent and data-parallel launches.
#pragma once

#include <cstdint>

#include "tiledispatch/kernels/implicit_gemm_kernel.cuh"

namespace tiledispatch::kernels {

// The partition of one problem, computed on the host (implicit_gemm_instance.hpp), read by every kernel.
struct StreamKPlan {
  int64_t tiles;           // output tiles: tiles_m * tiles_n * merged-group blocks
  int64_t iters_per_tile;  // GEMM-K tiles of one output tile
  int64_t total;           // tiles * iters_per_tile
  int64_t workers;         // CTAs of the persistent grid (<= total)
  int tiles_m, tiles_n;
  int max_pieces_per_worker;
  int max_pieces_per_tile;

  TD_HOST_DEVICE int64_t begin(int64_t w) const {
    const int64_t q = total / workers, r = total % workers;
    return w * q + (w < r ? w : r);
  }
  // The worker whose range holds iteration `it`.
  TD_HOST_DEVICE int64_t worker_of(int64_t it) const {
    const int64_t q = total / workers, r = total % workers;
    return it < r * (q + 1) ? it / (q + 1) : r + (it - r * (q + 1)) / q;
  }
  // Workspace slot (in tiles) of the piece of tile `t` computed by worker `w`.
  TD_HOST_DEVICE int64_t slot(int64_t w, int64_t t) const {
    return 2 * w + (begin(w) / iters_per_tile == t ? 0 : 1);
  }
};

// The partition of `tiles` output tiles of `iters_per_tile` MAC-loop iterations each over at most
// `resident_ctas` workers (one per iteration at most).
inline StreamKPlan make_streamk_plan(int tiles_m, int tiles_n, int64_t group_blocks, int64_t iters_per_tile,
                                     int64_t resident_ctas) {
  StreamKPlan plan{};
  plan.tiles_m = tiles_m;
  plan.tiles_n = tiles_n;
  plan.tiles = int64_t(tiles_m) * tiles_n * group_blocks;
  plan.iters_per_tile = iters_per_tile;
  plan.total = plan.tiles * iters_per_tile;
  plan.workers = plan.total < resident_ctas ? plan.total : resident_ctas;
  if (plan.workers < 1) plan.workers = 1;
  const int64_t shortest = plan.total / plan.workers;
  const int64_t longest = shortest + (plan.total % plan.workers != 0 ? 1 : 0);
  // A worker's range meets at most ceil(longest / I) + 1 tiles; a tile meets at most ceil(I / shortest) + 1
  // workers.
  plan.max_pieces_per_worker = int((longest + iters_per_tile - 1) / iters_per_tile + 1);
  const int64_t per_tile = (iters_per_tile + shortest - 1) / shortest + 1;
  plan.max_pieces_per_tile = int(per_tile < plan.workers ? per_tile : plan.workers);
  return plan;
}

// Piece `j` of worker `w`: its tile and GEMM-K tile range; false when the worker has fewer pieces.
TD_HOST_DEVICE bool streamk_piece(const StreamKPlan& plan, int64_t w, int j, int64_t& tile,
                                              int64_t& k_begin, int64_t& k_end) {
  const int64_t begin = plan.begin(w), end = plan.begin(w + 1);
  tile = begin / plan.iters_per_tile + j;
  const int64_t t0 = tile * plan.iters_per_tile;
  if (tile >= plan.tiles || t0 >= end) return false;
  k_begin = (begin > t0 ? begin : t0) - t0;
  const int64_t t1 = t0 + plan.iters_per_tile;
  k_end = (end < t1 ? end : t1) - t0;
  return true;
}

template <class Cfg>
__device__ __forceinline__ void streamk_run_piece(const ImplicitGemmParams<typename Cfg::Index>& params,
                                                  const StreamKPlan& plan, float* slots, unsigned char* smem_raw,
                                                  int64_t w, int64_t tile, int64_t k_begin, int64_t k_end) {
  using Index = typename Cfg::Index;
  TileWork<Index> work;
  const int64_t per_group = int64_t(plan.tiles_m) * plan.tiles_n;
  const int64_t in_group = tile % per_group;
  work.group_block = Index(tile / per_group);
  work.tile_m = int(in_group % plan.tiles_m);
  work.tile_n = int(in_group / plan.tiles_m);
  work.kt_begin = Index(k_begin);
  work.kt_end = Index(k_end);
  const bool whole = k_begin == 0 && k_end == plan.iters_per_tile;
  work.partial = nullptr;
  work.tile_partial = whole ? nullptr : slots + plan.slot(w, tile) * (Cfg::kTileM * Cfg::kTileN);
  gemm_tile<Cfg>(params, smem_raw, work);
}

// Persistent: blockIdx.x is the worker; it walks its pieces. Data-parallel: blockIdx.x = worker *
// max_pieces_per_worker + piece, one piece per CTA (CTAs past a worker's last piece exit).
template <class Cfg, bool Persistent>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kBlockPerCu)
    streamk_kernel(ImplicitGemmParams<typename Cfg::Index> params, StreamKPlan plan, float* slots) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  int64_t tile = 0, k_begin = 0, k_end = 0;
  if constexpr (Persistent) {
    const int64_t w = blockIdx.x;
    for (int j = 0; streamk_piece(plan, w, j, tile, k_begin, k_end); ++j) {
      if (j > 0) __syncthreads();  // the previous piece's epilogue still reads shared memory
      streamk_run_piece<Cfg>(params, plan, slots, smem_raw, w, tile, k_begin, k_end);
    }
  } else {
    const int64_t w = blockIdx.x / unsigned(plan.max_pieces_per_worker);
    const int j = int(blockIdx.x % unsigned(plan.max_pieces_per_worker));
    if (streamk_piece(plan, w, j, tile, k_begin, k_end)) {
      streamk_run_piece<Cfg>(params, plan, slots, smem_raw, w, tile, k_begin, k_end);
    }
  }
}

// Tree round r: for every tile with n >= 2 pieces, piece i += piece i + 2^r (i % 2^(r+1) == 0);
// blockIdx.x is the tile, blockIdx.y the pair.
template <int TileElems>
__global__ void streamk_tree_round(StreamKPlan plan, float* slots, int round) {
  const int64_t t = blockIdx.x;
  const int64_t w0 = plan.worker_of(t * plan.iters_per_tile);
  const int64_t n = plan.worker_of((t + 1) * plan.iters_per_tile - 1) - w0 + 1;
  const int64_t stride = int64_t(1) << round;
  const int64_t i = int64_t(blockIdx.y) * 2 * stride;
  if (n < 2 || i + stride >= n) return;
  float* dst = slots + plan.slot(w0 + i, t) * TileElems;
  const float* src = slots + plan.slot(w0 + i + stride, t) * TileElems;
  for (int e = threadIdx.x; e < TileElems; e += blockDim.x) dst[e] += src[e];
}

// One CTA per tile with n >= 2 pieces: linear sums the pieces in worker order, tree takes the reduced piece 0;
// the sum is converted and stored through the view (bounds and merged-group diagonal as the epilogue does).
template <class Cfg, bool Linear>
__global__ void streamk_finalize(ImplicitGemmParams<typename Cfg::Index> params, StreamKPlan plan,
                                 const float* slots) {
  using Index = typename Cfg::Index;
  using Element = typename Cfg::ElementGlobal;
  constexpr int kTileM = Cfg::kTileM, kTileN = Cfg::kTileN;
  const int64_t t = blockIdx.x;
  const int64_t w0 = plan.worker_of(t * plan.iters_per_tile);
  const int64_t n = plan.worker_of((t + 1) * plan.iters_per_tile - 1) - w0 + 1;
  if (n < 2) return;  // one piece covered the whole tile and stored it
  const int64_t per_group = int64_t(plan.tiles_m) * plan.tiles_n;
  const int64_t in_group = t % per_group;
  const Index group_block = Index(t / per_group);
  const Index m0 = Index(in_group % plan.tiles_m) * kTileM;
  const Index n0 = Index(in_group / plan.tiles_m) * kTileN;
  const typename Cfg::View view{params.shape, group_block * Cfg::kGroupsToMerge};
  auto* out = static_cast<Element*>(params.c);
  for (int e = threadIdx.x; e < kTileM * kTileN; e += blockDim.x) {
    const int row = e / kTileN, col = e % kTileN;
    const auto info = view.c_prepare(m0 + row);
    Index offset = 0;
    if (!view.c_locate(info, n0 + col, offset)) continue;
    float sum = slots[plan.slot(w0, t) * (kTileM * kTileN) + e];
    if constexpr (Linear) {
      for (int64_t i = 1; i < n; ++i) sum += slots[plan.slot(w0 + i, t) * (kTileM * kTileN) + e];
    }
    out[offset] = Element(sum);
  }
}

}  // namespace tiledispatch::kernels
