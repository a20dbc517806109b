#include "hand_merged_groups.hpp"
#include "hand_traits.hpp"

namespace tiledispatch::hand {
// clang-format off
//      name                              dir        nd dtype  spec                   tile          waves   warp tile   vec     pipeline       scheduler   epilogue  dsb    gm 2st   expl   split  sk     wg
TD_HAND(bwdd_fp16_compv3_128x128x32,      kBwdData, 2, kFp16, kDefault,              128,128,32,   2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdd_bf16_mem_inter_default_epi,  kBwdData, 2, kBf16, kDefault,              64,64,32,     2,2,1,  16,16,16,   4,4,4,  kMem,          kInterwave, kDefault,  false, 1, false, false, false, false, 1)
TD_HAND(bwdd_fp16_compv1_vec1_64x32x32,   kBwdData, 2, kFp16, kDefault,              64,32,32,     2,1,1,  16,16,16,   1,1,1,  kBasicV1,      kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdd_fp32_compv4_dsb_64x64x32,    kBwdData, 2, kFp32, kDefault,              64,64,32,     2,2,1,  16,16,8,    4,4,4,  kCompV4,       kIntrawave, kCShuffle, true,  1, false, false, false, false, 1)
TD_HAND(bwdd_fp16_3d_compv6_64x64x64,     kBwdData, 3, kFp16, kDefault,              64,64,64,     2,2,1,  32,32,16,   2,2,2,  kCompV6,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdd_bf16_compv2_wk2_1x1s1p0,     kBwdData, 2, kBf16, kFilter1x1Stride1Pad0, 64,64,64,     1,2,2,  32,16,16,   8,8,8,  kBasicV2,      kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdd_fp32_compv3_16x64x32,        kBwdData, 2, kFp32, kDefault,              16,64,32,     1,1,1,  16,16,8,    1,1,1,  kCompV3,       kIntrawave, kDefault,  false, 1, false, false, false, false, 1)
TD_HAND(bwdd_fp16_gm2_compv3_64x64x32,    kBwdData, 2, kFp16, kDefault,              64,64,32,     2,2,1,  16,16,16,   1,1,1,  kCompV3,       kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(bwdd_fp16_basicasync_1x1p0,       kBwdData, 2, kFp16, kFilter1x1Pad0,        64,64,32,     2,2,1,  16,16,16,   8,8,8,  kBasicAsyncV1, kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
// clang-format on

void add_hand_bwd_data(InstanceList& list) {
  list.push_back(std::make_unique<bwdd_fp16_compv3_128x128x32>());
  list.push_back(std::make_unique<bwdd_bf16_mem_inter_default_epi>());
  list.push_back(std::make_unique<bwdd_fp16_compv1_vec1_64x32x32>());
  list.push_back(std::make_unique<bwdd_fp32_compv4_dsb_64x64x32>());
  list.push_back(std::make_unique<bwdd_fp16_3d_compv6_64x64x64>());
  list.push_back(std::make_unique<bwdd_bf16_compv2_wk2_1x1s1p0>());
  list.push_back(std::make_unique<bwdd_fp32_compv3_16x64x32>());
  list.push_back(std::make_unique<bwdd_fp16_gm2_compv3_64x64x32>());
  list.push_back(std::make_unique<bwdd_fp16_basicasync_1x1p0>());
  add_hand_merged_groups_bwd_data(list);
}
}  // namespace tiledispatch::hand
