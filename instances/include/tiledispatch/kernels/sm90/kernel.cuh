// The Hopper-path kernel: a producer warpgroup and one or two consumer warpgroups, persistent over the work
// units of TileSchedule, composed from the mainloop roles (mainloop.cuh) and the epilogue (epilogue.cuh).
//
//   warpgroup 0        for each unit: gathers (and TMA boxes) of every k-tile into the ring (CpAsyncProducer)
//   warpgroups 1..2    cooperative: for each unit, both: wgmma over the ring, then the epilogue
//                      ping-pong:   warpgroup 1 the CTA's units 0, 2, 4 ..., warpgroup 2 units 1, 3, 5 ...,
//                                   taking turns (TurnOrder): one multiplies while the other stores
//                                                              (WgmmaConsumer, DirectEpilogue)
// The ring runs on across units, so the producer fills the first stages of unit i+1 while the consumers
// store unit i.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/reg_reconfig.h>

#include <cstdint>

#include "tiledispatch/kernels/implicit_gemm_kernel.cuh"
#include "tiledispatch/kernels/sm90/config.hpp"
#include "tiledispatch/kernels/sm90/epilogue.cuh"
#include "tiledispatch/kernels/sm90/mainloop.cuh"
#include "tiledispatch/kernels/sm90/pipeline.cuh"
#include "tiledispatch/kernels/sm90/tile_scheduler.hpp"
#include "tiledispatch/kernels/sm90/tma.hpp"

namespace tiledispatch::kernels::sm90 {

// One GEMM of a launch: its operands and shape, its work units, the tensor maps of what TMA moves.
template <class Index>
struct Sm90Gemm {
  ImplicitGemmParams<Index> gemm;  // shape, operands, partial (the workspace when splits are reduced later)
  TileSchedule schedule;
  TmaOperands tma;  // operands moved by TMA, where the problem allows (tma.hpp)
};

// What one launch runs: `count` GEMMs whose work units the persistent CTAs walk as one sequence, the first
// GEMM's first. Usually one; bwd_data by stride phases puts every phase of a strided problem into one launch
// (Sm90Config::kMaxGemms): alone, a phase is a GEMM too small to fill the SMs for most of its time, together
// the phases do, and the producer fetches one phase's stages while the consumers store another's tiles. The
// GEMMs of a launch take the same operand paths (TMA or gathers; the host batches only such GEMMs). A GEMM of
// no k-tiles (a phase without taps) stores zeros.
template <class Index, int MaxGemms>
struct Sm90Params {
  Sm90Gemm<Index> gemms[MaxGemms];
  int count;
  int64_t units;  // the units of all `count` GEMMs
  float* fold;    // the outer accumulators, a tile per CTA, where a split's chain exceeds kFoldTiles
  // The output as a matrix for the staged epilogue's TMA stores (Sm90Config::kTmaStoreC; launches of one GEMM
  // whose output rows are its GEMM rows, set by the host): (columns of all groups, GEMM rows).
  CUtensorMap c;
  bool use_c;
  // The operands come from the kernel launched just before (bwd_data's phase filters, gathered on every run)
  // and this launch is its programmatic dependent: the producer waits for that kernel before its first load,
  // and everything else (the CTAs' setup, the consumers) starts as that kernel runs.
  bool operands_from_predecessor;

  struct Located {
    int gemm;
    TileSchedule::Unit unit;
  };
  // The unit this CTA takes in its `round`-th turn: in snake order where the GEMMs are stride phases, whose
  // units differ in length (tile_scheduler.hpp).
  __device__ int64_t unit_of_round(int64_t round) const {
    return sm90::unit_of_round(round, blockIdx.x, gridDim.x, MaxGemms > 1);
  }
  TD_HOST_DEVICE Located locate(int64_t u) const {
    if constexpr (MaxGemms == 1) {
      return {0, gemms[0].schedule.unit(u)};
    } else {
      int g = 0;
      for (; g + 1 < count && u >= gemms[g].schedule.units; ++g) u -= gemms[g].schedule.units;
      return {g, gemms[g].schedule.unit(u)};
    }
  }
  // These parameters (count == 1) for the kernel of one GEMM.
  Sm90Params<Index, 1> one_gemm() const {
    Sm90Params<Index, 1> one{};
    one.gemms[0] = gemms[0];
    one.count = 1;
    one.units = units;
    one.fold = fold;
    one.c = c;
    one.use_c = use_c;
    one.operands_from_predecessor = operands_from_predecessor;
    return one;
  }
};

// Operand `Which` (0: A, 1: B) of wgmma: the stage tensor of that GEMM operand, or of the other one where the
// configuration computes its tile transposed (Sm90Config::kTransposed, bwd_weight with tile_m below 64).
template <class Cfg, int Which, class StagesA, class StagesB>
__device__ __forceinline__ const auto& mma_operand(const StagesA& sA, const StagesB& sB) {
  if constexpr ((Which == 0) != Cfg::kTransposed) {
    return sA;
  } else {
    return sB;
  }
}

// `Diagonal`: the kernel of merged groups by diagonal blocks (Cfg::kDiagonal), launched where the host chose it
// for the problem (TmaOperands::diagonal). A kernel of its own, not a branch: with both consumer paths in one
// function ptxas serialises the wgmma pipeline (C7511) for some configurations, and the other problems keep
// exactly the code they had. `Gemms`: the GEMMs its parameters carry; a launch of one GEMM where the
// configuration can carry several (bwd_data at unit stride, or a stride phase launched alone) takes the kernel
// of one, whose GEMM's fields are constant operands rather than loads indexed by the unit's GEMM (H100, same
// tile: vgg_3x3_112 bwd_data 132 -> 118 us, r50_3x3_28_n64 39.8 -> 36.4 us).
template <class Cfg, bool Diagonal = false, int Gemms = Cfg::kMaxGemms>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    sm90_implicit_gemm_kernel(const __grid_constant__ Sm90Params<typename Cfg::Index, Gemms> params) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace cute;
  using Index = typename Cfg::Index;
  using Element = typename Cfg::ElementGlobal;
  using ElementMma = typename Cfg::ElementMma;
  static_assert(Cfg::kBuildable, "instantiate the Hopper kernel only for configurations it can build");
  static_assert(size(typename Cfg::TiledMma{}) == Cfg::kTileThreads, "one MMA thread per thread of a tile");
  static_assert(!Diagonal || Cfg::kDiagonal, "the diagonal kernel only where the configuration has the mode");

  // A programmatic dependent launch after this kernel (the next stride phase) may start its CTAs as this
  // kernel's finish; the wait at the end keeps this grid from completing before its own predecessor has, so
  // stream order holds for the work after it. Both are no-ops for ordinary launches.
  asm volatile("griddepcontrol.launch_dependents;");
  extern __shared__ unsigned char smem_dynamic[];
  auto* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<uintptr_t>(smem_dynamic) + kSmemAlign - 1) / kSmemAlign * kSmemAlign);
  auto* smem_a = reinterpret_cast<ElementMma*>(smem);
  auto* smem_b = smem_a + cosize(typename Cfg::SmemLayoutA{});
  auto* barriers = reinterpret_cast<uint64_t*>(smem + Cfg::kBarrierOffset);
  unsigned char* staging = smem + Cfg::kStagingOffset;  // the staged epilogue's
  Tensor sA = make_tensor(make_smem_ptr(smem_a), typename Cfg::SmemLayoutA{});  // (TILE_M,TILE_K,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(smem_b), typename Cfg::SmemLayoutB{});  // (TILE_N,TILE_K,PIPE)
  // The diagonal kernel's B stages in the same space: (per-group N, per-group K, GM, PIPE).
  Tensor sBd = make_tensor(make_smem_ptr(smem_b), typename Cfg::SmemLayoutBDiagonal{});
  const Ring<Cfg::kStages> ring{barriers, barriers + Cfg::kStages};
  const TurnOrder order{barriers + 2 * kMaxStages};
  using Producer = CpAsyncProducer<Cfg>;
  // diagonal: both operands by TMA; the GEMMs of a launch share their operand paths
  const bool gathers = !Diagonal && Producer::gathers(params.gemms[0].tma);
  const uint32_t zero_row = uint32_t(__cvta_generic_to_shared(smem + Cfg::kZeroRowOffset));
  if constexpr (Cfg::kZeroRowBytes > 0) {
    if (threadIdx.x < Cfg::kZeroRowBytes / 16) {
      reinterpret_cast<uint4*>(smem + Cfg::kZeroRowOffset)[threadIdx.x] = make_uint4(0u, 0u, 0u, 0u);
      fence_smem_for_tma();  // read by bulk copies
    }
  }
  if (threadIdx.x == 0) {
    if constexpr (Cfg::kPingPong) order.init(kWarpgroupThreads);
    ring.init(gathers ? Cfg::kProducerThreads : 0, Cfg::kTileWarpgroups);
  }
  __syncthreads();

  // The GEMM-K tiles of one split of a GEMM, and the CTA tile origin, of unit w.
  auto k_range = [](const ConvShape<Index>& shape, const TileSchedule::Unit& w, Index& begin) {
    const Index k_tiles = (shape.gemm_k + Cfg::kTileK - 1) / Cfg::kTileK;
    begin = Index(w.split) * shape.k_tiles_per_split;
    const Index end = cute::min(k_tiles, begin + shape.k_tiles_per_split);
    return end > begin ? int(end - begin) : 0;
  };
  RingCursor<Cfg::kStages> cursor;
  if (threadIdx.x < Cfg::kProducerThreads) {
    if constexpr (Cfg::kReallocatesRegisters) cutlass::arch::warpgroup_reg_dealloc<Cfg::kProducerRegisters>();
    if (!gathers && threadIdx.x != 0) return;  // TMA moves both operands: one thread issues it all
    if (params.operands_from_predecessor) asm volatile("griddepcontrol.wait;" ::: "memory");
    for (int64_t round = 0;; ++round) {
      const int64_t u = params.unit_of_round(round);
      if (u >= params.units) break;
      const auto at = params.locate(u);
      const auto& w = at.unit;
      const Sm90Gemm<Index>& gemm = params.gemms[at.gemm];
      Index kt_begin = 0;
      const int tiles = k_range(gemm.gemm.shape, w, kt_begin);
      if (tiles == 0) continue;  // nothing to load (a phase without taps, a split past GEMM K)
      const typename Cfg::View view{gemm.gemm.shape, Index(w.group_block) * Cfg::kGroupsToMerge};
      if constexpr (Diagonal) {
        Producer::load_diagonal(view, sA, sBd, gemm.tma, ring, cursor, Index(w.tile_m) * Cfg::kTileM,
                                int32_t(w.group_block), kt_begin, tiles);
      } else if (!gathers) {
        Producer::load_tma(view, sA, sB, gemm.tma, ring, cursor, Index(w.tile_m) * Cfg::kTileM,
                           Index(w.tile_n) * Cfg::kTileN, int32_t(w.group_block), kt_begin, tiles);
      } else {
        Producer::load(view, static_cast<const Element*>(gemm.gemm.a), static_cast<const Element*>(gemm.gemm.b),
                       sA, sB, gemm.tma, ring, cursor, Index(w.tile_m) * Cfg::kTileM, Index(w.tile_n) * Cfg::kTileN,
                       int32_t(w.group_block), kt_begin, tiles, int(threadIdx.x));
      }
    }
  } else {
    if constexpr (Cfg::kReallocatesRegisters) cutlass::arch::warpgroup_reg_alloc<Cfg::kConsumerRegisters>();
    const int consumer = int(threadIdx.x) - Cfg::kProducerThreads;
    const int stream = consumer / Cfg::kTileThreads;  // ping-pong: which warpgroup's tiles; else 0
    const int warpgroup = consumer / kWarpgroupThreads;
    const int thread = consumer % Cfg::kTileThreads;  // this thread's place in its tile's MMA
    typename Cfg::TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_slice(thread);
    // wgmma's A and B: the A and B stages, or B and A where the tile is computed transposed (Cfg::kTransposed).
    const auto& sMmaA = mma_operand<Cfg, 0>(sA, sB);  // (MMA_M extent,TILE_K,PIPE)
    const auto& sMmaB = mma_operand<Cfg, 1>(sA, sB);  // (MMA_N extent,TILE_K,PIPE)
    Tensor tCrA = thr_mma.make_fragment_A(thr_mma.partition_A(sMmaA));  // (MMA,MMA_M,MMA_K,PIPE) descriptors
    Tensor tCrB = thr_mma.make_fragment_B(thr_mma.partition_B(sMmaB));  // (MMA,MMA_N,MMA_K,PIPE) descriptors
    Tensor accum = partition_fragment_C(tiled_mma, Shape<Int<Cfg::kMmaM>, Int<Cfg::kMmaN>>{});  // (MMA,M,N)
    float* fold = params.fold == nullptr
                      ? nullptr
                      : params.fold + (int64_t(blockIdx.x) * Cfg::kTilesInFlight + stream) * Cfg::kTileM * Cfg::kTileN;
    // The k-tiles of the unit the other ping-pong warpgroup takes next: this warpgroup's cursor skips them.
    auto skip_round = [&](int64_t round) {
      const int64_t u = params.unit_of_round(round);
      if (u >= params.units) return;
      const auto at = params.locate(u);
      Index kt_begin = 0;
      cursor.advance(k_range(params.gemms[at.gemm].gemm.shape, at.unit, kt_begin));
    };
    int64_t round = 0;
    if (Cfg::kPingPong && stream == 1) {
      skip_round(round);
      ++round;
    }
    uint32_t turn_phase = 0;
    for (;; round += Cfg::kTilesInFlight) {
      const int64_t u = params.unit_of_round(round);
      if (u >= params.units) break;
      const auto at = params.locate(u);
      const auto& w = at.unit;
      const Sm90Gemm<Index>& gemm = params.gemms[at.gemm];
      Index kt_begin = 0;
      const int tiles = k_range(gemm.gemm.shape, w, kt_begin);
      if constexpr (Cfg::kPingPong) {
        if (stream == 1 || round != 0) {  // the first consumer warpgroup starts
          order.wait(stream, turn_phase);
          turn_phase ^= 1u;
        }
      }
      const auto pass_turn = [&] {
        if constexpr (Cfg::kPingPong) order.pass(stream);
      };
      const bool signals = thread % kWarpgroupThreads == 0;
      if constexpr (Diagonal) {
        typename Cfg::DiagonalMma diagonal_mma;  // one wgmma m64 x (per-group N) per k16 step
        auto thr_diagonal = diagonal_mma.get_slice(thread);
        Tensor tCrBd = thr_diagonal.make_fragment_B(thr_diagonal.partition_B(sBd));  // (MMA,MMA_N,MMA_K,GM,PIPE)
        WgmmaConsumer<Cfg>::mma(
            accum, ring, cursor, tiles, signals, fold, thread,
            [&](int stage) { WgmmaConsumer<Cfg>::issue_diagonal(diagonal_mma, tCrA, tCrBd, accum, stage); },
            pass_turn);
      } else {
        WgmmaConsumer<Cfg>::mma(
            accum, ring, cursor, tiles, signals, fold, thread,
            [&](int stage) { WgmmaConsumer<Cfg>::issue_tile(tiled_mma, tCrA, tCrB, accum, stage); }, pass_turn);
      }
      const typename Cfg::View view{gemm.gemm.shape, Index(w.group_block) * Cfg::kGroupsToMerge};
      float* partial = gemm.gemm.partial == nullptr ? nullptr
                                                    : gemm.gemm.partial + int64_t(w.split) * gemm.gemm.partial_slice;
      DirectEpilogue<Cfg>::store(thr_mma, accum, view, Index(w.tile_m) * Cfg::kTileM,
                                 Index(w.tile_n) * Cfg::kTileN, static_cast<Element*>(gemm.gemm.c), partial,
                                 staging + warpgroup * Cfg::kEpilogueWarpgroupBytes, warpgroup,
                                 params.use_c ? &params.c : nullptr, zero_row);
      if constexpr (Cfg::kPingPong) skip_round(round + 1);
    }
    // the staging and the row of zeros must outlive the bulk stores that read them, and the output be written
    // before dependents run
    if ((Cfg::kTmaStoreC && params.use_c && thread % kWarpgroupThreads == 0) || Cfg::kZeroRowBytes > 0) {
      tma_store_wait_all();
    }
    asm volatile("griddepcontrol.wait;" ::: "memory");
  }
#endif
}

}  // namespace tiledispatch::kernels::sm90
