// DepthwiseBwdDataInstance<Traits> and DepthwiseBwdWeightInstance<Traits>: the depthwise family's backward
// directions (docs/depthwise.md) on the runtime's channels-last tensors with G = C = K, computed by the direct
// kernels of depthwise_bwd_kernel.cuh. Their configuration, name and 20-field instance string are the forward's
// (depthwise_instance.hpp) under the direction's kernel token.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tiledispatch/kernels/depthwise_bwd_kernel.cuh"
#include "tiledispatch/kernels/depthwise_instance.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/instance.hpp"

namespace tiledispatch {

namespace kernels::depthwise {

// bwd_weight blocks per launch: about 8 for each of an H100's 132 SMs. A constant, not the device's SM count,
// so that the chunking, and with it every rounding, is the same on every GPU.
constexpr int64_t kBwdWeightTargetBlocks = 1024;

}  // namespace kernels::depthwise

// dX from dY and W. The problem is the forward problem: input = dX (written), output = dY (read).
template <class Traits>
class DepthwiseBwdDataInstance : public GroupedConvInstance {
 public:
  using S = kernels::depthwise::BwdDataShape<Traits>;
  static constexpr auto kInstanceString =
      kernels::build_depthwise_instance_string<Traits, ConvDirection::kBwdData>();
  static_assert(!kInstanceString.overflowed(), "instance string longer than its buffer");

  std::string_view instance_string() const override { return kInstanceString.view(); }
  Signature signature() const override {
    return {ConvDirection::kBwdData, Traits::kDataType, 2, KernelFamily::kDepthwise};
  }
  Support is_supported(const ConvProblem& p) const override {
    if (Support s = kernels::depthwise_problem_support<Traits, S>(p); !s) return s;
    if (blocks(p) > INT_MAX) return Support::no("grid of " + std::to_string(blocks(p)) + " blocks exceeds 2^31-1");
    return Support::yes();
  }
  // dY is staged with in_vec-wide copies, dX stored out_vec wide.
  Support check_args(const ConvProblem& /*problem*/, const ConvArgs& args) const override {
    return kernels::depthwise_args_support<S>(args, args.output, "output (dY)", args.input, "input (dX)");
  }

  cudaError_t run(const ConvProblem& p, const ConvArgs& args) const override {
    if (!is_supported(p) || !check_args(p, args)) return cudaErrorInvalidValue;
    const auto kernel = kernels::depthwise::depthwise_bwd_data_kernel<Traits>;
    static const cudaError_t attribute =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::kSmemBytes);
    TD_RETURN_IF_CUDA_ERROR(attribute);
    const auto o = p.output();
    kernels::depthwise::BwdDataParams params{};
    params.dy = args.output, params.weight = args.weight, params.dx = args.input;
    params.C = int(p.C), params.Hy = int(o[1]), params.Wy = int(o[2]);
    params.Hx = int(p.input[1]), params.Wx = int(p.input[2]);
    params.tiles_h = int(ceil(p.input[1], S::kTileH)), params.tiles_w = int(ceil(p.input[2], S::kTileW));
    params.slices = int(ceil(p.C, S::kChannels));
    kernel<<<unsigned(blocks(p)), S::kThreads, S::kSmemBytes, args.stream>>>(params);
    return cudaGetLastError();
  }

 private:
  static int64_t ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }
  static int64_t blocks(const ConvProblem& p) {
    return p.N * ceil(p.input[1], S::kTileH) * ceil(p.input[2], S::kTileW) * ceil(p.C, S::kChannels);
  }
};

// dW from X and dY: a partial pass into the workspace and a fixed-order reduction (bit-identical run to run).
template <class Traits>
class DepthwiseBwdWeightInstance : public GroupedConvInstance {
 public:
  using S = kernels::depthwise::BwdWeightShape<Traits>;
  static constexpr auto kInstanceString =
      kernels::build_depthwise_instance_string<Traits, ConvDirection::kBwdWeight>();
  static_assert(!kInstanceString.overflowed(), "instance string longer than its buffer");

  std::string_view instance_string() const override { return kInstanceString.view(); }
  Signature signature() const override {
    return {ConvDirection::kBwdWeight, Traits::kDataType, 2, KernelFamily::kDepthwise};
  }
  Support is_supported(const ConvProblem& p) const override {
    return kernels::depthwise_problem_support<Traits, S>(p);
  }
  // One fp32 partial of every (tap, channel) per chunk.
  size_t workspace_bytes(const ConvProblem& p, int /*k_batch*/) const override {
    if (!is_supported(p)) return 0;
    const Plan plan = plan_for(p);
    return size_t(plan.chunks) * S::kTaps * size_t(plan.padded_c) * sizeof(float);
  }
  // k_batch 1 (the chunks already split the reduction); X and dY are both staged with in_vec-wide copies, dW
  // is written element by element; the workspace holds the partials.
  Support check_args(const ConvProblem& p, const ConvArgs& args) const override {
    if (args.k_batch != 1) return Support::no("k_batch " + std::to_string(args.k_batch) + ": only 1 is supported");
    const size_t vector_bytes = size_t(S::kInVec) * sizeof(typename S::T);
    if (reinterpret_cast<uintptr_t>(args.input) % vector_bytes != 0) {
      return Support::no("input (X) pointer not aligned to in_vec x element size");
    }
    if (reinterpret_cast<uintptr_t>(args.output) % vector_bytes != 0) {
      return Support::no("output (dY) pointer not aligned to in_vec x element size");
    }
    const size_t need = workspace_bytes(p, 1);
    if (args.workspace == nullptr || args.workspace_bytes < need) {
      return Support::no("workspace of " + std::to_string(args.workspace_bytes) + " bytes, needs " +
                         std::to_string(need));
    }
    return Support::yes();
  }

  cudaError_t run(const ConvProblem& p, const ConvArgs& args) const override {
    if (!is_supported(p) || !check_args(p, args)) return cudaErrorInvalidValue;
    const auto kernel = kernels::depthwise::depthwise_bwd_weight_kernel<Traits>;
    static const cudaError_t attribute =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::kSmemBytes);
    TD_RETURN_IF_CUDA_ERROR(attribute);
    const Plan plan = plan_for(p);
    const auto o = p.output();
    kernels::depthwise::BwdWeightParams params{};
    params.x = args.input, params.dy = args.output, params.partials = static_cast<float*>(args.workspace);
    params.C = int(p.C), params.Hx = int(p.input[1]), params.Wx = int(p.input[2]);
    params.Hy = int(o[1]), params.Wy = int(o[2]);
    params.tiles_h = int(plan.tiles_h), params.tiles_w = int(plan.tiles_w), params.slices = int(plan.slices);
    params.chunks = int(plan.chunks), params.padded_c = int(plan.padded_c), params.items = plan.items;
    kernel<<<unsigned(plan.slices * plan.chunks), S::kLaunchThreads, S::kSmemBytes, args.stream>>>(params);
    TD_RETURN_IF_CUDA_ERROR(cudaGetLastError());
    using T = typename S::T;
    const dim3 grid(unsigned((p.C + 31) / 32), unsigned(S::kTaps));
    kernels::depthwise::depthwise_bwd_weight_reduce_kernel<T, S::kTaps>
        <<<grid, dim3(32, kernels::depthwise::kReduceLanes), 0, args.stream>>>(
            static_cast<const float*>(args.workspace), static_cast<T*>(args.weight), int(p.C), int(plan.padded_c),
            int(plan.chunks));
    return cudaGetLastError();
  }

 private:
  struct Plan {
    int64_t tiles_h, tiles_w, slices, items, chunks, padded_c;
  };
  // Tiles over dY; chunks of (image, tile) items so that slices x chunks is about the target block count.
  static Plan plan_for(const ConvProblem& p) {
    const auto o = p.output();
    Plan plan{};
    plan.tiles_h = (o[1] + S::kTileH - 1) / S::kTileH;
    plan.tiles_w = (o[2] + S::kTileW - 1) / S::kTileW;
    plan.slices = (p.C + S::kChannels - 1) / S::kChannels;
    plan.items = p.N * plan.tiles_h * plan.tiles_w;
    const int64_t per_slice = std::max<int64_t>(1, kernels::depthwise::kBwdWeightTargetBlocks / plan.slices);
    plan.chunks = std::min(plan.items, per_slice);
    plan.padded_c = plan.slices * S::kChannels;
    return plan;
  }
};

}  // namespace tiledispatch
