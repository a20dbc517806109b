// Device memory for one profiling job and the kernels that fill, poison and check it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "options.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::profiler {

// An owning device allocation (cudaMalloc); frees on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Fills `count` elements of `dtype` with values of `mode` drawn from a counter-based hash of (seed, index), so
// every (problem, tensor) gets its own fresh values. Float: uniform in [-1, 1); integer: {-2..2}; constant: 1.
void fill_tensor(void* data, DataType dtype, size_t count, InitMode mode, uint64_t seed, cudaStream_t stream);

// Every byte 0xFF: a NaN in fp16, bf16 and fp32 alike, and a pattern no finite result has.
void poison_tensor(void* data, size_t bytes, cudaStream_t stream);

struct CompareStats {
  uint64_t unwritten = 0;   // elements still holding the poison pattern
  uint64_t non_finite = 0;  // NaN or Inf elements that are not the poison pattern
  uint64_t non_zero = 0;
  double sum_sq_diff = 0;   // against the reference (0 without one)
  double sum_sq_ref = 0;
  double rel_l2() const;
};

// Checks `count` elements of `data` (dtype) against `reference` (fp32, may be null: then only the poison,
// finiteness and non-zero counts are taken). Synchronises `stream`.
CompareStats compare_tensor(const void* data, DataType dtype, const float* reference, size_t count,
                            cudaStream_t stream);

// Prints the first `count` elements of `data` beside `reference` (for --log 1).
void print_head(const void* data, DataType dtype, const float* reference, size_t count);

// Evicts the L2 cache between timed runs by writing a buffer of twice its size.
class L2Flusher {
 public:
  L2Flusher();
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer buffer_;
  int value_ = 0;
};

}  // namespace tiledispatch::profiler
