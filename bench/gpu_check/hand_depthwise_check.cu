// Depthwise GPU check and bandwidth: every hand depthwise instance (hand_depthwise.cu) against the reference
// (reference/device.cuh) on a depthwise battery (3x3/5x5/7x7, strides 1 and 2, odd sizes, N = 1, channel tails,
// asymmetric right padding, large layers), then each supported instance timed on the large layers: median of 10
// runs, each after an L2 flush, GB/s = ConvProblem::bytes (input + weight + output once) / time.
//
//   hand_depthwise_check [--no-timing] [--no-large]   (--no-large: skip the large layers, e.g. under memcheck)
//
// Exit status: 0 when every check passes, 1 on any failure, 2 for a bad option.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "battery.hpp"
#include "tiledispatch/reference/device.cuh"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/registry.hpp"

namespace tiledispatch::hand {
void add_hand_depthwise(InstanceList&);
}  // namespace tiledispatch::hand

namespace {

using namespace tiledispatch;

struct Entry {
  const char* what;
  ConvProblem problem;
  bool timed;
};

ConvProblem depthwise(int64_t N, int64_t C, int64_t H, int64_t W, int64_t f, int64_t s, int64_t pad) {
  return check::conv2d(C, N, C, C, H, W, f, s, pad, 1);
}

std::vector<Entry> depthwise_battery() {
  ConvProblem same_s2 = depthwise(2, 32, 16, 16, 3, 2, 1);
  same_s2.right_pad = {0, 0, 0};  // TensorFlow "SAME" for an even input: pad only on the left/top
  return {
      {"3x3 s1 N=2 C=32 10x10", depthwise(2, 32, 10, 10, 3, 1, 1), false},
      {"3x3 s1 N=1 C=40 odd 17x23 (channel tail)", depthwise(1, 40, 17, 23, 3, 1, 1), false},
      {"3x3 s1 N=3 C=6 odd 9x7", depthwise(3, 6, 9, 7, 3, 1, 1), false},
      {"3x3 s1 N=1 C=3 5x5 (C odd)", depthwise(1, 3, 5, 5, 3, 1, 1), false},
      {"3x3 s2 N=2 C=48 odd 15x15", depthwise(2, 48, 15, 15, 3, 2, 1), false},
      {"3x3 s2 N=1 C=16 9x33", depthwise(1, 16, 9, 33, 3, 2, 1), false},
      {"3x3 s2 pad 1/0 N=2 C=32 16x16", same_s2, false},
      {"5x5 s1 N=1 C=40 19x19", depthwise(1, 40, 19, 19, 5, 1, 2), false},
      {"5x5 s1 N=2 C=5 odd 11x13", depthwise(2, 5, 11, 13, 5, 1, 2), false},
      {"5x5 s2 N=2 C=24 13x13", depthwise(2, 24, 13, 13, 5, 2, 2), false},
      {"5x5 s2 N=1 C=72 odd 21x17", depthwise(1, 72, 21, 17, 5, 2, 2), false},
      {"7x7 s1 N=1 C=64 15x15", depthwise(1, 64, 15, 15, 7, 1, 3), false},
      {"not depthwise: C/G=2", check::conv2d(8, 2, 16, 16, 12, 12, 3, 1, 1, 1), false},
      {"3x3 s1 dilation 2", check::conv2d(16, 1, 16, 16, 12, 12, 3, 1, 2, 2), false},
      {"large 3x3 s1 N=32 C=32 112x112", depthwise(32, 32, 112, 112, 3, 1, 1), true},
      {"MobileNetV2 3x3 s1 N=32 C=144 56x56", depthwise(32, 144, 56, 56, 3, 1, 1), true},
      {"MobileNetV2 3x3 s2 N=32 C=144 56x56", depthwise(32, 144, 56, 56, 3, 2, 1), true},
      {"dev_suite depthwise_3x3_56 N=32 C=192", depthwise(32, 192, 56, 56, 3, 1, 1), true},
      {"dev_suite depthwise_5x5_s2 N=32 C=240", depthwise(32, 240, 56, 56, 5, 2, 2), true},
      {"5x5 s1 N=32 C=240 28x28", depthwise(32, 240, 28, 28, 5, 1, 2), true},
      {"7x7 s1 N=32 C=128 56x56", depthwise(32, 128, 56, 56, 7, 1, 3), true},
  };
}

// Uniform values in [-1, 1) from a hash of (seed, index).
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

int grid_for(int64_t count) { return int(std::min<int64_t>((count + 255) / 256, 8192)); }

void fill(DataType t, void* ptr, int64_t count, uint32_t seed) {
  switch (t) {
    case DataType::kFp16: fill_random<<<grid_for(count), 256>>>(static_cast<__half*>(ptr), count, seed); break;
    case DataType::kBf16: fill_random<<<grid_for(count), 256>>>(static_cast<__nv_bfloat16*>(ptr), count, seed); break;
    case DataType::kFp32: fill_random<<<grid_for(count), 256>>>(static_cast<float*>(ptr), count, seed); break;
  }
  TD_CHECK_CUDA(cudaGetLastError());
}

void widen(DataType t, const void* ptr, float* out, int64_t count) {
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

// Relative L2 error; a non-finite output (a poisoned element left unwritten) gives infinity.
double relative_l2(const std::vector<float>& out, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return INFINITY;
    const double d = double(out[i]) - double(ref[i]);
    num += d * d;
    den += double(ref[i]) * double(ref[i]);
  }
  return den > 0 ? std::sqrt(num / den) : INFINITY;
}

// Median kernel time in ms of `runs` launches, each after a flush of L2 (a 256 MiB memset).
float time_ms(const GroupedConvInstance& instance, const ConvProblem& p, const ConvArgs& args, DeviceBuffer& flush) {
  constexpr int kRuns = 10;
  cudaEvent_t start, stop;
  TD_CHECK_CUDA(cudaEventCreate(&start));
  TD_CHECK_CUDA(cudaEventCreate(&stop));
  TD_CHECK_CUDA(instance.run(p, args));  // warm-up
  std::vector<float> times;
  for (int i = 0; i < kRuns; ++i) {
    TD_CHECK_CUDA(cudaMemsetAsync(flush.ptr, i, flush.bytes));
    TD_CHECK_CUDA(cudaEventRecord(start));
    TD_CHECK_CUDA(instance.run(p, args));
    TD_CHECK_CUDA(cudaEventRecord(stop));
    TD_CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    TD_CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  TD_CHECK_CUDA(cudaEventDestroy(start));
  TD_CHECK_CUDA(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[kRuns / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool timing = true, include_large = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-timing") == 0) {
      timing = false;
    } else if (std::strcmp(argv[i], "--no-large") == 0) {
      include_large = false;
    } else {
      std::fprintf(stderr, "hand_depthwise_check: unknown option '%s'; accepted: --no-timing, --no-large\n",
                   argv[i]);
      return 2;
    }
  }
  Registry registry;
  {
    InstanceList list;
    hand::add_hand_depthwise(list);
    registry.register_set(std::move(list));
  }
  int device = 0;
  cudaDeviceProp prop{};
  TD_CHECK_CUDA(cudaGetDevice(&device));
  TD_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s\n", prop.name);
  std::vector<Entry> battery = depthwise_battery();
  if (!include_large) battery.erase(std::remove_if(battery.begin(), battery.end(), [](const Entry& e) { return e.timed; }),
                                    battery.end());
  int checked = 0, passed = 0, not_supported = 0, failed = 0;
  std::map<std::string, int> reasons;
  // Best GB/s per (problem, dtype) and the instance that reached it.
  std::map<std::string, std::pair<double, std::string>> best;
  DeviceBuffer flush(size_t(256) << 20);
  uint32_t seed = 1;
  for (const GroupedConvInstance* instance : registry.list()) {
    const DataType dtype = instance->signature().dtype;
    const std::string name(instance->name());
    for (const Entry& e : battery) {
      const ConvProblem& p = e.problem;
      if (Support s = instance->is_supported(p); !s) {
        ++not_supported;
        ++reasons[s.reason];
        continue;
      }
      ++checked;
      const int elem = element_bytes(dtype);
      DeviceBuffer in(size_t(p.input_elements()) * elem), wei(size_t(p.weight_elements()) * elem),
          out(size_t(p.output_elements()) * elem), ref(size_t(p.output_elements()) * 4),
          got(size_t(p.output_elements()) * 4);
      fill(dtype, in.ptr, p.input_elements(), seed++);
      fill(dtype, wei.ptr, p.weight_elements(), seed++);
      TD_CHECK_CUDA(cudaMemset(out.ptr, 0xFF, out.bytes));  // NaN in every dtype: unwritten outputs fail
      ConvArgs args;
      args.input = in.ptr, args.weight = wei.ptr, args.output = out.ptr;
      TD_CHECK_CUDA(reference::run(ConvDirection::kFwd, dtype, p, args, static_cast<float*>(ref.ptr)));
      std::string failure;
      if (Support a = instance->check_args(p, args); !a) {
        failure = "check_args: " + a.reason;
      } else {
        const cudaError_t launch = instance->run(p, args);
        const cudaError_t sync = cudaDeviceSynchronize();
        if (launch != cudaSuccess || sync != cudaSuccess) {
          std::printf("FAILED %s | %s | run: %s\n", name.c_str(), e.what,
                      cudaGetErrorString(launch != cudaSuccess ? launch : sync));
          if (sync != cudaSuccess) return 1;  // sticky error
          ++failed;
          continue;
        }
        std::vector<float> ref_host(size_t(p.output_elements())), got_host(size_t(p.output_elements()));
        widen(dtype, out.ptr, static_cast<float*>(got.ptr), p.output_elements());
        TD_CHECK_CUDA(cudaMemcpy(ref_host.data(), ref.ptr, ref.bytes, cudaMemcpyDeviceToHost));
        TD_CHECK_CUDA(cudaMemcpy(got_host.data(), got.ptr, got.bytes, cudaMemcpyDeviceToHost));
        const double err = relative_l2(got_host, ref_host);
        const double tol = dtype == DataType::kFp32 ? 1e-5 : 1e-2;  // fp32 depthwise is plain FMA, no TF32
        if (!(err <= tol)) {
          char buf[96];
          std::snprintf(buf, sizeof buf, "relative L2 %.3e > %.0e", err, tol);
          failure = buf;
        }
      }
      if (!failure.empty()) {
        ++failed;
        std::printf("FAILED %s | %s | %s | %s\n", name.c_str(), e.what, p.to_string().c_str(), failure.c_str());
        continue;
      }
      ++passed;
      if (timing && e.timed) {
        const float ms = time_ms(*instance, p, args, flush);
        const double gbs = p.bytes(dtype) / (double(ms) * 1e6);
        std::printf("TIME %-36s | %-40s | %8.1f us | %7.1f GB/s\n", name.c_str(), e.what, ms * 1e3, gbs);
        auto& slot = best[std::string(e.what) + " " + std::string(to_token(dtype))];
        if (gbs > slot.first) slot = {gbs, name};
      }
    }
  }
  std::printf("\nnot-supported reasons (count):\n");
  for (const auto& [reason, n] : reasons) std::printf("  %4d  %s\n", n, reason.c_str());
  if (!best.empty()) {
    std::printf("\nbest per problem and dtype (GB/s, device peak ~3350 H100 SXM / ~4800 H200):\n");
    for (const auto& [what, b] : best) std::printf("  %-52s %7.1f  %s\n", what.c_str(), b.first, b.second.c_str());
  }
  std::printf("\ndepthwise: instances %zu, problems %zu, checked %d, passed %d, not supported %d, failed %d\n",
              registry.size(), battery.size(), checked, passed, not_supported, failed);
  return failed == 0 ? 0 : 1;
}
