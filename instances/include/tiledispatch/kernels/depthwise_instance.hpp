// DepthwiseInstance<Traits>: the depthwise forward family (ck_conventions §3, 20-field instance string) on the
// runtime's channels-last tensors with G = C = K (input NHWGC with C/G = 1, weight GKYXC = (C, 1, Y, X, 1),
// output NHWGK with K/G = 1): a direct convolution (depthwise_kernel.cuh, docs/depthwise.md).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include "tiledispatch/kernels/depthwise_kernel.cuh"
#include "tiledispatch/kernels/fixed_string.hpp"
#include "tiledispatch/kernels/instance_string.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/instance.hpp"

namespace tiledispatch {

namespace kernels {

// GroupedConvolution{Forward,BackwardData,BackwardWeight}Kernel<NDim,Spec,Depthwise,InVec,WeiVec,OutVec,BlockSize,
// TileH,TileW,FilterH,FilterW,StrideH,StrideW,NBatch,SubTileH,SubTileW,InType,WeiType,AccType,OutType>; WeiVec =
// InVec and BlockSize 64, as upstream (generators/instance_string.py decides the same). The backward directions
// keep the forward's 20 fields under their own kernel token (docs/depthwise.md, "Configuration").
template <class Traits, ConvDirection Direction = ConvDirection::kFwd>
constexpr FixedString<256> build_depthwise_instance_string() {
  FieldList<200> f;
  const std::string_view type = to_token(Traits::kDataType);
  f.field(2).field(std::string_view("Default")).field(std::string_view("Depthwise"));
  f.field(Traits::kInVec).field(Traits::kInVec).field(Traits::kOutVec).field(64);
  f.field(Traits::kTileH).field(Traits::kTileW).field(Traits::kFilter).field(Traits::kFilter);
  f.field(Traits::kStrideH).field(Traits::kStrideW).field(Traits::kNBatch).field(Traits::kSubH).field(Traits::kSubW);
  f.field(type).field(type).field(std::string_view("fp32")).field(type);
  FixedString<256> out;
  out.append(kernel_token(Direction)).append(std::string_view("<")).append(f.text().view());
  out.append(std::string_view(">"));
  return out;
}

// Launches whose blocks, with two halo stages, fit at most this many to an SM prefetch (depthwise_kernel.cuh,
// pipelined_walk): fwd and bwd_data blocks then walk several tiles each (persistent) and bwd_weight blocks stage
// their next item early. With more resident blocks, the blocks hide each other's loads and the second stage
// only costs occupancy (measured on the H100: docs/depthwise.md, "Launch and pipelining").
constexpr int kPrefetchMaxBlocksPerSm = 2;

// Resident blocks per SM of a depthwise kernel with one and with two halo stages.
struct Residency {
  int single = 0, ring = 0;
  bool prefetch(int stages) const { return stages == 2 && ring >= 1 && ring <= kPrefetchMaxBlocksPerSm; }
};

// Once per instance type: the kernel's shared-memory opt-in (the two-stage size) and its residency.
template <class Kernel>
cudaError_t query_residency(Kernel kernel, int threads, int single_smem, int ring_smem, Residency* r) {
  TD_RETURN_IF_CUDA_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ring_smem));
  TD_RETURN_IF_CUDA_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->single, kernel, threads, single_smem));
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->ring, kernel, threads, ring_smem);
}

inline cudaError_t sm_count(int* sms) {
  int device = 0;
  TD_RETURN_IF_CUDA_ERROR(cudaGetDevice(&device));
  return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
}

// Launches a fwd / bwd_data kernel (depthwise_kernel.cuh, walk_tiles) on `params`, whose slices and tiles are
// set; its residency is queried once per instance type. Persistent launches fill the GPU once (the blocks of a
// slice walk its tiles `per_slice` apart); otherwise, and whenever a block gets a single tile, the second stage
// is neither used nor allocated. Outputs do not depend on the launch (each is computed by one thread).
template <class S, class P>
cudaError_t launch_tiles(void (*kernel)(P), const P& params, cudaStream_t stream) {
  static Residency residency;
  static const cudaError_t queried =
      query_residency(kernel, S::kThreads, S::kSmemBytes, S::kRingSmemBytes, &residency);
  TD_RETURN_IF_CUDA_ERROR(queried);
  int64_t per_slice = params.tiles;
  if (residency.prefetch(S::kStages)) {
    int sms = 0;
    TD_RETURN_IF_CUDA_ERROR(sm_count(&sms));
    per_slice = std::clamp<int64_t>(int64_t(residency.ring) * sms / params.slices, 1, params.tiles);
  }
  const int smem_bytes = per_slice < params.tiles ? S::kRingSmemBytes : S::kSmemBytes;
  kernel<<<unsigned(params.slices * per_slice), S::kThreads, smem_bytes, stream>>>(params);
  return cudaGetLastError();
}

// The problem checks every depthwise instance makes, in this order; the reason names the first mismatch.
// S is the instance's kernel shape (its shared memory and vector fit).
template <class Traits, class S>
Support depthwise_problem_support(const ConvProblem& p) {
  if (std::string why = p.validate(); !why.empty()) return Support::no("invalid problem: " + why);
  if (p.ndim_spatial != 2) return Support::no("depthwise is 2D only, got " + std::to_string(p.ndim_spatial) + "D");
  if (p.c_per_group() != 1 || p.k_per_group() != 1) {
    return Support::no("depthwise needs C/G == 1 and K/G == 1, got C/G=" + std::to_string(p.c_per_group()) +
                       " K/G=" + std::to_string(p.k_per_group()));
  }
  if (p.filter[1] != Traits::kFilter || p.filter[2] != Traits::kFilter) {
    return Support::no("filter " + std::to_string(p.filter[1]) + "x" + std::to_string(p.filter[2]) +
                       ", instance computes " + std::to_string(Traits::kFilter) + "x" +
                       std::to_string(Traits::kFilter));
  }
  if (p.stride[1] != Traits::kStrideH || p.stride[2] != Traits::kStrideW) {
    return Support::no("stride " + std::to_string(p.stride[1]) + "x" + std::to_string(p.stride[2]) +
                       ", instance computes " + std::to_string(Traits::kStrideH) + "x" +
                       std::to_string(Traits::kStrideW));
  }
  if (p.dilation[1] != 1 || p.dilation[2] != 1) {
    return Support::no("dilation " + std::to_string(p.dilation[1]) + "x" + std::to_string(p.dilation[2]) +
                       ", depthwise instances compute dilation 1 only");
  }
  // Right padding only extends the zero border (it sets Ho/Wo), so any right pad is computed exactly.
  if (p.left_pad[1] != Traits::kPadH || p.left_pad[2] != Traits::kPadW) {
    return Support::no("left pad " + std::to_string(p.left_pad[1]) + "x" + std::to_string(p.left_pad[2]) +
                       ", instance computes " + std::to_string(Traits::kPadH) + "x" + std::to_string(Traits::kPadW));
  }
  if (p.C % Traits::kInVec != 0 || p.C % Traits::kOutVec != 0) {
    return Support::no("C=" + std::to_string(p.C) + " is not a multiple of in_vec " + std::to_string(Traits::kInVec) +
                       " and out_vec " + std::to_string(Traits::kOutVec) + " (vectors run along the channels)");
  }
  if (!S::kVectorsFitSlice) {
    return Support::no("in_vec " + std::to_string(Traits::kInVec) + " does not divide the block's nbatch x out_vec = " +
                       std::to_string(S::kChannels) + " channels");
  }
  if (S::kSmemBytes > S::Target::kSmemPerBlockBytes) {
    return Support::no("needs " + std::to_string(S::kSmemBytes) + " bytes of shared memory, " +
                       std::string(S::Target::kName) + " allows " + std::to_string(S::Target::kSmemPerBlockBytes));
  }
  const auto o = p.output();
  for (int64_t extent : {p.N, p.C, p.input[1], p.input[2], o[1], o[2]}) {
    if (extent > INT_MAX) return Support::no("an extent exceeds 2^31-1: " + std::to_string(extent));
  }
  return Support::yes();
}

// k_batch 1, the staged tensor aligned to in_vec and the stored one to out_vec (weights are read element by
// element); `staged_what`/`stored_what` name them in the reason.
template <class S>
Support depthwise_args_support(const ConvArgs& args, const void* staged, const char* staged_what, const void* stored,
                               const char* stored_what) {
  if (args.k_batch != 1) return Support::no("k_batch " + std::to_string(args.k_batch) + ": only 1 is supported");
  const auto misaligned = [](const void* ptr, int bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes != 0; };
  if (misaligned(staged, S::kInVec * int(sizeof(typename S::T)))) {
    return Support::no(std::string(staged_what) + " pointer not aligned to in_vec x element size");
  }
  if (misaligned(stored, S::kOutVec * int(sizeof(typename S::T)))) {
    return Support::no(std::string(stored_what) + " pointer not aligned to out_vec x element size");
  }
  return Support::yes();
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
  // Exact: every problem this accepts is computed in bounds; the reason names the first mismatch.
  Support is_supported(const ConvProblem& p) const override {
    using S = kernels::depthwise::Shape<Traits>;
    if (Support s = kernels::depthwise_problem_support<Traits, S>(p); !s) return s;
    if (blocks(p) > INT_MAX) return Support::no("grid of " + std::to_string(blocks(p)) + " blocks exceeds 2^31-1");
    return Support::yes();
  }

  // k_batch 1; input and output aligned to their vectors (weights are read element by element).
  Support check_args(const ConvProblem& /*problem*/, const ConvArgs& args) const override {
    using S = kernels::depthwise::Shape<Traits>;
    return kernels::depthwise_args_support<S>(args, args.input, "input", args.output, "output");
  }

  cudaError_t run(const ConvProblem& p, const ConvArgs& args) const override {
    using S = kernels::depthwise::Shape<Traits>;
    if (!is_supported(p) || !check_args(p, args)) return cudaErrorInvalidValue;
    const auto o = p.output();
    kernels::depthwise::Params params{};
    params.input = args.input, params.weight = args.weight, params.output = args.output;
    params.C = int(p.C), params.Hi = int(p.input[1]), params.Wi = int(p.input[2]);
    params.Ho = int(o[1]), params.Wo = int(o[2]);
    params.tiles_h = int((o[1] + S::kTileH - 1) / S::kTileH), params.tiles_w = int((o[2] + S::kTileW - 1) / S::kTileW);
    params.slices = int((p.C + S::kChannels - 1) / S::kChannels);
    params.tiles = int(p.N * params.tiles_h * params.tiles_w);
    return kernels::launch_tiles<S>(kernels::depthwise::depthwise_fwd_kernel<Traits>, params, args.stream);
  }

 private:
  static int64_t blocks(const ConvProblem& p) {
    using S = kernels::depthwise::Shape<Traits>;
    const auto o = p.output();
    return p.N * ((o[1] + S::kTileH - 1) / S::kTileH) * ((o[2] + S::kTileW - 1) / S::kTileW) *
           ((p.C + S::kChannels - 1) / S::kChannels);
  }
};

}  // namespace tiledispatch
