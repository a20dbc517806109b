// Device tensors for the GPU check drivers (check_main.cu, hand_depthwise_check.cu): an owning buffer, a random
// fill, a widening copy to float and the relative L2 error the checks compare against their tolerances.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tiledispatch/runtime/arguments.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::check {

// Uniform values in [-1, 1) from a per-element hash of (seed, index): fresh inputs for every check.
template <class T>
__global__ void fill_random(T* data, int64_t count, uint32_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ (seed * 2246822519u) ^ uint32_t(i >> 32) * 3266489917u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    data[i] = T(float(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}

template <class T>
__global__ void widen_kernel(const T* in, float* out, int64_t count) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = float(in[i]);
  }
}

// 256-thread blocks, grid-stride beyond 8192 blocks.
inline int grid_for(int64_t count) { return int(std::min<int64_t>((count + 255) / 256, 8192)); }

inline void fill(DataType t, void* ptr, int64_t count, uint32_t seed) {
  switch (t) {
    case DataType::kFp16: fill_random<<<grid_for(count), 256>>>(static_cast<__half*>(ptr), count, seed); break;
    case DataType::kBf16: fill_random<<<grid_for(count), 256>>>(static_cast<__nv_bfloat16*>(ptr), count, seed); break;
    case DataType::kFp32: fill_random<<<grid_for(count), 256>>>(static_cast<float*>(ptr), count, seed); break;
  }
  TD_CHECK_CUDA(cudaGetLastError());
}

inline void widen(DataType t, const void* ptr, float* out, int64_t count) {
  switch (t) {
    case DataType::kFp16: widen_kernel<<<grid_for(count), 256>>>(static_cast<const __half*>(ptr), out, count); break;
    case DataType::kBf16:
      widen_kernel<<<grid_for(count), 256>>>(static_cast<const __nv_bfloat16*>(ptr), out, count);
      break;
    case DataType::kFp32: widen_kernel<<<grid_for(count), 256>>>(static_cast<const float*>(ptr), out, count); break;
  }
  TD_CHECK_CUDA(cudaGetLastError());
}

struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n) : bytes(n) { TD_CHECK_CUDA(cudaMalloc(&ptr, n == 0 ? 16 : n)); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Relative L2 error ||out - ref|| / ||ref||; a non-finite output (a poisoned element left unwritten) gives
// infinity. ||ref|| goes to *ref_norm when asked for (left as is on a non-finite output).
inline double relative_l2(const std::vector<float>& out, const std::vector<float>& ref, double* ref_norm = nullptr) {
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return INFINITY;
    const double d = double(out[i]) - double(ref[i]);
    num += d * d;
    den += double(ref[i]) * double(ref[i]);
  }
  if (ref_norm != nullptr) *ref_norm = std::sqrt(den);
  return den > 0 ? std::sqrt(num / den) : INFINITY;
}

// The device tensors of one checked run: the three tensors, the workspace, and the reference and the result
// widened to float; freed together.
struct RunBuffers {
  void *in = nullptr, *wei = nullptr, *out = nullptr, *work = nullptr;
  float *ref = nullptr, *got = nullptr;
  RunBuffers() = default;
  RunBuffers(const RunBuffers&) = delete;
  RunBuffers& operator=(const RunBuffers&) = delete;
  ~RunBuffers() {
    for (void* p : {in, wei, out, work, static_cast<void*>(ref), static_cast<void*>(got)}) cudaFree(p);
  }
  // Allocates the three tensors of `p` in `dt`, the reference and result of `result_elements` floats and
  // `workspace_bytes` of workspace (none where 0); the arguments of a k_batch 1 run over them.
  ConvArgs allocate(const ConvProblem& p, DataType dt, int64_t result_elements, size_t workspace_bytes) {
    const size_t e_bytes = size_t(element_bytes(dt));
    TD_CHECK_CUDA(cudaMalloc(&in, size_t(p.input_elements()) * e_bytes));
    TD_CHECK_CUDA(cudaMalloc(&wei, size_t(p.weight_elements()) * e_bytes));
    TD_CHECK_CUDA(cudaMalloc(&out, size_t(p.output_elements()) * e_bytes));
    TD_CHECK_CUDA(cudaMalloc(&ref, size_t(result_elements) * 4));
    TD_CHECK_CUDA(cudaMalloc(&got, size_t(result_elements) * 4));
    if (workspace_bytes > 0) TD_CHECK_CUDA(cudaMalloc(&work, workspace_bytes));
    ConvArgs args;
    args.input = in, args.weight = wei, args.output = out, args.k_batch = 1;
    args.workspace = work, args.workspace_bytes = workspace_bytes;
    return args;
  }
};

}  // namespace tiledispatch::check
