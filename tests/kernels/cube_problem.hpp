// Problems for the host-side kernel checks: the same filter, stride, padding and dilation on every axis; 2D
// problems keep D = 1 and a filter, stride and dilation of 1 along it. cube_problem: `size + i` along spatial axis
// i (unequal extents catch swapped axes); image_problem: the extents given.
#pragma once

#include <cstdint>

#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::test {

inline ConvProblem cube_problem(int ndim, int64_t G, int64_t N, int64_t C, int64_t K, int64_t size, int64_t f,
                                int64_t stride, int64_t pad, int64_t dil) {
  ConvProblem p;
  p.ndim_spatial = ndim;
  p.G = G, p.N = N, p.C = C, p.K = K;
  for (int i = ndim == 3 ? 0 : 1; i < 3; ++i) {
    p.input[i] = size + i;
    p.filter[i] = f, p.stride[i] = stride, p.dilation[i] = dil, p.left_pad[i] = pad, p.right_pad[i] = pad;
  }
  return p;
}

inline ConvProblem image_problem(int ndim, int64_t G, int64_t N, int64_t C, int64_t K, int64_t D, int64_t H,
                                 int64_t W, int64_t f, int64_t stride, int64_t pad, int64_t dil) {
  ConvProblem p;
  p.ndim_spatial = ndim;
  p.G = G, p.N = N, p.C = C, p.K = K;
  p.input = {ndim == 3 ? D : 1, H, W};
  p.filter = {ndim == 3 ? f : 1, f, f};
  p.stride = {ndim == 3 ? stride : 1, stride, stride};
  p.dilation = {ndim == 3 ? dil : 1, dil, dil};
  p.left_pad = p.right_pad = {ndim == 3 ? pad : 0, pad, pad};
  return p;
}

}  // namespace tiledispatch::test
