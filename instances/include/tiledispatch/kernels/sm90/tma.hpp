// Operands the Hopper producer moves with the tensor memory accelerator instead of cp.async gathers: those
// that are plain strided boxes in global memory (docs/pipelines.md, "Hopper path"):
//   fwd B         weights, (taps*C/G, K) row-major: box (tile_k, tile_n) at (k0, g*K/G + n0)
//   bwd_weight A  output gradient, (K, N*Do*Ho*Wo) row-major: boxes (64, 8) at (g*K/G + m0 + 64i, k0 + 8j)
// One elected producer thread issues them per stage; the stage's full barrier expects their bytes. The boxes
// land in the same swizzled layout the wgmma descriptors read (the swizzle span equals the box's contiguous
// extent). Rows a box reads past the CTA's GEMM extent belong to the next group or lie outside the tensor
// (zero-filled); the epilogue stores neither.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::kernels::sm90 {

struct TmaOperands {
  CUtensorMap a;
  CUtensorMap b;
  bool use_a;
  bool use_b;
};

// Swizzle span (bytes) -> the tensor map's swizzle mode.
inline CUtensorMapSwizzle tma_swizzle(int span_bytes) {
  return span_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
         : span_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                            : CU_TENSOR_MAP_SWIZZLE_32B;
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's cuTensorMapEncodeTiled, looked up once per process (nullptr when the driver lacks it).
inline EncodeTiled encode_tiled_entry() {
  static const EncodeTiled entry = [] {
    void* found_entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &found_entry, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return EncodeTiled{nullptr};
    }
    return reinterpret_cast<EncodeTiled>(found_entry);
  }();
  return entry;
}

// A rank-2 tiled tensor map over a row-major (inner, outer) matrix of 16-bit elements with `row_bytes`
// between rows. False when the driver refuses it (the caller then gathers the operand instead).
inline bool encode_tma_2d(CUtensorMap& map, DataType dtype, const void* base, uint64_t inner, uint64_t outer,
                          uint64_t row_bytes, uint32_t box_inner, uint32_t box_outer, int span_bytes) {
  const EncodeTiled encode = encode_tiled_entry();
  if (encode == nullptr) return false;
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_inner, box_outer};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUtensorMapDataType type =
      dtype == DataType::kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult result = encode(&map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, tma_swizzle(span_bytes),
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS;
}

#if defined(__CUDACC__)
__device__ __forceinline__ void tma_load_2d(const CUtensorMap* map, uint64_t* barrier, void* smem, int32_t c0,
                                            int32_t c1) {
  const uint32_t smem_addr = uint32_t(__cvta_generic_to_shared(smem));
  const uint32_t bar_addr = uint32_t(__cvta_generic_to_shared(barrier));
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      :
      : "r"(smem_addr), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar_addr), "r"(c0), "r"(c1)
      : "memory");
}
#endif

}  // namespace tiledispatch::kernels::sm90
