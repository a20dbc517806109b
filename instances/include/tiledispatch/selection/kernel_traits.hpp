// What a kernel name says about its configuration, as numbers: the kernel half of the selection features.
// The name grammar is ck_conventions §2 (generators/naming.py); heuristics/kernel_traits.py reads the same
// names into the same fields, and a CPU test compares the two. Header-only, C++17, no CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::selection {

struct KernelTraits {
  ConvDirection direction = ConvDirection::kFwd;
  DataType dtype = DataType::kFp16;
  int ndim_spatial = 2;
  bool depthwise = false;
  int64_t tile_m = 0, tile_n = 0, tile_k = 0;
  int64_t wave_m = 1, wave_n = 1, wave_k = 1;
  int64_t warp_tile_m = 0, warp_tile_n = 0, warp_tile_k = 0;
  int64_t vector_a = 4, vector_b = 8, vector_c = 8;  // the name omits (4, 8, 8)
  int pipeline = 0;        // position in tiledispatch::Pipeline
  bool interwave = false;
  bool double_smem_buffer = false;
  int64_t groups_to_merge = 1;
  bool two_stage = false;
  int specialization = 0;  // position in tiledispatch::ConvSpecialization
  bool explicit_gemm = false;
  bool streamk = false;
  bool streamk_persistent = false;
  bool split_image = false;
  int64_t dw_tile_h = 0, dw_tile_w = 0, dw_slice_channels = 0;  // depthwise: tile pixels along H, W; channel slice

  int64_t block_threads() const { return 64 * wave_m * wave_n * wave_k; }
};

namespace detail {

// A cursor over a name: each step consumes a literal or a number, or reports that it cannot.
class NameCursor {
 public:
  explicit NameCursor(std::string_view text) : rest_(text) {}
  bool done() const { return rest_.empty(); }
  bool literal(std::string_view token) {
    if (rest_.substr(0, token.size()) != token) return false;
    rest_.remove_prefix(token.size());
    return true;
  }
  std::optional<int64_t> number() {
    int64_t value = 0;
    size_t digits = 0;
    while (digits < rest_.size() && rest_[digits] >= '0' && rest_[digits] <= '9' && digits < 12) {
      value = value * 10 + (rest_[digits] - '0');
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    rest_.remove_prefix(digits);
    return value;
  }
  // "AxBxC"
  bool triple(int64_t& a, int64_t& b, int64_t& c) {
    const auto x = number();
    if (!x || !literal("x")) return false;
    const auto y = number();
    if (!y || !literal("x")) return false;
    const auto z = number();
    if (!z) return false;
    a = *x, b = *y, c = *z;
    return true;
  }
  // Consumes the first of `tokens` that matches; returns its position, or -1.
  template <size_t N>
  int one_of(const std::string_view (&tokens)[N]) {
    for (size_t i = 0; i < N; ++i) {
      if (literal(tokens[i])) return static_cast<int>(i);
    }
    return -1;
  }

 private:
  std::string_view rest_;
};

// Longest first where one token prefixes another; values are positions in the C++ enums.
constexpr std::string_view kDtypes[] = {"fp16", "bf16", "fp32"};
constexpr std::string_view kPipelineTokens[] = {"basic_async_v1", "comp_async", "basic_v1", "basic_v2", "compv1",
                                                "compv2", "compv3", "compv4", "compv5", "compv6", "wavelet", "mem"};
constexpr int kPipelineOf[] = {7, 8, 0, 1, 0, 1, 3, 4, 5, 6, 9, 2};
constexpr std::string_view kSpecTokens[] = {"_filter1x1_stride1_pad0", "_filter1x1_pad0", "_filter3x3"};
constexpr int kSpecOf[] = {2, 1, 3};

inline std::optional<KernelTraits> parse_depthwise(NameCursor& c, KernelTraits t) {
  t.depthwise = true;
  const int dtype = c.one_of(kDtypes);
  if (dtype < 0 || !c.literal("_ngchw_")) return std::nullopt;
  // 3D: the fields below describe the H x W plane, as in 2D (heuristics/kernel_traits.py); the problem's
  // features carry the depth.
  if (c.literal("3d_")) {
    t.ndim_spatial = 3;
  } else if (!c.literal("2d_")) {
    return std::nullopt;
  }
  t.dtype = static_cast<DataType>(dtype);
  const auto th = c.number();
  if (!th || !c.literal("x")) return std::nullopt;
  const auto tw = c.number();
  if (!tw || !c.literal("_f")) return std::nullopt;
  const auto filter = c.number();
  // Strides and pads: the filter window's placement, not part of the features.
  if (!filter || !c.literal("_s") || !c.number() || !c.literal("x") || !c.number() || !c.literal("_p") ||
      !c.number() || !c.literal("x") || !c.number() || !c.literal("_nb")) {
    return std::nullopt;
  }
  const auto nbatch = c.number();
  if (!nbatch || !c.literal("_sub")) return std::nullopt;
  const auto sub_h = c.number();
  if (!sub_h || !c.literal("x")) return std::nullopt;
  const auto sub_w = c.number();
  if (!sub_w || !c.literal("_vec")) return std::nullopt;
  const auto in_vec = c.number();
  if (!in_vec || !c.literal("_")) return std::nullopt;
  const auto out_vec = c.number();
  if (!out_vec || !c.done()) return std::nullopt;
  t.tile_m = *th * *tw * *nbatch;
  t.tile_n = 1;
  t.tile_k = *filter * *filter;
  t.warp_tile_m = *sub_h;
  t.warp_tile_n = *sub_w;
  t.warp_tile_k = 1;
  t.vector_a = t.vector_b = *in_vec;
  t.vector_c = *out_vec;
  t.dw_tile_h = *th;
  t.dw_tile_w = *tw;
  t.dw_slice_channels = *nbatch * *out_vec;
  return t;
}

}  // namespace detail

// The traits of a canonical kernel name, or nullopt when the name does not follow the grammar.
inline std::optional<KernelTraits> parse_kernel_traits(std::string_view name) {
  using detail::NameCursor;
  NameCursor c(name);
  KernelTraits t;
  if (!c.literal("grouped_conv_")) return std::nullopt;
  if (c.literal("fwd_depthwise_")) return detail::parse_depthwise(c, t);
  if (c.literal("bwd_data_depthwise_")) {
    t.direction = ConvDirection::kBwdData;
    return detail::parse_depthwise(c, t);
  }
  if (c.literal("bwd_weight_depthwise_")) {
    t.direction = ConvDirection::kBwdWeight;
    return detail::parse_depthwise(c, t);
  }
  if (c.literal("fwd_")) {
    t.direction = ConvDirection::kFwd;
  } else if (c.literal("bwd_data_")) {
    t.direction = ConvDirection::kBwdData;
  } else if (c.literal("bwd_weight_")) {
    t.direction = ConvDirection::kBwdWeight;
  } else {
    return std::nullopt;
  }
  const int dtype = c.one_of(detail::kDtypes);
  if (dtype < 0) return std::nullopt;
  t.dtype = static_cast<DataType>(dtype);
  if (c.literal("_nhwgc_2d_")) {
    t.ndim_spatial = 2;
  } else if (c.literal("_ndhwgc_3d_")) {
    t.ndim_spatial = 3;
  } else {
    return std::nullopt;
  }
  const int pipeline = c.one_of(detail::kPipelineTokens);
  if (pipeline < 0) return std::nullopt;
  t.pipeline = detail::kPipelineOf[pipeline];
  if (!c.literal("_cshuffle_") && !c.literal("_default_")) return std::nullopt;
  if (c.literal("interwave_")) {
    t.interwave = true;
  } else if (!c.literal("intrawave_")) {
    return std::nullopt;
  }
  if (!c.triple(t.tile_m, t.tile_n, t.tile_k) || !c.literal("_") || !c.triple(t.wave_m, t.wave_n, t.wave_k) ||
      !c.literal("_") || !c.triple(t.warp_tile_m, t.warp_tile_n, t.warp_tile_k)) {
    return std::nullopt;
  }
  // Optional suffixes, in the grammar's order.
  if (c.literal("_vec")) {
    const auto a = c.number();
    if (!a || !c.literal("_")) return std::nullopt;
    const auto b = c.number();
    if (!b || !c.literal("_")) return std::nullopt;
    const auto v = c.number();
    if (!v) return std::nullopt;
    t.vector_a = *a, t.vector_b = *b, t.vector_c = *v;
  }
  if (c.literal("_wg") && !c.number()) return std::nullopt;
  if (c.literal("_gm")) {
    const auto gm = c.number();
    if (!gm || *gm < 1) return std::nullopt;
    t.groups_to_merge = *gm;
  }
  t.double_smem_buffer = c.literal("_dsb");
  t.two_stage = c.literal("_2stage");
  if (const int spec = c.one_of(detail::kSpecTokens); spec >= 0) t.specialization = detail::kSpecOf[spec];
  t.explicit_gemm = c.literal("_explicit_gemm");
  if (c.literal("_streamk_")) {
    if (!c.literal("tree") && !c.literal("linear")) return std::nullopt;
    t.streamk = true;
    t.streamk_persistent = c.literal("_persistent");
  }
  t.split_image = c.literal("_large_tensor");
  if (c.literal("_bpc") && !c.number()) return std::nullopt;
  if (!c.done()) return std::nullopt;
  return t;
}

}  // namespace tiledispatch::selection
