// The traits struct of a depthwise header (generators/templates/depthwise_instance.hpp.j2), member by member,
// and the instance of class CLASS that names it: for the hand-written depthwise sets of the GPU check and the
// host-side depthwise test. Built for sm_90a, as run_gpu_check.sh builds them. The forward instance reads no
// kDirection; it is spelled anyway, as the generator writes it.
#pragma once

#include <string_view>

#include "tiledispatch/kernels/depthwise_bwd_instance.hpp"
#include "tiledispatch/kernels/depthwise_instance.hpp"

#define TD_HAND_DW_INSTANCE_ND(NAME, CLASS, DIR, ND, DT, TH, TW, F, SH, SW, PH, PW, NB, SUBH, SUBW, IV, OV) \
  struct NAME##_traits {                                                                                   \
    static constexpr Arch kArch = Arch::kSm90a;                                                            \
    static constexpr ConvDirection kDirection = ConvDirection::DIR;                                        \
    static constexpr DataType kDataType = DataType::DT;                                                    \
    static constexpr int kNDim = ND;                                                                       \
    static constexpr int kTileH = TH, kTileW = TW, kFilter = F;                                            \
    static constexpr int kStrideH = SH, kStrideW = SW, kPadH = PH, kPadW = PW;                             \
    static constexpr int kNBatch = NB, kSubH = SUBH, kSubW = SUBW;                                         \
    static constexpr int kInVec = IV, kOutVec = OV;                                                        \
  };                                                                                                       \
  struct NAME final : CLASS<NAME##_traits> {                                                               \
    std::string_view name() const override { return #NAME; }                                              \
  };
// A 2D instance, the hand sets' common case.
#define TD_HAND_DW_INSTANCE(NAME, CLASS, DIR, ...) TD_HAND_DW_INSTANCE_ND(NAME, CLASS, DIR, 2, __VA_ARGS__)
