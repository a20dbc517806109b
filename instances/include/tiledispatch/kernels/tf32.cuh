// fp32 operands of TF32 MMAs: rounded to nearest (ties away from zero, low 13 bits zero) before the tensor cores
// read them, which would otherwise truncate them (a bias toward zero; docs/pipelines.md, "fp32").
#pragma once

#include <cstdint>

namespace tiledispatch::kernels {

__device__ __forceinline__ uint32_t tf32_bits(float value) {
  uint32_t rounded;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(rounded) : "f"(value));
  return rounded;
}

}  // namespace tiledispatch::kernels
