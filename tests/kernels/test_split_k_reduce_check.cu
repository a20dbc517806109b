// GPU check of the split-K reduction (kernels/split_k_reduce.cuh) on its own: random fp32 slices, the output
// NaN-poisoned, then every element against a double-precision host sum, the second run's bits against the
// first's, and the order against a writer kernel that lets the reduction launch early (programmatic dependent
// launch): a reduction that did not wait would read the writer's NaN-poisoned slices. Counts cover one and
// several warps a column, float4 and scalar columns (odd counts, an unaligned output) and every output type.
// Last line: "<n> checked, <f> failures".
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tiledispatch/kernels/split_k_reduce.cuh"
#include "tiledispatch/runtime/check.hpp"

namespace {
using namespace tiledispatch;

// Writes the slices after a delay, having let its dependents launch at once.
__global__ void slow_writer(const float* source, float* slices, int64_t total) {
  asm volatile("griddepcontrol.launch_dependents;");
  const long long start = clock64();
  while (clock64() - start < 200000) {
  }
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    slices[i] = source[i];
  }
}

float to_float(float v) { return v; }
float to_float(__half v) { return __half2float(v); }
float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
double epsilon(float) { return 1.2e-7; }
double epsilon(__half) { return 9.8e-4; }
double epsilon(__nv_bfloat16) { return 7.9e-3; }

struct Counts {
  int checked = 0, failures = 0;
};

template <class T>
void check(const char* type, int64_t count, int slices, int out_offset, Counts& counts) {
  const int64_t total = count * slices;
  std::vector<float> host(total);
  uint32_t h = uint32_t(count * 131 + slices);
  for (auto& v : host) {
    h = h * 1664525u + 1013904223u;
    v = float(int32_t(h >> 8) - (1 << 23)) / float(1 << 20);  // in [-8, 8), mean zero
  }
  float *source = nullptr, *work = nullptr;
  T* out = nullptr;
  TD_CHECK_CUDA(cudaMalloc(&source, total * sizeof(float)));
  TD_CHECK_CUDA(cudaMalloc(&work, total * sizeof(float)));
  TD_CHECK_CUDA(cudaMalloc(&out, (count + out_offset) * sizeof(T)));
  TD_CHECK_CUDA(cudaMemcpy(source, host.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<std::vector<unsigned char>> bits(2, std::vector<unsigned char>(count * sizeof(T)));
  bool ok = true;
  double worst = 0;
  cudaStream_t streams[2] = {nullptr, nullptr};  // a stream of the profiler's kind, then the legacy default one
  TD_CHECK_CUDA(cudaStreamCreateWithFlags(&streams[0], cudaStreamNonBlocking));
  for (int run = 0; run < 2; ++run) {
    TD_CHECK_CUDA(cudaMemset(work, 0xFF, total * sizeof(float)));  // NaN until the writer has run
    TD_CHECK_CUDA(cudaMemset(out, 0xFF, (count + out_offset) * sizeof(T)));
    TD_CHECK_CUDA(cudaDeviceSynchronize());
    slow_writer<<<132, 256, 0, streams[run]>>>(source, work, total);
    TD_CHECK_CUDA(cudaGetLastError());
    TD_CHECK_CUDA(kernels::launch_reduce_partials(work, out + out_offset, count, slices, streams[run]));
    TD_CHECK_CUDA(cudaDeviceSynchronize());
    TD_CHECK_CUDA(cudaMemcpy(bits[run].data(), out + out_offset, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> got(count);
  std::memcpy(got.data(), bits[0].data(), count * sizeof(T));
  for (int64_t i = 0; i < count && ok; ++i) {
    double sum = 0, magnitude = 0;
    for (int s = 0; s < slices; ++s) sum += host[s * count + i], magnitude += std::fabs(host[s * count + i]);
    const double value = to_float(got[i]);
    const double bound = epsilon(T{}) * std::fabs(sum) + 1.2e-7 * slices * magnitude + 1e-30;
    const double error = std::fabs(value - sum);
    worst = std::max(worst, error / bound);
    if (!(error <= bound)) {
      std::printf("FAILED %s count %lld slices %d offset %d: element %lld = %.9g, expected %.9g\n", type,
                  (long long)count, slices, out_offset, (long long)i, value, sum);
      ok = false;
    }
  }
  const bool same = bits[0] == bits[1];
  if (!same) std::printf("FAILED %s count %lld slices %d: two runs differ\n", type, (long long)count, slices);
  ++counts.checked;
  if (!ok || !same) {
    ++counts.failures;
  } else {
    std::printf("PASS %s count %lld slices %d offset %d (error / bound %.3f)\n", type, (long long)count, slices,
                out_offset, worst);
  }
  TD_CHECK_CUDA(cudaStreamDestroy(streams[0]));
  TD_CHECK_CUDA(cudaFree(source));
  TD_CHECK_CUDA(cudaFree(work));
  TD_CHECK_CUDA(cudaFree(out));
}

}  // namespace

int main() {
  Counts counts;
  struct Case {
    int64_t count;
    int slices;
    int out_offset;
  };
  // 65 536 x 16: eight warps a column (r50 1x1 bwd_weight); 147 456 x 29: runs of uneven length; 1 x 1 and
  // 7 x 3: scalar columns; offset 1: an unaligned output takes the scalar path; 1 << 20 x 2: one thread each.
  const Case cases[] = {{65536, 16, 0}, {147456, 29, 0}, {1, 1, 0}, {7, 3, 0}, {4100, 64, 1}, {1 << 20, 2, 0},
                        {32256, 32, 0}, {12, 5, 0}};
  for (const Case& c : cases) {
    check<__half>("fp16", c.count, c.slices, c.out_offset, counts);
    check<__nv_bfloat16>("bf16", c.count, c.slices, c.out_offset, counts);
    check<float>("fp32", c.count, c.slices, c.out_offset, counts);
  }
  std::printf("%d checked, %d failures\n", counts.checked, counts.failures);
  return 0;
}
