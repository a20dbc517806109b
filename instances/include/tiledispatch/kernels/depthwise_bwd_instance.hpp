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

#include "tiledispatch/kernels/dependent_launch.hpp"
#include "tiledispatch/kernels/depthwise_bwd_kernel.cuh"
#include "tiledispatch/kernels/depthwise_instance.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/instance.hpp"

namespace tiledispatch {

namespace kernels::depthwise {

// bwd_weight launches as many (slice, chunk) blocks as the GPU holds at once: one wave, since every block adds
// a partial row to the second pass. The chunking, and with it the rounding, is fixed for a GPU (results are
// bit-identical run to run) and may differ between GPU models. The workspace is sized for this many blocks at
// most per launch, whatever the GPU (a dilated problem launches once per residue).
constexpr int64_t kBwdWeightMaxBlocks = 4096;

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
    return {ConvDirection::kBwdData, Traits::kDataType, Traits::kNDim, KernelFamily::kDepthwise};
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
    using T = typename S::T;
    const auto launch = [&](const kernels::ResidueGrid& dx, const kernels::ResidueGrid& dy) {
      kernels::depthwise::BwdDataParams params{};
      params.dy = kernels::element_at<T>(args.output, dy.origin), params.weight = args.weight;
      params.dx = kernels::element_at<T>(args.input, dx.origin);
      params.C = int(p.C), params.dy_grid = dy.grid, params.dx_grid = dx.grid;
      params.depth = kernels::depth_map(p, true);
      kernels::set_tile_walk<S>(params, dx.grid, p.N * p.input[0], p.C);
      return kernels::launch_tiles<S>(kernels::depthwise::depthwise_bwd_data_kernel<Traits>, params,
                                      Traits::kDataType, params.dy, dy.grid, p.C, p.N * p.output()[0], args.stream);
    };
    if (kernels::has_unread_inputs(p)) {  // dX pixels that no dY pixel reads: zero, then the residues
      TD_RETURN_IF_CUDA_ERROR(cudaMemsetAsync(args.input, 0, size_t(p.input_elements()) * sizeof(T), args.stream));
    }
    return kernels::for_each_residue(p, kernels::Walked::kInput, launch);
  }

 private:
  static int64_t blocks(const ConvProblem& p) {
    return kernels::tile_count<S>(p.N * p.input[0], p.input[1], p.input[2]) * kernels::channel_slices<S>(p.C);
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
    return {ConvDirection::kBwdWeight, Traits::kDataType, Traits::kNDim, KernelFamily::kDepthwise};
  }
  Support is_supported(const ConvProblem& p) const override {
    if (Support s = kernels::depthwise_problem_support<Traits, S>(p); !s) return s;
    // The kernel places an item (tile) with int arithmetic; the undilated walk has the most items.
    const auto o = p.output();
    const int64_t items = kernels::tile_count<S>(p.N * o[0], o[1], o[2]);
    if (items > INT_MAX) return Support::no(std::to_string(items) + " dY tiles exceed 2^31-1");
    return Support::yes();
  }
  // One fp32 partial of every (tap, channel) per chunk, for the most chunks any GPU launches (summed over the
  // residues of a dilated problem, each launched as a whole wave); a 3D chunk holds every depth tap's.
  size_t workspace_bytes(const ConvProblem& p, int /*k_batch*/) const override {
    if (!is_supported(p)) return 0;
    int64_t chunks = 0;
    using Grid = kernels::ResidueGrid;
    kernels::for_each_residue(p, kernels::Walked::kOutput, [&](const Grid&, const Grid& dy) {
      chunks += plan_for(p, dy).max_chunks;
      return cudaSuccess;
    });
    return size_t(chunks) * S::kWeightTaps * size_t(padded_c(p)) * sizeof(float);
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
    static kernels::Residency residency;
    static const cudaError_t queried =
        kernels::query_residency(kernel, S::kLaunchThreads, S::kSmemBytes, S::kRingSmemBytes, &residency);
    TD_RETURN_IF_CUDA_ERROR(queried);
    const bool prefetch = residency.prefetch(S::kStages, kernels::kPrefetchMaxBlocksPerSm);
    int sms = 0;
    TD_RETURN_IF_CUDA_ERROR(sm_count(&sms));
    const int64_t wave = int64_t(std::max(1, prefetch ? residency.ring : residency.single)) * sms;
    using T = typename S::T;
    // Each residue's launch is a wave of its own and writes its chunks after the previous residue's; one
    // reduction then adds every chunk in order.
    int64_t chunks = 0;
    using Grid = kernels::ResidueGrid;
    TD_RETURN_IF_CUDA_ERROR(kernels::for_each_residue(p, kernels::Walked::kOutput, [&](const Grid& x, const Grid& dy) {
      const Plan plan = plan_for(p, dy);
      const int64_t residue_chunks = std::clamp<int64_t>(wave / (plan.slices * S::kFilterD), 1, plan.max_chunks);
      kernels::depthwise::BwdWeightParams params{};
      params.x = kernels::element_at<T>(args.input, x.origin);
      params.dy = kernels::element_at<T>(args.output, dy.origin);
      params.partials = static_cast<float*>(args.workspace) + chunks * S::kWeightTaps * padded_c(p);
      params.C = int(p.C), params.x_grid = x.grid, params.dy_grid = dy.grid;
      params.depth = kernels::depth_map(p, false);
      params.tiles_h = int(plan.tiles_h), params.tiles_w = int(plan.tiles_w), params.slices = int(plan.slices);
      params.chunks = int(residue_chunks), params.items = plan.items;
      CUtensorMap x_map{}, dy_map{};
      const bool tma =
          kernels::encode_pixel_map<typename S::XHalo>(x_map, Traits::kDataType, params.x, x.grid, p.C,
                                                       p.N * p.input[0]) &&
          kernels::encode_pixel_map<typename S::DyTile>(dy_map, Traits::kDataType, params.dy, dy.grid, p.C,
                                                        p.N * p.output()[0]);
      params.staging = (prefetch ? kernels::depthwise::kStagePrefetch : 0) | (tma ? kernels::depthwise::kStageTma : 0);
      // One block per (slice, chunk) and depth tap (blockIdx.y).
      kernel<<<dim3(unsigned(plan.slices * residue_chunks), unsigned(S::kFilterD)), S::kLaunchThreads,
               prefetch ? S::kRingSmemBytes : S::kSmemBytes, args.stream>>>(params, x_map, dy_map);
      chunks += residue_chunks;
      return cudaGetLastError();
    }));
    return kernels::launch_dependent(&kernels::depthwise::depthwise_bwd_weight_reduce_kernel<T, S::kWeightTaps>,
                                     dim3(unsigned((p.C + 31) / 32), unsigned(S::kWeightTaps)),
                                     dim3(32, kernels::depthwise::kReduceLanes), 0, args.stream,
                                     static_cast<const float*>(args.workspace), static_cast<T*>(args.weight),
                                     int(p.C), int(padded_c(p)), int(chunks));
  }

 private:
  struct Plan {
    int64_t tiles_h, tiles_w, slices, items, max_chunks;
  };
  static int64_t padded_c(const ConvProblem& p) { return kernels::channel_slices<S>(p.C) * S::kChannels; }
  // Tiles over a residue of dY; at most kBwdWeightMaxBlocks (slice, chunk, depth tap) blocks, a chunk a range
  // of (image, dY slice, tile) items.
  static Plan plan_for(const ConvProblem& p, const kernels::ResidueGrid& dy) {
    Plan plan{};
    plan.tiles_h = (dy.grid.height + S::kTileH - 1) / S::kTileH;
    plan.tiles_w = (dy.grid.width + S::kTileW - 1) / S::kTileW;
    plan.slices = kernels::channel_slices<S>(p.C);
    plan.items = kernels::tile_count<S>(p.N * p.output()[0], dy.grid.height, dy.grid.width);
    const int64_t per_slice =
        std::max<int64_t>(1, kernels::depthwise::kBwdWeightMaxBlocks / (plan.slices * S::kFilterD));
    plan.max_chunks = std::min(plan.items, per_slice);
    return plan;
  }
};

}  // namespace tiledispatch
