// Split-K backward weight on the dev_suite's dense layers, timed through run() (the main kernel and the split-K
// reduction): the best `default` tile of each layer at the split-K factor the profiler picks for it, median of
// 30 runs, each after a 128 MiB L2 flush. For A/B runs of the reduction: build one binary from this tree and
// one with an include directory placed before instances/include that holds another version of the headers
// (e.g. `git show <rev>:instances/include/tiledispatch/kernels/implicit_gemm_instance.hpp`), then run both on
// the same GPU, alternating; the first argument labels the lines.
//
//   nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -isystem $CUTE \
//        [-I<other headers>] -Iinstances/include -I<arch header> bench/gpu_check/split_k_probe.cu -o probe
//   ./probe LABEL
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "battery.hpp"
#include "hand_traits.hpp"
namespace tiledispatch::hand {
// clang-format off
TD_HAND(bwdw_compv3_128x128x64,       kBwdWeight, 2, kFp16, kDefault, 128,128,64, 2,2,1, 32,32,16, 4,8,8, kCompV3, kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdw_mem_128x64x32_2stage,    kBwdWeight, 2, kFp16, kDefault, 128,64,32,  2,2,1, 32,32,16, 4,8,8, kMem,    kIntrawave, kCShuffle, false, 1, true,  false, false, false, 1)
TD_HAND(bwdw_compv3_128x128x64_2stage, kBwdWeight, 2, kFp16, kDefault, 128,128,64, 2,2,1, 32,32,16, 4,8,8, kCompV3, kIntrawave, kCShuffle, false, 1, true,  false, false, false, 1)
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;

__global__ void fill(__half* p, size_t n) {  // small mean-zero values, so that the sums stay finite
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    p[i] = __float2half(float(int(i * 2654435761u % 17u) - 8) / 64.f);
  }
}

struct Case {
  const char* name;
  const GroupedConvInstance* instance;
  ConvProblem p;
  int k_batch;
};

// Median and minimum of 30 timed runs of `c`, each after an L2 flush; the checksum of the weight gradient.
void time_case(const char* label, const Case& c, void* flush, size_t flush_bytes, cudaStream_t stream) {
  if (const Support s = c.instance->is_supported(c.p); !s) {
    std::printf("%s %s: not supported: %s\n", label, c.name, s.reason.c_str());
    return;
  }
  __half *x = nullptr, *dy = nullptr, *dw = nullptr;
  void* workspace = nullptr;
  TD_CHECK_CUDA(cudaMalloc(&x, size_t(c.p.input_elements()) * 2));
  TD_CHECK_CUDA(cudaMalloc(&dy, size_t(c.p.output_elements()) * 2));
  TD_CHECK_CUDA(cudaMalloc(&dw, size_t(c.p.weight_elements()) * 2));
  fill<<<1024, 256, 0, stream>>>(x, size_t(c.p.input_elements()));
  fill<<<1024, 256, 0, stream>>>(dy, size_t(c.p.output_elements()));
  TD_CHECK_CUDA(cudaGetLastError());
  const size_t workspace_bytes = c.instance->workspace_bytes(c.p, c.k_batch);
  if (workspace_bytes != 0) TD_CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
  const ConvArgs args{x, dw, dy, workspace, workspace_bytes, c.k_batch, stream};
  if (const Support s = c.instance->check_args(c.p, args); !s) {
    std::printf("%s %s: arguments refused: %s\n", label, c.name, s.reason.c_str());
    return;
  }
  cudaEvent_t start, stop;
  TD_CHECK_CUDA(cudaEventCreate(&start));
  TD_CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) TD_CHECK_CUDA(c.instance->run(c.p, args));
  std::vector<float> ms;
  for (int i = 0; i < 30; ++i) {
    TD_CHECK_CUDA(cudaMemsetAsync(flush, i & 1, flush_bytes, stream));
    TD_CHECK_CUDA(cudaEventRecord(start, stream));
    TD_CHECK_CUDA(c.instance->run(c.p, args));
    TD_CHECK_CUDA(cudaEventRecord(stop, stream));
    TD_CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    TD_CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::vector<__half> host(size_t(c.p.weight_elements()));
  TD_CHECK_CUDA(cudaMemcpy(host.data(), dw, host.size() * 2, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (const __half v : host) sum += __half2float(v);
  std::printf("%s %-18s median %8.2f us  min %8.2f  checksum %.6e\n", label, c.name, ms[ms.size() / 2] * 1e3,
              ms[0] * 1e3, sum);
  TD_CHECK_CUDA(cudaEventDestroy(start));
  TD_CHECK_CUDA(cudaEventDestroy(stop));
  for (void* ptr : {static_cast<void*>(x), static_cast<void*>(dy), static_cast<void*>(dw), workspace}) {
    TD_CHECK_CUDA(cudaFree(ptr));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "-";
  const hand::bwdw_compv3_128x128x64 compv3;
  const hand::bwdw_mem_128x64x32_2stage mem_2stage;
  const hand::bwdw_compv3_128x128x64_2stage compv3_2stage;
  const Case cases[] = {
      {"vgg_3x3_112 s29", &compv3, check::conv2d(1, 16, 128, 128, 112, 112, 3, 1, 1, 1), 29},
      {"vgg_3x3_112 s18", &compv3, check::conv2d(1, 16, 128, 128, 112, 112, 3, 1, 1, 1), 18},
      {"r50_1x1_28 s16", &mem_2stage, check::conv2d(1, 32, 512, 128, 28, 28, 1, 1, 0, 1), 16},
      {"r50_3x3_n64 s14", &compv3, check::conv2d(1, 64, 128, 128, 28, 28, 3, 1, 1, 1), 14},
      {"dilated_d2 s3", &compv3_2stage, check::conv2d(1, 8, 256, 256, 32, 32, 3, 1, 2, 2), 3},
  };
  const size_t flush_bytes = size_t(128) << 20;
  void* flush = nullptr;
  TD_CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
  cudaStream_t stream;
  TD_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const Case& c : cases) time_case(label, c, flush, flush_bytes, stream);
  TD_CHECK_CUDA(cudaStreamDestroy(stream));
  TD_CHECK_CUDA(cudaFree(flush));
  return 0;
}
