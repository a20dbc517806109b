// bwd_data through the C API: select a kernel for a grouped 3x3 layer (ResNeXt-style, 32 groups of 8 channels),
// run it on device buffers on a stream, time it and check sampled points against a float64 host reference.
// Usage: conv_bwd_data [fp16|bf16|fp32]
#include "example_common.hpp"

int main(int argc, char** argv) {
  const td_dtype dtype = example::parse_dtype(argc, argv, "conv_bwd_data");
  // G=32, N=16, K=C=256, 28x28 input, 3x3 filter, stride 1, pad 1.
  return example::run_example(example::problem_2d(TD_BWD_DATA, dtype, 32, 16, 256, 256, 28, 28, 3, 1));
}
