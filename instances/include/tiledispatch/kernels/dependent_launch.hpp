// A programmatic dependent launch (sm_90): the kernel's CTAs may be placed while the stream's previous kernel
// finishes (as its CTAs exit, or at once where that kernel executes griddepcontrol.launch_dependents), so the
// launch gap between the two is hidden. The kernel must execute griddepcontrol.wait before it reads what the
// previous kernel writes or writes what it reads; the wait returns once that kernel has completed and its
// memory is visible, and is a no-op after an ordinary launch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace tiledispatch::kernels {

template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem_bytes,
                             cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Args&&>(args)...);
}

}  // namespace tiledispatch::kernels
