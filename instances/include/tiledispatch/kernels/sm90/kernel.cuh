// The Hopper-path kernel: a producer warpgroup and one or two consumer warpgroups, persistent over the work
// units of TileSchedule, composed from the mainloop roles (mainloop.cuh) and the epilogue (epilogue.cuh).
//
//   warpgroup 0        for each unit: gathers (and TMA boxes) of every k-tile into the ring (CpAsyncProducer)
//   warpgroups 1..2    for each unit: wgmma over the ring, then the epilogue            (WgmmaConsumer,
//                                                                                         DirectEpilogue)
// The ring runs on across units, so the producer fills the first stages of unit i+1 while the consumers
// store unit i.
#pragma once

#include <cute/tensor.hpp>

#include <cstdint>

#include "tiledispatch/kernels/implicit_gemm_kernel.cuh"
#include "tiledispatch/kernels/sm90/config.hpp"
#include "tiledispatch/kernels/sm90/epilogue.cuh"
#include "tiledispatch/kernels/sm90/mainloop.cuh"
#include "tiledispatch/kernels/sm90/pipeline.cuh"
#include "tiledispatch/kernels/sm90/tile_scheduler.hpp"
#include "tiledispatch/kernels/sm90/tma.hpp"

namespace tiledispatch::kernels::sm90 {

template <class Index>
struct Sm90Params {
  ImplicitGemmParams<Index> gemm;  // shape, operands, partial (the workspace when splits are reduced later)
  TileSchedule schedule;
  int64_t partial_slice;  // elements between the workspace slices of consecutive splits
  TmaOperands tma;        // operands moved by TMA, where the problem allows (tma.hpp)
  float* fold;            // the outer accumulators, a tile per CTA, where a split's chain exceeds kFoldTiles
};

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    sm90_implicit_gemm_kernel(const __grid_constant__ Sm90Params<typename Cfg::Index> params) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace cute;
  using Index = typename Cfg::Index;
  using Element = typename Cfg::ElementGlobal;
  using ElementMma = typename Cfg::ElementMma;
  static_assert(Cfg::kBuildable, "instantiate the Hopper kernel only for configurations it can build");
  static_assert(size(typename Cfg::TiledMma{}) == Cfg::kConsumerThreads, "one MMA thread per consumer thread");

  extern __shared__ unsigned char smem_dynamic[];
  auto* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<uintptr_t>(smem_dynamic) + kSmemAlign - 1) / kSmemAlign * kSmemAlign);
  auto* smem_a = reinterpret_cast<ElementMma*>(smem);
  auto* smem_b = smem_a + cosize(typename Cfg::SmemLayoutA{});
  auto* barriers = reinterpret_cast<uint64_t*>(smem + Cfg::kOperandSmemBytes);
  Tensor sA = make_tensor(make_smem_ptr(smem_a), typename Cfg::SmemLayoutA{});  // (TILE_M,TILE_K,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(smem_b), typename Cfg::SmemLayoutB{});  // (TILE_N,TILE_K,PIPE)
  const Ring<Cfg::kStages> ring{barriers, barriers + Cfg::kStages};
  using Producer = CpAsyncProducer<Cfg>;
  const bool gathers = Producer::gathers(params.tma);
  if (threadIdx.x == 0) ring.init(gathers ? Cfg::kProducerThreads : 0, Cfg::kConsumerWarpgroups);
  __syncthreads();

  const auto& shape = params.gemm.shape;
  const Index k_tiles = (shape.gemm_k + Cfg::kTileK - 1) / Cfg::kTileK;
  // The GEMM-K tiles of one split, and the CTA tile origin, of unit u.
  auto k_range = [&](const TileSchedule::Unit& w, Index& begin) {
    begin = Index(w.split) * shape.k_tiles_per_split;
    const Index end = cute::min(k_tiles, begin + shape.k_tiles_per_split);
    return end > begin ? int(end - begin) : 0;
  };
  RingCursor<Cfg::kStages> cursor;
  if (threadIdx.x < Cfg::kProducerThreads) {
    if (!gathers && threadIdx.x != 0) return;  // TMA moves both operands: one thread issues it all
    const auto* gA = static_cast<const Element*>(params.gemm.a);
    const auto* gB = static_cast<const Element*>(params.gemm.b);
    for (int64_t u = blockIdx.x; u < params.schedule.units; u += gridDim.x) {
      const auto w = params.schedule.unit(u);
      Index kt_begin = 0;
      const int tiles = k_range(w, kt_begin);
      const typename Cfg::View view{shape, Index(w.group_block) * Cfg::kGroupsToMerge};
      Producer::load(view, gA, gB, sA, sB, params.tma, ring, cursor, Index(w.tile_m) * Cfg::kTileM,
                     Index(w.tile_n) * Cfg::kTileN, int32_t(w.group_block), kt_begin, tiles, int(threadIdx.x));
    }
  } else {
    const int consumer = int(threadIdx.x) - Cfg::kProducerThreads;
    typename Cfg::TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_slice(consumer);
    Tensor tCrA = thr_mma.make_fragment_A(thr_mma.partition_A(sA));  // (MMA,MMA_M,MMA_K,PIPE) descriptors
    Tensor tCrB = thr_mma.make_fragment_B(thr_mma.partition_B(sB));  // (MMA,MMA_N,MMA_K,PIPE) descriptors
    Tensor accum = partition_fragment_C(tiled_mma, Shape<Int<Cfg::kTileM>, Int<Cfg::kTileN>>{});  // (MMA,M,N)
    auto* gC = static_cast<Element*>(params.gemm.c);
    float* fold = params.fold == nullptr ? nullptr : params.fold + int64_t(blockIdx.x) * Cfg::kTileM * Cfg::kTileN;
    for (int64_t u = blockIdx.x; u < params.schedule.units; u += gridDim.x) {
      const auto w = params.schedule.unit(u);
      Index kt_begin = 0;
      const int tiles = k_range(w, kt_begin);
      WgmmaConsumer<Cfg>::mma(tiled_mma, tCrA, tCrB, accum, ring, cursor, tiles, consumer % kWarpgroupThreads == 0,
                              fold, consumer);
      const typename Cfg::View view{shape, Index(w.group_block) * Cfg::kGroupsToMerge};
      float* partial =
          params.gemm.partial == nullptr ? nullptr : params.gemm.partial + int64_t(w.split) * params.partial_slice;
      DirectEpilogue<Cfg>::store(thr_mma, accum, view, Index(w.tile_m) * Cfg::kTileM,
                                 Index(w.tile_n) * Cfg::kTileN, gC, partial);
    }
  }
#endif
}

}  // namespace tiledispatch::kernels::sm90
