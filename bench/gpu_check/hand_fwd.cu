#include "hand_merged_groups.hpp"
#include "hand_traits.hpp"

namespace tiledispatch::hand {
// clang-format off
//      name                              dir   nd dtype  spec                   tile          waves   warp tile   vec     pipeline       scheduler   epilogue  dsb    gm 2st   expl   split  sk     wg
TD_HAND(fwd_fp16_compv3_128x128x32,       kFwd, 2, kFp16, kDefault,              128,128,32,   2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(fwd_bf16_compv4_dsb_64x64x32,     kFwd, 2, kBf16, kDefault,              64,64,32,     2,2,1,  16,16,16,   4,4,4,  kCompV4,       kIntrawave, kDefault,  true,  1, false, false, false, false, 1)
TD_HAND(fwd_fp16_mem_inter_64x128x64,     kFwd, 2, kFp16, kDefault,              64,128,64,    1,2,1,  32,32,16,   4,4,4,  kMem,          kInterwave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(fwd_fp16_compv1_vec1_64x64x32,    kFwd, 2, kFp16, kDefault,              64,64,32,     2,2,1,  32,32,8,    1,1,1,  kBasicV1,      kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(fwd_bf16_compv2_inter_dsb_wk2,    kFwd, 2, kBf16, kDefault,              128,64,32,    2,1,2,  32,32,16,   2,2,2,  kBasicV2,      kInterwave, kCShuffle, true,  1, false, false, false, false, 1)
TD_HAND(fwd_fp32_compv5_64x64x32,         kFwd, 2, kFp32, kDefault,              64,64,32,     2,2,1,  16,16,8,    4,4,4,  kCompV5,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(fwd_fp32_compv6_k4_default_epi,   kFwd, 2, kFp32, kDefault,              128,64,16,    2,2,1,  32,16,4,    1,1,1,  kCompV6,       kIntrawave, kDefault,  false, 1, false, false, false, false, 1)
TD_HAND(fwd_fp16_basicasync_1x1s1p0,      kFwd, 2, kFp16, kFilter1x1Stride1Pad0, 64,32,64,     2,1,1,  16,16,32,   8,8,4,  kBasicAsyncV1, kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(fwd_fp16_compasync_1x1p0,         kFwd, 2, kFp16, kFilter1x1Pad0,        64,64,64,     2,2,1,  16,16,16,   8,8,8,  kCompAsync,    kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(fwd_bf16_wavelet_3x3_gm8,         kFwd, 2, kBf16, kFilter3x3,            64,64,32,     1,1,1,  32,32,16,   8,1,8,  kWavelet,      kIntrawave, kCShuffle, false, 8, false, false, false, false, 1)
TD_HAND(fwd_fp16_3d_compv3_64x64x32,      kFwd, 3, kFp16, kDefault,              64,64,32,     2,2,1,  16,16,16,   4,4,4,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(fwd_fp32_3d_mem_inter_vec1,       kFwd, 3, kFp32, kDefault,              64,32,16,     2,1,1,  16,16,8,    1,1,1,  kMem,          kInterwave, kDefault,  false, 1, false, false, false, false, 1)
TD_HAND(fwd_fp16_gm8_64x16x16,            kFwd, 2, kFp16, kDefault,              64,16,16,     1,1,1,  16,16,16,   8,1,8,  kCompV3,       kIntrawave, kCShuffle, false, 8, false, false, false, false, 1)
TD_HAND(fwd_fp16_split_image_128x64x32,   kFwd, 2, kFp16, kDefault,              128,64,32,    2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, false, true,  false, 1)
TD_HAND(fwd_fp16_explicit_gemm_64x64x32,  kFwd, 2, kFp16, kDefault,              64,64,32,     2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, true,  false, false, 1)
TD_HAND(fwd_fp32_wk2_compv3_64x64x32,     kFwd, 2, kFp32, kDefault,              64,64,32,     2,2,2,  16,16,8,    4,4,4,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(fwd_fp16_wg2_ping_pong,          kFwd, 2, kFp16, kDefault,              64,64,32,     2,2,1,  16,16,16,   8,8,8,  kCompV3,       kIntrawave, kCShuffle, false, 1, false, false, false, false, 2)
// clang-format on

void add_hand_fwd(InstanceList& list) {
  list.push_back(std::make_unique<fwd_fp16_compv3_128x128x32>());
  list.push_back(std::make_unique<fwd_bf16_compv4_dsb_64x64x32>());
  list.push_back(std::make_unique<fwd_fp16_mem_inter_64x128x64>());
  list.push_back(std::make_unique<fwd_fp16_compv1_vec1_64x64x32>());
  list.push_back(std::make_unique<fwd_bf16_compv2_inter_dsb_wk2>());
  list.push_back(std::make_unique<fwd_fp32_compv5_64x64x32>());
  list.push_back(std::make_unique<fwd_fp32_compv6_k4_default_epi>());
  list.push_back(std::make_unique<fwd_fp16_basicasync_1x1s1p0>());
  list.push_back(std::make_unique<fwd_fp16_compasync_1x1p0>());
  list.push_back(std::make_unique<fwd_bf16_wavelet_3x3_gm8>());
  list.push_back(std::make_unique<fwd_fp16_3d_compv3_64x64x32>());
  list.push_back(std::make_unique<fwd_fp32_3d_mem_inter_vec1>());
  list.push_back(std::make_unique<fwd_fp16_gm8_64x16x16>());
  list.push_back(std::make_unique<fwd_fp16_split_image_128x64x32>());
  list.push_back(std::make_unique<fwd_fp16_explicit_gemm_64x64x32>());
  list.push_back(std::make_unique<fwd_fp32_wk2_compv3_64x64x32>());
  list.push_back(std::make_unique<fwd_fp16_wg2_ping_pong>());
  add_hand_merged_groups_fwd(list);
}
}  // namespace tiledispatch::hand
