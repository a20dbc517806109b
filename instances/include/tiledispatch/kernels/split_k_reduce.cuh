// The reduction after a kernel that wrote fp32 partial sums to a workspace (split-K and two-stage backward
// weight, stream-K): `slices` slices of `count` floats, `count` apart, summed into the output element type.
//
// Fixed order, so results are bit-identical run to run: the slices split into `runs` contiguous runs; warp r of a
// group of `runs` warps adds run r's slices in order for 32 consecutive columns (a warp's loads cover 512
// contiguous bytes of a slice), and the runs' sums are added in run order through shared memory. Several warps a
// column because the workspace is small: at 16 384 float4 columns x 16 slices one thread a column kept 64 of 132
// SMs busy, each load-latency bound (6.4 us for 4 MB on the H100; the main kernel of the same r50 1x1 layer
// takes 22 us).
//
// A programmatic dependent launch (dependent_launch.hpp): it waits for the kernel that wrote the slices.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "tiledispatch/kernels/dependent_launch.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/device.hpp"

namespace tiledispatch::kernels {

constexpr int kReduceThreads = 256;
constexpr int kReduceWarps = kReduceThreads / 32;
constexpr int kMaxReduceRuns = kReduceWarps;  // runs a column: a power of two, at most the block's warps

template <int V> struct ReduceVector;
template <> struct ReduceVector<1> { using type = float; };
template <> struct ReduceVector<4> { using type = float4; };

__device__ inline void add_to(float& sum, float v) { sum += v; }
__device__ inline void add_to(float4& sum, const float4& v) { sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w; }

template <class Element, int V>
__device__ void reduce_partial_vectors(const float* __restrict__ partial, Element* __restrict__ out, int64_t count,
                                       int slices, int runs) {
  using Vec = typename ReduceVector<V>::type;
  struct alignas(V * sizeof(Element)) Store {
    Element v[V];
  };
  __shared__ Vec run_sums[kReduceWarps][32];
  const int64_t vectors = count / V;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int run = warp % runs;  // the warps of a group are adjacent: group = warp / runs
  const int per_run = (slices + runs - 1) / runs;
  const int first = run * per_run < slices ? run * per_run : slices;
  const int last = first + per_run < slices ? first + per_run : slices;
  const Vec* slice0 = reinterpret_cast<const Vec*>(partial);
  const int groups = kReduceWarps / runs;
  const int64_t step = int64_t(gridDim.x) * groups * 32;
  // Every thread walks the same number of iterations (the bound is per block), so the barriers are uniform.
  for (int64_t base = int64_t(blockIdx.x) * groups * 32; base < vectors; base += step) {
    const int64_t i = base + (warp / runs) * 32 + lane;
    Vec sum{};
    if (i < vectors) {
#pragma unroll 8
      for (int s = first; s < last; ++s) add_to(sum, slice0[int64_t(s) * vectors + i]);
    }
    run_sums[warp][lane] = sum;
    __syncthreads();
    if (run == 0 && i < vectors) {
      for (int r = 1; r < runs; ++r) add_to(sum, run_sums[warp + r][lane]);
      const float* f = reinterpret_cast<const float*>(&sum);
      Store store;
#pragma unroll
      for (int v = 0; v < V; ++v) store.v[v] = Element(f[v]);
      reinterpret_cast<Store*>(out)[i] = store;
    }
    __syncthreads();
  }
}

// Element i = the fixed-order sum of partial[s * count + i] over s < slices (see above).
// `quads`: columns of four elements (16-byte loads), where the count and both pointers allow (the host decides).
template <class Element>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_partials_kernel(const float* __restrict__ partial, Element* __restrict__ out, int64_t count, int slices,
                           int runs, bool quads) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (quads) {
    reduce_partial_vectors<Element, 4>(partial, out, count, slices, runs);
  } else {
    reduce_partial_vectors<Element, 1>(partial, out, count, slices, runs);
  }
}

// Runs a column: the fewest (a power of two) that give the GPU kReduceBlocksPerSm full blocks an SM, while each
// run keeps at least two slices.
constexpr int kReduceBlocksPerSm = 8;
inline int reduce_runs(int64_t vectors, int slices, int sms) {
  const int64_t target = int64_t(sms) * kReduceBlocksPerSm * kReduceThreads;
  int runs = 1;
  while (runs < kMaxReduceRuns && vectors * runs < target && slices >= 4 * runs) runs *= 2;
  return runs;
}

template <class Element>
cudaError_t launch_reduce_partials(const float* partial, Element* out, int64_t count, int slices,
                                   cudaStream_t stream) {
  int sms = 0;
  TD_RETURN_IF_CUDA_ERROR(sm_count(&sms));
  const bool quads = count % 4 == 0 && reinterpret_cast<uintptr_t>(partial) % sizeof(float4) == 0 &&
                     reinterpret_cast<uintptr_t>(out) % (4 * sizeof(Element)) == 0;
  const int64_t vectors = quads ? count / 4 : count;
  const int runs = reduce_runs(vectors, slices, sms);
  const int64_t columns_per_block = int64_t(kReduceWarps / runs) * 32;
  const int64_t blocks = std::min<int64_t>((vectors + columns_per_block - 1) / columns_per_block,
                                           int64_t(sms) * kReduceBlocksPerSm * 4);
  return launch_dependent(&reduce_partials_kernel<Element>, dim3(unsigned(std::max<int64_t>(blocks, 1))),
                          dim3(kReduceThreads), 0, stream, partial, out, count, slices, runs, quads);
}

}  // namespace tiledispatch::kernels
