// The second kernel generation (docs/pipelines.md, "Hopper path"): what an implicit-GEMM traits struct
// means on sm_90a, and whether it can be built there. A configuration the Hopper path cannot build keeps
// running on the first generation (implicit_gemm_config.hpp); nothing changes in its name or instance string.
//
// CK field            Hopper path
//   tile m/n/k        the CTA tile; each consumer warpgroup owns a (WG_M, WG_N) slice of wgmma's M and N, WG_M a
//                     multiple of 64; wgmma's M and N are tile m and n, or n and m for transposed bwd_weight
//                     (kTransposed: tile_m below 64, the meaning of the tile unchanged)
//   waves m x n       consumer warpgroups = max(1, wave_m * wave_n / 2) (a CK wave is half a warpgroup),
//                     stacked along M when tile_m allows, else along N
//   num_wave_groups   2: ping-pong; each of the two consumer warpgroups owns whole tiles, alternately (one
//                     multiplies while the other stores); 1: the warpgroups share each tile (cooperative)
//   warp tile k       the K of one wgmma batch: the stage's k blocks are issued between commit and wait
//   pipeline          the table's stage count is the minimum of the shared-memory ring, deepened to fill
//                     shared memory (at most kMaxStages); double-fragment pipelines (compv4, compv6,
//                     comp_async, wavelet) keep one wgmma batch in flight (warpgroup_wait<1>)
//   vector a/b        the producer's cp.async width where it gathers (operands moved by TMA ignore it)
//   vector c          the epilogue's store width
#pragma once

#include <cute/tensor.hpp>
// (cute/tensor.hpp first: the atom headers rely on what it declares)
#include <cute/arch/mma_sm90.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "tiledispatch/kernels/implicit_gemm_config.hpp"

namespace tiledispatch::kernels::sm90 {

constexpr int kWarpgroupThreads = 128;
constexpr int kMaxStages = 8;
constexpr size_t kRingBarrierBytes = 2 * kMaxStages * 8;  // a full and an empty mbarrier per stage
constexpr size_t kOrderBarrierBytes = 2 * 8;              // ping-pong: whose turn it is to multiply
constexpr size_t kSmemAlign = 1024;  // the 128-byte swizzle repeats every 1024 bytes
constexpr int kZeroRowMinOutputs = 16384;  // warpgroup tiles whose bwd_data zeros go by bulk copies (kZeroRowBytes)

// Largest of 64, 32, 16, 8 elements dividing `extent`: the MN extent of the swizzle atom (128/64/32-byte or
// interleaved) of a 16-bit MN-major operand.
constexpr int mn_atom_extent(int extent) {
  return extent % 64 == 0 ? 64 : extent % 32 == 0 ? 32 : extent % 16 == 0 ? 16 : 8;
}

template <class Elem, cute::GMMA::Major Major, int MN, int K>
constexpr auto make_gmma_smem_atom() {
  using namespace cute;
  if constexpr (Major == GMMA::Major::K) {
    constexpr int kRowBytes = K * int(sizeof(Elem));
    if constexpr (kRowBytes % 128 == 0) return GMMA::Layout_K_SW128_Atom<Elem>{};
    else if constexpr (kRowBytes % 64 == 0) return GMMA::Layout_K_SW64_Atom<Elem>{};
    else return GMMA::Layout_K_SW32_Atom<Elem>{};
  } else {
    constexpr int kExtent = mn_atom_extent(MN);
    if constexpr (kExtent == 64) return GMMA::Layout_MN_SW128_Atom<Elem>{};
    else if constexpr (kExtent == 32) return GMMA::Layout_MN_SW64_Atom<Elem>{};
    else if constexpr (kExtent == 16) return GMMA::Layout_MN_SW32_Atom<Elem>{};
    else return GMMA::Layout_MN_INTER_Atom<Elem>{};
  }
}

// `Columns`: the configuration's column variant (kColumnsA / kColumnsB below), a second kernel the instance
// launches for the problems whose column operand the swizzled stages would gather. Dense problems keep the
// swizzled stages: there the column boxes were 1.1-2.9x slower (H100, session 23: fwd 128x64x32 on a dense
// 64-channel 3x3 layer 34.8 -> 69.0 us, bwd_weight 64x128x32 37.6 -> 109.6 us).
template <class Traits, bool Columns = false>
struct Sm90Config {
  using Base = ImplicitGemmConfig<Traits>;  // addressing (View, Index), element types, the stage table
  // The traits' arch: whether it has wgmma (the host pass cannot see the device target), and its limits.
  using Target = typename Base::Target;
  static constexpr size_t kSmemLimitBytes = Base::kSmemLimitBytes;
  using Index = typename Base::Index;
  using View = typename Base::View;
  using ElementGlobal = typename Base::ElementGlobal;
  using ElementMma = typename Base::ElementMma;
  static constexpr ConvDirection kDirection = Traits::kDirection;
  static constexpr DataType kDataType = Traits::kDataType;
  static constexpr int kElemBytes = Base::kElemBytes;
  static constexpr int kTileM = Traits::kTileM, kTileN = Traits::kTileN, kTileK = Traits::kTileK;
  static constexpr int kGroupsToMerge = Traits::kNumGroupsToMerge;
  static constexpr int kVectorA = Traits::kVectorSizeA, kVectorB = Traits::kVectorSizeB;
  static constexpr int kVectorC = Traits::kVectorSizeC;

  // GEMMs one launch carries (kernel.cuh, Sm90Params): bwd_data runs the stride phases of a strided problem in
  // one launch, 2^ndim of them at stride 2 (more phases run one launch each); the other directions one GEMM.
  static constexpr int kMaxGemms = kDirection == ConvDirection::kBwdData ? (Traits::kNDimSpatial == 3 ? 8 : 4) : 1;

  static constexpr int kConsumerWarpgroups = Traits::kWaveM * Traits::kWaveN >= 4 ? 2 : 1;
  // Ping-pong (num_wave_groups 2): the two consumer warpgroups take turns, each with a tile of its own.
  static constexpr bool kPingPong = Traits::kNumWaveGroups == 2;
  static constexpr int kTileWarpgroups = kPingPong ? 1 : kConsumerWarpgroups;  // warpgroups sharing a tile
  static constexpr int kTileThreads = kWarpgroupThreads * kTileWarpgroups;
  static constexpr int kTilesInFlight = kConsumerWarpgroups / kTileWarpgroups;  // tiles a CTA holds at once
  // Transposed bwd_weight: wgmma's M is at least 64 per warpgroup, while grouped layers' K/G (bwd_weight's M,
  // so tile_m) is often 16 or 32. Where tile_m is not a multiple of 64 and tile_n is, the tile is computed as
  // its transpose, dW^T = X^T dY: wgmma M runs over tile_n (the input through the filter window, the B stages)
  // and wgmma N over tile_m (the output gradient, the A stages), both read MN-major as they are stored. The
  // stages, the producer and the tile (tile_m rows of K, tile_n columns of taps*C/G) keep their meaning; only
  // the consumer's operand roles and the epilogue (DirectEpilogue::store_transposed) change.
  static constexpr bool kTransposed =
      kDirection == ConvDirection::kBwdWeight && kTileM % 64 != 0 && kTileN % 64 == 0;
  static constexpr int kMmaM = kTransposed ? kTileN : kTileM;  // the tile as wgmma computes it: (kMmaM, kMmaN)
  static constexpr int kMmaN = kTransposed ? kTileM : kTileN;
  static constexpr bool kWarpgroupsAlongM = kMmaM % (64 * kTileWarpgroups) == 0;  // stacked along wgmma's M
  static constexpr int kWarpgroupsM = kWarpgroupsAlongM ? kTileWarpgroups : 1;
  static constexpr int kWarpgroupsN = kWarpgroupsAlongM ? 1 : kTileWarpgroups;
  static constexpr int kWarpgroupMmaM = kMmaM / kWarpgroupsM;  // one warpgroup's wgmma M and N
  static constexpr int kWarpgroupMmaN = kMmaN / kWarpgroupsN;
  // A warpgroup's slice of tile_m and tile_n: the extents in which it reads the A and B stages.
  static constexpr int kWarpgroupTileM = kTransposed ? kWarpgroupMmaN : kWarpgroupMmaM;
  static constexpr int kWarpgroupTileN = kTransposed ? kWarpgroupMmaM : kWarpgroupMmaN;
  static constexpr int kProducerThreads = kWarpgroupThreads;
  static constexpr int kConsumerThreads = kWarpgroupThreads * kConsumerWarpgroups;
  static constexpr int kThreads = kProducerThreads + kConsumerThreads;
  static constexpr int kAccumulatorsPerThread = kTileM * kTileN / kTileThreads;

  // Register reallocation per role (setmaxnreg): with two consumer warpgroups the launch grants 168 registers a
  // thread (64 K / 384 threads, in steps of 8), and a consumer thread holding 128 accumulators spills. The
  // consumers keep their accumulators and kConsumerRegisterMargin more; the producer warpgroup keeps the rest,
  // at least 40 where it mostly issues TMA (fwd, bwd_data: the 56x56 3x3 layer 650 -> 707 TFLOP/s fwd, 602 -> 693
  // bwd_data on H100) and 96 for bwd_weight, whose producer gathers more often (56 or 40 left it short: the
  // dev_suite's dense bwd_weight rows lost up to 15 %; at 96 the 56x56 layer gains 446 -> 478). Tiles of 32
  // accumulators or fewer (128x64, 64x128, 256x16) leave the producer 104 or more, which its gathers need for
  // their per-chunk state: on a stem padded to C/G = 8, fwd 128x64x32 took 977 us at 40, 416 at 56 and 281 at
  // 120, and at 40 128x64x64 spilled 1 KB. No reallocation for them (margin 128) made their TMA path up to
  // 20 % slower; 56 / 224 for 128x128 (margin 160) its fwd TMA rows 1-4 % (H100, hand instances side by side).
  // The consumers take exactly what the producer gives back: setmaxnreg.inc waits until the CTA's pool holds
  // it, so asking for more would hang.
  // Transposed tiles (tile_m below 64) hold few accumulators, and their producer gathers the input wherever C/G
  // is not a multiple of the box width: there every role keeps the launch's 168 (the producer spilled at 96,
  // 140 bytes for 32x128x64).
  static constexpr int kLaunchRegisters = Target::kRegistersPerSm / kThreads / 8 * 8;
  static constexpr int kConsumerRegisterMargin = 168;
  static constexpr int kProducerRegisterFloor = kDirection == ConvDirection::kBwdWeight ? 96 : 40;
  static constexpr int kProducerRegisters = std::clamp(
      (kLaunchRegisters * kThreads - (kAccumulatorsPerThread + kConsumerRegisterMargin) * kConsumerThreads) /
          kProducerThreads / 8 * 8,
      kProducerRegisterFloor, kLaunchRegisters);
  static constexpr bool kReallocatesRegisters =
      kConsumerWarpgroups == 2 && !kTransposed && kProducerRegisters < kLaunchRegisters;
  static constexpr int kConsumerRegisters =
      (kLaunchRegisters * kThreads - kProducerRegisters * kProducerThreads) / kConsumerThreads / 8 * 8;

  static constexpr cute::GMMA::Major kMajorA = Base::kAKMajor ? cute::GMMA::Major::K : cute::GMMA::Major::MN;
  static constexpr cute::GMMA::Major kMajorB = Base::kBKMajor ? cute::GMMA::Major::K : cute::GMMA::Major::MN;
  // wgmma's operands: the A and B stages, or B and A (kTransposed; both MN-major, which wgmma reads for 16-bit types).
  static constexpr cute::GMMA::Major kMmaMajorA = kTransposed ? kMajorB : kMajorA;
  static constexpr cute::GMMA::Major kMmaMajorB = kTransposed ? kMajorA : kMajorB;

  // Accumulation (docs/pipelines.md, "Accumulation"): wgmma, like mma.sync, adds into its fp32 accumulators
  // rounding toward zero, a bias that grows with the chain. Backward weight's GEMM K is unbounded, so there
  // the wgmma accumulators cover at most kFoldTiles k-tiles (about Base::kFoldChainMmas k16 steps) before a
  // round-to-nearest FADD adds them into an outer fp32 accumulator. The outer accumulator lives in global
  // memory, one tile per persistent CTA in the workspace (slot i * consumer threads + thread: coalesced),
  // touched only at folds: it costs neither registers nor shared memory (which would cost stages). Ping-pong
  // CTAs hold two tiles, so two outer accumulators.
  static constexpr bool kFolds = kDirection == ConvDirection::kBwdWeight;
  static constexpr int kFoldTiles = Base::kFoldChainMmas * 16 / kTileK;

  static constexpr size_t kStageBytes = size_t(kTileM + kTileN) * size_t(kTileK) * size_t(kElemBytes);
  static constexpr int kMinStages = Base::kStages;
  static constexpr size_t kBarrierBytes = kRingBarrierBytes + (kPingPong ? kOrderBarrierBytes : 0);
  // bwd_data's staged epilogue stores the tap-less stride phases' zeros by bulk copies of a row of zeros (a
  // warpgroup's columns, epilogue.cuh) after the barriers, on warpgroup tiles of at least 16384 outputs: on
  // smaller ones (copies of at most 256 bytes, or 64 rows of 128 columns) the copies ran 0.63-1.02x the 16-byte
  // stores' speed on the 1x1 stride-2 rows, on these 0.97-1.12x (H200, session 46). It moves no stage
  // count: the stages and the rest are whole KB, and the barriers leave at least 752 bytes of the last one.
  static constexpr size_t kZeroRowBytes = kDirection == ConvDirection::kBwdData && kElemBytes == 2 &&
                                                  kWarpgroupMmaM * kWarpgroupMmaN >= kZeroRowMinOutputs
                                              ? size_t(kWarpgroupMmaN) * 2
                                              : 0;
  // Stages that fit beside the barriers, the row of zeros and `other` bytes of shared memory.
  static constexpr int fill_stages(size_t other) {
    const long long left =
        (long long)kSmemLimitBytes - (long long)(kBarrierBytes + kZeroRowBytes + kSmemAlign + other);
    return left < 0 ? 0 : int(left / (long long)kStageBytes);
  }

  // The staged epilogue (epilogue.cuh, StagedEpilogue), CK's cshuffle: fwd and bwd_data tiles with 16-byte
  // output stores (vector_size_c >= 8) pass their results through shared memory, kEpilogueColumns columns of a
  // consumer warpgroup's tile at a time (stmatrix, then row-wise 16-byte stores), instead of transposing them
  // in registers with shuffles (epilogue default). It issues a quarter of the instructions, which are most of a
  // tile's time where GEMM K is short (1x1 layers, stride phases: 14-39 % faster on the H100), but its shared
  // memory can cost the ring a stage (128x128x64: 7 -> 6; 4-7 % slower on long bwd_data GEMMs in session 12,
  // as fast in session 13), so both stay selectable. Each consumer warpgroup has kWarpgroupMmaM rows of staged
  // outputs and one kEpilogueRowInfoBytes slot per row for its output address (View::CInfo). Only where the ring
  // keeps its minimum and at least 4 stages (or all it had, if fewer).
  static constexpr int kEpilogueColumns = kWarpgroupMmaN < 64 ? kWarpgroupMmaN : 64;
  static constexpr size_t kEpilogueRowInfoBytes = 32;
  static constexpr size_t kEpilogueWarpgroupBytes =
      size_t(kWarpgroupMmaM) * (size_t(kEpilogueColumns) * kElemBytes + kEpilogueRowInfoBytes);
  static constexpr bool kStagedEpilogueShape = Traits::kEpilogue == Epilogue::kCShuffle &&
                                               kDirection != ConvDirection::kBwdWeight && kVectorC >= 8 &&
                                               kElemBytes == 2 && kWarpgroupMmaN > 0 && kWarpgroupMmaN % 16 == 0 &&
                                               kWarpgroupMmaN % kEpilogueColumns == 0;
  static constexpr int kPlainFillStages = fill_stages(0);
  static constexpr int kStagedFillStages = fill_stages(kConsumerWarpgroups * kEpilogueWarpgroupBytes + kSmemAlign);
  static constexpr bool kStagedEpilogue =
      kStagedEpilogueShape && kStagedFillStages >= kMinStages &&
      kStagedFillStages >= (kPlainFillStages < 4 ? kPlainFillStages : 4);
  static constexpr size_t kEpilogueSmemBytes = kStagedEpilogue ? kConsumerWarpgroups * kEpilogueWarpgroupBytes : 0;

  static constexpr int kFillStages = kStagedEpilogue ? kStagedFillStages : kPlainFillStages;
  static constexpr int kStages = kFillStages < kMinStages ? kMinStages
                                 : kFillStages > kMaxStages ? kMaxStages
                                                            : kFillStages;
  static constexpr bool kBatchInFlight = Base::kStrategy.fragment_double_buffer;
  static constexpr size_t kOperandSmemBytes = size_t(kStages) * kStageBytes;
  // Layout: the operand ring (from a 1024-byte boundary), the staged epilogue (from the next one: its rows are
  // swizzled as TMA swizzles them, a pattern over 1024-byte blocks), the barriers.
  static constexpr size_t kStagingOffset =
      kEpilogueSmemBytes == 0 ? kOperandSmemBytes : (kOperandSmemBytes + kSmemAlign - 1) / kSmemAlign * kSmemAlign;
  static constexpr size_t kBarrierOffset = kStagingOffset + kEpilogueSmemBytes;
  static constexpr size_t kZeroRowOffset = kBarrierOffset + kBarrierBytes;  // 16-byte aligned
  static constexpr size_t kSmemBytes = kSmemAlign + kZeroRowOffset + kZeroRowBytes;
  // The staged epilogue's stores by TMA (epilogue.cuh; the host decides per problem): where a staged row is a
  // swizzle span (32, 64 or 128 bytes; the staging is swizzled as TMA swizzles it) and a warpgroup's staging
  // keeps the 1024-byte blocks.
  static constexpr int kEpilogueRowBytes = kEpilogueColumns * kElemBytes;
  static constexpr bool kTmaStoreC = kStagedEpilogue &&
                                     (kEpilogueRowBytes == 32 || kEpilogueRowBytes == 64 || kEpilogueRowBytes == 128) &&
                                     kEpilogueWarpgroupBytes % kSmemAlign == 0;

  // Operands that may come by TMA (tma.hpp); whether they do is decided per problem (row pitch, extents,
  // unit stride for bwd_data, channels per group a multiple of tile_k for im2col).
  static constexpr int kSpanK = kTileK * kElemBytes;  // bytes of a K-major stage row: the swizzle span
  static constexpr bool kSpanFitsBox = kSpanK == 32 || kSpanK == 64 || kSpanK == 128;
  static constexpr bool kTmaB = kDirection == ConvDirection::kFwd && kGroupsToMerge == 1 && kSpanFitsBox;
  // MN-major A (bwd_weight output gradient) by one box of kAtomM x tile_k per atom row: 128-byte swizzled boxes
  // of 64 of M, or (transposed, tile_m below 64) 64- or 32-byte ones of 32 or 16.
  static constexpr int kAtomM = mn_atom_extent(kWarpgroupTileM);
  // Merged groups ((gl, k) rows, contiguous in NDHWGK) take the same boxes, GM x K/G rows on per group block.
  static constexpr bool kTmaA = kDirection == ConvDirection::kBwdWeight && kAtomM >= 16;
  static constexpr bool kTmaIm2colA = kDirection != ConvDirection::kBwdWeight && kGroupsToMerge == 1 &&
                                      kSpanFitsBox && kTileM <= 256;
  // fwd A in columns of 16 bytes (8 channels): the narrow tiles few-channel layers pick (tile_k 32, tile_n up
  // to 64: a stem padded to C/G = 8 has K = 32 or 64) keep their A stages in wgmma's interleaved K-major layout,
  // where each column of kColumnK channels over the tile's rows is one dense (tile_m, 16-byte) block: exactly
  // one im2col box. A k-tile then comes as tile_k / kColumnK boxes, each of its own tap, also where the k-tile
  // spans several taps (C/G = 8 or 16: tap addressing), which a swizzled stage cannot take from TMA (a box
  // would have to fill 16 bytes of every 64-byte row). Without it the padded stem's producer gathered 512
  // 16-byte chunks per k-tile and waited on them (H100, ncu: 52 % of its stalls).
  static constexpr int kColumnK = 16 / kElemBytes;
  static constexpr bool kColumnsShapeA =
      kTmaIm2colA && kDirection == ConvDirection::kFwd && kElemBytes == 2 && kTileK == 32 && kTileN <= 64;
  static constexpr bool kColumnsA = Columns && kColumnsShapeA;
  // MN-major B (bwd_data weights, bwd_weight input) by one box of kAtomN x tile_k per atom column. An im2col box
  // holds channels of one tap, so bwd_weight's boxes come by TMA only where kAtomN divides the tap's run of
  // GM x C/G channels (merged groups: rows of 128 bytes where one group's C/G = 32 gives 64). Transposed, the
  // atom is as wide as tile_m (K/G's extent, at most 32: the grouped layers this mapping serves have C/G = K/G,
  // so their input comes by TMA) rather than the warpgroup's 64 or more of tile_n, which C/G = 16 or 32 never fills.
  //
  // bwd_weight B in columns of 16 bytes (8 channels): the 64-row tiles whose K is a stem's (64 output channels)
  // keep their B stages in wgmma's interleaved MN-major layout, where each 8-channel column over the k-tile's
  // pixels is one dense (16-byte, tile_k) block: one im2col box. C/G = 8 (a stem padded to 8 channels: one tap
  // per column) then comes by TMA instead of by 512 gathered chunks per k-tile.
  static constexpr bool kColumnsShapeB = kDirection == ConvDirection::kBwdWeight && kElemBytes == 2 &&
                                         kGroupsToMerge == 1 && !kTransposed && kTileM == 64 && kTileK == 32;
  static constexpr bool kColumnsB = Columns && kColumnsShapeB;
  static constexpr bool kHasColumns = kColumnsShapeA || kColumnsShapeB;  // whether a column variant exists
  static constexpr int kAtomN = kColumnsB ? kColumnK : mn_atom_extent(kTransposed ? kTileM : kWarpgroupTileN);
  static constexpr bool kTmaAtomsB = kDirection != ConvDirection::kFwd &&
                                     (kDirection == ConvDirection::kBwdWeight || kGroupsToMerge == 1) &&
                                     (kAtomN >= 16 || kColumnsB);

  // Merged groups without zero MACs (fwd and bwd_data, num_groups_to_merge GM > 1): where the problem's
  // per-group GEMM extents are exactly kGroupTileK = tile_k / GM (C/G fwd, K/G bwd_data) and kGroupTileN =
  // tile_n / GM (K/G fwd, C/G bwd_data), a k-tile of CK's merged GEMM K order (tap, gl, channel) is one filter
  // tap over all GM groups. A then comes as ONE im2col box of tile_k contiguous channels, B as GM TMA boxes
  // holding only the diagonal (kGroupTileN x kGroupTileK) blocks (SmemLayoutBDiagonal, in the B stages' space),
  // and the consumer issues per k16 step one wgmma m64 x kGroupTileN into the accumulator columns of the
  // step's group (a wgmma fragment is N/8 blocks of 4 registers in N order, so a group's columns are
  // contiguous registers and the epilogue is unchanged). Chosen per problem (TmaOperands::diagonal, set by the
  // host); every other problem keeps the block-diagonal zero-filled gathers. Needs wgmma's k16 / n16 steps
  // per group, the warpgroups stacked along M (each owns all GM groups), one box per operand block (the
  // block's contiguous extent a swizzle span), and for bwd_data unit stride (im2col of the output gradient).
  static constexpr int kGroupTileK = kTileK / kGroupsToMerge, kGroupTileN = kTileN / kGroupsToMerge;
  static constexpr int kGroupSpanB =  // bytes of a diagonal B block's contiguous extent: its swizzle span
      (kDirection == ConvDirection::kFwd ? kGroupTileK : kGroupTileN) * kElemBytes;
  static constexpr bool kDiagonal =
      kDirection != ConvDirection::kBwdWeight && kGroupsToMerge > 1 && kTileK % kGroupsToMerge == 0 &&
      kTileN % kGroupsToMerge == 0 && kGroupTileK % 16 == 0 && kGroupTileN % 16 == 0 && kWarpgroupsN == 1 &&
      kSpanFitsBox && kTileM <= 256 && (kGroupSpanB == 32 || kGroupSpanB == 64 || kGroupSpanB == 128);

  // Why the Hopper path cannot build this configuration (empty when it can).
  static constexpr std::string_view not_buildable() {
    if (!Target::kHasWgmma) return "the build does not target sm_90a";
    if (const auto anywhere = Base::not_implemented_anywhere(); !anywhere.empty()) return anywhere;
    if (kDataType == DataType::kFp32) return "fp32 (TF32 wgmma reads K-major operands only)";
    if (Traits::kStreamK) return "stream-K";
    if (Traits::kWaveK != 1) return "wave_k > 1";
    if (Traits::kNumWaveGroups > 2) return "num_wave_groups above 2";
    if (kPingPong && kConsumerWarpgroups != 2) return "ping-pong with fewer than 4 waves (one warpgroup)";
    if (!Base::kStrategy.async_copy || Base::kStages < 2) return "a pipeline without a shared-memory ring";
    if (kWarpgroupMmaM % 64 != 0) return "a warpgroup tile M that is not a multiple of 64";
    if (kWarpgroupMmaN % 8 != 0 || kWarpgroupMmaN > 256) return "a warpgroup tile N outside 8..256 by 8";
    if (kTileK % 16 != 0) return "tile_k not a multiple of 16";
    if (kVectorA * kElemBytes < 4 || kVectorB * kElemBytes < 4) return "2-byte operand vectors (no cp.async)";
    if (kAccumulatorsPerThread > Target::kMaxAccumulatorsPerThread) {
      return "more than the arch's accumulator budget per consumer thread";
    }
    if (kSmemBytes > kSmemLimitBytes) return "shared memory";
    return {};
  }
  static constexpr bool kBuildable = not_buildable().empty();

  // ---- CuTe types (only meaningful when kBuildable; placeholders keep the others instantiable) -----------
  using MmaElement = std::conditional_t<kBuildable, ElementMma, cute::half_t>;
  using MmaOp = decltype(cute::SM90::GMMA::ss_op_selector<
                         MmaElement, MmaElement, float,
                         cute::Shape<cute::_64, cute::Int<kBuildable ? kWarpgroupMmaN : 64>, cute::Int<16>>,
                         kBuildable ? kMmaMajorA : cute::GMMA::Major::K,
                         kBuildable ? kMmaMajorB : cute::GMMA::Major::K>());
  using TiledMma = decltype(cute::make_tiled_mma(
      MmaOp{}, cute::Layout<cute::Shape<cute::Int<kWarpgroupsM>, cute::Int<kWarpgroupsN>, cute::_1>>{}));
  static constexpr int kShapeM = kBuildable ? kTileM : 64, kShapeN = kBuildable ? kTileN : 64;
  static constexpr int kShapeK = kBuildable ? kTileK : 64, kShapeStages = kBuildable ? kStages : 2;
  static constexpr int kShapeAtomM = kBuildable ? kAtomM : 64, kShapeAtomN = kBuildable ? kAtomN : 64;
  // MN-major stages repeat their swizzle atom along K first, so that one TMA box of (atom extent, tile_k)
  // fills a contiguous run of atoms (as CUTLASS's SM90 collectives tile them).
  template <cute::GMMA::Major Major>
  using AtomOrder = std::conditional_t<Major == cute::GMMA::Major::MN, cute::Step<cute::_2, cute::_1, cute::_3>,
                                       cute::Step<cute::_1, cute::_2, cute::_3>>;
  static constexpr cute::GMMA::Major kShapeMajorA = kBuildable ? kMajorA : cute::GMMA::Major::K;
  static constexpr cute::GMMA::Major kShapeMajorB = kBuildable ? kMajorB : cute::GMMA::Major::K;
  // kColumnsA: the interleaved atom (8 rows of 16 bytes), tiled along M first, puts column j of the stage,
  // channels [kColumnK j, kColumnK (j + 1)), at elements [kTileM kColumnK j, kTileM kColumnK (j + 1)).
  using SmemAtomA =
      std::conditional_t<kBuildable && kColumnsA, cute::GMMA::Layout_K_INTER_Atom<MmaElement>,
                         decltype(make_gmma_smem_atom<MmaElement, kShapeMajorA, kShapeAtomM, kShapeK>())>;
  using SmemLayoutA = decltype(cute::tile_to_shape(
      SmemAtomA{},
      cute::make_shape(cute::Int<kShapeM>{}, cute::Int<kShapeK>{}, cute::Int<kShapeStages>{}),
      AtomOrder<kShapeMajorA>{}));
  static_assert(!(kBuildable && kColumnsA) || (SmemLayoutA{}(1, 0, 0) == kColumnK &&
                                                SmemLayoutA{}(0, kColumnK, 0) == kTileM * kColumnK),
                "each column of an A stage is one dense (tile_m, 16-byte) block: one im2col box");
  using SmemLayoutB = decltype(cute::tile_to_shape(
      make_gmma_smem_atom<MmaElement, kShapeMajorB, kShapeAtomN, kShapeK>(),
      cute::make_shape(cute::Int<kShapeN>{}, cute::Int<kShapeK>{}, cute::Int<kShapeStages>{}),
      AtomOrder<kShapeMajorB>{}));
  static_assert(!(kBuildable && kColumnsB) || (SmemLayoutB{}(1, 0, 0) == 1 && SmemLayoutB{}(0, 1, 0) == kAtomN &&
                                                SmemLayoutB{}(kAtomN, 0, 0) == kAtomN * kTileK),
                "each column of a B stage is one dense (16-byte, tile_k) block: one im2col box");

  // The diagonal mode's wgmma (m64 x kGroupTileN x k16 into one group's accumulator columns) and its B stages
  // (kGroupTileN, kGroupTileK, GM, PIPE): one block per merged group, each exactly one TMA box; MN-major blocks
  // (bwd_data) repeat their atom along K, as the tile's stages do.
  static constexpr int kShapeGroupK = kBuildable && kDiagonal ? kGroupTileK : 16;
  static constexpr int kShapeGroupN = kBuildable && kDiagonal ? kGroupTileN : 16;
  static constexpr int kShapeGroups = kBuildable && kDiagonal ? kGroupsToMerge : 1;
  using DiagonalMmaOp =
      decltype(cute::SM90::GMMA::ss_op_selector<MmaElement, MmaElement, float,
                                                cute::Shape<cute::_64, cute::Int<kShapeGroupN>, cute::Int<16>>,
                                                kShapeMajorA, kShapeMajorB>());
  using DiagonalMma = decltype(cute::make_tiled_mma(
      DiagonalMmaOp{}, cute::Layout<cute::Shape<cute::Int<kWarpgroupsM>, cute::_1, cute::_1>>{}));
  using SmemLayoutBDiagonal = decltype(cute::tile_to_shape(
      make_gmma_smem_atom<MmaElement, kShapeMajorB, kShapeGroupN, kShapeGroupK>(),
      cute::make_shape(cute::Int<kShapeGroupN>{}, cute::Int<kShapeGroupK>{}, cute::Int<kShapeGroups>{},
                       cute::Int<kShapeStages>{}),
      std::conditional_t<kShapeMajorB == cute::GMMA::Major::MN, cute::Step<cute::_2, cute::_1, cute::_3, cute::_4>,
                         cute::Step<cute::_1, cute::_2, cute::_3, cute::_4>>{}));
  static_assert(!kDiagonal || cute::cosize(SmemLayoutBDiagonal{}) * kGroupsToMerge <= cute::cosize(SmemLayoutB{}),
                "the diagonal blocks fit the B stages");

  // What the producer's gathers (OperandGather, implicit_gemm_kernel.cuh) read from a config.
  struct Producer {
    using Index = typename Sm90Config::Index;
    using ElementGlobal = typename Sm90Config::ElementGlobal;
    static constexpr int kTileK = Sm90Config::kTileK;
    static constexpr int kThreads = Sm90Config::kProducerThreads;
    static constexpr int kElemBytes = Sm90Config::kElemBytes;
  };
};

}  // namespace tiledispatch::kernels::sm90
