// Groups paired at the MMA's granularity (issue 10, F3: few channels per group). wgmma multiplies 16 channels
// per k-step (fp16/bf16), so a layer with C/G = K/G = 8 cannot give each group a wgmma of its own. P consecutive
// groups instead run as one group of P x C/G input and P x K/G output channels whose weight block is
// block-diagonal: its P diagonal sub-blocks are the groups' weights, the rest zeros. The activations need no
// copy (the P groups' channels are contiguous in NDHWGC); the weights are expanded into the workspace by
// expand_paired_weights before each run. The zero MACs are those the MMA granularity forces, nothing more.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::kernels {

// The problem as the kernel sees it: G / P groups of P times the channels (same tensors).
inline ConvProblem paired_problem(const ConvProblem& p, int pairing) {
  ConvProblem q = p;
  q.G = p.G / pairing;
  return q;
}

// Elements of the expanded weights: G/P blocks of (P K/G) x taps x (P C/G), P times the weights.
inline int64_t paired_weight_elements(const ConvProblem& p, int pairing) {
  return int64_t(pairing) * p.weight_elements();
}

// weights GKZYXC (per group K/G x taps x C/G) -> expanded (G/P) x (P K/G) x taps x (P C/G), zero off the
// diagonal sub-blocks. One thread per expanded element.
template <class Element>
__global__ void expand_paired_weights_kernel(const Element* __restrict__ weights, Element* __restrict__ expanded,
                                             int64_t count, int pairing, int64_t kg, int64_t cg, int64_t taps) {
  const int64_t wide_c = pairing * cg, wide_k = pairing * kg;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % wide_c;
    const int64_t tap = (i / wide_c) % taps;
    const int64_t k = (i / (wide_c * taps)) % wide_k;
    const int64_t block = i / (wide_c * taps * wide_k);
    const int64_t sub = k / kg;  // the group of the pair this output channel belongs to
    Element value = Element(0.0f);
    if (c / cg == sub) {
      const int64_t group = block * pairing + sub;
      value = weights[((group * kg + k % kg) * taps + tap) * cg + c % cg];
    }
    expanded[i] = value;
  }
}

template <class Element>
cudaError_t expand_paired_weights(const ConvProblem& p, int pairing, const void* weights, void* expanded,
                                  cudaStream_t stream) {
  const int64_t count = paired_weight_elements(p, pairing);
  const int blocks = int(std::min<int64_t>((count + 255) / 256, 4096));
  expand_paired_weights_kernel<Element><<<blocks, 256, 0, stream>>>(
      static_cast<const Element*>(weights), static_cast<Element*>(expanded), count, pairing, p.K / p.G,
      p.C / p.G, p.filter_spatial());
  return cudaGetLastError();
}

}  // namespace tiledispatch::kernels
