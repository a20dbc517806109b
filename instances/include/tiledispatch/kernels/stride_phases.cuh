// The two small kernels of bwd_data by stride phases (stride_phases.hpp): the phases' filters gathered from the
// weights into the workspace before the phases run (the weights change every step, so on every run), and zeros
// for the pixels of phases without taps.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "tiledispatch/kernels/stride_phases.hpp"

namespace tiledispatch::kernels {

// One thread per Vector (8 or 1 elements of a channel run) of the weights, K x taps x C/G (GKZYXC): each goes
// to its phase's filter. Index is int32_t where the weights allow (divisions are the kernel's work).
template <class Vector, class Index>
__global__ void gather_phase_filters_kernel(const StridePhases phases, const Vector* __restrict__ weights,
                                            Vector* __restrict__ filters, Index count, Index cg_vectors, int width) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The phases' launch may start now (it waits for these filters before it loads any: a programmatic dependent)
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  const int fy = phases.filter[1], fx = phases.filter[2], taps = phases.filter[0] * fy * fx;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += Index(gridDim.x) * blockDim.x) {
    const Index row = i / cg_vectors;  // (k, tap)
    const Index k = row / taps;
    const int tap = int(row - k * taps);
    const int zyx[3] = {tap / (fy * fx), tap / fx % fy, tap % fx};
    const int64_t c = int64_t(i - row * cg_vectors) * width;
    filters[phase_filter_index(phases, int64_t(cg_vectors) * width, k, zyx, c) / width] = weights[i];
  }
}

// One thread per Vector of a pixel's channels of the input gradient; pixels of phases without taps get zeros.
template <class Vector, class Index>
__global__ void zero_phase_pixels_kernel(const StridePhases phases, Vector* __restrict__ grad, Index count,
                                         Index vectors_per_pixel, Index di, Index hi, Index wi) {
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += Index(gridDim.x) * blockDim.x) {
    Index pixel = i / vectors_per_pixel;
    const int w = int(pixel % wi);
    pixel /= wi;
    const int h = int(pixel % hi), d = int(pixel / hi % di);
    const int phase = ((d % phases.stride[0]) * phases.stride[1] + h % phases.stride[1]) * phases.stride[2] +
                      w % phases.stride[2];
    if (phases.taps(phase) == 0) grad[i] = Vector{};
  }
}

// 256-thread blocks, grid-stride beyond 8192 blocks.
inline int phase_grid(int64_t count) { return int(std::min<int64_t>((count + 255) / 256, 8192)); }

// 16-byte vectors where the channel runs allow (the tensors are 16-byte aligned, and so is each phase's filter),
// 32-bit indices where the counts fit.
template <class Element, class Launch>
cudaError_t by_vector(int64_t run, int64_t count, Launch&& launch) {
  constexpr int kWidth = 16 / int(sizeof(Element));
  if (run % kWidth == 0) {
    const int64_t vectors = count / kWidth;
    if (vectors <= INT32_MAX) return launch(uint4{}, int32_t(vectors), kWidth);
    return launch(uint4{}, vectors, kWidth);
  }
  if (count <= INT32_MAX) return launch(Element{}, int32_t(count), 1);
  return launch(Element{}, count, 1);
}

template <class Element>
cudaError_t gather_phase_filters(const ConvProblem& p, const StridePhases& phases, const void* weights,
                                 void* filters, cudaStream_t stream) {
  const int64_t cg = p.C / p.G;
  return by_vector<Element>(cg, p.weight_elements(), [&](auto vector, auto count, int width) {
    using Vector = decltype(vector);
    using Index = decltype(count);
    gather_phase_filters_kernel<Vector, Index><<<phase_grid(count), 256, 0, stream>>>(
        phases, static_cast<const Vector*>(weights), static_cast<Vector*>(filters), count, Index(cg / width), width);
    return cudaGetLastError();
  });
}

template <class Element>
cudaError_t zero_phase_pixels(const ConvProblem& p, const StridePhases& phases, void* input_grad,
                              cudaStream_t stream) {
  return by_vector<Element>(p.C, p.input_elements(), [&](auto vector, auto count, int width) {
    using Vector = decltype(vector);
    using Index = decltype(count);
    zero_phase_pixels_kernel<Vector, Index><<<phase_grid(count), 256, 0, stream>>>(
        phases, static_cast<Vector*>(input_grad), count, Index(p.C / width), Index(p.input[0]), Index(p.input[1]),
        Index(p.input[2]));
    return cudaGetLastError();
  });
}

}  // namespace tiledispatch::kernels
