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

// MN-major B by one TMA box per atom column (kAtomN of N by tile_k; tma.hpp), issued by the elected
// producer thread. fwd has a K-major B (one tiled box per stage) and needs nothing here.
template <class Cfg, ConvDirection Direction = Cfg::kDirection>
struct AtomBoxesB {
  template <class View, class Index>
  __device__ void begin(const View&, Index, Index) {}
};

template <class Cfg>
struct AtomBoxesB<Cfg, ConvDirection::kBwdData> {
  using Index = typename Cfg::Index;
  Index n0 = 0;
  __device__ void begin(const typename Cfg::View&, Index n_begin, Index) { n0 = n_begin; }
  // Weights (C/G, taps, K): the tile's channels n0 + E*i, the k-tile's tap and output channels.
  template <class SmemB, class KTile>
  __device__ void issue(const typename Cfg::View&, const TmaOperands& tma, uint64_t* full, const SmemB& sB,
                        int stage, const KTile& t, int32_t group_block) const {
    const int32_t k = group_block * tma.b_group_step + int32_t(t.r0);
    CUTE_UNROLL
    for (int i = 0; i < Cfg::kTileN / Cfg::kAtomN; ++i) {
      tma_load_3d(&tma.b, full, &sB(i * Cfg::kAtomN, 0, stage), int32_t(n0) + i * Cfg::kAtomN, int32_t(t.tap), k);
    }
  }
};

template <class Cfg>
struct AtomBoxesB<Cfg, ConvDirection::kBwdWeight> {
  using Index = typename Cfg::Index;
  using View = typename Cfg::View;
  static constexpr int kAtoms = Cfg::kTileN / Cfg::kAtomN;
  static constexpr bool k3D = Cfg::Base::kNDim == 3;
  // Per atom column: its tap's im2col offset, W and H packed in one register (16 atom columns of 8 channels,
  // Cfg::kColumnsB, spilled 276 bytes with a register per offset), D apart in 3D; and its input channel.
  uint32_t offset_wh[kAtoms];
  uint16_t offset_d[k3D ? kAtoms : 1];
  int32_t channel[kAtoms];
  typename View::Pixel pixel;  // the output pixel of the next k-tile's first GEMM-K index
  typename View::Pixel step;   // tile_k output pixels as split_pixel's digits
  __device__ void begin(const View& view, Index n_begin, Index k_begin) {
    CUTE_UNROLL
    for (int i = 0; i < kAtoms; ++i) {
      uint16_t offset[3];
      view.im2col_column(n_begin + i * Cfg::kAtomN, offset, channel[i]);
      offset_wh[i] = uint32_t(offset[0]) | uint32_t(offset[1]) << 16;
      if constexpr (k3D) offset_d[i] = offset[2];
    }
    pixel = view.split_pixel(k_begin);
    step = view.split_pixel(Cfg::kTileK);
  }
  // The input through the filter window: the k-tile's tile_k output pixels, one box per atom column.
  template <class SmemB, class KTile>
  __device__ void issue(const View& view, const TmaOperands& tma, uint64_t* full, const SmemB& sB, int stage,
                        const KTile&, int32_t) {
    int32_t corner[4];
    view.im2col_corner(pixel, corner);
    CUTE_UNROLL
    for (int i = 0; i < kAtoms; ++i) {
      const uint16_t offset[3] = {uint16_t(offset_wh[i]), uint16_t(offset_wh[i] >> 16),
                                  k3D ? offset_d[i] : uint16_t(0)};
      tma_load_im2col<Cfg::Base::kNDim>(&tma.b, full, &sB(i * Cfg::kAtomN, 0, stage), channel[i], corner, offset);
    }
    view.add_pixels(pixel, step);
  }
};

template <class Cfg>
struct CpAsyncProducer {
  using Index = typename Cfg::Index;
  using View = typename Cfg::View;
  using Element = typename Cfg::ElementGlobal;
  using GatherA = ProducerGather<Cfg, Cfg::Base::kAKMajor, Cfg::kTileM, Cfg::Base::kAccessA, typename View::AInfo>;
  using GatherB = ProducerGather<Cfg, Cfg::Base::kBKMajor, Cfg::kTileN, Cfg::Base::kAccessB, typename View::BInfo>;
  static constexpr uint32_t kStageBytesA = Cfg::kTileM * Cfg::kTileK * sizeof(typename Cfg::ElementMma);
  static constexpr uint32_t kStageBytesB = Cfg::kTileN * Cfg::kTileK * sizeof(typename Cfg::ElementMma);

  // Whether operand A / B of this problem comes by TMA rather than by gathers (the host encoded its tensor map).
  // The host launches a column variant only where its column operand comes by TMA (sm90_gemm), so that operand's
  // gathers are not compiled there.
  __device__ static bool tma_a(const TmaOperands& tma) {
    return Cfg::kColumnsA || ((Cfg::kTmaA || Cfg::kTmaIm2colA) && tma.use_a);
  }
  __device__ static bool tma_b(const TmaOperands& tma) {
    return Cfg::kColumnsB || ((Cfg::kTmaB || Cfg::kTmaAtomsB) && tma.use_b);
  }
  // With both operands by TMA one elected thread fills the ring; the other producer threads have no work.
  __device__ static bool gathers(const TmaOperands& tma) { return !(tma_a(tma) && tma_b(tma)); }

  // The diagonal mode (Cfg::kDiagonal, called by the one elected thread): k-tile kt is filter tap kt over all
  // GM groups of block `group_block`: one im2col box of tile_k channels for A, and for B the GM diagonal blocks
  // into block gl of the stage (Cfg::SmemLayoutBDiagonal): group gl's weights of the tap,
  //   fwd       (taps*C/G, K) box (C/G, K/G) at (tap*C/G, (g0+gl)*K/G)
  //   bwd_data  (C/G, taps, K) box (C/G, 1, K/G) at (0, tap, (g0+gl)*K/G).
  // Pixels past the GEMM's M are zero-filled by TMA and never stored.
  template <class SmemA, class SmemBDiagonal>
  __device__ static void load_diagonal(const View& view, const SmemA& sA, const SmemBDiagonal& sBd,
                                       const TmaOperands& tma, const Ring<Cfg::kStages>& ring,
                                       RingCursor<Cfg::kStages>& cursor, Index m0, int32_t group_block,
                                       Index kt_begin, int k_tiles) {
    if constexpr (Cfg::kDiagonal) {
      constexpr uint32_t kBytes =
          (Cfg::kTileM * Cfg::kTileK + Cfg::kTileN * Cfg::kGroupTileK) * uint32_t(Cfg::kElemBytes);
      int32_t corner[4];
      view.im2col_corner(m0, corner);
      // The run is the per-group GEMM K the host matched (C/G fwd, K/G bwd_data): k-tile kt_begin is a tap's start.
      auto t = View::KTile::start(view.s, kt_begin * Cfg::kTileK, Index(Cfg::kGroupTileK));
      const int32_t channel = group_block * tma.a_group_step;
      const int32_t row_b = group_block * tma.b_group_step;
      constexpr bool kFwd = Cfg::kDirection == ConvDirection::kFwd;
      constexpr int kGroupOutputs = kFwd ? Cfg::kGroupTileN : Cfg::kGroupTileK;  // K/G: B's rows per group
      CUTE_NO_UNROLL
      for (int kt = 0; kt < k_tiles; ++kt) {
        ring.producer_acquire(cursor);
        const int stage = cursor.stage;
        ring.producer_expect(cursor, kBytes);
        uint64_t* full = &ring.full[stage];
        uint16_t offset[3];
        view.im2col_offsets(t, offset);
        tma_load_im2col<Cfg::Base::kNDim>(&tma.a, full, &sA(0, 0, stage), channel, corner, offset);
        CUTE_UNROLL
        for (int gl = 0; gl < Cfg::kGroupsToMerge; ++gl) {
          const int32_t row = row_b + gl * kGroupOutputs;
          if constexpr (kFwd) {
            tma_load_2d(&tma.b, full, &sBd(0, 0, gl, stage), int32_t(t.tap) * Cfg::kGroupTileK, row);
          } else {
            tma_load_3d(&tma.b, full, &sBd(0, 0, gl, stage), 0, int32_t(t.tap), row);
          }
        }
        t.next_tap(view.s);
        cursor.advance();
      }
    }
  }

  // The elected producer thread's TMA boxes of a CTA tile: the window corner and the B atom columns are set
  // once per tile, then `issue` sends one k-tile's boxes into a stage.
  struct TmaIssue {
    bool by_a, by_b;
    int32_t row_a, row_b, group_block;
    int32_t corner[4] = {};  // im2col A: the window corner of the tile's first GEMM row
    AtomBoxesB<Cfg> boxes_b;
    __device__ TmaIssue(const View& view, const TmaOperands& tma, Index m0, Index n0, int32_t group_block_,
                        Index kt_begin)
        : by_a(tma_a(tma)),
          by_b(tma_b(tma)),
          row_a(group_block_ * tma.a_group_step + int32_t(m0)),
          row_b(group_block_ * tma.b_group_step + int32_t(n0)),
          group_block(group_block_) {
      if constexpr (Cfg::kTmaIm2colA) {
        if (by_a) view.im2col_corner(m0, corner);
      }
      if constexpr (Cfg::kTmaAtomsB) {
        if (by_b) boxes_b.begin(view, n0, kt_begin * Cfg::kTileK);
      }
    }
    __device__ uint32_t bytes() const { return (by_a ? kStageBytesA : 0u) + (by_b ? kStageBytesB : 0u); }
    // Cfg::kColumnsA: the k-tile's columns of kColumnK channels, one im2col box each, walked from the k-tile
    // cursor `t` (FwdView::next_column). A column past the filter's last tap (the tail of GEMM K where taps do
    // not fill the last k-tile) is a box at the channel extent: TMA fills it with zeros, as the gathers do.
    template <class SmemA, class KTile>
    __device__ void issue_columns_a(const View& view, const TmaOperands& tma, uint64_t* full, const SmemA& sA,
                                    int stage, const KTile& t) const {
      KTile column = t;
      Index channel = view.run_channel(t);
      CUTE_UNROLL
      for (int j = 0; j < Cfg::kTileK / Cfg::kColumnK; ++j) {
        if (j > 0) view.next_column(column, channel, Cfg::kColumnK);
        uint16_t offset[3] = {};
        int32_t c = int32_t(view.s.C);
        if (view.column_in_filter(column)) {
          view.im2col_offsets(column, offset);
          c = group_block * tma.a_group_step + int32_t(channel);
        }
        tma_load_im2col<Cfg::Base::kNDim>(&tma.a, full, &sA(0, j * Cfg::kColumnK, stage), c, corner, offset);
      }
    }
    template <class SmemA, class SmemB, class KTile>
    __device__ void issue(const View& view, const TmaOperands& tma, uint64_t* full, const SmemA& sA,
                          const SmemB& sB, int stage, const KTile& t, Index k0) {
      if constexpr (Cfg::kTmaB) {
        if (by_b) tma_load_2d(&tma.b, full, &sB(0, 0, stage), int32_t(k0), row_b);
      }
      if constexpr (Cfg::kColumnsA) {
        if (by_a) issue_columns_a(view, tma, full, sA, stage, t);
      } else if constexpr (Cfg::kTmaIm2colA) {
        if (by_a) {
          uint16_t offset[3];
          view.im2col_offsets(t, offset);
          tma_load_im2col<Cfg::Base::kNDim>(&tma.a, full, &sA(0, 0, stage),
                                             group_block * tma.a_group_step + int32_t(t.r0), corner, offset);
        }
      }
      if constexpr (Cfg::kTmaAtomsB) {
        if (by_b) boxes_b.issue(view, tma, full, sB, stage, t, group_block);
      }
      if constexpr (Cfg::kTmaA) {
        if (by_a) {
          CUTE_UNROLL
          for (int i = 0; i < Cfg::kTileM / Cfg::kAtomM; ++i) {
            tma_load_2d(&tma.a, full, &sA(i * Cfg::kAtomM, 0, stage), row_a + i * Cfg::kAtomM, int32_t(k0));
          }
        }
      }
    }
  };

  // The TMA boxes' k-tile cursor, one k-tile on: by a tap's channel run (tile addressing), or by whole runs
  // where A's columns span several taps (Cfg::kColumnsA; the host sends them by TMA only where the problem has
  // tile or tap addressing).
  template <class KTile>
  __device__ static void advance_k_tile(const View& view, KTile& t, bool by_tile) {
    if (by_tile) {
      view.advance(t, Cfg::kTileK);
    } else if constexpr (Cfg::kColumnsA) {
      view.advance_runs(t, Cfg::kTileK);
    }
  }

  // Both operands by TMA (the elected thread alone; `gathers` false). A loop of its own, so that no gather
  // state stays live across it: sharing `load`'s loop cost the TMA rows 1-6 % on the H100 once tap addressing
  // added gather state (the producer keeps 40 registers there).
  template <class SmemA, class SmemB>
  __device__ static void load_tma(const View& view, const SmemA& sA, const SmemB& sB, const TmaOperands& tma,
                                  const Ring<Cfg::kStages>& ring, RingCursor<Cfg::kStages>& cursor, Index m0,
                                  Index n0, int32_t group_block, Index kt_begin, int k_tiles) {
    TmaIssue boxes(view, tma, m0, n0, group_block, kt_begin);
    // im2col A and the B atom columns need tile addressing; the host uses TMA for them only where the problem
    // has it.
    const bool by_tile = view.tile_addressing(Cfg::kTileK);
    auto t = view.k_tile(kt_begin * Cfg::kTileK);
    CUTE_NO_UNROLL
    for (int kt = 0; kt < k_tiles; ++kt) {
      ring.producer_acquire(cursor);
      ring.producer_expect(cursor, boxes.bytes());
      boxes.issue(view, tma, &ring.full[cursor.stage], sA, sB, cursor.stage, t, (kt_begin + kt) * Cfg::kTileK);
      advance_k_tile(view, t, by_tile);
      cursor.advance();
    }
  }

  // At least one operand gathered by the producer warpgroup (the other may come by TMA).
  template <class SmemA, class SmemB>
  __device__ static void load(const View& view, const Element* gA, const Element* gB, const SmemA& sA,
                              const SmemB& sB, const TmaOperands& tma, const Ring<Cfg::kStages>& ring,
                              RingCursor<Cfg::kStages>& cursor, Index m0, Index n0, int32_t group_block,
                              Index kt_begin, int k_tiles, int tid) {
    using namespace cute;
    const bool by_tma_a = tma_a(tma), by_tma_b = tma_b(tma);
    GatherA gather_a;
    GatherB gather_b;
    if (!by_tma_a) gather_a.init(tid, m0, sA(_, _, 0), [&](Index m) { return view.a_prepare(m); });
    if (!by_tma_b) gather_b.init(tid, n0, sB(_, _, 0), [&](Index n) { return view.b_prepare(n); });
    // im2col A and tiled B need tile addressing; the host uses TMA for them only where the problem has it.
    const bool by_tile = view.tile_addressing(Cfg::kTileK);
    if constexpr (GatherA::kSharedLinePlace) {
      // A is gathered then (its im2col box needs tile addressing); B may still be one tiled box (fwd weights)
      if (!by_tile && view.tap_addressing(Cfg::kTileK) && !by_tma_a && (Cfg::kTmaB || !by_tma_b)) {
        load_by_taps(view, gA, gB, sA, sB, tma, gather_a, gather_b, ring, cursor, m0, n0, group_block, kt_begin,
                     k_tiles, tid);
        return;
      }
    }
    auto t = view.k_tile(kt_begin * Cfg::kTileK);  // advanced by adds per k-tile (tile addressing)
    TmaIssue boxes(view, tma, m0, n0, group_block, kt_begin);
    CUTE_NO_UNROLL
    for (int kt = 0; kt < k_tiles; ++kt) {
      const Index k0 = (kt_begin + kt) * Cfg::kTileK;
      ring.producer_acquire(cursor);
      const int stage = cursor.stage;
      if (tid == 0) {
        ring.producer_expect(cursor, boxes.bytes());
        boxes.issue(view, tma, &ring.full[stage], sA, sB, stage, t, k0);
      }
      const uint32_t bytes_a = uint32_t(stage) * kStageBytesA, bytes_b = uint32_t(stage) * kStageBytesB;
      if (by_tile) {
        if (!by_tma_a) {
          gather_a.copy(tid, bytes_a, gA,
                        [&](auto& i, Index kk, Index& off) { return view.a_locate_tile(i, t, kk, off); });
        }
        if (!by_tma_b) {
          gather_b.copy(tid, bytes_b, gB,
                        [&](auto& i, Index kk, Index& off) { return view.b_locate_tile(i, t, kk, off); });
        }
        view.advance(t, Cfg::kTileK);
      } else {
        if (!by_tma_a) {
          gather_a.copy(tid, bytes_a, gA,
                        [&](auto& i, Index kk, Index& off) { return view.a_locate(i, k0 + kk, off); });
        }
        if (!by_tma_b) {
          gather_b.copy(tid, bytes_b, gB,
                        [&](auto& i, Index kk, Index& off) { return view.b_locate(i, k0 + kk, off); });
        }
        if constexpr (Cfg::kColumnsA) {
          if (by_tma_a) advance_k_tile(view, t, false);
        }
      }
      ring.producer_commit(cursor);
      cursor.advance();
    }
  }

  // Tap addressing (conv_gemm_view.hpp): k-tiles of whole taps (tile_k a multiple of the tap's run, e.g. a
  // stem padded to C/G = 8), A gathered, B gathered or one tiled TMA box. A thread's A chunks lie in one tap
  // of each k-tile, `a_tap` past its start; `t` walks that tap by adds. Dividing out the tap per chunk instead
  // left the one producer warpgroup latency-bound (H100, padded stem fwd: 2x slower).
  template <class SmemA, class SmemB, class GA, class GB>
  __device__ static void load_by_taps(const View& view, const Element* gA, const Element* gB, const SmemA& sA,
                                      const SmemB& sB, const TmaOperands& tma, GA& gather_a, GB& gather_b,
                                      const Ring<Cfg::kStages>& ring, RingCursor<Cfg::kStages>& cursor, Index m0,
                                      Index n0, int32_t group_block, Index kt_begin, int k_tiles, int tid) {
    const Index place = GatherA::line_place(tid);
    const Index a_tap = place - place % view.tap_run();
    auto t = view.k_tile(kt_begin * Cfg::kTileK + a_tap);
    TmaIssue boxes(view, tma, m0, n0, group_block, kt_begin);  // B's tiled box where TMA moves it
    CUTE_NO_UNROLL
    for (int kt = 0; kt < k_tiles; ++kt) {
      const Index k0 = (kt_begin + kt) * Cfg::kTileK;
      ring.producer_acquire(cursor);
      const int stage = cursor.stage;
      if (tid == 0) {  // the full barrier's one arrival besides the gathers
        ring.producer_expect(cursor, boxes.bytes());
        boxes.issue(view, tma, &ring.full[stage], sA, sB, stage, t, k0);
      }
      gather_a.copy(tid, uint32_t(stage) * kStageBytesA, gA,
                    [&](auto& i, Index kk, Index& off) { return view.a_locate_tile(i, t, kk - a_tap, off); });
      if (!boxes.by_b) {
        gather_b.copy(tid, uint32_t(stage) * kStageBytesB, gB,
                      [&](auto& i, Index kk, Index& off) { return view.b_locate(i, k0 + kk, off); });
      }
      view.advance_runs(t, Cfg::kTileK);
      ring.producer_commit(cursor);
      cursor.advance();
    }
  }
};

template <class Cfg>
struct WgmmaConsumer {
  // Accumulates `k_tiles` stages into `accum` (cleared first). With kBatchInFlight the wgmma batch of a stage
  // is still running while the next stage is awaited, and the stage before it is released. `signals`: this
  // thread releases stages for its warpgroup. `fold`: the outer accumulator of this tile (Cfg::kFolds; null
  // where no split is longer than kFoldTiles), of which tile thread `thread` owns fold[i * kTileThreads + thread].
  // `issued()` runs once the last stage has been awaited and its wgmma batch issued: from there on the ring
  // may run ahead to the next tile's stages (ping-pong hands the tensor cores to the other warpgroup).
  // `issue(stage)` issues the wgmma batch of one stage into `accum` (issue_tile or issue_diagonal).
  template <class Accum, class Issue, class Issued>
  __device__ static void mma(Accum& accum, const Ring<Cfg::kStages>& ring, RingCursor<Cfg::kStages>& cursor,
                             int k_tiles, bool signals, float* fold, int thread, Issue&& issue, Issued&& issued) {
    using namespace cute;
    clear(accum);
    RingCursor<Cfg::kStages> release = cursor;
    bool folded = false;  // whether the outer accumulator holds a partial sum of this unit
    int chain = 0;        // k-tiles in the wgmma accumulators since the last fold
    warpgroup_fence_operand(accum);
    CUTE_NO_UNROLL
    for (int kt = 0; kt < k_tiles; ++kt) {
      ring.consumer_wait(cursor);
      warpgroup_fence_operand(accum);
      warpgroup_arrive();
      issue(cursor.stage);
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
      if constexpr (Cfg::kFolds) {
        if (++chain == Cfg::kFoldTiles && kt + 1 < k_tiles && fold != nullptr) {
          warpgroup_wait<0>();
          warpgroup_fence_operand(accum);
          CUTE_UNROLL
          for (int i = 0; i < size(accum); ++i) {
            float& outer = fold[i * Cfg::kTileThreads + thread];
            outer = folded ? __fadd_rn(outer, accum(i)) : accum(i);
          }
          folded = true;
          chain = 0;
          clear(accum);
          warpgroup_fence_operand(accum);
        }
      }
    }
    issued();
    warpgroup_wait<0>();
    warpgroup_fence_operand(accum);
    if (Cfg::kBatchInFlight && k_tiles > 0) ring.consumer_release(release, signals);
    if constexpr (Cfg::kFolds) {
      if (folded) {
        CUTE_UNROLL
        for (int i = 0; i < size(accum); ++i) {
          accum(i) = __fadd_rn(fold[i * Cfg::kTileThreads + thread], accum(i));
        }
      }
    }
  }

  // One stage of the whole tile: wgmma m64 x WG_N over every k16 block of the stage.
  template <class FragA, class FragB, class Accum>
  __device__ static void issue_tile(typename Cfg::TiledMma& tiled_mma, const FragA& tCrA, const FragB& tCrB,
                                    Accum& accum, int stage) {
    using namespace cute;
    tiled_mma.accumulate_ = GMMA::ScaleOut::One;
    gemm(tiled_mma, tCrA(_, _, _, stage), tCrB(_, _, _, stage), accum);
  }

  // One stage of the diagonal mode (Cfg::kDiagonal): k16 block kk of the stage belongs to group
  // gl = 16*kk / kGroupTileK; one wgmma m64 x kGroupTileN multiplies it by block gl of B (its k16 block
  // kk % (kGroupTileK / 16)) into the accumulator columns [gl, gl + 1) * kGroupTileN. `tCrA`: the tile MMA's A
  // descriptors (MMA,MMA_M,MMA_K,PIPE), the same for both MMAs (warpgroups along M only); `tCrBd`:
  // (MMA,MMA_N,MMA_K,GM,PIPE) of the diagonal blocks.
  template <class FragA, class FragBd, class Accum>
  __device__ static void issue_diagonal(typename Cfg::DiagonalMma& diagonal_mma, const FragA& tCrA,
                                        const FragBd& tCrBd, Accum& accum, int stage) {
    using namespace cute;
    constexpr int kStepsPerGroup = Cfg::kGroupTileK / 16;
    diagonal_mma.accumulate_ = GMMA::ScaleOut::One;
    CUTE_UNROLL
    for (int kk = 0; kk < Cfg::kTileK / 16; ++kk) {
      const int gl = kk / kStepsPerGroup;  // compile-time after unrolling: a fixed register slice
      auto columns = group_columns(accum, gl);
      gemm(diagonal_mma, tCrA(_, _, kk, stage), tCrBd(_, _, kk % kStepsPerGroup, gl, stage), columns);
    }
  }

  // The accumulators of group gl's columns, as the diagonal MMA's fragment ((2, 2, kGroupTileN / 8), MMA_M, 1): the
  // tile fragment's mode 0 is (column pair, row half, 8-column block), so group gl is blocks
  // [gl, gl + 1) * kGroupTileN / 8 of it, a sub-layout at a fixed register offset.
  template <class Accum>
  __device__ static auto group_columns(Accum& accum, int gl) {
    using namespace cute;
    constexpr int kGroupBlocks = Cfg::kGroupTileN / 8;
    static_assert(decltype(size<2>(accum))::value == 1, "one warpgroup tile along N");
    const auto s = stride(accum.layout());
    const auto shape = make_shape(make_shape(_2{}, _2{}, Int<kGroupBlocks>{}), size<1>(accum), _1{});
    const auto strides = make_stride(make_stride(get<0, 0>(s), get<0, 1>(s), get<0, 2>(s)), get<1>(s), get<2>(s));
    return make_tensor(accum.data() + gl * kGroupBlocks * get<0, 2>(s), make_layout(shape, strides));
  }
};

}  // namespace tiledispatch::kernels::sm90
