#include "device_tensors.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "tiledispatch/runtime/check.hpp"

namespace tiledispatch::profiler {
namespace {

constexpr int kThreads = 256;

int blocks_for(size_t count) {
  return static_cast<int>(std::min<size_t>((count + kThreads - 1) / kThreads, 65535 * 8));
}

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <typename T>
__global__ void fill_kernel(T* data, size_t count, int mode, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t bits = splitmix64(seed ^ splitmix64(i));
    float v = 1.0f;
    if (mode == static_cast<int>(InitMode::kFloat)) {
      v = static_cast<float>(bits >> 40) * (2.0f / 16777216.0f) - 1.0f;
    } else if (mode == static_cast<int>(InitMode::kInteger)) {
      v = static_cast<float>(static_cast<int>(bits % 5) - 2);
    }
    data[i] = static_cast<T>(v);  // round to nearest for __half and __nv_bfloat16
  }
}

// Per block: warp shuffles, then one atomic per block and quantity.
template <typename T, typename Bits>
__global__ void compare_kernel(const T* data, const float* reference, size_t count, unsigned long long* counters,
                               double* sums) {
  constexpr Bits kPoison = static_cast<Bits>(~Bits(0));
  unsigned long long unwritten = 0, non_finite = 0, non_zero = 0;
  double diff = 0, ref = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const Bits raw = reinterpret_cast<const Bits*>(data)[i];
    if (raw == kPoison) {
      ++unwritten;
      continue;
    }
    const float v = static_cast<float>(data[i]);
    if (!isfinite(v)) {
      ++non_finite;
      continue;
    }
    non_zero += v != 0.0f;
    if (reference != nullptr) {
      const double r = reference[i];
      diff += (static_cast<double>(v) - r) * (static_cast<double>(v) - r);
      ref += r * r;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    unwritten += __shfl_down_sync(0xffffffffu, unwritten, offset);
    non_finite += __shfl_down_sync(0xffffffffu, non_finite, offset);
    non_zero += __shfl_down_sync(0xffffffffu, non_zero, offset);
    diff += __shfl_down_sync(0xffffffffu, diff, offset);
    ref += __shfl_down_sync(0xffffffffu, ref, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&counters[0], unwritten);
    atomicAdd(&counters[1], non_finite);
    atomicAdd(&counters[2], non_zero);
    atomicAdd(&sums[0], diff);
    atomicAdd(&sums[1], ref);
  }
}

template <typename T>
void launch_fill(void* data, size_t count, InitMode mode, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<T*>(data), count, static_cast<int>(mode),
                                                              seed);
  TD_CHECK_CUDA(cudaGetLastError());
}

template <typename T, typename Bits>
void launch_compare(const void* data, const float* reference, size_t count, unsigned long long* counters,
                    double* sums, cudaStream_t stream) {
  compare_kernel<T, Bits><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const T*>(data), reference, count,
                                                                      counters, sums);
  TD_CHECK_CUDA(cudaGetLastError());
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) TD_CHECK_CUDA(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  // A free failing at teardown (a context already lost) has nothing left to report to.
  if (ptr_ != nullptr) (void)cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void fill_tensor(void* data, DataType dtype, size_t count, InitMode mode, uint64_t seed, cudaStream_t stream) {
  switch (dtype) {
    case DataType::kFp16: launch_fill<__half>(data, count, mode, seed, stream); break;
    case DataType::kBf16: launch_fill<__nv_bfloat16>(data, count, mode, seed, stream); break;
    case DataType::kFp32: launch_fill<float>(data, count, mode, seed, stream); break;
  }
}

void poison_tensor(void* data, size_t bytes, cudaStream_t stream) {
  TD_CHECK_CUDA(cudaMemsetAsync(data, 0xFF, bytes, stream));
}

double CompareStats::rel_l2() const {
  if (sum_sq_ref == 0) return sum_sq_diff == 0 ? 0.0 : INFINITY;
  return std::sqrt(sum_sq_diff / sum_sq_ref);
}

CompareStats compare_tensor(const void* data, DataType dtype, const float* reference, size_t count,
                            cudaStream_t stream) {
  DeviceBuffer scratch(3 * sizeof(unsigned long long) + 2 * sizeof(double));
  auto* counters = static_cast<unsigned long long*>(scratch.get());
  auto* sums = reinterpret_cast<double*>(counters + 3);
  TD_CHECK_CUDA(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), stream));
  if (count > 0) {
    switch (dtype) {
      case DataType::kFp16: launch_compare<__half, uint16_t>(data, reference, count, counters, sums, stream); break;
      case DataType::kBf16:
        launch_compare<__nv_bfloat16, uint16_t>(data, reference, count, counters, sums, stream);
        break;
      case DataType::kFp32: launch_compare<float, uint32_t>(data, reference, count, counters, sums, stream); break;
    }
  }
  unsigned long long host_counters[3];
  double host_sums[2];
  TD_CHECK_CUDA(cudaMemcpyAsync(host_counters, counters, sizeof(host_counters), cudaMemcpyDeviceToHost, stream));
  TD_CHECK_CUDA(cudaMemcpyAsync(host_sums, sums, sizeof(host_sums), cudaMemcpyDeviceToHost, stream));
  TD_CHECK_CUDA(cudaStreamSynchronize(stream));
  CompareStats stats;
  stats.unwritten = host_counters[0];
  stats.non_finite = host_counters[1];
  stats.non_zero = host_counters[2];
  stats.sum_sq_diff = host_sums[0];
  stats.sum_sq_ref = host_sums[1];
  return stats;
}

void print_head(const void* data, DataType dtype, const float* reference, size_t count) {
  const size_t bytes = count * static_cast<size_t>(element_bytes(dtype));
  std::vector<unsigned char> raw(bytes);
  std::vector<float> ref(count);
  TD_CHECK_CUDA(cudaMemcpy(raw.data(), data, bytes, cudaMemcpyDeviceToHost));
  if (reference != nullptr) TD_CHECK_CUDA(cudaMemcpy(ref.data(), reference, count * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("  first %zu values (out / ref):", count);
  for (size_t i = 0; i < count; ++i) {
    float v = 0;
    if (dtype == DataType::kFp32) {
      v = reinterpret_cast<const float*>(raw.data())[i];
    } else if (dtype == DataType::kFp16) {
      v = __half2float(reinterpret_cast<const __half*>(raw.data())[i]);
    } else {
      v = __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(raw.data())[i]);
    }
    if (reference != nullptr) {
      std::printf(" %g/%g", v, ref[i]);
    } else {
      std::printf(" %g", v);
    }
  }
  std::printf("\n");
}

L2Flusher::L2Flusher() {
  int device = 0;
  int l2_bytes = 0;
  TD_CHECK_CUDA(cudaGetDevice(&device));
  TD_CHECK_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  buffer_ = DeviceBuffer(std::max<size_t>(2 * static_cast<size_t>(l2_bytes), size_t(64) << 20));
}

void L2Flusher::flush(cudaStream_t stream) {
  value_ ^= 1;  // alternate the pattern so no write can be elided as unchanged data
  TD_CHECK_CUDA(cudaMemsetAsync(buffer_.get(), value_, buffer_.bytes(), stream));
}

}  // namespace tiledispatch::profiler
