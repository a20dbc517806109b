// Naive GPU reference kernels, one per direction (docs/architecture.md §5). Independent of the kernel
// library (no CuTe, plain loops over the convolution definition), fp32 accumulation, 64-bit indexing; the
// result is written as fp32 in the layout of the tensor the direction writes. Checked against the float64
// CPU reference (host.hpp) by tests/kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "tiledispatch/runtime/arguments.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/direction.hpp"
#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::reference {

struct Geometry {
  int64_t G, N, K, C, Kg, Cg;
  int64_t in[3], out[3], filter[3], stride[3], dilation[3], pad[3];
};

inline Geometry make_geometry(const ConvProblem& p) {
  Geometry g{};
  g.G = p.G, g.N = p.N, g.K = p.K, g.C = p.C, g.Kg = p.K / p.G, g.Cg = p.C / p.G;
  const auto o = p.output();
  for (int i = 0; i < 3; ++i) {
    g.in[i] = p.input[i], g.out[i] = o[i], g.filter[i] = p.filter[i], g.stride[i] = p.stride[i];
    g.dilation[i] = p.dilation[i], g.pad[i] = p.left_pad[i];
  }
  return g;
}

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// Output (n, od, oh, ow, g, k): sum over c, z, y, x.
template <class T>
__global__ void fwd_reference(Geometry s, const T* in, const T* wei, float* out, int64_t total) {
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    int64_t t = idx;
    const int64_t k = t % s.Kg; t /= s.Kg;
    const int64_t g = t % s.G; t /= s.G;
    const int64_t ow = t % s.out[2]; t /= s.out[2];
    const int64_t oh = t % s.out[1]; t /= s.out[1];
    const int64_t od = t % s.out[0];
    const int64_t n = t / s.out[0];
    float acc = 0.f;
    for (int64_t z = 0; z < s.filter[0]; ++z) {
      const int64_t di = od * s.stride[0] - s.pad[0] + z * s.dilation[0];
      if (di < 0 || di >= s.in[0]) continue;
      for (int64_t y = 0; y < s.filter[1]; ++y) {
        const int64_t hi = oh * s.stride[1] - s.pad[1] + y * s.dilation[1];
        if (hi < 0 || hi >= s.in[1]) continue;
        for (int64_t x = 0; x < s.filter[2]; ++x) {
          const int64_t wi = ow * s.stride[2] - s.pad[2] + x * s.dilation[2];
          if (wi < 0 || wi >= s.in[2]) continue;
          const T* a = in + ((((n * s.in[0] + di) * s.in[1] + hi) * s.in[2] + wi) * s.G + g) * s.Cg;
          const T* b = wei + ((((g * s.Kg + k) * s.filter[0] + z) * s.filter[1] + y) * s.filter[2] + x) * s.Cg;
          for (int64_t c = 0; c < s.Cg; ++c) acc += to_float(a[c]) * to_float(b[c]);
        }
      }
    }
    out[idx] = acc;
  }
}

// Input gradient (n, di, hi, wi, g, c): sum over k and the taps whose output position is whole and in range.
template <class T>
__global__ void bwd_data_reference(Geometry s, const T* dout, const T* wei, float* din, int64_t total) {
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    int64_t t = idx;
    const int64_t c = t % s.Cg; t /= s.Cg;
    const int64_t g = t % s.G; t /= s.G;
    const int64_t wi = t % s.in[2]; t /= s.in[2];
    const int64_t hi = t % s.in[1]; t /= s.in[1];
    const int64_t di = t % s.in[0];
    const int64_t n = t / s.in[0];
    float acc = 0.f;
    for (int64_t z = 0; z < s.filter[0]; ++z) {
      const int64_t td = di + s.pad[0] - z * s.dilation[0];
      if (td < 0 || td % s.stride[0] != 0 || td / s.stride[0] >= s.out[0]) continue;
      const int64_t od = td / s.stride[0];
      for (int64_t y = 0; y < s.filter[1]; ++y) {
        const int64_t th = hi + s.pad[1] - y * s.dilation[1];
        if (th < 0 || th % s.stride[1] != 0 || th / s.stride[1] >= s.out[1]) continue;
        const int64_t oh = th / s.stride[1];
        for (int64_t x = 0; x < s.filter[2]; ++x) {
          const int64_t tw = wi + s.pad[2] - x * s.dilation[2];
          if (tw < 0 || tw % s.stride[2] != 0 || tw / s.stride[2] >= s.out[2]) continue;
          const int64_t ow = tw / s.stride[2];
          const T* a = dout + ((((n * s.out[0] + od) * s.out[1] + oh) * s.out[2] + ow) * s.G + g) * s.Kg;
          for (int64_t k = 0; k < s.Kg; ++k) {
            const T* b = wei + ((((g * s.Kg + k) * s.filter[0] + z) * s.filter[1] + y) * s.filter[2] + x) * s.Cg + c;
            acc += to_float(a[k]) * to_float(*b);
          }
        }
      }
    }
    din[idx] = acc;
  }
}

// Weight gradient (g, k, z, y, x, c): one warp per element sums over (n, od, oh, ow), lanes strided.
template <class T>
__global__ void bwd_weight_reference(Geometry s, const T* in, const T* dout, float* dwei, int64_t total) {
  const int lane = int(threadIdx.x % 32);
  const int64_t warps_per_grid = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t idx = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; idx < total; idx += warps_per_grid) {
    int64_t t = idx;
    const int64_t c = t % s.Cg; t /= s.Cg;
    const int64_t x = t % s.filter[2]; t /= s.filter[2];
    const int64_t y = t % s.filter[1]; t /= s.filter[1];
    const int64_t z = t % s.filter[0]; t /= s.filter[0];
    const int64_t k = t % s.Kg;
    const int64_t g = t / s.Kg;
    const int64_t pixels = s.N * s.out[0] * s.out[1] * s.out[2];
    float acc = 0.f;
    for (int64_t p = lane; p < pixels; p += 32) {
      int64_t q = p;
      const int64_t ow = q % s.out[2]; q /= s.out[2];
      const int64_t oh = q % s.out[1]; q /= s.out[1];
      const int64_t od = q % s.out[0];
      const int64_t n = q / s.out[0];
      const int64_t di = od * s.stride[0] - s.pad[0] + z * s.dilation[0];
      const int64_t hi = oh * s.stride[1] - s.pad[1] + y * s.dilation[1];
      const int64_t wi = ow * s.stride[2] - s.pad[2] + x * s.dilation[2];
      if (di < 0 || di >= s.in[0] || hi < 0 || hi >= s.in[1] || wi < 0 || wi >= s.in[2]) continue;
      const float a = to_float(dout[(p * s.G + g) * s.Kg + k]);
      const float b = to_float(in[((((n * s.in[0] + di) * s.in[1] + hi) * s.in[2] + wi) * s.G + g) * s.Cg + c]);
      acc += a * b;
    }
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (lane == 0) dwei[idx] = acc;
  }
}

template <class T>
cudaError_t run_typed(ConvDirection direction, const ConvProblem& p, const ConvArgs& a, float* result) {
  const Geometry s = make_geometry(p);
  const int threads = 256;
  switch (direction) {
    case ConvDirection::kFwd: {
      const int64_t total = p.output_elements();
      const int blocks = int((total + threads - 1) / threads < 1 << 20 ? (total + threads - 1) / threads : 1 << 20);
      fwd_reference<T><<<blocks, threads, 0, a.stream>>>(s, static_cast<const T*>(a.input),
                                                         static_cast<const T*>(a.weight), result, total);
      break;
    }
    case ConvDirection::kBwdData: {
      const int64_t total = p.input_elements();
      const int blocks = int((total + threads - 1) / threads < 1 << 20 ? (total + threads - 1) / threads : 1 << 20);
      bwd_data_reference<T><<<blocks, threads, 0, a.stream>>>(s, static_cast<const T*>(a.output),
                                                              static_cast<const T*>(a.weight), result, total);
      break;
    }
    case ConvDirection::kBwdWeight: {
      const int64_t total = p.weight_elements();
      const int64_t warps = threads / 32;
      const int blocks = int((total + warps - 1) / warps < 1 << 20 ? (total + warps - 1) / warps : 1 << 20);
      bwd_weight_reference<T><<<blocks, threads, 0, a.stream>>>(s, static_cast<const T*>(a.input),
                                                                static_cast<const T*>(a.output), result, total);
      break;
    }
  }
  return cudaGetLastError();
}

// Reads the tensors the direction reads from `in` (same pointers an instance gets) and writes the result as
// fp32 to `result` (elements: output for fwd, input for bwd_data, weight for bwd_weight).
inline cudaError_t run(ConvDirection direction, DataType dtype, const ConvProblem& problem, const ConvArgs& in,
                       float* result) {
  switch (dtype) {
    case DataType::kFp16: return run_typed<__half>(direction, problem, in, result);
    case DataType::kBf16: return run_typed<__nv_bfloat16>(direction, problem, in, result);
    case DataType::kFp32: return run_typed<float>(direction, problem, in, result);
  }
  return cudaErrorInvalidValue;
}

// Elements of the tensor a direction writes.
inline int64_t result_elements(ConvDirection direction, const ConvProblem& p) {
  return tensor_elements(p, direction_roles(direction).c);
}

}  // namespace tiledispatch::reference
