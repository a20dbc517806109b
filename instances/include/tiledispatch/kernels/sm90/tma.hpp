// Operands the Hopper producer moves with the tensor memory accelerator instead of cp.async gathers
// (docs/pipelines.md, "Hopper path"). K-major operands come as one box per stage; MN-major ones as one box
// per atom column (E elements of MN, the swizzle atom's extent, by tile_k), the stage's atoms repeating along K
// first (config.hpp):
//   fwd         A  im2col of the input: box (tile_k channels, tile_m output pixels) at the CTA's first
//                  pixel, the k-tile's tap as the im2col offset; in columns (Sm90Config::kColumnsA) tile_k / 8
//                  unswizzled boxes (8 channels, tile_m pixels), each at its own tap
//               B  tiled weights (taps*C/G, K): box (tile_k, tile_n) at (k0, g*K/G + n0)
//   bwd_data    A  im2col of the output gradient with the filter flipped (unit stride)
//               B  tiled weights (C/G, taps, K): boxes (E, 1, tile_k) at (n0 + E*i, tap, g*K/G + k)
//   bwd_weight  A  tiled output gradient (K, N*Do*Ho*Wo): boxes (E, tile_k) at (g*K/G + m0 + E*i, k0), E = 64,
//                  or tile_m's 16 or 32 where the tile is computed transposed (Sm90Config::kTransposed)
//               B  im2col of the input: boxes (E channels, tile_k output pixels) at pixel k0, the tap of
//                  column n0 + E*i as the im2col offset (transposed: E = 16 or 32, as wide as tile_m)
//   merged groups without zero MACs (Sm90Config::kDiagonal): a k-tile is one tap over the GM groups
//     fwd       A  one im2col box (tile_k = GM*C/G channels, tile_m pixels) at channel g0*C/G
//               B  per group gl one box (C/G, K/G) at (tap*C/G, (g0+gl)*K/G): the diagonal block only
//     bwd_data  A  one im2col box of the output gradient (GM*K/G channels, flipped filter, unit stride)
//               B  per group gl one box (C/G, 1, K/G) at (0, tap, (g0+gl)*K/G)
// Every box starts on 16 bytes in global memory (its innermost coordinate times the element size; TMA stops an
// unaligned load with an illegal instruction): the host uses TMA only where each group's offset along the
// innermost dimension keeps that. One elected producer thread issues them per stage; the stage's full barrier
// expects their bytes. The boxes land in the same swizzled layout the wgmma descriptors read (the swizzle span
// equals the box's contiguous extent). Elements a box reads past the CTA's GEMM extent belong to the next group
// or lie outside the tensor (zero-filled, as is the padding an im2col window reaches); the epilogue stores
// neither.
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
  // Merged groups without zero MACs (Sm90Config::kDiagonal, fwd and bwd_data): `a` is an im2col map of
  // tile_k-channel boxes, `b` a tiled map of one diagonal weight block per box; the host then launches the
  // diagonal kernel, which multiplies per group.
  bool diagonal;
  // The column variant (Sm90Config's `Columns`): `a` (fwd) or `b` (bwd_weight) an im2col map of 8-channel
  // unswizzled boxes; the host then launches the configuration's column kernel.
  bool columns;
  int32_t a_group_step;  // coordinate of group block 1 along the operand's group-carrying dimension
  int32_t b_group_step;
};

// Swizzle span (bytes) -> the tensor map's swizzle mode; 16: none (a box of 16-byte rows into wgmma's
// interleaved layout, Sm90Config::kColumnsA).
inline CUtensorMapSwizzle tma_swizzle(int span_bytes) {
  return span_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
         : span_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
         : span_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                            : CU_TENSOR_MAP_SWIZZLE_NONE;
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A driver entry point (nullptr when the driver lacks it); the callers keep it in a function-local static,
// so each is looked up once per process.
inline void* driver_entry(const char* name) {
  void* found_entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &found_entry, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return found_entry;
}

inline EncodeTiled encode_tiled_entry() {
  static const auto entry = reinterpret_cast<EncodeTiled>(driver_entry("cuTensorMapEncodeTiled"));
  return entry;
}

// The driver's element type of `dtype`.
constexpr CUtensorMapDataType tma_data_type(DataType dtype) {
  return dtype == DataType::kBf16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
         : dtype == DataType::kFp32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                    : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
}

// A tiled tensor map over a packed-in-dimension-0 tensor of `dtype` elements: `rank` (2 to 5) extents,
// innermost first, `pitch_bytes[i]` between consecutive indices of dimension i + 1, and the box; `traversal`
// (optional) the per-dimension element strides, along which a box takes every traversal[i]-th element,
// ceil(box[i] / traversal[i]) of them. False when the driver refuses it (the caller then gathers the operand
// instead).
inline bool encode_tma_tiled(CUtensorMap& map, DataType dtype, const void* base, int rank, const uint64_t* extents,
                             const uint64_t* pitch_bytes, const uint32_t* box, int span_bytes,
                             const uint32_t* traversal = nullptr) {
  const EncodeTiled encode = encode_tiled_entry();
  if (encode == nullptr) return false;
  cuuint64_t dims[5] = {};
  cuuint64_t strides[4] = {};
  cuuint32_t box_dims[5] = {};
  cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  for (int i = 0; i < rank; ++i) {
    dims[i] = extents[i];
    box_dims[i] = box[i];
    if (traversal != nullptr) element_strides[i] = traversal[i];
    if (i + 1 < rank) strides[i] = pitch_bytes[i];
  }
  const CUresult result = encode(&map, tma_data_type(dtype), cuuint32_t(rank), const_cast<void*>(base), dims, strides,
                                 box_dims, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, tma_swizzle(span_bytes),
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS;
}

// The elements of a box row of `channels` channels of `element_bytes` bytes a pixel in the direct kernels'
// stages: an odd number of 16-byte chunks (a chunk more where the count is even: the next group block's
// channels, or zeros past the tensor), so the ldmatrix rows of 8 consecutive pixels fall in 8 bank groups.
constexpr int conflict_free_row(int channels, int element_bytes = 2) {
  const int chunk = 16 / element_bytes;
  return channels / chunk % 2 == 1 ? channels : channels + chunk;
}

// The direct kernels' next smaller pixel tile where a tile's stages do not fit the shared memory: a row fewer,
// then (one row left) half the width, down to 16 pixels (a 254-pixel row's 3-row halo of 72 channels is 110 KB
// a stage); false where none is left.
constexpr bool shrink_direct_tile(int& tile_h, int& tile_w) {
  if (tile_h > 1) {
    --tile_h;
  } else if (tile_w > 16) {
    tile_w = tile_w / 2 > 16 ? tile_w / 2 : 16;
  } else {
    return false;
  }
  return true;
}

// A tiled map over a packed activation tensor of `dtype` elements, `extents` (C, W, H, D, N) innermost first,
// boxes of `box` in the same order, no swizzle (the direct kernels' stages). False when the driver refuses it.
inline bool encode_tma_activation(CUtensorMap& map, DataType dtype, const void* base, const uint64_t (&extents)[5],
                                  const uint32_t (&box)[5]) {
  uint64_t pitches[4];
  uint64_t pitch = uint64_t(element_bytes(dtype));
  for (int i = 0; i < 4; ++i) pitches[i] = pitch *= extents[i];
  return encode_tma_tiled(map, dtype, base, 5, extents, pitches, box, 0);
}

using EncodeIm2col = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                  const cuuint64_t*, const int*, const int*, cuuint32_t, cuuint32_t, const cuuint32_t*,
                                  CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                  CUtensorMapFloatOOBfill);

inline EncodeIm2col encode_im2col_entry() {
  static const auto entry = reinterpret_cast<EncodeIm2col>(driver_entry("cuTensorMapEncodeIm2col"));
  return entry;
}

// An activation tensor (C, W, H, [D,] N) of 16-bit elements, packed, read in im2col mode: per load
// `pixels` consecutive output pixels of `channels` channels. `spatial` is 2 or 3; corner and stride arrays
// are (W, H, D). False when the driver refuses it (the caller then gathers the operand instead).
struct Im2colGeometry {
  int spatial;
  uint64_t extent[5];   // C, W, H, D, N (D ignored in 2D)
  int lower_corner[3];  // W, H, D
  int upper_corner[3];
  uint32_t stride[3];   // traversal strides, W, H, D
};

inline bool encode_tma_im2col(CUtensorMap& map, DataType dtype, const void* base, const Im2colGeometry& g,
                              uint32_t channels, uint32_t pixels, int span_bytes) {
  const EncodeIm2col encode = encode_im2col_entry();
  if (encode == nullptr) return false;
  const int rank = g.spatial + 2;
  cuuint64_t dims[5] = {};
  cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  for (int i = 0; i <= g.spatial; ++i) dims[i] = g.extent[i];
  dims[rank - 1] = g.extent[4];
  for (int i = 0; i < g.spatial; ++i) element_strides[i + 1] = g.stride[i];
  cuuint64_t strides[4] = {};
  uint64_t pitch = uint64_t(element_bytes(dtype));
  for (int i = 0; i + 1 < rank; ++i) strides[i] = pitch *= dims[i];
  const CUresult result = encode(&map, tma_data_type(dtype), cuuint32_t(rank), const_cast<void*>(base), dims, strides,
                                 g.lower_corner, g.upper_corner, channels, pixels, element_strides,
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

// The store side (the staged epilogue, epilogue.cuh): a box from shared memory to the tensor at (c0, c1), the
// elements outside the tensor dropped. Shared-memory writes of the generic proxy (stmatrix) must be fenced
// before the async proxy reads them; a store group's reads must be done before its shared memory is rewritten.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* smem, int32_t c0, int32_t c1) {
  const uint32_t smem_addr = uint32_t(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               :
               : "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr), "r"(c0), "r"(c1)
               : "memory");
}
// `bytes` (a multiple of 16) from shared memory to global memory, 16-byte aligned, in the bulk group as TMA stores.
__device__ __forceinline__ void bulk_store(void* global, uint32_t smem, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(global), "r"(smem), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
__device__ __forceinline__ void tma_store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void fence_smem_for_tma() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

__device__ __forceinline__ void tma_load_3d(const CUtensorMap* map, uint64_t* barrier, void* smem, int32_t c0,
                                            int32_t c1, int32_t c2) {
  const uint32_t smem_addr = uint32_t(__cvta_generic_to_shared(smem));
  const uint32_t bar_addr = uint32_t(__cvta_generic_to_shared(barrier));
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
      :
      : "r"(smem_addr), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar_addr), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// A box of a rank-5 tiled map at (c0, ..., c4); coordinates outside the tensor, negative ones included, read
// zeros.
__device__ __forceinline__ void tma_load_5d(const CUtensorMap* map, uint64_t* barrier, void* smem,
                                            const int32_t (&c)[5]) {
  const uint32_t smem_addr = uint32_t(__cvta_generic_to_shared(smem));
  const uint32_t bar_addr = uint32_t(__cvta_generic_to_shared(barrier));
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];"
      :
      : "r"(smem_addr), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar_addr), "r"(c[0]), "r"(c[1]), "r"(c[2]),
        "r"(c[3]), "r"(c[4])
      : "memory");
}

// An im2col load: `whdn` is the window corner of the first output pixel in the input tensor, `offset` the
// tap's (dilated) offset from it, both (W, H, D).
template <int Spatial>
__device__ __forceinline__ void tma_load_im2col(const CUtensorMap* map, uint64_t* barrier, void* smem, int32_t c,
                                                const int32_t (&whdn)[4], const uint16_t (&offset)[3]) {
  const uint32_t smem_addr = uint32_t(__cvta_generic_to_shared(smem));
  const uint32_t bar_addr = uint32_t(__cvta_generic_to_shared(barrier));
  const auto desc = reinterpret_cast<uint64_t>(map);
  if constexpr (Spatial == 2) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};"
        :
        : "r"(smem_addr), "l"(desc), "r"(bar_addr), "r"(c), "r"(whdn[0]), "r"(whdn[1]), "r"(whdn[3]),
          "h"(offset[0]), "h"(offset[1])
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6, %7}], [%2], {%8, %9, %10};"
        :
        : "r"(smem_addr), "l"(desc), "r"(bar_addr), "r"(c), "r"(whdn[0]), "r"(whdn[1]), "r"(whdn[2]),
          "r"(whdn[3]), "h"(offset[0]), "h"(offset[1]), "h"(offset[2])
        : "memory");
  }
}

// Transaction mbarriers in plain PTX, for kernels whose headers also compile without CUTLASS (the depthwise
// stages; tests compile them host-only): init with the expected arrivals, the elected thread's arrival that
// announces a stage's TMA bytes, and the wait for a phase's completion by its parity.
__device__ __forceinline__ void mbarrier_init(uint64_t* barrier, uint32_t arrivals) {
  const uint32_t bar_addr = uint32_t(__cvta_generic_to_shared(barrier));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar_addr), "r"(arrivals) : "memory");
}
// After the initialisations, before the barriers' first use by the async proxy (TMA's complete_tx).
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* barrier, uint32_t bytes) {
  const uint32_t bar_addr = uint32_t(__cvta_generic_to_shared(barrier));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarrier_wait(uint64_t* barrier, uint32_t parity) {
  const uint32_t bar_addr = uint32_t(__cvta_generic_to_shared(barrier));
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(bar_addr),
      "r"(parity)
      : "memory");
}
#endif

}  // namespace tiledispatch::kernels::sm90
