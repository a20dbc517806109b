// Hand instances of transposed bwd_weight on the Hopper path (sm90/config.hpp, kTransposed): tile_m (K/G's
// extent) 16 or 32, below wgmma's M of 64, so wgmma computes the tile's transpose (M = tile_n, N = tile_m).
// fp16 and bf16, one and two consumer warpgroups (stacked along wgmma's M, and along its N), a batch in
// flight, ping-pong, 3D, and merged groups (gathers). Shared by the GPU check (hand_bwd_weight.cu) and
// tests/kernels/test_bwd_weight_transposed_check.cu, which also asserts that these take the transposed mapping.
#pragma once

#include "hand_traits.hpp"

namespace tiledispatch::hand {
// clang-format off
//      name                                dir          nd dtype  spec       tile          waves   warp tile   vec     pipeline  scheduler   epilogue   dsb    gm 2st   expl   split  sk     wg
TD_HAND(bwdw_fp16_t_32x64x32,              kBwdWeight, 2, kFp16, kDefault,  32,64,32,     1,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_bf16_t_16x64x32,              kBwdWeight, 2, kBf16, kDefault,  16,64,32,     1,2,1,  16,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp16_t_32x128x64_compv4,      kBwdWeight, 2, kFp16, kDefault,  32,128,64,    1,4,1,  32,32,16,   8,8,8,  kCompV4,  kIntrawave, kCShuffle, true,  1, false, false, false, false, 1)
TD_HAND(bwdw_bf16_t_16x128x64,             kBwdWeight, 2, kBf16, kDefault,  16,128,64,    1,2,1,  16,64,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp16_t_16x128x64,             kBwdWeight, 2, kFp16, kDefault,  16,128,64,    1,2,1,  16,64,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp16_t_32x128x32_ping_pong,   kBwdWeight, 2, kFp16, kDefault,  32,128,32,    1,4,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 2)
TD_HAND(bwdw_fp16_t_32x64x32_wg_along_n,   kBwdWeight, 2, kFp16, kDefault,  32,64,32,     2,2,1,  16,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_bf16_t_3d_32x64x32,           kBwdWeight, 3, kBf16, kDefault,  32,64,32,     1,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp16_t_3d_16x128x32,          kBwdWeight, 3, kFp16, kDefault,  16,128,32,    1,2,1,  16,64,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_fp16_t_gm2_32x128x32,         kBwdWeight, 2, kFp16, kDefault,  32,128,32,    1,2,1,  32,64,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
// clang-format on

inline void add_hand_bwd_weight_transposed(InstanceList& list) {
  list.push_back(std::make_unique<bwdw_fp16_t_32x64x32>());
  list.push_back(std::make_unique<bwdw_bf16_t_16x64x32>());
  list.push_back(std::make_unique<bwdw_fp16_t_32x128x64_compv4>());
  list.push_back(std::make_unique<bwdw_bf16_t_16x128x64>());
  list.push_back(std::make_unique<bwdw_fp16_t_16x128x64>());
  list.push_back(std::make_unique<bwdw_fp16_t_32x128x32_ping_pong>());
  list.push_back(std::make_unique<bwdw_fp16_t_32x64x32_wg_along_n>());
  list.push_back(std::make_unique<bwdw_bf16_t_3d_32x64x32>());
  list.push_back(std::make_unique<bwdw_fp16_t_3d_16x128x32>());
  list.push_back(std::make_unique<bwdw_fp16_t_gm2_32x128x32>());
}
}  // namespace tiledispatch::hand
