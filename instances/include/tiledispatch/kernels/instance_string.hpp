// CK's get_instance_string() as a compile-time function of a traits struct (ck_conventions §3). No CUDA here:
// the CPU test compiles it with the host compiler and compares it with the generator's prediction.
#pragma once

#include <string_view>

#include "tiledispatch/kernels/fixed_string.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::kernels {

constexpr std::string_view kernel_token(ConvDirection d) {
  switch (d) {
    case ConvDirection::kFwd: return "GroupedConvolutionForwardKernel";
    case ConvDirection::kBwdData: return "GroupedConvolutionBackwardDataKernel";
    case ConvDirection::kBwdWeight: return "GroupedConvolutionBackwardWeightKernel";
  }
  return "?";
}

// CK's get_instance_string() (ck_conventions §3): fwd 31 fields, bwd_data 30 (no ExplicitGemm), bwd_weight
// 31 (+ IsStreamK, ReductionStrategy, PersistentDP for stream-K).
template <class Traits>
constexpr FixedString<512> build_instance_string() {
  FieldList<400> f;
  const bool is3d = Traits::kNDimSpatial == 3;
  const std::string_view type = to_token(Traits::kDataType);
  f.field(Traits::kNDimSpatial)
      .field(to_token(Traits::kSpecialization))
      .field(std::string_view(is3d ? "NDHWGC" : "NHWGC"))
      .field(std::string_view(is3d ? "GKZYXC" : "GKYXC"))
      .field(std::string_view("EmptyTuple"))
      .field(std::string_view(is3d ? "NDHWGK" : "NHWGK"))
      .field(Traits::kVectorSizeA)
      .field(Traits::kVectorSizeB)
      .field(Traits::kVectorSizeC)
      .field(Traits::kNumGroupsToMerge)
      .field(Traits::kSplitImage);
  if (Traits::kDirection != ConvDirection::kBwdData) f.field(Traits::kExplicitGemm);
  f.field(Traits::kTileM).field(Traits::kTileN).field(Traits::kTileK);
  f.field(Traits::kWaveM).field(Traits::kWaveN).field(Traits::kWaveK);
  f.field(Traits::kWarpTileM).field(Traits::kWarpTileN).field(Traits::kWarpTileK);
  f.field(type).field(type);
  f.field(to_token(Traits::kPipeline)).field(to_token(Traits::kScheduler));
  f.field(Traits::kDoubleSmemBuffer).field(Traits::kNumWaveGroups);
  f.field(std::string_view("fp32")).field(type).field(std::string_view("EmptyTuple")).field(std::string_view("PassThrough"));
  if (Traits::kStreamK) {
    f.field(1).field(static_cast<int>(Traits::kStreamKReduction)).field(Traits::kStreamKPersistent);
  }
  FixedString<512> out;
  out.append(kernel_token(Traits::kDirection)).append(std::string_view("<")).append(f.text().view());
  out.append(std::string_view(">"));
  if (f.text().overflowed()) out.append(std::string_view("<overflow>"));
  return out;
}

}  // namespace tiledispatch::kernels
