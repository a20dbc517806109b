// The producer warpgroup's gather of one operand tile (MN, K) into a ring stage: chunks of V contiguous
// elements, numbered contiguous-dimension first (coalesced); thread t owns chunks t, t + 128, ... Per CTA
// tile, each chunk's MN-dependent address part (View::*_prepare) and its swizzled shared-memory address in
// stage 0 are computed once; per k-tile only the K-dependent part is added (View::*_locate_tile, or the
// general View::*_locate where tile addressing does not apply). Stages are a whole number of swizzle periods
// apart, so a chunk's address in stage s is its stage-0 address plus s stage sizes.
#pragma once

#include <cute/tensor.hpp>

#include <cstdint>

namespace tiledispatch::kernels::sm90 {

// cp.async of `Bytes` (4, 8 or 16) with zero-fill: src-size 0 writes zeros without reading global memory.
template <int Bytes>
__device__ __forceinline__ void cp_async_zfill(uint32_t smem_addr, const void* gmem, bool valid) {
  const int src_bytes = valid ? Bytes : 0;
  if constexpr (Bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(gmem), "r"(src_bytes));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr), "l"(gmem), "n"(Bytes),
                 "r"(src_bytes));
  }
}

template <class Cfg, bool KMajor, int TileMN, int V, class Info>
struct ProducerGather {
  using Index = typename Cfg::Index;
  using Element = typename Cfg::ElementGlobal;
  static constexpr int kThreads = Cfg::kProducerThreads;
  static constexpr int kBytes = V * Cfg::kElemBytes;
  static constexpr int kContig = KMajor ? Cfg::kTileK : TileMN;
  static constexpr int kStrided = KMajor ? TileMN : Cfg::kTileK;
  static constexpr int kChunksPerLine = kContig / V;
  static constexpr int kChunks = kChunksPerLine * kStrided;
  static constexpr int kIters = (kChunks + kThreads - 1) / kThreads;
  static_assert(kContig % V == 0, "operand tile: vector size must divide the contiguous tile extent");
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16, "cp.async moves 4, 8 or 16 bytes");

  Info info[kIters];
  Index k_in_tile[kIters];
  uint32_t smem_addr[kIters];  // shared-state-space address of the chunk in stage 0

  static __device__ bool owns(int tid, int i) { return kChunks % kThreads == 0 || tid + i * kThreads < kChunks; }

  // Whether the chunks a thread owns share their place in a K-major line (lines of a divisor of the thread
  // count chunks), hence one GEMM-K offset in every k-tile: `line_place(tid)`.
  static constexpr bool kSharedLinePlace = KMajor && kThreads % kChunksPerLine == 0;
  static __device__ int line_place(int tid) { return (tid % kChunksPerLine) * V; }

  // `stage0` is the (MN, K) tensor of ring stage 0.
  template <class Stage0, class PrepareFn>
  __device__ void init(int tid, Index mn0, const Stage0& stage0, PrepareFn&& prepare) {
    CUTE_UNROLL
    for (int i = 0; i < kIters; ++i) {
      const int chunk = owns(tid, i) ? tid + i * kThreads : 0;
      const int line = chunk / kChunksPerLine;
      const int offset = (chunk % kChunksPerLine) * V;
      const int mn = KMajor ? line : offset;
      const int k = KMajor ? offset : line;
      k_in_tile[i] = Index(k);
      info[i] = prepare(mn0 + mn);
      smem_addr[i] = uint32_t(__cvta_generic_to_shared(&stage0(mn, k)));
    }
  }

  // Issues every owned chunk of the k-tile into the stage `stage_bytes` past stage 0. `locate` may update the
  // chunk's Info (state a view walks from k-tile to k-tile).
  template <class LocateFn>
  __device__ void copy(int tid, uint32_t stage_bytes, const Element* gmem, LocateFn&& locate) {
    CUTE_UNROLL
    for (int i = 0; i < kIters; ++i) {
      if (!owns(tid, i)) continue;
      Index offset = 0;
      const bool valid = locate(info[i], k_in_tile[i], offset);
      cp_async_zfill<kBytes>(smem_addr[i] + stage_bytes, valid ? gmem + offset : gmem, valid);
    }
  }
};

}  // namespace tiledispatch::kernels::sm90
