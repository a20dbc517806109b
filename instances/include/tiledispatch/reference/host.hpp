// float64 CPU reference of the three directions (docs/architecture.md §5), for checking the GPU reference
// on small problems. Inputs are given as doubles holding the values the device tensors hold exactly
// (e.g. fp16 values converted to double).
#pragma once

#include <cstdint>
#include <vector>

#include "tiledispatch/runtime/direction.hpp"
#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::reference {

// Calls f(n, od, oh, ow, di, hi, wi, z, y, x) for every (output pixel, tap) pair that reads an input pixel.
template <class F>
void for_each_window(const ConvProblem& p, F&& f) {
  const auto o = p.output();
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t od = 0; od < o[0]; ++od)
      for (int64_t oh = 0; oh < o[1]; ++oh)
        for (int64_t ow = 0; ow < o[2]; ++ow)
          for (int64_t z = 0; z < p.filter[0]; ++z)
            for (int64_t y = 0; y < p.filter[1]; ++y)
              for (int64_t x = 0; x < p.filter[2]; ++x) {
                const int64_t di = od * p.stride[0] - p.left_pad[0] + z * p.dilation[0];
                const int64_t hi = oh * p.stride[1] - p.left_pad[1] + y * p.dilation[1];
                const int64_t wi = ow * p.stride[2] - p.left_pad[2] + x * p.dilation[2];
                if (di < 0 || di >= p.input[0] || hi < 0 || hi >= p.input[1] || wi < 0 || wi >= p.input[2]) continue;
                f(n, od, oh, ow, di, hi, wi, z, y, x);
              }
}

// Returns the tensor `direction` writes, in its layout (NDHWGK, NDHWGC or GKZYXC), as doubles.
inline std::vector<double> host_reference(ConvDirection direction, const ConvProblem& p,
                                          const std::vector<double>& input, const std::vector<double>& weight,
                                          const std::vector<double>& output) {
  const auto o = p.output();
  const int64_t G = p.G, Kg = p.K / p.G, Cg = p.C / p.G;
  auto in_at = [&](int64_t n, int64_t d, int64_t h, int64_t w, int64_t g, int64_t c) {
    return (((n * p.input[0] + d) * p.input[1] + h) * p.input[2] + w) * p.C + g * Cg + c;
  };
  auto out_at = [&](int64_t n, int64_t d, int64_t h, int64_t w, int64_t g, int64_t k) {
    return (((n * o[0] + d) * o[1] + h) * o[2] + w) * p.K + g * Kg + k;
  };
  auto wei_at = [&](int64_t g, int64_t k, int64_t z, int64_t y, int64_t x, int64_t c) {
    return ((((g * Kg + k) * p.filter[0] + z) * p.filter[1] + y) * p.filter[2] + x) * Cg + c;
  };
  std::vector<double> result(size_t(tensor_elements(p, direction_roles(direction).c)), 0.0);
  for_each_window(p, [&](int64_t n, int64_t od, int64_t oh, int64_t ow, int64_t di, int64_t hi, int64_t wi,
                         int64_t z, int64_t y, int64_t x) {
    for (int64_t g = 0; g < G; ++g)
      for (int64_t k = 0; k < Kg; ++k)
        for (int64_t c = 0; c < Cg; ++c) {
          const int64_t i = in_at(n, di, hi, wi, g, c), w = wei_at(g, k, z, y, x, c), q = out_at(n, od, oh, ow, g, k);
          switch (direction) {
            case ConvDirection::kFwd: result[size_t(q)] += input[size_t(i)] * weight[size_t(w)]; break;
            case ConvDirection::kBwdData: result[size_t(i)] += output[size_t(q)] * weight[size_t(w)]; break;
            case ConvDirection::kBwdWeight: result[size_t(w)] += output[size_t(q)] * input[size_t(i)]; break;
          }
        }
  });
  return result;
}

}  // namespace tiledispatch::reference
