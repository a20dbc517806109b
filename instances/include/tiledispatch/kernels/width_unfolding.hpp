// Width unfolding: a layer of few input channels and a wide filter (an RGB stem: C = 3, 7x7, stride 2) runs as
// the layer whose channels are the filter's X taps times C. Output pixel (.., wo) at filter row (z, y) reads X*C
// elements of input row (n, d, h), from pixel wo * sw - pw on; an unfolded input U (N, D, H, Wo, C') holds them
// (zero outside the image and past X*C), and the layer becomes one with a (Z, Y, 1) filter, unit stride and no
// padding along W, over C' = X*C rounded up. The weights' rows (k, z, y) hold X*C elements already (GKZYXC,
// G = 1): padded to C' they are the unfolded weights, and the unfolded weight gradient's rows, cut to X*C, are
// the weight gradient. Against channel padding (C rounded up to 8 per tap: 49 taps x 8 for the stem), GEMM K is
// Z*Y*C' (7 x 32 = 224 instead of 392), and a k-tile is one tap of whole channels, so the Hopper kernel takes A
// by its swizzled TMA boxes instead of gathering it or taking 8-channel columns. The price is one pass writing
// U, Wo/W * C'/C times the input (the stem: 5.3x, 51 MB at N = 32). fwd and bwd_weight read the input through
// the window; bwd_data writes it, so it keeps channel padding.
#pragma once

#include <cstdint>

#include "tiledispatch/kernels/conv_gemm_view.hpp"  // TD_HOST_DEVICE
#include "tiledispatch/runtime/problem.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime_api.h>

#include <algorithm>
#endif

namespace tiledispatch::kernels {

// What the unfolding kernel needs of the problem: the input as rows (n, d, h) of W pixels of C channels, and
// the window along W.
struct WidthUnfolding {
  int64_t rows;       // N * D * H
  int64_t width;      // W
  int64_t out_width;  // Wo
  int64_t channels;   // C (G = 1)
  int64_t taps;       // X
  int64_t stride;     // along W
  int64_t dilation;
  int64_t left_pad;
  int64_t unfolded;   // C', at least taps * channels
};

inline WidthUnfolding width_unfolding_geometry(const ConvProblem& p, int64_t unfolded_channels) {
  return {p.N * p.input[0] * p.input[1], p.input[2], p.output()[2], p.C, p.filter[2], p.stride[2],
          p.dilation[2], p.left_pad[2], unfolded_channels};
}

// The layer as the kernel sees it: C' channels, input width Wo, a filter of one tap along W.
inline ConvProblem width_unfolded_problem(const ConvProblem& p, int64_t unfolded_channels) {
  ConvProblem q = p;
  q.C = unfolded_channels;
  q.input[2] = p.output()[2];
  q.filter[2] = 1;
  q.stride[2] = 1;
  q.dilation[2] = 1;
  q.left_pad[2] = 0;
  q.right_pad[2] = 0;
  return q;
}

// The input element that U's element (row, wo, j) copies, as an offset into the input; -1 where it is zero
// (j past X*C, or a pixel outside the image: the padding).
TD_HOST_DEVICE int64_t unfolded_source(const WidthUnfolding& u, int64_t row, int64_t wo, int64_t j) {
  if (j >= u.taps * u.channels) return -1;
  const int64_t x = j / u.channels, c = j - x * u.channels;
  const int64_t w = wo * u.stride + x * u.dilation - u.left_pad;
  if (w < 0 || w >= u.width) return -1;
  return (row * u.width + w) * u.channels + c;
}

// U's `Chunk` elements from channel j0 on, at output pixel wo, from input row `row` (W pixels of C channels):
// unfolded_source for each, with the tap and channel advanced together instead of divided out per element (the
// first kernel's 64-bit divisions per element took 85 us of the stem's 151 at N = 32, three times its memory
// traffic, on the H100).
template <class Element, int Chunk>
TD_HOST_DEVICE void unfolded_chunk(const Element* row, const WidthUnfolding& u, int64_t wo, int j0, Element* out) {
  const int channels = int(u.channels);
  int x = j0 / channels, c = j0 - x * channels;
  const int64_t w0 = wo * u.stride - u.left_pad;
  for (int j = 0; j < Chunk; ++j) {
    const int64_t w = w0 + x * u.dilation;
    out[j] = x < u.taps && w >= 0 && w < u.width ? row[w * channels + c] : Element(0.0f);
    if (++c == channels) {
      c = 0;
      ++x;
    }
  }
}

#if defined(__CUDACC__)
// U from the input: a thread writes `Chunk` consecutive elements (16 bytes where C' is a multiple of the chunk) at
// one place of kRows rows, blockIdx.y walking groups of kRows rows; it loads all kRows chunks before storing any,
// so that each thread has kRows rows' loads in flight (H100, the stem at N = 32: 53.0 us with one row a thread,
// 41.5 with four). A row of U has fewer than 2^31 elements (the instance's width_unfolding), so the index within
// it is 32-bit.
template <class Element, int Chunk, int kRows>
__global__ void unfold_width_kernel(const Element* __restrict__ src, Element* __restrict__ dst, WidthUnfolding u) {
  struct alignas(sizeof(Element) * Chunk) Pack {
    Element v[Chunk];
  };
  const int chunks_per_pixel = int(u.unfolded / Chunk);
  const int64_t thread = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (thread >= u.out_width * chunks_per_pixel) return;
  const int t = int(thread);
  const int wo = t / chunks_per_pixel, j0 = (t - wo * chunks_per_pixel) * Chunk;
  for (int64_t row0 = int64_t(blockIdx.y) * kRows; row0 < u.rows; row0 += int64_t(gridDim.y) * kRows) {
    Pack pack[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (row0 + r < u.rows) {
        unfolded_chunk<Element, Chunk>(src + (row0 + r) * u.width * u.channels, u, wo, j0, pack[r].v);
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (row0 + r < u.rows) {
        *reinterpret_cast<Pack*>(dst + (row0 + r) * u.out_width * u.unfolded + int64_t(t) * Chunk) = pack[r];
      }
    }
  }
}

template <class Element>
cudaError_t unfold_width(const void* src, void* dst, const WidthUnfolding& u, cudaStream_t stream) {
  constexpr int kWide = int(16 / sizeof(Element));
  constexpr int kThreads = 128, kRows = 4;
  const bool wide = u.unfolded % kWide == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  const int64_t row_chunks = u.out_width * (wide ? u.unfolded / kWide : u.unfolded);
  const dim3 grid(unsigned((row_chunks + kThreads - 1) / kThreads),
                  unsigned(std::min<int64_t>((u.rows + kRows - 1) / kRows, 65535)));
  const auto* in = static_cast<const Element*>(src);
  auto* out = static_cast<Element*>(dst);
  if (wide) {
    unfold_width_kernel<Element, kWide, kRows><<<grid, kThreads, 0, stream>>>(in, out, u);
  } else {
    unfold_width_kernel<Element, 1, kRows><<<grid, kThreads, 0, stream>>>(in, out, u);
  }
  return cudaGetLastError();
}
#endif

}  // namespace tiledispatch::kernels
