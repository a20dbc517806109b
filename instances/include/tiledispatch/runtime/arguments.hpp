// Device pointers and launch settings for one run. Which tensors are read and which written depends on the
// direction: fwd reads input+weight and writes output; bwd_data reads output+weight and writes input;
// bwd_weight reads input+output and writes weight. Layouts: input NDHWGC, weight GKZYXC, output NDHWGK.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "tiledispatch/runtime/direction.hpp"

namespace tiledispatch {

struct ConvArgs {
  void* input = nullptr;
  void* weight = nullptr;
  void* output = nullptr;
  void* workspace = nullptr;  // at least instance.workspace_bytes(problem, k_batch) bytes when that is non-zero
  size_t workspace_bytes = 0;
  int k_batch = 1;  // split-K factor (bwd_weight); instances that do not split K require 1
  cudaStream_t stream = nullptr;
};

// The argument that holds `tensor` (runtime/direction.hpp says which tensor each operand of a direction is).
inline void* tensor_argument(const ConvArgs& args, ConvTensor tensor) {
  switch (tensor) {
    case ConvTensor::kInput: return args.input;
    case ConvTensor::kWeight: return args.weight;
    case ConvTensor::kOutput: return args.output;
  }
  return nullptr;
}

}  // namespace tiledispatch
