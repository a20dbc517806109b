// Hand-written depthwise backward instances for the GPU check (hand_depthwise_check.cu): 15 bwd_data and 15
// bwd_weight, filters 3/5/7, strides 1 and 2, pad 2 with a 3x3 filter, vectors 1/2/4/8, nbatch 1/2/4/8,
// fp16/bf16/fp32, including the shapes of the `full`/`default` rule sets (rulesets/space.py); 3D: 13 bwd_data
// and 9 bwd_weight (3x3x3 to 7x7x7). Each TD_HAND_DW_BWD line spells the generated traits (with kDirection) for
// sm_90a.
#include <memory>

#include "hand_depthwise_traits.hpp"
#include "tiledispatch/runtime/instance.hpp"

#define TD_HAND_DWD(NAME, ...) TD_HAND_DW_INSTANCE(NAME, DepthwiseBwdDataInstance, kBwdData, __VA_ARGS__)
#define TD_HAND_DWW(NAME, ...) TD_HAND_DW_INSTANCE(NAME, DepthwiseBwdWeightInstance, kBwdWeight, __VA_ARGS__)
#define TD_HAND_DWD3(NAME, ...) TD_HAND_DW_INSTANCE_ND(NAME, DepthwiseBwdDataInstance, kBwdData, 3, __VA_ARGS__)
#define TD_HAND_DWW3(NAME, ...) TD_HAND_DW_INSTANCE_ND(NAME, DepthwiseBwdWeightInstance, kBwdWeight, 3, __VA_ARGS__)

namespace tiledispatch::hand {
// clang-format off
//          name                               dtype  tile    f  stride pad   nb sub   in out
TD_HAND_DWD(dwd_fp16_8x8_f3s1_nb8_sub2x2_v2,   kFp16, 8, 8,   3, 1, 1, 1, 1, 8, 2, 2, 2, 2)
TD_HAND_DWD(dwd_fp16_16x16_f3s1_nb8_sub2x2_v8, kFp16, 16, 16, 3, 1, 1, 1, 1, 8, 2, 2, 8, 8)
TD_HAND_DWD(dwd_bf16_16x32_f3s1_nb4_sub2x4_v8, kBf16, 16, 32, 3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWD(dwd_fp32_16x16_f3s1_nb4_sub2x4_v4, kFp32, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWD(dwd_fp16_16x16_f3s2_nb8_sub2x2_v8, kFp16, 16, 16, 3, 2, 2, 1, 1, 8, 2, 2, 8, 8)
TD_HAND_DWD(dwd_bf16_16x32_f3s2_nb4_sub2x4_v8, kBf16, 16, 32, 3, 2, 2, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWD(dwd_fp32_8x8_f3s2_nb8_sub2x2_v2,   kFp32, 8, 8,   3, 2, 2, 1, 1, 8, 2, 2, 2, 2)
TD_HAND_DWD(dwd_fp16_16x16_f5s1_nb8_sub2x2_v8, kFp16, 16, 16, 5, 1, 1, 2, 2, 8, 2, 2, 8, 8)
TD_HAND_DWD(dwd_fp32_16x16_f5s2_nb4_sub2x4_v4, kFp32, 16, 16, 5, 2, 2, 2, 2, 4, 2, 4, 4, 4)
TD_HAND_DWD(dwd_bf16_16x16_f5s2_nb8_sub2x2_v8, kBf16, 16, 16, 5, 2, 2, 2, 2, 8, 2, 2, 8, 8)
TD_HAND_DWD(dwd_fp16_16x16_f7s1_nb8_sub2x2_v8, kFp16, 16, 16, 7, 1, 1, 3, 3, 8, 2, 2, 8, 8)
TD_HAND_DWD(dwd_fp16_8x8_f7s2_nb2_sub2x2_v1,   kFp16, 8, 8,   7, 2, 2, 3, 3, 2, 2, 2, 1, 1)
TD_HAND_DWD(dwd_fp16_32x32_f3s1_nb1_sub4x4_v8, kFp16, 32, 32, 3, 1, 1, 1, 1, 1, 4, 4, 8, 8)
TD_HAND_DWD(dwd_fp16_16x16_f3s1p2_nb8_sub2x2_v8, kFp16, 16, 16, 3, 1, 1, 2, 2, 8, 2, 2, 8, 8)
TD_HAND_DWD(dwd_fp32_16x16_f3s2p2_nb2_sub2x4_v4, kFp32, 16, 16, 3, 2, 2, 2, 2, 2, 2, 4, 4, 4)
TD_HAND_DWW(dww_fp16_8x8_f3s1_nb8_sub2x2_v2,   kFp16, 8, 8,   3, 1, 1, 1, 1, 8, 2, 2, 2, 2)
TD_HAND_DWW(dww_fp16_16x16_f3s1_nb4_sub1x4_v8, kFp16, 16, 16, 3, 1, 1, 1, 1, 4, 1, 4, 8, 8)
TD_HAND_DWW(dww_bf16_16x16_f3s1_nb4_sub2x4_v8, kBf16, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWW(dww_fp32_16x16_f3s1_nb8_sub2x4_v4, kFp32, 16, 16, 3, 1, 1, 1, 1, 8, 2, 4, 4, 4)
TD_HAND_DWW(dww_fp16_16x16_f3s2_nb4_sub1x4_v8, kFp16, 16, 16, 3, 2, 2, 1, 1, 4, 1, 4, 8, 8)
TD_HAND_DWW(dww_fp32_8x8_f3s2_nb4_sub2x2_v4,   kFp32, 8, 8,   3, 2, 2, 1, 1, 4, 2, 2, 4, 4)
TD_HAND_DWW(dww_fp16_16x16_f5s1_nb4_sub1x4_v4, kFp16, 16, 16, 5, 1, 1, 2, 2, 4, 1, 4, 4, 4)
TD_HAND_DWW(dww_bf16_16x16_f5s2_nb4_sub1x4_v4, kBf16, 16, 16, 5, 2, 2, 2, 2, 4, 1, 4, 4, 4)
TD_HAND_DWW(dww_fp32_8x8_f5s1_nb8_sub2x2_v4,   kFp32, 8, 8,   5, 1, 1, 2, 2, 8, 2, 2, 4, 4)
TD_HAND_DWW(dww_fp16_16x16_f7s1_nb4_sub1x4_v2, kFp16, 16, 16, 7, 1, 1, 3, 3, 4, 1, 4, 2, 2)
TD_HAND_DWW(dww_fp16_8x8_f7s2_nb2_sub2x2_v1,   kFp16, 8, 8,   7, 2, 2, 3, 3, 2, 2, 2, 1, 1)
TD_HAND_DWW(dww_fp16_32x32_f5s1_nb2_sub4x4_v4, kFp16, 32, 32, 5, 1, 1, 2, 2, 2, 4, 4, 4, 4)
TD_HAND_DWW(dww_fp16_28x28_f3s1_nb1_sub4x4_v8, kFp16, 28, 28, 3, 1, 1, 1, 1, 1, 4, 4, 8, 8)
TD_HAND_DWW(dww_fp16_16x16_f3s1p2_nb4_sub2x4_v4, kFp16, 16, 16, 3, 1, 1, 2, 2, 4, 2, 4, 4, 4)
TD_HAND_DWW(dww_bf16_16x16_f3s2p2_nb4_sub2x2_v8, kBf16, 16, 16, 3, 2, 2, 2, 2, 4, 2, 2, 8, 8)
// 32-byte vectors (two 16-byte accesses): fp32 vec 8, bf16 vec 16
TD_HAND_DWD(dwd_fp32_16x16_f3s1_nb2_sub2x4_v8,  kFp32, 16, 16, 3, 1, 1, 1, 1, 2, 2, 4, 8, 8)
TD_HAND_DWD(dwd_bf16_16x16_f3s2_nb2_sub2x2_v16, kBf16, 16, 16, 3, 2, 2, 1, 1, 2, 2, 2, 16, 16)
TD_HAND_DWW(dww_fp32_16x16_f3s1_nb2_sub2x4_v8,  kFp32, 16, 16, 3, 1, 1, 1, 1, 2, 2, 4, 8, 8)
TD_HAND_DWW(dww_fp16_16x16_f3s2_nb2_sub2x2_v16, kFp16, 16, 16, 3, 2, 2, 1, 1, 2, 2, 2, 16, 16)
// 16-bit shapes for `default` (rulesets/default.py): bwd_data 16x32 nb4 sub2x4 beside 16x16 nb8 sub2x2, bwd_weight
// vec 8 beside vec 4, on the large layers' filters and strides
TD_HAND_DWD(dwd_fp16_16x32_f3s1_nb4_sub2x4_v8,  kFp16, 16, 32, 3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWD(dwd_fp16_16x32_f3s2_nb4_sub2x4_v8,  kFp16, 16, 32, 3, 2, 2, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWD(dwd_fp16_16x32_f5s1_nb4_sub2x4_v8,  kFp16, 16, 32, 5, 1, 1, 2, 2, 4, 2, 4, 8, 8)
TD_HAND_DWD(dwd_fp16_16x32_f5s2_nb4_sub2x4_v8,  kFp16, 16, 32, 5, 2, 2, 2, 2, 4, 2, 4, 8, 8)
TD_HAND_DWD(dwd_fp16_16x16_f5s2_nb8_sub2x2_v8,  kFp16, 16, 16, 5, 2, 2, 2, 2, 8, 2, 2, 8, 8)
TD_HAND_DWW(dww_fp16_16x16_f3s1_nb4_sub2x4_v4,  kFp16, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWW(dww_fp16_16x16_f3s1_nb4_sub2x4_v8,  kFp16, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWW(dww_fp16_16x16_f3s2_nb4_sub2x4_v4,  kFp16, 16, 16, 3, 2, 2, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWW(dww_fp16_16x16_f3s2_nb4_sub2x4_v8,  kFp16, 16, 16, 3, 2, 2, 1, 1, 4, 2, 4, 8, 8)
// 3D (cubic filters; the shapes of `default`'s 3D entries, rulesets/default.py)
TD_HAND_DWD3(dwd3_fp16_8x16_f3s1_nb4_sub2x4_v8,  kFp16, 8, 16,  3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_fp16_8x16_f3s2_nb4_sub2x4_v8,  kFp16, 8, 16,  3, 2, 2, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_fp16_8x16_f5s1_nb4_sub2x4_v8,  kFp16, 8, 16,  5, 1, 1, 2, 2, 4, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_fp16_8x16_f7s1_nb4_sub2x4_v8,  kFp16, 8, 16,  7, 1, 1, 3, 3, 4, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_bf16_8x16_f3s1_nb4_sub2x4_v8,  kBf16, 8, 16,  3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_fp32_16x16_f3s1_nb4_sub2x4_v4, kFp32, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWD3(dwd3_fp32_16x16_f3s2_nb4_sub2x4_v4, kFp32, 16, 16, 3, 2, 2, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWW3(dww3_fp16_16x16_f3s1_nb4_sub2x4_v4, kFp16, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWW3(dww3_fp16_16x16_f3s2_nb4_sub2x4_v4, kFp16, 16, 16, 3, 2, 2, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWW3(dww3_fp16_16x16_f5s1_nb4_sub2x4_v4, kFp16, 16, 16, 5, 1, 1, 2, 2, 4, 2, 4, 4, 4)
TD_HAND_DWW3(dww3_fp16_16x16_f7s1_nb4_sub2x4_v4, kFp16, 16, 16, 7, 1, 1, 3, 3, 4, 2, 4, 4, 4)
TD_HAND_DWW3(dww3_bf16_16x16_f3s1_nb4_sub2x4_v4, kBf16, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWW3(dww3_fp32_16x16_f3s1_nb4_sub2x4_v4, kFp32, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWW3(dww3_fp32_16x16_f5s2_nb4_sub2x4_v4, kFp32, 16, 16, 5, 2, 2, 2, 2, 4, 2, 4, 4, 4)
// `default`'s 3D shapes after the shape sweep (docs/performance.md, "3D depthwise")
TD_HAND_DWD3(dwd3_fp16_8x32_f3s1_nb2_sub2x4_v8, kFp16, 8, 32, 3, 1, 1, 1, 1, 2, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_fp16_8x32_f3s2_nb2_sub2x4_v8, kFp16, 8, 32, 3, 2, 2, 1, 1, 2, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_bf16_8x32_f5s1_nb2_sub2x4_v8, kBf16, 8, 32, 5, 1, 1, 2, 2, 2, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_fp16_8x32_f7s1_nb2_sub2x4_v8, kFp16, 8, 32, 7, 1, 1, 3, 3, 2, 2, 4, 8, 8)
TD_HAND_DWD3(dwd3_fp16_8x16_f3s1_nb4_sub2x4_v4, kFp16, 8, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DWD3(dwd3_fp32_8x16_f7s1_nb4_sub2x4_v4, kFp32, 8, 16, 7, 1, 1, 3, 3, 4, 2, 4, 4, 4)
TD_HAND_DWW3(dww3_fp16_16x16_f3s1_nb4_sub2x4_v8, kFp16, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DWW3(dww3_bf16_16x16_f3s2_nb4_sub2x4_v8, kBf16, 16, 16, 3, 2, 2, 1, 1, 4, 2, 4, 8, 8)
// clang-format on

void add_hand_depthwise_bwd(InstanceList& list) {
  list.push_back(std::make_unique<dwd3_fp16_8x32_f3s1_nb2_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_fp16_8x32_f3s2_nb2_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_bf16_8x32_f5s1_nb2_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_fp16_8x32_f7s1_nb2_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_fp16_8x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dwd3_fp32_8x16_f7s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww3_fp16_16x16_f3s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dww3_bf16_16x16_f3s2_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_fp16_8x16_f3s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_fp16_8x16_f3s2_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_fp16_8x16_f5s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_fp16_8x16_f7s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_bf16_8x16_f3s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd3_fp32_16x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dwd3_fp32_16x16_f3s2_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww3_fp16_16x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww3_fp16_16x16_f3s2_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww3_fp16_16x16_f5s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww3_fp16_16x16_f7s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww3_bf16_16x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww3_fp32_16x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww3_fp32_16x16_f5s2_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dwd_fp16_16x32_f3s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd_fp16_16x32_f3s2_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd_fp16_16x32_f5s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd_fp16_16x32_f5s2_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd_fp16_16x16_f5s2_nb8_sub2x2_v8>());
  list.push_back(std::make_unique<dww_fp16_16x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww_fp16_16x16_f3s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dww_fp16_16x16_f3s2_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww_fp16_16x16_f3s2_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd_fp32_16x16_f3s1_nb2_sub2x4_v8>());
  list.push_back(std::make_unique<dwd_bf16_16x16_f3s2_nb2_sub2x2_v16>());
  list.push_back(std::make_unique<dww_fp32_16x16_f3s1_nb2_sub2x4_v8>());
  list.push_back(std::make_unique<dww_fp16_16x16_f3s2_nb2_sub2x2_v16>());
  list.push_back(std::make_unique<dwd_fp16_8x8_f3s1_nb8_sub2x2_v2>());
  list.push_back(std::make_unique<dwd_fp16_16x16_f3s1_nb8_sub2x2_v8>());
  list.push_back(std::make_unique<dwd_bf16_16x32_f3s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd_fp32_16x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dwd_fp16_16x16_f3s2_nb8_sub2x2_v8>());
  list.push_back(std::make_unique<dwd_bf16_16x32_f3s2_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dwd_fp32_8x8_f3s2_nb8_sub2x2_v2>());
  list.push_back(std::make_unique<dwd_fp16_16x16_f5s1_nb8_sub2x2_v8>());
  list.push_back(std::make_unique<dwd_fp32_16x16_f5s2_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dwd_bf16_16x16_f5s2_nb8_sub2x2_v8>());
  list.push_back(std::make_unique<dwd_fp16_16x16_f7s1_nb8_sub2x2_v8>());
  list.push_back(std::make_unique<dwd_fp16_8x8_f7s2_nb2_sub2x2_v1>());
  list.push_back(std::make_unique<dwd_fp16_32x32_f3s1_nb1_sub4x4_v8>());
  list.push_back(std::make_unique<dwd_fp16_16x16_f3s1p2_nb8_sub2x2_v8>());
  list.push_back(std::make_unique<dwd_fp32_16x16_f3s2p2_nb2_sub2x4_v4>());
  list.push_back(std::make_unique<dww_fp16_8x8_f3s1_nb8_sub2x2_v2>());
  list.push_back(std::make_unique<dww_fp16_16x16_f3s1_nb4_sub1x4_v8>());
  list.push_back(std::make_unique<dww_bf16_16x16_f3s1_nb4_sub2x4_v8>());
  list.push_back(std::make_unique<dww_fp32_16x16_f3s1_nb8_sub2x4_v4>());
  list.push_back(std::make_unique<dww_fp16_16x16_f3s2_nb4_sub1x4_v8>());
  list.push_back(std::make_unique<dww_fp32_8x8_f3s2_nb4_sub2x2_v4>());
  list.push_back(std::make_unique<dww_fp16_16x16_f5s1_nb4_sub1x4_v4>());
  list.push_back(std::make_unique<dww_bf16_16x16_f5s2_nb4_sub1x4_v4>());
  list.push_back(std::make_unique<dww_fp32_8x8_f5s1_nb8_sub2x2_v4>());
  list.push_back(std::make_unique<dww_fp16_16x16_f7s1_nb4_sub1x4_v2>());
  list.push_back(std::make_unique<dww_fp16_8x8_f7s2_nb2_sub2x2_v1>());
  list.push_back(std::make_unique<dww_fp16_32x32_f5s1_nb2_sub4x4_v4>());
  list.push_back(std::make_unique<dww_fp16_28x28_f3s1_nb1_sub4x4_v8>());
  list.push_back(std::make_unique<dww_fp16_16x16_f3s1p2_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dww_bf16_16x16_f3s2p2_nb4_sub2x2_v8>());
}
}  // namespace tiledispatch::hand
