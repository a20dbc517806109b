// DepthwiseInstance<Traits>: the depthwise forward family (NGCHW, ck_conventions §3, 20-field instance
// string). The direct-convolution kernel is NOT implemented yet: the instance compiles, carries its exact
// instance string, and reports every problem as "not implemented: depthwise forward kernel".
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "tiledispatch/kernels/fixed_string.hpp"
#include "tiledispatch/runtime/instance.hpp"

namespace tiledispatch {

namespace kernels {

// GroupedConvolutionForwardKernel<NDim,Spec,Depthwise,InVec,WeiVec,OutVec,BlockSize,TileH,TileW,FilterH,FilterW,
// StrideH,StrideW,NBatch,SubTileH,SubTileW,InType,WeiType,AccType,OutType>; WeiVec = InVec and BlockSize 64, as
// upstream (generators/instance_string.py decides the same).
template <class Traits>
constexpr FixedString<256> build_depthwise_instance_string() {
  FieldList<200> f;
  const std::string_view type = to_token(Traits::kDataType);
  f.field(2).field(std::string_view("Default")).field(std::string_view("Depthwise"));
  f.field(Traits::kInVec).field(Traits::kInVec).field(Traits::kOutVec).field(64);
  f.field(Traits::kTileH).field(Traits::kTileW).field(Traits::kFilter).field(Traits::kFilter);
  f.field(Traits::kStrideH).field(Traits::kStrideW).field(Traits::kNBatch).field(Traits::kSubH).field(Traits::kSubW);
  f.field(type).field(type).field(std::string_view("fp32")).field(type);
  FixedString<256> out;
  out.append(std::string_view("GroupedConvolutionForwardKernel<")).append(f.text().view()).append(std::string_view(">"));
  return out;
}

}  // namespace kernels

template <class Traits>
class DepthwiseInstance : public GroupedConvInstance {
 public:
  static constexpr auto kInstanceString = kernels::build_depthwise_instance_string<Traits>();
  static_assert(!kInstanceString.overflowed(), "instance string longer than its buffer");

  std::string_view instance_string() const override { return kInstanceString.view(); }
  Signature signature() const override {
    return {ConvDirection::kFwd, Traits::kDataType, 2, KernelFamily::kDepthwise};
  }
  Support is_supported(const ConvProblem& /*problem*/) const override {
    return Support::no("not implemented: depthwise forward kernel");
  }
  cudaError_t run(const ConvProblem& /*problem*/, const ConvArgs& /*args*/) const override {
    return cudaErrorNotSupported;
  }
};

}  // namespace tiledispatch
