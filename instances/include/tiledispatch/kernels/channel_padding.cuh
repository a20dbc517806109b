// Channels padded to the vector width: a layer whose C/G no vector of the configuration divides (an RGB stem,
// C = 3) runs as the same layer with C/G rounded up to a multiple of every vector that reads a C/G run, its
// extra channels zero. The padded copies live in the workspace. Which tensors are copied follows from the
// direction: the ones whose channels are C/G and that the GEMM reads get zero channels (fwd: input and weights;
// bwd_data: weights; bwd_weight: input), so every extra product is a zero; the one it writes is computed padded
// and its first C/G channels copied out (bwd_data: the input gradient; bwd_weight: the weight gradient).
// cuDNN and CUTLASS do the same for such layers (CUTLASS's fixed/few-channels iterators need C a multiple of
// the access width); the gathers then move whole 16-byte pixels instead of 2-byte elements.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "tiledispatch/runtime/direction.hpp"
#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::kernels {

// The problem as the kernel sees it: `padded_cg` channels per group, input and weights alike.
inline ConvProblem channel_padded_problem(const ConvProblem& p, int64_t padded_cg) {
  ConvProblem q = p;
  q.C = p.G * padded_cg;
  return q;
}

// Rows of C/G channels in a tensor whose channels are C/G per row (input: pixels x groups, weights: K x taps).
inline int64_t channel_rows(const ConvProblem& p, ConvTensor tensor) {
  return tensor == ConvTensor::kInput ? p.N * p.input_spatial() * p.G : p.K * p.filter_spatial();
}

// Whether a run on padded channels copies `tensor` in (it is read: A or B of the direction's GEMM, and has
// C/G channels) and out (it is written: C, with C/G channels). direction_roles says which tensor is which.
constexpr bool pads_read(ConvDirection direction, ConvTensor tensor) {
  const DirectionRoles roles = direction_roles(direction);
  return tensor != ConvTensor::kOutput && (roles.a == tensor || roles.b == tensor);
}
constexpr bool pads_written(ConvDirection direction, ConvTensor tensor) {
  return tensor != ConvTensor::kOutput && direction_roles(direction).c == tensor;
}

// rows x `from` channels -> rows x `to` channels: the first min(from, to) of each row copied, the rest zero
// (from < to pads, from > to drops the padding). Each thread writes `Chunk` consecutive channels of a row, so
// 16-bit rows of 8 (fp32: 4) padded channels are one 16-byte store. `Index` is 32-bit where the chunks fit:
// 64-bit divisions per chunk made the copy cost several times its traffic (the width-unfolding copies of session
// 24, 85 us for 61 MB on the H100, had the same pattern).
template <class Element, int Chunk, class Index>
__global__ void copy_channel_rows_kernel(const Element* __restrict__ src, Element* __restrict__ dst, Index rows,
                                         Index from, Index to) {
  struct alignas(sizeof(Element) * Chunk) Pack {
    Element v[Chunk];
  };
  const Index chunks_per_row = to / Chunk;
  const Index count = rows * chunks_per_row;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += Index(gridDim.x) * blockDim.x) {
    const Index row = i / chunks_per_row;
    const Index c0 = (i - row * chunks_per_row) * Chunk;
    const Element* in = src + int64_t(row) * from;
    Pack pack;
#pragma unroll
    for (int j = 0; j < Chunk; ++j) pack.v[j] = c0 + j < from ? in[c0 + j] : Element(0.0f);
    *reinterpret_cast<Pack*>(dst + int64_t(row) * to + c0) = pack;
  }
}

template <class Element, int Chunk>
void launch_copy_channel_rows(const Element* src, Element* dst, int64_t rows, int64_t from, int64_t to,
                              cudaStream_t stream) {
  const int64_t threads = rows * (to / Chunk);
  const int blocks = int(std::clamp<int64_t>((threads + 255) / 256, 1, 8192));
  // The 32-bit loop's last step stays below 2^32: count plus one grid of threads.
  if (threads + int64_t(blocks) * 256 < (int64_t(1) << 32)) {
    copy_channel_rows_kernel<Element, Chunk, uint32_t><<<blocks, 256, 0, stream>>>(
        src, dst, uint32_t(rows), uint32_t(from), uint32_t(to));
  } else {
    copy_channel_rows_kernel<Element, Chunk, int64_t><<<blocks, 256, 0, stream>>>(src, dst, rows, from, to);
  }
}

template <class Element>
cudaError_t copy_channel_rows(const void* src, void* dst, int64_t rows, int64_t from, int64_t to,
                              cudaStream_t stream) {
  constexpr int kWide = int(16 / sizeof(Element));
  const auto* in = static_cast<const Element*>(src);
  auto* out = static_cast<Element*>(dst);
  if (to % kWide == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
    launch_copy_channel_rows<Element, kWide>(in, out, rows, from, to, stream);
  } else {
    launch_copy_channel_rows<Element, 1>(in, out, rows, from, to, stream);
  }
  return cudaGetLastError();
}

}  // namespace tiledispatch::kernels
