// Stream-K backward-weight instances of the hand-written GPU check set: both reductions, persistent and
// data-parallel, the three dtypes, both epilogues, wave_k = 2, merged groups, 3D, and one split_image
// instance (the large-tensor battery entry). Traits as docs/architecture.md §2a; TD_HAND (hand_traits.hpp)
// fixes the stream-K fields, so TD_HAND_SK passes them to TD_HAND_TRAITS and fixes the rest instead.
#include "hand_traits.hpp"

#define TD_HAND_SK(NAME, ND, DT, TM, TN, TK, WM, WN, WK, WTM, WTN, WTK, VA, VB, VC, PIPE, EPI, GM, SPLIT, RED, PERS) \
  TD_HAND_TRAITS(NAME, kBwdWeight, ND, DT, kDefault, TM, TN, TK, WM, WN, WK, WTM, WTN, WTK, VA, VB, VC, PIPE,         \
                 kIntrawave, EPI, false, GM, false, false, SPLIT, true, RED, PERS, 1)

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
