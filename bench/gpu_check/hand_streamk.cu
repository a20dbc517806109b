// Stream-K backward-weight instances of the hand-written GPU check set: both reductions, persistent and
// data-parallel, the three dtypes, both epilogues, wave_k = 2, merged groups, 3D, and one split_image
// instance (the large-tensor battery entry). Traits as docs/architecture.md §2a; TD_HAND (hand_traits.hpp)
// fixes the stream-K fields, so this file spells them itself.
#include "hand_traits.hpp"

#define TD_HAND_SK(NAME, ND, DT, TM, TN, TK, WM, WN, WK, WTM, WTN, WTK, VA, VB, VC, PIPE, EPI, GM, SPLIT, RED, PERS) \
  struct NAME##_traits {                                                                                          \
    static constexpr ConvDirection kDirection = ConvDirection::kBwdWeight;                                        \
    static constexpr int kNDimSpatial = ND;                                                                       \
    static constexpr DataType kDataType = DataType::DT;                                                           \
    static constexpr ConvSpecialization kSpecialization = ConvSpecialization::kDefault;                          \
    static constexpr int kTileM = TM, kTileN = TN, kTileK = TK;                                                   \
    static constexpr int kWaveM = WM, kWaveN = WN, kWaveK = WK;                                                   \
    static constexpr int kWarpTileM = WTM, kWarpTileN = WTN, kWarpTileK = WTK;                                    \
    static constexpr int kVectorSizeA = VA, kVectorSizeB = VB, kVectorSizeC = VC;                                 \
    static constexpr Pipeline kPipeline = Pipeline::PIPE;                                                         \
    static constexpr Scheduler kScheduler = Scheduler::kIntrawave;                                                \
    static constexpr Epilogue kEpilogue = Epilogue::EPI;                                                          \
    static constexpr bool kDoubleSmemBuffer = false;                                                              \
    static constexpr int kNumWaveGroups = 1;                                                                      \
    static constexpr int kNumGroupsToMerge = GM;                                                                  \
    static constexpr bool kSplitImage = SPLIT;                                                                    \
    static constexpr bool kExplicitGemm = false;                                                                  \
    static constexpr bool kTwoStage = false;                                                                      \
    static constexpr bool kStreamK = true;                                                                        \
    static constexpr StreamKReduction kStreamKReduction = StreamKReduction::RED;                                  \
    static constexpr bool kStreamKPersistent = PERS;                                                              \
    static constexpr int kBlockPerCu = 1;                                                                         \
  };                                                                                                              \
  struct NAME final : ImplicitGemmInstance<NAME##_traits> {                                                       \
    std::string_view name() const override { return #NAME; }                                                     \
  };

namespace tiledispatch::hand {
// clang-format off
//         name                               nd dtype  tile         waves  warp tile  vec    pipeline        epilogue   gm split  reduction persistent
TD_HAND_SK(bwdw_sk_fp16_tree_64x64x64,        2, kFp16, 64,64,64,    2,2,1, 16,16,16,  8,8,8, kBasicAsyncV1,  kCShuffle, 1, false, kTree,   false)
TD_HAND_SK(bwdw_sk_fp16_linear_pers_64x64x64, 2, kFp16, 64,64,64,    2,2,1, 16,16,16,  8,8,8, kBasicAsyncV1,  kCShuffle, 1, false, kLinear, true)
TD_HAND_SK(bwdw_sk_bf16_tree_pers_128x32x32,  2, kBf16, 128,32,32,   2,1,1, 32,32,16,  4,4,4, kCompV3,        kDefault,  1, false, kTree,   true)
TD_HAND_SK(bwdw_sk_fp32_linear_64x16x64,      2, kFp32, 64,16,64,    2,1,1, 16,16,8,   4,4,4, kCompV3,        kCShuffle, 1, false, kLinear, false)
TD_HAND_SK(bwdw_sk_fp16_wk2_gm2_16x32x64,     2, kFp16, 16,32,64,    1,1,2, 16,16,16,  1,1,1, kMem,           kCShuffle, 2, false, kTree,   false)
TD_HAND_SK(bwdw_sk_bf16_3d_linear_32x16x64,   3, kBf16, 32,16,64,    2,1,1, 16,16,16,  2,2,2, kCompV6,        kDefault,  1, false, kLinear, true)
TD_HAND_SK(bwdw_sk_fp16_split_image_pers,     2, kFp16, 64,64,64,    2,2,1, 16,16,16,  8,8,8, kCompV3,        kCShuffle, 1, true,  kTree,   true)
// clang-format on

void add_hand_streamk(InstanceList& list) {
  list.push_back(std::make_unique<bwdw_sk_fp16_tree_64x64x64>());
  list.push_back(std::make_unique<bwdw_sk_fp16_linear_pers_64x64x64>());
  list.push_back(std::make_unique<bwdw_sk_bf16_tree_pers_128x32x32>());
  list.push_back(std::make_unique<bwdw_sk_fp32_linear_64x16x64>());
  list.push_back(std::make_unique<bwdw_sk_fp16_wk2_gm2_16x32x64>());
  list.push_back(std::make_unique<bwdw_sk_bf16_3d_linear_32x16x64>());
  list.push_back(std::make_unique<bwdw_sk_fp16_split_image_pers>());
}
}  // namespace tiledispatch::hand
