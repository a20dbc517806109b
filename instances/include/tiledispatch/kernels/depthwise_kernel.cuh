// Depthwise forward direct convolution (2D, G = C = K, channels-last tensors NHWGC / GKYXC / NHWGK with
// C/G = K/G = 1; docs/depthwise.md). One block computes a TileH x TileW output tile of one image for a slice of
// NBatch * OutVec channels; each of the block's NBatch channel groups of (TileH/SubH) x (TileW/SubW) threads
// covers the whole tile for its OutVec channels, a thread a SubH x SubW sub-tile of pixels.
//
//   gmem --(cp.async InVec-wide along C, zero fill for padding)--> smem input halo (InH, InW', CB)
//   gmem --(weights, converted to fp32)-------------------------> smem weights (F*F, CB)
//   smem --(OutVec-wide along C, one filter row of weights in registers)--> fp32 accumulators (SubW, OutVec),
//           one output row of the sub-tile at a time
//   accumulators --(converted, OutVec-wide stores along C)--> gmem output
//
// Shared-memory columns are interleaved (column x sits at (x % ColStep) * QW + x / ColStep, ColStep = SubW*StrideW)
// so that the threads of a row, whose sub-tiles start ColStep input columns apart, read consecutive positions:
// no bank conflicts between neighbouring threads at any stride.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

// Generated from generators/arch.py into the build's generated directory (generators/arch_header.py).
#include "tiledispatch/generated/arch_traits.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::kernels::depthwise {

template <DataType D>
struct ElementOf;
template <>
struct ElementOf<DataType::kFp16> {
  using type = __half;
};
template <>
struct ElementOf<DataType::kBf16> {
  using type = __nv_bfloat16;
};
template <>
struct ElementOf<DataType::kFp32> {
  using type = float;
};

// The unsigned type moved by one access of `Bytes` bytes.
template <int Bytes>
struct Bits;
template <>
struct Bits<2> {
  using type = uint16_t;
};
template <>
struct Bits<4> {
  using type = uint32_t;
};
template <>
struct Bits<8> {
  using type = uint2;
};
template <>
struct Bits<16> {
  using type = uint4;
};

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
constexpr int align16(int bytes) { return (bytes + 15) / 16 * 16; }

// Everything the kernel and the instance derive from the 12 depthwise parameters.
template <class Traits>
struct Shape {
  using Target = ArchTraits<Traits::kArch>;  // the arch the instance is built for, and its limits
  using T = typename ElementOf<Traits::kDataType>::type;
  static constexpr int kTileH = Traits::kTileH, kTileW = Traits::kTileW, kFilter = Traits::kFilter;
  static constexpr int kStrideH = Traits::kStrideH, kStrideW = Traits::kStrideW;
  static constexpr int kPadH = Traits::kPadH, kPadW = Traits::kPadW;
  static constexpr int kNBatch = Traits::kNBatch, kSubH = Traits::kSubH, kSubW = Traits::kSubW;
  static constexpr int kInVec = Traits::kInVec, kOutVec = Traits::kOutVec;
  static_assert(kTileH % kSubH == 0 && kTileW % kSubW == 0, "the sub-tile must divide the tile");
  static_assert(kInVec >= 1 && kOutVec >= 1 && (kInVec & (kInVec - 1)) == 0 && (kOutVec & (kOutVec - 1)) == 0,
                "vector widths are powers of two");
  static_assert(kInVec * sizeof(T) <= Target::kMaxVectorBytes && kOutVec * sizeof(T) <= Target::kMaxVectorBytes,
                "vectors are at most two of the arch's widest accesses (32 bytes)");

  static constexpr int kChannels = kNBatch * kOutVec;  // CB: channels of one block
  static constexpr int kThreadsW = kTileW / kSubW, kThreadsH = kTileH / kSubH;
  static constexpr int kThreads = kThreadsW * kThreadsH * kNBatch;
  static constexpr int kInH = (kTileH - 1) * kStrideH + kFilter;
  static constexpr int kInW = (kTileW - 1) * kStrideW + kFilter;
  static constexpr int kColStep = kSubW * kStrideW;            // input columns between neighbouring threads
  static constexpr int kQW = ceil_div(kInW, kColStep);         // positions per column residue
  static constexpr int kRowPositions = kColStep * kQW;         // >= kInW
  static constexpr int kWindowW = (kSubW - 1) * kStrideW + kFilter;  // input columns one thread reads per row
  static constexpr int kInputBytes = align16(kInH * kRowPositions * kChannels * int(sizeof(T)));
  static constexpr int kWeightBytes = kFilter * kFilter * kChannels * int(sizeof(float));
  static constexpr int kSmemBytes = kInputBytes + kWeightBytes;
  static constexpr bool kVectorsFitSlice = kChannels % kInVec == 0;
};

struct Params {
  const void* input;
  const void* weight;
  void* output;
  int C, Hi, Wi, Ho, Wo;
  int tiles_w, tiles_h, slices;  // grid = slices * tiles_w * tiles_h * N, slice fastest (neighbours share L2 lines)
};

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ inline T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) { return v; }
template <>
__device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// V elements from `src` as floats, and V floats to `dst` as elements: one access of up to 16 bytes, or (fp32 vec
// 8, 16-bit vec 16) two 16-byte ones, each through registers of its own.
template <int V, class T>
__device__ __forceinline__ void load_floats(const T* src, float* dst) {
  if constexpr (V * sizeof(T) > 16) {
    load_floats<V / 2>(src, dst);
    load_floats<V / 2>(src + V / 2, dst + V / 2);
  } else {
    using B = typename Bits<V * int(sizeof(T))>::type;
    const B bits = *reinterpret_cast<const B*>(src);
    const T* elems = reinterpret_cast<const T*>(&bits);
#pragma unroll
    for (int v = 0; v < V; ++v) dst[v] = to_float(elems[v]);
  }
}
template <int V, class T>
__device__ __forceinline__ void store_floats(T* dst, const float* src) {
  if constexpr (V * sizeof(T) > 16) {
    store_floats<V / 2>(dst, src);
    store_floats<V / 2>(dst + V / 2, src + V / 2);
  } else {
    using B = typename Bits<V * int(sizeof(T))>::type;
    B bits;
    T* elems = reinterpret_cast<T*>(&bits);
#pragma unroll
    for (int v = 0; v < V; ++v) elems[v] = from_float<T>(src[v]);
    *reinterpret_cast<B*>(dst) = bits;
  }
}

// One vector of V elements from global to shared memory; zeros where !valid (padding, channels past C).
// 4-, 8- and 16-byte vectors use cp.async with src-size 0 for zero fill, 32-byte ones two 16-byte cp.async;
// 2-byte ones go through a register.
template <int Bytes>
__device__ inline void copy_vector(void* smem_dst, const void* gmem_src, bool valid) {
  if constexpr (Bytes == 32) {
    copy_vector<16>(smem_dst, gmem_src, valid);
    copy_vector<16>(static_cast<unsigned char*>(smem_dst) + 16, static_cast<const unsigned char*>(gmem_src) + 16,
                    valid);
  } else if constexpr (Bytes >= 4) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    const int src_size = valid ? Bytes : 0;
    if constexpr (Bytes == 16) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_size));
    } else {
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(gmem_src), "n"(Bytes),
                   "r"(src_size));
    }
  } else {
    using B = typename Bits<Bytes>::type;
    *static_cast<B*>(smem_dst) = valid ? *static_cast<const B*>(gmem_src) : B(0);
  }
}

// Pixels of a block's channel slice into shared memory, shared by the three depthwise kernels: Rows x Cols
// pixels from (y0, x0) of image n, CB channels from c0, InVec-wide copies (vector fastest, so a warp reads whole
// pixels) with zero fill outside [0, height) x [0, width) (padding) and past `channels`. Column x lands at
// position (x % ColStep) * QW + x / ColStep of a row of RowPositions: interleaved so that neighbouring threads,
// whose windows start ColStep columns apart, read consecutive positions. Commits one cp.async group.
template <int Rows, int Cols, int CB, int InVec, int ColStep, int QW, int RowPositions, class T>
__device__ inline void stage_pixels(T* dst, const T* src, int n, int y0, int x0, int height, int width, int channels,
                                    int c0, int tid, int threads) {
  constexpr int kVecs = CB / InVec;
  for (int i = tid; i < Rows * Cols * kVecs; i += threads) {
    const int v = i % kVecs, pixel = i / kVecs;
    const int x = pixel % Cols, y = pixel / Cols;
    const int gy = y0 + y, gx = x0 + x, gc = c0 + v * InVec;
    const bool valid = gy >= 0 && gy < height && gx >= 0 && gx < width && gc < channels;
    const int position = (x % ColStep) * QW + x / ColStep;
    const T* from = valid ? src + ((int64_t(n) * height + gy) * width + gx) * channels + gc : src;
    copy_vector<InVec * int(sizeof(T))>(dst + (y * RowPositions + position) * CB + v * InVec, from, valid);
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

// The slice's F x F weights (C, 1, F, F, 1) as fp32: read tap-fastest (contiguous), stored channel-fastest for
// OutVec-wide reads; zeros past `channels`.
template <int F, int CB, class T>
__device__ inline void stage_weights(float* s_w, const T* weight, int c0, int channels, int tid, int threads) {
  for (int i = tid; i < F * F * CB; i += threads) {
    const int tap = i % (F * F), c = i / (F * F);
    const int gc = c0 + c;
    s_w[tap * CB + c] = gc < channels ? to_float(weight[int64_t(gc) * F * F + tap]) : 0.f;
  }
}

// Where a block of the fwd and bwd_data grids works: channel slice fastest (neighbours share L2 lines), then
// tile column, tile row, image.
struct TilePlace {
  int slice, tile_w, tile_h, n;
};
__device__ inline TilePlace tile_place(int block, int slices, int tiles_w, int tiles_h) {
  TilePlace t{};
  t.slice = block % slices;
  block /= slices;
  t.tile_w = block % tiles_w;
  block /= tiles_w;
  t.tile_h = block % tiles_h;
  t.n = block / tiles_h;
  return t;
}

template <class Traits>
__global__ void __launch_bounds__(Shape<Traits>::kThreads) depthwise_fwd_kernel(Params p) {
  using S = Shape<Traits>;
  using T = typename S::T;
#if defined(__CUDA_ARCH__)
  // The traits' arch sized this kernel (shared memory): the device pass must target it.
  static_assert(__CUDA_ARCH__ == S::Target::kCudaArch, "compiled for another arch than its traits name (kArch)");
#endif
  constexpr int F = S::kFilter, CB = S::kChannels, V = S::kOutVec;
  extern __shared__ __align__(16) unsigned char smem[];
  T* s_in = reinterpret_cast<T*>(smem);                              // (kInH, kRowPositions, CB)
  float* s_w = reinterpret_cast<float*>(smem + S::kInputBytes);      // (F*F, CB)

  const TilePlace place = tile_place(int(blockIdx.x), p.slices, p.tiles_w, p.tiles_h);
  const int n = place.n;
  const int c0 = place.slice * CB;
  const int oh0 = place.tile_h * S::kTileH, ow0 = place.tile_w * S::kTileW;
  const int ih0 = oh0 * S::kStrideH - S::kPadH, iw0 = ow0 * S::kStrideW - S::kPadW;
  const int tid = int(threadIdx.x);

  stage_pixels<S::kInH, S::kInW, CB, S::kInVec, S::kColStep, S::kQW, S::kRowPositions>(
      s_in, static_cast<const T*>(p.input), n, ih0, iw0, p.Hi, p.Wi, p.C, c0, tid, S::kThreads);
  stage_weights<F, CB>(s_w, static_cast<const T*>(p.weight), c0, p.C, tid, S::kThreads);
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();

  // Channel group fastest: the NBatch groups of one pixel are contiguous in smem and in the output.
  const int group = tid % S::kNBatch, spatial = tid / S::kNBatch;
  const int sx = spatial % S::kThreadsW, sy = spatial / S::kThreadsW;

  const int gc = c0 + group * V;
  T* out = static_cast<T*>(p.output);
  // One output row of the sub-tile at a time: SubW x OutVec accumulators and one filter row of weights live in
  // registers. Weight reads are warp broadcasts (every thread of a channel group reads the same address).
  // The row loop stays rolled: unrolled, the 5x5 / 8-wide sub-tiles exceed nvcc's unroll budget and fall into
  // local memory.
#pragma unroll 1
  for (int r = 0; r < S::kSubH; ++r) {
    float acc[S::kSubW][V];
#pragma unroll
    for (int c = 0; c < S::kSubW; ++c)
#pragma unroll
      for (int v = 0; v < V; ++v) acc[c][v] = 0.f;
#pragma unroll
    for (int fy = 0; fy < F; ++fy) {
      float w[F][V];
#pragma unroll
      for (int fx = 0; fx < F; ++fx)
#pragma unroll
        for (int v = 0; v < V; ++v) w[fx][v] = s_w[(fy * F + fx) * CB + group * V + v];
      const T* row = s_in + ((sy * S::kSubH + r) * S::kStrideH + fy) * S::kRowPositions * CB + group * V;
      // Each input column of the thread's window is read once per filter row and used by every output column
      // it reaches (register-level reuse along W).
#pragma unroll
      for (int k = 0; k < S::kWindowW; ++k) {
        const int position = (k % S::kColStep) * S::kQW + sx + k / S::kColStep;
        float xin[V];
        load_floats<V>(row + position * CB, xin);
#pragma unroll
        for (int c = 0; c < S::kSubW; ++c) {
          const int fx = k - c * S::kStrideW;
          if (fx >= 0 && fx < F) {
#pragma unroll
            for (int v = 0; v < V; ++v) acc[c][v] = fmaf(w[fx][v], xin[v], acc[c][v]);
          }
        }
      }
    }
    const int oh = oh0 + sy * S::kSubH + r;
    if (gc < p.C && oh < p.Ho) {
#pragma unroll
      for (int c = 0; c < S::kSubW; ++c) {
        const int ow = ow0 + sx * S::kSubW + c;
        if (ow < p.Wo) {
          store_floats<V>(out + ((int64_t(n) * p.Ho + oh) * p.Wo + ow) * p.C + gc, acc[c]);
        }
      }
    }
  }
}

}  // namespace tiledispatch::kernels::depthwise
