// Checked CUDA calls. Device code paths return cudaError_t; host tools throw CudaError with the call's text.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace tiledispatch {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* what, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                           cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"),
        code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

}  // namespace tiledispatch

// Throws tiledispatch::CudaError when `expr` does not return cudaSuccess.
#define TD_CHECK_CUDA(expr)                                                       \
  do {                                                                            \
    const cudaError_t td_status_ = (expr);                                        \
    if (td_status_ != cudaSuccess) {                                              \
      throw ::tiledispatch::CudaError(td_status_, #expr, __FILE__, __LINE__);     \
    }                                                                             \
  } while (0)

// Returns the error from the enclosing function (which returns cudaError_t) when `expr` fails.
#define TD_RETURN_IF_CUDA_ERROR(expr)                   \
  do {                                                  \
    const cudaError_t td_status_ = (expr);              \
    if (td_status_ != cudaSuccess) return td_status_;   \
  } while (0)
