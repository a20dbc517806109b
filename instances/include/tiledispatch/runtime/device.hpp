// The current device's facts that launches size their grids by.
#pragma once

#include <cuda_runtime_api.h>

#include "tiledispatch/runtime/check.hpp"

namespace tiledispatch {

inline cudaError_t sm_count(int* sms) {
  int device = 0;
  TD_RETURN_IF_CUDA_ERROR(cudaGetDevice(&device));
  return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
}

}  // namespace tiledispatch
