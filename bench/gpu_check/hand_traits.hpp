// A representative hand-written instance set for the GPU check while the generated `tests`/`tiny` sets are
// not built yet: every pipeline, both schedulers, both epilogues, every specialization, merged groups,
// wave_k = 2, fp16/bf16/fp32, 2D/3D, the three directions, two-stage, explicit GEMM, split image, ping-pong
// (num_wave_groups 2, Hopper path only), and a stream-K configuration that is not implemented, to show how
// it reports.
// Each TD_HAND line spells the traits struct of docs/architecture.md §2a, member by member; the hand sets are
// built for sm_90a (run_gpu_check.sh), so their traits name it.
#pragma once

#include "tiledispatch/kernels/implicit_gemm_instance.hpp"
#include "tiledispatch/runtime/instance.hpp"

// Every traits member a parameter: TD_HAND below and TD_HAND_SK (hand_streamk.cu) fix the ones their sets keep.
#define TD_HAND_TRAITS(NAME, DIR, ND, DT, SPEC, TM, TN, TK, WM, WN, WK, WTM, WTN, WTK, VA, VB, VC, PIPE, SCHED, EPI, \
                       DSB, GM, TWO, EXPL, SPLIT, SK, RED, PERS, WG)                                          \
  struct NAME##_traits {                                                                                      \
    static constexpr Arch kArch = Arch::kSm90a;                                                               \
    static constexpr ConvDirection kDirection = ConvDirection::DIR;                                           \
    static constexpr int kNDimSpatial = ND;                                                                   \
    static constexpr DataType kDataType = DataType::DT;                                                       \
    static constexpr ConvSpecialization kSpecialization = ConvSpecialization::SPEC;                          \
    static constexpr int kTileM = TM, kTileN = TN, kTileK = TK;                                               \
    static constexpr int kWaveM = WM, kWaveN = WN, kWaveK = WK;                                               \
    static constexpr int kWarpTileM = WTM, kWarpTileN = WTN, kWarpTileK = WTK;                                \
    static constexpr int kVectorSizeA = VA, kVectorSizeB = VB, kVectorSizeC = VC;                             \
    static constexpr Pipeline kPipeline = Pipeline::PIPE;                                                     \
    static constexpr Scheduler kScheduler = Scheduler::SCHED;                                                 \
    static constexpr Epilogue kEpilogue = Epilogue::EPI;                                                      \
    static constexpr bool kDoubleSmemBuffer = DSB;                                                            \
    static constexpr int kNumWaveGroups = WG;                                                                 \
    static constexpr int kNumGroupsToMerge = GM;                                                              \
    static constexpr bool kSplitImage = SPLIT;                                                                \
    static constexpr bool kExplicitGemm = EXPL;                                                               \
    static constexpr bool kTwoStage = TWO;                                                                    \
    static constexpr bool kStreamK = SK;                                                                      \
    static constexpr StreamKReduction kStreamKReduction = StreamKReduction::RED;                              \
    static constexpr bool kStreamKPersistent = PERS;                                                          \
    static constexpr int kBlockPerCu = 1;                                                                     \
  };                                                                                                          \
  struct NAME final : ImplicitGemmInstance<NAME##_traits> {                                                   \
    std::string_view name() const override { return #NAME; }                                                 \
  };

// Stream-K off or not implemented (kTree, not persistent): the reduction fields are fixed.
#define TD_HAND(NAME, DIR, ND, DT, SPEC, TM, TN, TK, WM, WN, WK, WTM, WTN, WTK, VA, VB, VC, PIPE, SCHED, EPI, DSB, \
                GM, TWO, EXPL, SPLIT, SK, WG)                                                                   \
  TD_HAND_TRAITS(NAME, DIR, ND, DT, SPEC, TM, TN, TK, WM, WN, WK, WTM, WTN, WTK, VA, VB, VC, PIPE, SCHED, EPI, \
                 DSB, GM, TWO, EXPL, SPLIT, SK, kTree, false, WG)
