#include "hand_bwd_weight_transposed.hpp"
#include "hand_traits.hpp"

namespace tiledispatch::hand {
// clang-format off
//      name                              dir          nd dtype  spec                   tile          waves   warp tile   vec     pipeline       scheduler   epilogue  dsb    gm 2st   expl   split  sk     wg
TD_HAND(bwdw_fp16_compv3_128x128x32,      kBwdWeight, 2, kFp16, kDefault,              128,128,32,   2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_bf16_mem_inter_default_epi,  kBwdWeight, 2, kBf16, kDefault,              64,64,64,     2,2,1,  16,16,16,   4,4,4,  kMem,          kInterwave, kDefault,  false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp16_compv1_32x16x64,        kBwdWeight, 2, kFp16, kDefault,              32,16,64,     2,1,1,  16,16,16,   4,2,2,  kBasicV1,      kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp16_basicasync_64x64x64,    kBwdWeight, 2, kFp16, kDefault,              64,64,64,     2,2,1,  16,16,16,   8,8,8,  kBasicAsyncV1, kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp32_two_stage_64x64x32,     kBwdWeight, 2, kFp32, kDefault,              64,64,32,     2,2,1,  16,16,8,    4,4,4,  kCompV3,       kIntrawave, kCShuffle, false, 1, true,  false, false, false, 1)
TD_HAND(bwdw_fp16_two_stage_vec1,         kBwdWeight, 2, kFp16, kDefault,              64,64,32,     2,2,1,  32,32,16,   1,1,1,  kCompV3,       kIntrawave, kCShuffle, false, 1, true,  false, false, false, 1)
TD_HAND(bwdw_fp16_explicit_gemm_1x1s1p0,  kBwdWeight, 2, kFp16, kFilter1x1Stride1Pad0, 64,64,32,     2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, true,  false, false, 1)
TD_HAND(bwdw_fp16_gm4_compv3_64x64x32,    kBwdWeight, 2, kFp16, kDefault,              64,64,32,     2,2,1,  16,16,16,   1,1,1,  kCompV3,       kIntrawave, kCShuffle, false, 4, false, false, false, false, 1)
TD_HAND(bwdw_bf16_3d_compv4_dsb,          kBwdWeight, 3, kBf16, kDefault,              64,64,32,     2,2,1,  16,16,16,   2,2,2,  kCompV4,       kIntrawave, kCShuffle, true,  1, false, false, false, false, 1)
TD_HAND(bwdw_fp16_compv6_wk2_64x64x64,    kBwdWeight, 2, kFp16, kDefault,              64,64,64,     2,1,2,  32,32,16,   8,8,8,  kCompV6,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp32_split_image_mem_vec1,   kBwdWeight, 2, kFp32, kDefault,              64,32,32,     2,1,1,  16,16,8,    1,1,1,  kMem,          kIntrawave, kDefault,  false, 1, false, false, true,  false, 1)
TD_HAND(bwdw_fp16_streamk_not_impl,       kBwdWeight, 2, kFp16, kDefault,              64,64,64,     2,2,1,  16,16,16,   8,8,8,  kBasicAsyncV1, kIntrawave, kCShuffle, false, 1, false, false, false, true,  1)
// clang-format on

void add_hand_bwd_weight(InstanceList& list) {
  list.push_back(std::make_unique<bwdw_fp16_compv3_128x128x32>());
  list.push_back(std::make_unique<bwdw_bf16_mem_inter_default_epi>());
  list.push_back(std::make_unique<bwdw_fp16_compv1_32x16x64>());
  list.push_back(std::make_unique<bwdw_fp16_basicasync_64x64x64>());
  list.push_back(std::make_unique<bwdw_fp32_two_stage_64x64x32>());
  list.push_back(std::make_unique<bwdw_fp16_two_stage_vec1>());
  list.push_back(std::make_unique<bwdw_fp16_explicit_gemm_1x1s1p0>());
  list.push_back(std::make_unique<bwdw_fp16_gm4_compv3_64x64x32>());
  list.push_back(std::make_unique<bwdw_bf16_3d_compv4_dsb>());
  list.push_back(std::make_unique<bwdw_fp16_compv6_wk2_64x64x64>());
  list.push_back(std::make_unique<bwdw_fp32_split_image_mem_vec1>());
  list.push_back(std::make_unique<bwdw_fp16_streamk_not_impl>());
  add_hand_bwd_weight_transposed(list);
}
}  // namespace tiledispatch::hand
