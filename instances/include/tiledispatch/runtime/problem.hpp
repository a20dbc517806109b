// One grouped-convolution problem. Spatial arrays are ordered D, H, W for 2D and 3D alike: a 2D problem has
// input/filter/stride/dilation D = 1 and pads D = 0, so kernels index one 3D shape.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>

#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch {

struct ConvProblem {
  int ndim_spatial = 2;
  int64_t G = 1;  // groups
  int64_t N = 1;  // batch
  int64_t K = 1;  // output channels, all groups
  int64_t C = 1;  // input channels, all groups
  std::array<int64_t, 3> input{1, 1, 1};     // Di, Hi, Wi
  std::array<int64_t, 3> filter{1, 1, 1};    // Z, Y, X
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> dilation{1, 1, 1};
  std::array<int64_t, 3> left_pad{0, 0, 0};
  std::array<int64_t, 3> right_pad{0, 0, 0};

  int64_t c_per_group() const { return C / G; }
  int64_t k_per_group() const { return K / G; }

  std::array<int64_t, 3> output() const {
    std::array<int64_t, 3> out{};
    for (int i = 0; i < 3; ++i) {
      const int64_t span = dilation[i] * (filter[i] - 1) + 1;
      const int64_t padded = input[i] + left_pad[i] + right_pad[i];
      out[i] = padded < span ? 0 : (padded - span) / stride[i] + 1;
    }
    return out;
  }

  static int64_t product(const std::array<int64_t, 3>& a) { return a[0] * a[1] * a[2]; }
  int64_t input_spatial() const { return product(input); }
  int64_t output_spatial() const { return product(output()); }
  int64_t filter_spatial() const { return product(filter); }

  // Element counts of the three tensors: input NDHWGC, weight GKZYXC, output NDHWGK.
  int64_t input_elements() const { return N * input_spatial() * C; }
  int64_t weight_elements() const { return K * filter_spatial() * c_per_group(); }
  int64_t output_elements() const { return N * output_spatial() * K; }

  // 2*N*K*(Do*Ho*Wo)*(C/G)*(Z*Y*X): the same count for all three directions (DESIGN, "Correctness and numbers").
  double flops() const {
    return 2.0 * static_cast<double>(N) * static_cast<double>(K) * static_cast<double>(output_spatial()) *
           static_cast<double>(c_per_group()) * static_cast<double>(filter_spatial());
  }

  // Fewest bytes a direction must move: each tensor it reads once, the one it writes once.
  double bytes(DataType dtype) const {
    return static_cast<double>(element_bytes(dtype)) *
           static_cast<double>(input_elements() + weight_elements() + output_elements());
  }

  // Empty when the problem is well formed, else the reason naming the bad value. Every extent is checked
  // before output() divides by a stride, and element counts are checked against int64 overflow before
  // anything multiplies them.
  std::string validate() const {
    if (ndim_spatial != 2 && ndim_spatial != 3) return "ndim must be 2 or 3, got " + std::to_string(ndim_spatial);
    const std::pair<const char*, int64_t> sizes[] = {{"G", G}, {"N", N}, {"K", K}, {"C", C}};
    for (const auto& [name, value] : sizes) {
      if (value < 1) return std::string(name) + " must be >= 1, got " + std::to_string(value);
    }
    if (C % G != 0) return "C=" + std::to_string(C) + " is not divisible by G=" + std::to_string(G);
    if (K % G != 0) return "K=" + std::to_string(K) + " is not divisible by G=" + std::to_string(G);
    static constexpr const char* kAxis[3] = {"D", "H", "W"};
    const std::pair<const char*, const std::array<int64_t, 3>*> extents[] = {
        {"input", &input}, {"filter", &filter}, {"stride", &stride}, {"dilation", &dilation}};
    for (int i = 0; i < 3; ++i) {
      for (const auto& [name, values] : extents) {
        if ((*values)[i] < 1) {
          return std::string(name) + " along " + kAxis[i] + " must be >= 1, got " + std::to_string((*values)[i]);
        }
      }
      if (left_pad[i] < 0 || right_pad[i] < 0) return std::string("negative padding along ") + kAxis[i];
      if (ndim_spatial == 2 && i == 0 &&
          (input[0] != 1 || filter[0] != 1 || stride[0] != 1 || dilation[0] != 1 || left_pad[0] != 0 ||
           right_pad[0] != 0)) {
        return "a 2D problem must have D extents of 1 and no D padding";
      }
    }
    // Each factor below 2^31 and each product below 2^62 keeps every count and offset a kernel forms in int64.
    constexpr int64_t kFactorLimit = int64_t{1} << 31;
    constexpr int64_t kProductLimit = int64_t{1} << 62;
    for (int i = 0; i < 3; ++i) {
      const int64_t extent[] = {input[i], filter[i], stride[i], dilation[i], left_pad[i], right_pad[i]};
      for (const int64_t value : extent) {
        if (value >= kFactorLimit) {
          return std::string("extent along ") + kAxis[i] + " is too large (" + std::to_string(value) + " >= 2^31)";
        }
      }
    }
    for (const auto& [name, value] : sizes) {
      if (value >= kFactorLimit) return std::string(name) + " is too large (" + std::to_string(value) + " >= 2^31)";
    }
    for (int i = 0; i < 3; ++i) {
      if (output()[i] < 1) return std::string("output size along ") + kAxis[i] + " is not positive";
    }
    const auto bounded_product = [&](std::initializer_list<int64_t> factors) {
      int64_t total = 1;
      for (const int64_t f : factors) {
        if (total > kProductLimit / f) return false;
        total *= f;
      }
      return true;
    };
    const auto out = output();
    const bool fits = bounded_product({N, input[0], input[1], input[2], C}) &&
                      bounded_product({N, out[0], out[1], out[2], K}) &&
                      bounded_product({K, filter[0], filter[1], filter[2], c_per_group()});
    if (!fits) return "a tensor of this problem has 2^62 elements or more";
    return {};
  }

  std::string to_string() const {
    std::ostringstream s;
    s << ndim_spatial << "D G=" << G << " N=" << N << " K=" << K << " C=" << C << " in=";
    const int first = ndim_spatial == 3 ? 0 : 1;
    auto dims = [&](const std::array<int64_t, 3>& a) {
      for (int i = first; i < 3; ++i) s << (i > first ? "x" : "") << a[i];
    };
    dims(input);
    s << " filter=";
    dims(filter);
    s << " stride=";
    dims(stride);
    s << " dilation=";
    dims(dilation);
    s << " pad=";
    dims(left_pad);
    s << "/";
    dims(right_pad);
    return s.str();
  }
};

}  // namespace tiledispatch
