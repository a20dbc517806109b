// The selection features of (problem, direction, dtype, kernel, split-K), in heuristics/features.py's order
// and with its arithmetic (float64 from integers; log2 of a non-positive value is 0). A CPU test compares
// the two vectors on the same inputs. Header-only, C++17, no CUDA.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string_view>

#include "tiledispatch/runtime/direction.hpp"
#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"
#include "tiledispatch/selection/kernel_traits.hpp"

namespace tiledispatch::selection {

// H100 SXM; the wave-quantisation features assume it, as the Python side does.
constexpr int64_t kSmCount = 132;

constexpr std::array<std::string_view, 91> kFeatureNames = {
    // problem
    "N", "C", "K", "G", "c_per_group", "k_per_group", "Di", "Hi", "Wi", "Z", "Y", "X", "stride_h", "stride_w",
    "stride_d", "pad_h", "pad_w", "pad_d", "dilation_h", "dilation_w", "Do", "Ho", "Wo", "ndim", "is_1x1", "is_3x3",
    "is_depthwise", "dtype_bytes", "is_fp32", "log2_N", "log2_c_per_group", "log2_k_per_group", "log2_G",
    "log2_in_spatial", "log2_out_spatial", "log2_flops", "arithmetic_intensity", "gemm_m", "gemm_n", "gemm_k",
    "log2_gemm_m", "log2_gemm_n", "log2_gemm_k",
    // kernel
    "tile_m", "tile_n", "tile_k", "wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n", "warp_tile_k",
    "vector_a", "vector_b", "vector_c", "block_threads", "pipeline", "interwave", "double_smem_buffer",
    "groups_to_merge", "two_stage", "specialization", "explicit_gemm", "streamk", "streamk_persistent",
    "split_image", "kernel_depthwise", "tile_mn", "smem_bytes", "split_k",
    // interaction
    "tiles_m", "tiles_n", "k_iterations", "log2_blocks", "waves", "wave_efficiency", "waste_m", "waste_n", "waste_k",
    "tile_utilisation", "vector_a_fits", "vector_c_fits", "k_iterations_per_split", "accumulators_per_thread",
    "merged_group_pairing", "bwd_data_zero_fraction", "dw_tile_h", "dw_tile_w", "dw_waste_h", "dw_waste_w",
    "dw_slice_waste"};

using FeatureVector = std::array<double, kFeatureNames.size()>;

namespace detail {

inline double log2_or_zero(double value) { return value > 0 ? std::log2(value) : 0.0; }
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace detail

// How a merged-group kernel (groups_to_merge GM > 1) runs `p`. fwd and bwd_data on the Hopper path (16-bit
// types): the factor P where P consecutive groups, run as one, have the per-group GEMM extents tile_k / GM and
// tile_n / GM (1: diagonal blocks; 2, 4: paired groups), else 0 (gathered block-diagonally, with zero MACs);
// fp32: 1 where the direct kernel multiplies the diagonal blocks (C/G = K/G of 2, 4, 8, 16 or 32, GM x C/G =
// tile_k = tile_n), else 0. bwd_weight: 1 where the merged groups' K/G rows fill tile_m exactly, else 0. Where
// GM does not divide G only the direct kernels run (a last block of fewer groups): 1 or 0 as for them.
inline int64_t merged_group_pairing(const ConvProblem& p, ConvDirection direction, DataType dtype,
                                    const KernelTraits& kernel) {
  const int64_t gm = kernel.groups_to_merge;
  if (gm == 1) return 0;
  if (direction == ConvDirection::kBwdWeight) return gm * p.k_per_group() == kernel.tile_m ? 1 : 0;
  if (dtype != DataType::kFp16 && dtype != DataType::kBf16) {
    const int64_t cg = p.c_per_group();
    const bool width = cg == 2 || cg == 4 || cg == 8 || cg == 16 || cg == 32;
    return width && cg == p.k_per_group() && cg * gm == kernel.tile_k && cg * gm == kernel.tile_n ? 1 : 0;
  }
  const bool fwd = direction == ConvDirection::kFwd;
  const int64_t along_k = fwd ? p.c_per_group() : p.k_per_group(), along_n = fwd ? p.k_per_group() : p.c_per_group();
  for (const int64_t factor : {1, 2, 4}) {
    if (along_k * factor * gm == kernel.tile_k && along_n * factor * gm == kernel.tile_n &&
        (factor == 1 || p.G % (factor * gm) == 0)) {
      return factor;
    }
  }
  return 0;
}

// bwd_data: the fraction of input pixels that no filter tap reaches at strides above 1 (zero gradient, rows
// the implicit GEMM still computes), ignoring the edges: along one dimension the taps reach
// min(filter, stride / gcd(dilation, stride)) of every stride positions. 0 in the other directions.
inline double bwd_data_zero_fraction(const ConvProblem& p, ConvDirection direction) {
  if (direction != ConvDirection::kBwdData) return 0.0;
  double reached = 1.0;
  for (int i = 0; i < 3; ++i) {
    const int64_t hit = std::min(p.filter[i], p.stride[i] / std::gcd(p.dilation[i], p.stride[i]));
    reached *= static_cast<double>(hit) / static_cast<double>(p.stride[i]);
  }
  return 1.0 - reached;
}

// A depthwise kernel's share of idle tile rows, tile columns and slice channels on `p` (the tensor its blocks
// own: fwd and bwd_weight the output, bwd_data the input, one H x W plane at a time; a dilated axis's largest
// residue, every d / s-th output or d-th input); zeros for the implicit GEMM.
inline std::array<double, 3> depthwise_waste(const ConvProblem& p, ConvDirection direction,
                                             const KernelTraits& kernel) {
  if (!kernel.depthwise) return {0.0, 0.0, 0.0};
  const auto out = p.output();
  const bool input = direction == ConvDirection::kBwdData;
  const auto residue = [&](int axis) {
    const int64_t size = input ? p.input[axis] : out[axis], d = p.dilation[axis];
    if (d == 1) return size;
    return detail::ceil_div(size, input ? d : std::max<int64_t>(1, d / p.stride[axis]));
  };
  const auto waste = [](int64_t size, int64_t step) {
    return 1.0 - static_cast<double>(size) / static_cast<double>(detail::ceil_div(size, step) * step);
  };
  return {waste(residue(1), kernel.dw_tile_h), waste(residue(2), kernel.dw_tile_w),
          waste(p.C, kernel.dw_slice_channels)};
}

inline FeatureVector compute_features(const ConvProblem& p, ConvDirection direction, DataType dtype,
                                      const KernelTraits& kernel, int64_t split_k) {
  using detail::ceil_div;
  using detail::log2_or_zero;
  const auto out = p.output();
  const int64_t cg = p.c_per_group(), kg = p.k_per_group();
  const GemmExtents g = gemm_extents(direction, p);  // one group (ck_conventions §1)
  const int64_t elem = static_cast<int64_t>(element_bytes(dtype));
  // Exact integers first, as Python's ints, then one conversion each.
  const int64_t flops_int = 2 * p.N * p.K * p.output_spatial() * cg * p.filter_spatial();
  const int64_t bytes_int = elem * (p.input_elements() + p.weight_elements() + p.output_elements());
  const double flops = static_cast<double>(flops_int);
  const int64_t a_dim = direction == ConvDirection::kFwd ? cg : kg;
  const int64_t c_dim = direction == ConvDirection::kFwd ? kg : cg;
  const int64_t tiles_m = ceil_div(g.m, kernel.tile_m), tiles_n = ceil_div(g.n, kernel.tile_n);
  const int64_t k_iterations = ceil_div(g.k, kernel.tile_k);
  const int64_t blocks = tiles_m * tiles_n * ceil_div(p.G, kernel.groups_to_merge) * split_k;
  const double waste_m = 1.0 - static_cast<double>(g.m) / static_cast<double>(tiles_m * kernel.tile_m);
  const double waste_n = 1.0 - static_cast<double>(g.n) / static_cast<double>(tiles_n * kernel.tile_n);
  const double waste_k = 1.0 - static_cast<double>(g.k) / static_cast<double>(k_iterations * kernel.tile_k);
  const int64_t smem = (kernel.tile_m + kernel.tile_n) * kernel.tile_k * elem * (kernel.double_smem_buffer ? 2 : 1);
  const auto d = [](auto v) { return static_cast<double>(v); };
  const auto dw = depthwise_waste(p, direction, kernel);
  return FeatureVector{
      d(p.N), d(p.C), d(p.K), d(p.G), d(cg), d(kg), d(p.input[0]), d(p.input[1]), d(p.input[2]), d(p.filter[0]),
      d(p.filter[1]), d(p.filter[2]), d(p.stride[1]), d(p.stride[2]), d(p.stride[0]), d(p.left_pad[1]),
      d(p.left_pad[2]), d(p.left_pad[0]), d(p.dilation[1]), d(p.dilation[2]), d(out[0]), d(out[1]), d(out[2]),
      d(p.ndim_spatial), d(p.filter_spatial() == 1), d(p.filter[1] == 3 && p.filter[2] == 3 && p.filter[0] == 1),
      d(cg == 1 && kg == 1), d(elem), d(dtype == DataType::kFp32),
      log2_or_zero(d(p.N)), log2_or_zero(d(cg)), log2_or_zero(d(kg)), log2_or_zero(d(p.G)),
      log2_or_zero(d(p.input_spatial())), log2_or_zero(d(p.output_spatial())), log2_or_zero(flops),
      flops / d(bytes_int),
      d(g.m), d(g.n), d(g.k), log2_or_zero(d(g.m)), log2_or_zero(d(g.n)), log2_or_zero(d(g.k)),
      d(kernel.tile_m), d(kernel.tile_n), d(kernel.tile_k), d(kernel.wave_m), d(kernel.wave_n), d(kernel.wave_k),
      d(kernel.warp_tile_m), d(kernel.warp_tile_n), d(kernel.warp_tile_k),
      d(kernel.vector_a), d(kernel.vector_b), d(kernel.vector_c), d(kernel.block_threads()), d(kernel.pipeline),
      d(kernel.interwave), d(kernel.double_smem_buffer), d(kernel.groups_to_merge), d(kernel.two_stage),
      d(kernel.specialization), d(kernel.explicit_gemm), d(kernel.streamk), d(kernel.streamk_persistent),
      d(kernel.split_image), d(kernel.depthwise), d(kernel.tile_m * kernel.tile_n), d(smem), d(split_k),
      d(tiles_m), d(tiles_n), d(k_iterations), log2_or_zero(d(blocks)), d(blocks) / d(kSmCount),
      d(blocks) / d(ceil_div(blocks, kSmCount) * kSmCount),
      waste_m, waste_n, waste_k, (1.0 - waste_m) * (1.0 - waste_n) * (1.0 - waste_k),
      d(a_dim % kernel.vector_a == 0), d(c_dim % kernel.vector_c == 0),
      d(ceil_div(k_iterations, split_k)), d(kernel.tile_m * kernel.tile_n) / d(kernel.block_threads()),
      d(merged_group_pairing(p, direction, dtype, kernel)), bwd_data_zero_fraction(p, direction),
      d(kernel.dw_tile_h), d(kernel.dw_tile_w), dw[0], dw[1], dw[2]};
}

}  // namespace tiledispatch::selection
