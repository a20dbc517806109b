// Hand-written depthwise forward instances for the GPU check: the legacy `tests` lines (ngchw_depthwise.conf),
// a selection of the `profiler` lines, 5x5 stride 2 and 7x7 (commented out upstream), every vector width
// (1, 2, 4, 8), nbatch 1/2/4/8 and fp16/bf16/fp32, and eighteen 3D (3x3x3 to 7x7x7). Each TD_HAND_DW line
// spells the traits of docs/architecture.md §2a for a depthwise header, for sm_90a (what run_gpu_check.sh
// builds).
#include <memory>

#include "hand_depthwise_traits.hpp"
#include "tiledispatch/runtime/instance.hpp"

#define TD_HAND_DW(NAME, ...) TD_HAND_DW_INSTANCE(NAME, DepthwiseInstance, kFwd, __VA_ARGS__)
#define TD_HAND_DW3(NAME, ...) TD_HAND_DW_INSTANCE_ND(NAME, DepthwiseInstance, kFwd, 3, __VA_ARGS__)

namespace tiledispatch::hand {
// clang-format off
//         name                              dtype  tile    f  stride pad   nb sub   in out
TD_HAND_DW(dw_fp16_8x8_f3s1_nb8_sub2x2_v2,   kFp16, 8, 8,   3, 1, 1, 1, 1, 8, 2, 2, 2, 2)
TD_HAND_DW(dw_fp16_32x32_f3s1_nb1_sub4x4_v8, kFp16, 32, 32, 3, 1, 1, 1, 1, 1, 4, 4, 8, 8)
TD_HAND_DW(dw_bf16_16x16_f3s1_nb8_sub1x4_v8, kBf16, 16, 16, 3, 1, 1, 1, 1, 8, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_28x28_f3s1_nb1_sub4x4_v8, kFp16, 28, 28, 3, 1, 1, 1, 1, 1, 4, 4, 8, 8)
TD_HAND_DW(dw_fp32_8x8_f3s1_nb8_sub2x2_v2,   kFp32, 8, 8,   3, 1, 1, 1, 1, 8, 2, 2, 2, 2)
TD_HAND_DW(dw_fp32_16x16_f3s1_nb4_sub2x4_v4, kFp32, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DW(dw_bf16_16x16_f3s2_nb2_sub1x4_v8, kBf16, 16, 16, 3, 2, 2, 1, 1, 2, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_32x32_f3s2_nb1_sub2x8_v8, kFp16, 32, 32, 3, 2, 2, 1, 1, 1, 2, 8, 8, 8)
TD_HAND_DW(dw_fp16_14x28_f3s2_nb1_sub2x4_v8, kFp16, 14, 28, 3, 2, 2, 1, 1, 1, 2, 4, 8, 8)
TD_HAND_DW(dw_fp32_16x16_f3s2_nb1_sub2x2_v2, kFp32, 16, 16, 3, 2, 2, 1, 1, 1, 2, 2, 2, 2)
TD_HAND_DW(dw_fp16_8x8_f5s1_nb1_sub1x1_v1,   kFp16, 8, 8,   5, 1, 1, 2, 2, 1, 1, 1, 1, 1)
TD_HAND_DW(dw_fp32_8x8_f5s1_nb1_sub1x1_v1,   kFp32, 8, 8,   5, 1, 1, 2, 2, 1, 1, 1, 1, 1)
TD_HAND_DW(dw_fp16_32x32_f5s1_nb4_sub4x4_v8, kFp16, 32, 32, 5, 1, 1, 2, 2, 4, 4, 4, 8, 8)
TD_HAND_DW(dw_bf16_16x16_f5s1_nb8_sub1x4_v8, kBf16, 16, 16, 5, 1, 1, 2, 2, 8, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_28x28_f5s1_nb8_sub4x4_v8, kFp16, 28, 28, 5, 1, 1, 2, 2, 8, 4, 4, 8, 8)
TD_HAND_DW(dw_fp16_8x8_f5s2_nb4_sub2x2_v2,   kFp16, 8, 8,   5, 2, 2, 2, 2, 4, 2, 2, 2, 2)
TD_HAND_DW(dw_bf16_16x16_f5s2_nb1_sub1x4_v8, kBf16, 16, 16, 5, 2, 2, 2, 2, 1, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_32x32_f5s2_nb1_sub2x8_v8, kFp16, 32, 32, 5, 2, 2, 2, 2, 1, 2, 8, 8, 8)
TD_HAND_DW(dw_fp32_32x32_f5s2_nb1_sub4x4_v4, kFp32, 32, 32, 5, 2, 2, 2, 2, 1, 4, 4, 4, 4)
TD_HAND_DW(dw_fp16_16x16_f7s1_nb8_sub1x4_v8, kFp16, 16, 16, 7, 1, 1, 3, 3, 8, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_16x16_f3s1_nb8_sub1x4_v8, kFp16, 16, 16, 3, 1, 1, 1, 1, 8, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_16x16_f3s2_nb8_sub1x4_v8, kFp16, 16, 16, 3, 2, 2, 1, 1, 8, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_16x16_f5s2_nb8_sub1x4_v8, kFp16, 16, 16, 5, 2, 2, 2, 2, 8, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_16x16_f5s1_nb8_sub1x4_v8, kFp16, 16, 16, 5, 1, 1, 2, 2, 8, 1, 4, 8, 8)
TD_HAND_DW(dw_fp16_8x16_f3s1_nb4_sub2x4_v4_8, kFp16, 8, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 8)
// 32-byte vectors (two 16-byte accesses): fp32 vec 8, fp16 vec 16
TD_HAND_DW(dw_fp32_16x16_f3s1_nb2_sub2x4_v8,  kFp32, 16, 16, 3, 1, 1, 1, 1, 2, 2, 4, 8, 8)
TD_HAND_DW(dw_fp16_16x16_f3s2_nb2_sub2x4_v16, kFp16, 16, 16, 3, 2, 2, 1, 1, 2, 2, 4, 16, 16)
// 3D (cubic filters; the shapes of `default`'s 3D entries, rulesets/default.py, and a 2-wide vector)
TD_HAND_DW3(dw3_fp16_8x16_f3s1_nb4_sub1x4_v8,  kFp16, 8, 16,  3, 1, 1, 1, 1, 4, 1, 4, 8, 8)
TD_HAND_DW3(dw3_fp16_8x16_f3s2_nb4_sub1x4_v8,  kFp16, 8, 16,  3, 2, 2, 1, 1, 4, 1, 4, 8, 8)
TD_HAND_DW3(dw3_fp16_8x16_f5s1_nb4_sub1x4_v8,  kFp16, 8, 16,  5, 1, 1, 2, 2, 4, 1, 4, 8, 8)
TD_HAND_DW3(dw3_fp16_8x16_f7s1_nb4_sub1x4_v8,  kFp16, 8, 16,  7, 1, 1, 3, 3, 4, 1, 4, 8, 8)
TD_HAND_DW3(dw3_bf16_8x16_f3s1_nb4_sub1x4_v8,  kBf16, 8, 16,  3, 1, 1, 1, 1, 4, 1, 4, 8, 8)
TD_HAND_DW3(dw3_fp32_16x16_f3s1_nb4_sub2x4_v4, kFp32, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DW3(dw3_fp32_16x16_f3s2_nb4_sub2x4_v4, kFp32, 16, 16, 3, 2, 2, 1, 1, 4, 2, 4, 4, 4)
TD_HAND_DW3(dw3_fp16_8x8_f3s1_nb8_sub2x2_v2,   kFp16, 8, 8,   3, 1, 1, 1, 1, 8, 2, 2, 2, 2)
// `default`'s 3D shapes after the shape sweep (docs/performance.md, "3D depthwise")
TD_HAND_DW3(dw3_fp16_8x32_f3s1_nb2_sub1x4_v8, kFp16, 8, 32, 3, 1, 1, 1, 1, 2, 1, 4, 8, 8)
TD_HAND_DW3(dw3_fp16_8x32_f3s2_nb2_sub1x4_v8, kFp16, 8, 32, 3, 2, 2, 1, 1, 2, 1, 4, 8, 8)
TD_HAND_DW3(dw3_fp16_8x32_f5s1_nb2_sub1x4_v8, kFp16, 8, 32, 5, 1, 1, 2, 2, 2, 1, 4, 8, 8)
TD_HAND_DW3(dw3_bf16_8x32_f7s1_nb2_sub1x4_v8, kBf16, 8, 32, 7, 1, 1, 3, 3, 2, 1, 4, 8, 8)
TD_HAND_DW3(dw3_fp16_8x16_f3s1_nb4_sub1x4_v4, kFp16, 8, 16, 3, 1, 1, 1, 1, 4, 1, 4, 4, 4)
TD_HAND_DW3(dw3_fp32_8x16_f3s2_nb4_sub1x4_v4, kFp32, 8, 16, 3, 2, 2, 1, 1, 4, 1, 4, 4, 4)
TD_HAND_DW3(dw3_fp32_8x16_f7s1_nb4_sub1x4_v4, kFp32, 8, 16, 7, 1, 1, 3, 3, 4, 1, 4, 4, 4)
// 5x5x5 / 7x7x7 at stride 2 on half the channel slice (the 8x16 nb4 and 8x32 nb2 stages exceed 227 KB there)
TD_HAND_DW3(dw3_fp16_8x16_f7s2_nb2_sub1x4_v8, kFp16, 8, 16, 7, 2, 2, 3, 3, 2, 1, 4, 8, 8)
TD_HAND_DW3(dw3_fp32_8x16_f5s2_nb2_sub1x4_v4, kFp32, 8, 16, 5, 2, 2, 2, 2, 2, 1, 4, 4, 4)
TD_HAND_DW3(dw3_fp32_8x16_f7s2_nb2_sub1x4_v4, kFp32, 8, 16, 7, 2, 2, 3, 3, 2, 1, 4, 4, 4)
// clang-format on

void add_hand_depthwise(InstanceList& list) {
  list.push_back(std::make_unique<dw3_fp16_8x16_f7s2_nb2_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_fp32_8x16_f5s2_nb2_sub1x4_v4>());
  list.push_back(std::make_unique<dw3_fp32_8x16_f7s2_nb2_sub1x4_v4>());
  list.push_back(std::make_unique<dw3_fp16_8x32_f3s1_nb2_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_fp16_8x32_f3s2_nb2_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_fp16_8x32_f5s1_nb2_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_bf16_8x32_f7s1_nb2_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_fp16_8x16_f3s1_nb4_sub1x4_v4>());
  list.push_back(std::make_unique<dw3_fp32_8x16_f3s2_nb4_sub1x4_v4>());
  list.push_back(std::make_unique<dw3_fp32_8x16_f7s1_nb4_sub1x4_v4>());
  list.push_back(std::make_unique<dw3_fp16_8x16_f3s1_nb4_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_fp16_8x16_f3s2_nb4_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_fp16_8x16_f5s1_nb4_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_fp16_8x16_f7s1_nb4_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_bf16_8x16_f3s1_nb4_sub1x4_v8>());
  list.push_back(std::make_unique<dw3_fp32_16x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dw3_fp32_16x16_f3s2_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dw3_fp16_8x8_f3s1_nb8_sub2x2_v2>());
  list.push_back(std::make_unique<dw_fp32_16x16_f3s1_nb2_sub2x4_v8>());
  list.push_back(std::make_unique<dw_fp16_16x16_f3s2_nb2_sub2x4_v16>());
  list.push_back(std::make_unique<dw_fp16_8x8_f3s1_nb8_sub2x2_v2>());
  list.push_back(std::make_unique<dw_fp16_32x32_f3s1_nb1_sub4x4_v8>());
  list.push_back(std::make_unique<dw_bf16_16x16_f3s1_nb8_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_28x28_f3s1_nb1_sub4x4_v8>());
  list.push_back(std::make_unique<dw_fp32_8x8_f3s1_nb8_sub2x2_v2>());
  list.push_back(std::make_unique<dw_fp32_16x16_f3s1_nb4_sub2x4_v4>());
  list.push_back(std::make_unique<dw_bf16_16x16_f3s2_nb2_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_32x32_f3s2_nb1_sub2x8_v8>());
  list.push_back(std::make_unique<dw_fp16_14x28_f3s2_nb1_sub2x4_v8>());
  list.push_back(std::make_unique<dw_fp32_16x16_f3s2_nb1_sub2x2_v2>());
  list.push_back(std::make_unique<dw_fp16_8x8_f5s1_nb1_sub1x1_v1>());
  list.push_back(std::make_unique<dw_fp32_8x8_f5s1_nb1_sub1x1_v1>());
  list.push_back(std::make_unique<dw_fp16_32x32_f5s1_nb4_sub4x4_v8>());
  list.push_back(std::make_unique<dw_bf16_16x16_f5s1_nb8_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_28x28_f5s1_nb8_sub4x4_v8>());
  list.push_back(std::make_unique<dw_fp16_8x8_f5s2_nb4_sub2x2_v2>());
  list.push_back(std::make_unique<dw_bf16_16x16_f5s2_nb1_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_32x32_f5s2_nb1_sub2x8_v8>());
  list.push_back(std::make_unique<dw_fp32_32x32_f5s2_nb1_sub4x4_v4>());
  list.push_back(std::make_unique<dw_fp16_16x16_f7s1_nb8_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_16x16_f3s1_nb8_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_16x16_f3s2_nb8_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_16x16_f5s2_nb8_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_16x16_f5s1_nb8_sub1x4_v8>());
  list.push_back(std::make_unique<dw_fp16_8x16_f3s1_nb4_sub2x4_v4_8>());
}
}  // namespace tiledispatch::hand
