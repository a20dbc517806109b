// Hand instances of merged groups by diagonal blocks (sm90/config.hpp, kDiagonal: no zero MACs): the per-group
// GEMM extents are tile_k / gm and tile_n / gm, so C/G = K/G = 16 (gm 2: the regnet-like G=14 rows; gm 4) and
// 32 (gm 2: the resnext-like rows), ping-pong once; and by the direct kernel (merged_group_direct.cuh) where
// tile_k = tile_n = gm x C/G and C/G = K/G is 2, 4, 8 or 16: 256x64x64 with gm 32, 16 and 8 (16-bit), and in
// fp32 (TF32 MMAs) gm 32, 16, 8 and 4, and 128x64x64 gm 2 for C/G = 32.
// Shared by the GPU check (hand_fwd.cu, hand_bwd_data.cu) and tests/kernels/test_merged_groups_check.cu, which
// also asserts that each mode is chosen exactly where it applies.
#pragma once

#include "hand_traits.hpp"

namespace tiledispatch::hand {
// clang-format off
//      name                              dir       nd dtype  spec      tile          waves   warp tile   vec     pipeline  scheduler   epilogue  dsb    gm 2st   expl   split  sk     wg
TD_HAND(fwd_fp16_gm2_diag_128x32x32,     kFwd, 2, kFp16, kDefault,              128,32,32,    2,1,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kDefault,  false, 2, false, false, false, false, 1)
TD_HAND(fwd_bf16_gm4_diag_128x64x64,     kFwd, 2, kBf16, kDefault,              128,64,64,    2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kDefault,  false, 4, false, false, false, false, 1)
TD_HAND(fwd_fp16_gm2_diag_128x64x64,     kFwd, 2, kFp16, kDefault,              128,64,64,    2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kDefault,  false, 2, false, false, false, false, 1)
TD_HAND(fwd_fp16_gm2_diag_ping_pong,     kFwd, 2, kFp16, kDefault,              128,64,64,    2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kDefault,  false, 2, false, false, false, false, 2)
TD_HAND(bwdd_fp16_gm2_diag_128x32x32,     kBwdData, 2, kFp16, kDefault,              128,32,32,    2,1,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kDefault,  false, 2, false, false, false, false, 1)
TD_HAND(bwdd_bf16_gm4_diag_128x64x64,     kBwdData, 2, kBf16, kDefault,              128,64,64,    2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kDefault,  false, 4, false, false, false, false, 1)
TD_HAND(bwdd_fp16_gm2_diag_128x64x64,     kBwdData, 2, kFp16, kDefault,              128,64,64,    2,2,1,  32,32,16,   8,8,8,  kCompV3,       kIntrawave, kDefault,  false, 2, false, false, false, false, 1)
TD_HAND(fwd_fp16_gm8_direct_256x64x64,   kFwd, 2, kFp16, kDefault,              256,64,64,    2,2,1,  32,32,16,   4,8,8,  kCompV3,       kIntrawave, kDefault,  false, 8, false, false, false, false, 1)
TD_HAND(fwd_bf16_gm16_direct_256x64x64,  kFwd, 2, kBf16, kDefault,              256,64,64,    2,2,1,  32,32,16,   4,8,8,  kCompV3,       kIntrawave, kDefault,  false, 16, false, false, false, false, 1)
TD_HAND(fwd_fp16_gm8_direct_3d_256x64x64, kFwd, 3, kFp16, kDefault,             256,64,64,    2,2,1,  32,32,16,   4,8,8,  kCompV3,       kIntrawave, kDefault,  false, 8, false, false, false, false, 1)
TD_HAND(bwdd_bf16_gm8_direct_256x64x64,  kBwdData, 2, kBf16, kDefault,          256,64,64,    2,2,1,  32,32,16,   4,8,8,  kCompV3,       kIntrawave, kDefault,  false, 8, false, false, false, false, 1)
TD_HAND(bwdd_fp16_gm16_direct_256x64x64, kBwdData, 2, kFp16, kDefault,          256,64,64,    2,2,1,  32,32,16,   4,8,8,  kCompV3,       kIntrawave, kDefault,  false, 16, false, false, false, false, 1)
TD_HAND(bwdd_fp16_gm8_direct_3d_256x64x64, kBwdData, 3, kFp16, kDefault,        256,64,64,    2,2,1,  32,32,16,   4,8,8,  kCompV3,       kIntrawave, kDefault,  false, 8, false, false, false, false, 1)
TD_HAND(bwdd_bf16_gm32_direct_256x64x64, kBwdData, 2, kBf16, kDefault,          256,64,64,    2,2,1,  32,32,16,   4,8,8,  kCompV3,       kIntrawave, kDefault,  false, 32, false, false, false, false, 1)
TD_HAND(fwd_fp32_gm8_direct_256x64x64,   kFwd, 2, kFp32, kDefault,              256,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,       kIntrawave, kDefault,  false, 8, false, false, false, false, 1)
TD_HAND(fwd_fp32_gm4_direct_256x64x64,   kFwd, 2, kFp32, kDefault,              256,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,       kIntrawave, kDefault,  false, 4, false, false, false, false, 1)
TD_HAND(fwd_fp32_gm32_direct_256x64x64,  kFwd, 2, kFp32, kDefault,              256,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,       kIntrawave, kDefault,  false, 32, false, false, false, false, 1)
TD_HAND(bwdd_fp32_gm16_direct_256x64x64, kBwdData, 2, kFp32, kDefault,          256,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,       kIntrawave, kDefault,  false, 16, false, false, false, false, 1)
TD_HAND(bwdd_fp32_gm4_direct_256x64x64,  kBwdData, 2, kFp32, kDefault,          256,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,       kIntrawave, kDefault,  false, 4, false, false, false, false, 1)
TD_HAND(bwdd_fp32_gm8_direct_3d_256x64x64, kBwdData, 3, kFp32, kDefault,        256,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,       kIntrawave, kDefault,  false, 8, false, false, false, false, 1)
TD_HAND(fwd_fp32_gm2_direct_128x64x64,   kFwd, 2, kFp32, kDefault,              128,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,       kIntrawave, kDefault,  false, 2, false, false, false, false, 1)
TD_HAND(bwdd_fp32_gm2_direct_128x64x64,  kBwdData, 2, kFp32, kDefault,          128,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,       kIntrawave, kDefault,  false, 2, false, false, false, false, 1)
// clang-format on

inline void add_hand_merged_groups_fwd(InstanceList& list) {
  list.push_back(std::make_unique<fwd_fp16_gm2_diag_128x32x32>());
  list.push_back(std::make_unique<fwd_bf16_gm4_diag_128x64x64>());
  list.push_back(std::make_unique<fwd_fp16_gm2_diag_128x64x64>());
  list.push_back(std::make_unique<fwd_fp16_gm2_diag_ping_pong>());
  list.push_back(std::make_unique<fwd_fp16_gm8_direct_256x64x64>());
  list.push_back(std::make_unique<fwd_bf16_gm16_direct_256x64x64>());
  list.push_back(std::make_unique<fwd_fp16_gm8_direct_3d_256x64x64>());
  list.push_back(std::make_unique<fwd_fp32_gm8_direct_256x64x64>());
  list.push_back(std::make_unique<fwd_fp32_gm4_direct_256x64x64>());
  list.push_back(std::make_unique<fwd_fp32_gm32_direct_256x64x64>());
  list.push_back(std::make_unique<fwd_fp32_gm2_direct_128x64x64>());
}

inline void add_hand_merged_groups_bwd_data(InstanceList& list) {
  list.push_back(std::make_unique<bwdd_fp16_gm2_diag_128x32x32>());
  list.push_back(std::make_unique<bwdd_bf16_gm4_diag_128x64x64>());
  list.push_back(std::make_unique<bwdd_fp16_gm2_diag_128x64x64>());
  list.push_back(std::make_unique<bwdd_bf16_gm8_direct_256x64x64>());
  list.push_back(std::make_unique<bwdd_fp16_gm16_direct_256x64x64>());
  list.push_back(std::make_unique<bwdd_fp16_gm8_direct_3d_256x64x64>());
  list.push_back(std::make_unique<bwdd_bf16_gm32_direct_256x64x64>());
  list.push_back(std::make_unique<bwdd_fp32_gm16_direct_256x64x64>());
  list.push_back(std::make_unique<bwdd_fp32_gm4_direct_256x64x64>());
  list.push_back(std::make_unique<bwdd_fp32_gm8_direct_3d_256x64x64>());
  list.push_back(std::make_unique<bwdd_fp32_gm2_direct_128x64x64>());
}
}  // namespace tiledispatch::hand
