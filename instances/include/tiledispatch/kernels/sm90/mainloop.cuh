// The Hopper path's mainloop, in two roles (docs/pipelines.md, "Hopper path"):
//   producer warpgroup:  gmem --(ProducerGather: cp.async zero-fill, conv addressing per k-tile)--> smem ring
//   consumer warpgroups: smem ring --(wgmma, both operands from shared memory)--> fp32 accumulators
// The addressing is that of the first generation (conv_gemm_view.hpp), so every direction, geometry,
// merged-group count and split_image index width reads its operands exactly as there.
#pragma once

#include <cute/arch/mma_sm90_gmma.hpp>
#include <cute/tensor.hpp>

#include <cstdint>

#include "tiledispatch/kernels/sm90/config.hpp"
#include "tiledispatch/kernels/sm90/pipeline.cuh"
#include "tiledispatch/kernels/sm90/producer_gather.cuh"
#include "tiledispatch/kernels/sm90/tma.hpp"

namespace tiledispatch::kernels::sm90 {

template <class Cfg>
struct CpAsyncProducer {
  using Index = typename Cfg::Index;
  using View = typename Cfg::View;
  using Element = typename Cfg::ElementGlobal;
  using GatherA = ProducerGather<Cfg, Cfg::Base::kAKMajor, Cfg::kTileM, Cfg::kVectorA, typename View::AInfo>;
  using GatherB = ProducerGather<Cfg, Cfg::Base::kBKMajor, Cfg::kTileN, Cfg::kVectorB, typename View::BInfo>;
  static constexpr uint32_t kStageBytesA = Cfg::kTileM * Cfg::kTileK * sizeof(typename Cfg::ElementMma);
  static constexpr uint32_t kStageBytesB = Cfg::kTileN * Cfg::kTileK * sizeof(typename Cfg::ElementMma);

  // Fills one stage per GEMM-K tile of [kt_begin, kt_begin + k_tiles) of the CTA tile at (m0, n0). `tma_row`
  // is the TMA coordinate of the CTA's first GEMM row in the operand's tensor (fwd B: g*K/G, bwd_weight A:
  // g*K/G times the merged groups).
  template <class SmemA, class SmemB>
  __device__ static void load(const View& view, const Element* gA, const Element* gB, const SmemA& sA,
                              const SmemB& sB, const TmaOperands& tma, const Ring<Cfg::kStages>& ring,
                              RingCursor<Cfg::kStages>& cursor, Index m0, Index n0, int32_t tma_row, Index kt_begin,
                              int k_tiles, int tid) {
    using namespace cute;
    GatherA gather_a;
    GatherB gather_b;
    gather_a.init(tid, m0, sA(_, _, 0), [&](Index m) { return view.a_prepare(m); });
    gather_b.init(tid, n0, sB(_, _, 0), [&](Index n) { return view.b_prepare(n); });
    const bool by_tile = view.tile_addressing(Cfg::kTileK);
    auto t = view.k_tile(kt_begin * Cfg::kTileK);  // advanced by adds per k-tile (tile addressing)
    const bool tma_a = Cfg::kTmaA && tma.use_a, tma_b = Cfg::kTmaB && tma.use_b;
    const uint32_t tma_bytes = (tma_a ? kStageBytesA : 0u) + (tma_b ? kStageBytesB : 0u);
    CUTE_NO_UNROLL
    for (int kt = 0; kt < k_tiles; ++kt) {
      const Index k0 = (kt_begin + kt) * Cfg::kTileK;
      ring.producer_acquire(cursor);
      const int stage = cursor.stage;
      if (tid == 0) {
        ring.producer_expect(cursor, tma_bytes);
        if constexpr (Cfg::kTmaB) {
          if (tma_b) tma_load_2d(&tma.b, &ring.full[stage], &sB(0, 0, stage), int32_t(k0), tma_row + int32_t(n0));
        }
        if constexpr (Cfg::kTmaA) {
          if (tma_a) {
            CUTE_UNROLL
            for (int i = 0; i < Cfg::kTileM / Cfg::kTmaAtomM; ++i) {
              CUTE_UNROLL
              for (int j = 0; j < Cfg::kTileK / Cfg::kTmaAtomK; ++j) {
                tma_load_2d(&tma.a, &ring.full[stage], &sA(i * Cfg::kTmaAtomM, j * Cfg::kTmaAtomK, stage),
                            tma_row + int32_t(m0) + i * Cfg::kTmaAtomM, int32_t(k0) + j * Cfg::kTmaAtomK);
              }
            }
          }
        }
      }
      const uint32_t bytes_a = uint32_t(stage) * kStageBytesA, bytes_b = uint32_t(stage) * kStageBytesB;
      if (by_tile) {
        if (!tma_a) {
          gather_a.copy(tid, bytes_a, gA,
                        [&](auto& i, Index kk, Index& off) { return view.a_locate_tile(i, t, kk, off); });
        }
        if (!tma_b) {
          gather_b.copy(tid, bytes_b, gB,
                        [&](auto& i, Index kk, Index& off) { return view.b_locate_tile(i, t, kk, off); });
        }
        view.advance(t, Cfg::kTileK);
      } else {
        if (!tma_a) {
          gather_a.copy(tid, bytes_a, gA,
                        [&](auto& i, Index kk, Index& off) { return view.a_locate(i, k0 + kk, off); });
        }
        if (!tma_b) {
          gather_b.copy(tid, bytes_b, gB,
                        [&](auto& i, Index kk, Index& off) { return view.b_locate(i, k0 + kk, off); });
        }
      }
      ring.producer_commit(cursor);
      cursor.advance();
    }
  }
};

template <class Cfg>
struct WgmmaConsumer {
  // Accumulates `k_tiles` stages into `accum` (cleared first). With kBatchInFlight the wgmma batch of a stage
  // is still running while the next stage is awaited, and the stage before it is released. `signals`: this
  // thread releases stages for its warpgroup.
  template <class FragA, class FragB, class Accum>
  __device__ static void mma(typename Cfg::TiledMma& tiled_mma, const FragA& tCrA, const FragB& tCrB, Accum& accum,
                             const Ring<Cfg::kStages>& ring, RingCursor<Cfg::kStages>& cursor, int k_tiles,
                             bool signals) {
    using namespace cute;
    clear(accum);
    tiled_mma.accumulate_ = GMMA::ScaleOut::One;
    RingCursor<Cfg::kStages> release = cursor;
    warpgroup_fence_operand(accum);
    CUTE_NO_UNROLL
    for (int kt = 0; kt < k_tiles; ++kt) {
      ring.consumer_wait(cursor);
      warpgroup_fence_operand(accum);
      warpgroup_arrive();
      gemm(tiled_mma, tCrA(_, _, _, cursor.stage), tCrB(_, _, _, cursor.stage), accum);
      warpgroup_commit_batch();
      if constexpr (Cfg::kBatchInFlight) {
        warpgroup_wait<1>();
        if (kt > 0) {
          ring.consumer_release(release, signals);
          release.advance();
        }
      } else {
        warpgroup_wait<0>();
        ring.consumer_release(release, signals);
        release.advance();
      }
      warpgroup_fence_operand(accum);
      cursor.advance();
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(accum);
    if (Cfg::kBatchInFlight && k_tiles > 0) ring.consumer_release(release, signals);
  }
};

}  // namespace tiledispatch::kernels::sm90
