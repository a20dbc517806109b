// Depthwise forward direct convolution (2D and 3D, G = C = K, channels-last tensors N(D)HWGC / GK(Z)YXC / N(D)HWGK with
// C/G = K/G = 1; docs/depthwise.md). A block owns a slice of NBatch * OutVec channels and computes TileH x TileW
// output tiles of it; each of the block's NBatch channel groups of (TileH/SubH) x (TileW/SubW) threads covers the
// whole tile for its OutVec channels, a thread a SubH x SubW sub-tile of pixels. When few blocks fit on an SM the
// launch is persistent: a grid of the GPU's resident blocks walks every tile, each block staging its next tile's
// halo (cp.async, second ring buffer) while it computes the current one; otherwise a block computes one tile
// (docs/depthwise.md, "Launch and pipelining"). 3D (kNDim 3, a cubic filter): a tile is one output slice's, its
// stage holds the FilterD input slices that slice reads (DepthMap; depth stride, pad and dilation are run-time)
// and the accumulators add every depth tap's plane (docs/depthwise.md, "3D").
//
//   gmem --(2D: TMA, ColStep boxes a tile; else cp.async InVec-wide along C; zero fill for padding)-->
//        smem input halo ring (Stages, 2D: ColStep, InH, QW, CB; 3D: FilterD, InH, InW', CB)
//   gmem --(weights, converted to fp32, once per block)---------> smem weights ([FilterD*]F*F, CB)
//   smem --(OutVec-wide along C, one filter row of weights in registers)--> fp32 accumulators (SubW, OutVec),
//           one output row of the sub-tile at a time
//   accumulators --(converted, OutVec-wide stores along C)--> gmem output
//
// Shared-memory columns are interleaved (column x sits at (x % ColStep) * QW + x / ColStep, ColStep = SubW*StrideW)
// so that the threads of a row, whose sub-tiles start ColStep input columns apart, read consecutive positions:
// no bank conflicts between neighbouring threads at any stride. A 2D halo keeps each column residue x % ColStep
// as a block of its own (InH rows of QW positions, 128-byte aligned): the box one TMA load with a traversal
// stride of ColStep along W writes (PixelLayout, tma_load_pixels); the backward kernels stage theirs alike.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

// Generated from generators/arch.py into the build's generated directory (generators/arch_header.py).
#include "tiledispatch/generated/arch_traits.hpp"
#include "tiledispatch/kernels/fast_division.hpp"
#include "tiledispatch/kernels/sm90/tma.hpp"
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
constexpr int align128(int bytes) { return (bytes + 127) / 128 * 128; }
constexpr int kStageBarrierBytes = 2 * int(sizeof(uint64_t));  // a halo ring's two stage mbarriers (StageBarriers)

// Stages of a kernel's staged-halo ring: two (prefetch the next item while computing this one) when the second
// fits in a block's shared memory after the first and the rest (from `second_offset`), else one. Validity only
// requires one.
constexpr int ring_stages(int second_offset, int stage_bytes, int limit_bytes) {
  return second_offset + stage_bytes <= limit_bytes ? 2 : 1;
}

// Where staged pixels go in shared memory: Rows rows of CB channels a pixel, a row's columns in ColStep
// residues (column x at position x / ColStep of residue x % ColStep, QW positions a residue row), so that the
// threads of a row, whose windows start ColStep columns apart, read consecutive positions. With Tma (where one
// TMA box a residue can load it: a traversal stride of at most 8, box sides of at most 256) each residue is a
// block of Rows rows, 128-byte aligned (a box's destination); otherwise a row's residues lie side by side,
// whose cp.async copies of neighbouring columns fall in different banks (H200: 3D 16-bit vec-4 forward shapes
// up to 10 % slower in blocks; halo_by_tma).
template <class T, int Rows, int CB, int ColStep, int QW, bool Tma>
struct PixelLayout {
  static constexpr bool kTma = Tma && ColStep <= 8 && QW * ColStep <= 256 && Rows <= 256;
  static constexpr int kRows = Rows, kChannels = CB, kColStep = ColStep, kQW = QW;
  static constexpr int kRowPitch = (kTma ? QW : ColStep * QW) * CB;  // elements between rows
  static constexpr int kResiduePitch =                                // elements between residues
      kTma ? align128(Rows * kRowPitch * int(sizeof(T))) / int(sizeof(T)) : QW * CB;
  static constexpr int kBytes =
      kTma ? ColStep * kResiduePitch * int(sizeof(T)) : align16(Rows * kRowPitch * int(sizeof(T)));
  static constexpr uint32_t kBoxBytes = uint32_t(Rows * QW * CB * int(sizeof(T)));  // one residue's TMA box
  static constexpr uint32_t kStageBytes = ColStep * kBoxBytes;  // a stage: every residue's box
  // Element offset of position q of residue r in row y.
  __host__ __device__ static constexpr int at(int y, int r, int q) {
    return y * kRowPitch + r * kResiduePitch + q * CB;
  }
};

// Whether a halo is laid out for TMA (PixelLayout's Tma): 2D always; 3D where a vector is 16 bytes, since 3D
// vec-4 16-bit shapes serve channel counts off a multiple of 8, whose pixel pitch TMA refuses (cp.async then).
template <class T>
constexpr bool halo_by_tma(int ndim, int in_vec) {
  return ndim == 2 || in_vec * int(sizeof(T)) >= 16;
}

// Depth taps of an instance: a 3D depthwise filter is cubic (FilterD = F, docs/depthwise.md, "3D"); 2D has one.
constexpr int depth_taps(int ndim, int filter) {
  return ndim == 3 ? filter : 1;
}

// Everything the kernel and the instance derive from the 12 depthwise parameters and the dimension.
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
  static constexpr int kWindowW = (kSubW - 1) * kStrideW + kFilter;  // input columns one thread reads per row
  // 3D: a stage holds the FilterD input slices an output slice reads, the weights all FilterD x F x F taps.
  static constexpr int kNDim = Traits::kNDim, kFilterD = depth_taps(kNDim, kFilter);
  using Halo = PixelLayout<T, kInH, kChannels, kColStep, kQW, halo_by_tma<T>(kNDim, kInVec)>;  // an input slice
  static constexpr int kSliceBytes = Halo::kBytes;
  static constexpr int kSliceElements = kSliceBytes / int(sizeof(T));
  static constexpr int kInputBytes = kFilterD * kSliceBytes;
  static constexpr int kWeightTaps = kFilterD * kFilter * kFilter;
  static constexpr int kWeightBytes = kWeightTaps * kChannels * int(sizeof(float));
  // Shared memory: [input stage 0][weights][two stage barriers][input stage 1]; a block that computes one tile
  // needs only the first three (kSmemBytes, what the configuration must fit), a persistent one all four
  // (kRingSmemBytes).
  static constexpr int kWeightOffset = kInputBytes, kBarrierOffset = kInputBytes + align16(kWeightBytes);
  static constexpr int kSmemBytes = kBarrierOffset + kStageBarrierBytes;
  static constexpr int kSecondStageOffset = align128(kSmemBytes);
  static constexpr int kStages = ring_stages(kSecondStageOffset, kInputBytes, Target::kSmemPerBlockBytes);
  static constexpr int kRingSmemBytes = kStages == 2 ? kSecondStageOffset + kInputBytes : kSmemBytes;
  static constexpr bool kVectorsFitSlice = kChannels % kInVec == 0;
  // Filter rows unrolled but at 7x7 with 8-wide vectors, fp32 or 3D (1: rolled; a row's weights are loaded per
  // row either way). H200, session 48: unrolled, the 16-bit 8x16 nb4 sub1x4 vec-8 7x7 shape went to 255
  // registers and spilled once the tile decode took multiply-high divisions; rolled, it runs 4 % below its
  // unrolled time before them, fp32 7x7 rows -5 to +32 %, 16-bit 3D 7x7x7 +10-24 % (the 16-bit vec-4 sub1x8
  // shapes stay unrolled); rolled 3x3 / 5x5 shapes were up to 13 % slower.
  static constexpr int kFilterRowUnroll =
      kFilter == 7 && (kOutVec == 8 || sizeof(T) == 4 || kNDim == 3) ? 1 : kFilter;
  // 2D sub-tiles of several rows at stride 1 walk their input rows once (sub_tile_rows): a row is read and
  // converted once, not once per output row it reaches, at the cost of every row's accumulators live at once. H200,
  // session 52: stride 1 +1-7 %; stride 2 (an input row reaches half as many output rows, its window twice as
  // wide) 0-3 % at 3x3 and 20-37 % slower at 5x5 (128-255 registers); 7x7 and wider sub-tiles not measured.
  static constexpr bool kRowReuse = kNDim == 2 && kSubH > 1 && kStrideH == 1 && kSubH * kSubW * kOutVec <= 64 &&
                                    kFilter <= 5;
};

// How a kernel addresses a channels-last tensor of tensor_h x tensor_w pixels: through a grid of height x width
// pixels whose pixel (y, x) is the tensor's pixel (y * dh, x * dw), counted from the pointer the launch passes.
// A whole tensor is the grid with dh = dw = 1; a dilated problem runs one launch per residue on strided grids of
// the same tensors (depthwise_instance.hpp, residue_grid). Ints, as the kernels held before dilation: 64-bit
// pitches here cost the 7x7 bwd_weight kernel 128 -> 180 registers (ptxas) and 17 % of its speed.
struct PixelGrid {
  int height, width;
  int tensor_h, tensor_w;
  int dh, dw;
};

// Element offset of channel 0 of grid pixel (n, y, x); host too, for tests/kernels/test_dilation_residues.cu.
__host__ __device__ __forceinline__ int64_t pixel_offset(const PixelGrid& g, int n, int y, int x, int channels) {
  return ((int64_t(n) * g.tensor_h + y * g.dh) * g.tensor_w + x * g.dw) * channels;
}

// The depth axis, walked at run time (docs/depthwise.md, "3D"): a 3D tensor is N x depth images of the 2D
// kernels (a grid's image index is n * depth + slice, pixel_offset's n), and slice d of the walked tensor reads,
// through depth tap z, one slice of the read tensor or none (padding; a stride phase without that tap). 2D is
// one slice of each and one tap: depth_source is then 0.
struct DepthMap {
  int walked, read;  // slices of the tensor whose tiles the kernel walks and of the tensor it stages
  int stride, pad, dilation;
  int transposed;  // 0: read = d * stride - pad + z * dilation (fwd X, bwd_weight X); 1: its inverse (bwd_data dY)
};

// The read slice that tap z of walked slice d reads, or -1 when it reads none. Host too, for
// tests/kernels/test_depth_map.cu.
__host__ __device__ __forceinline__ int depth_source(const DepthMap& m, int d, int z) {
  int source = d * m.stride - m.pad + z * m.dilation;
  if (m.transposed != 0) {
    const int t = d + m.pad - z * m.dilation;  // = source * stride
    source = t >= 0 && t % m.stride == 0 ? t / m.stride : -1;
  }
  return source >= 0 && source < m.read ? source : -1;
}

// Bit z set when tap z of walked slice d reads a slice (FilterD <= 32).
__host__ __device__ __forceinline__ unsigned depth_tap_mask(const DepthMap& m, int d, int taps) {
  unsigned mask = 0;
  for (int z = 0; z < taps; ++z) mask |= (depth_source(m, d, z) >= 0 ? 1u : 0u) << z;
  return mask;
}

struct Params {
  const void* input;
  const void* weight;
  void* output;
  int C;
  PixelGrid in, out;
  DepthMap depth;                // walked: output slices, read: input slices
  int tiles_w, tiles_h, slices;  // tiles of one slice: tiles_w * tiles_h * N * output depth
  int tiles;                     // grid = slices * blocks per slice, slice fastest (neighbours share L2 lines)
  FastDivisor by_tiles_w, by_tiles_h;  // tile_place's divisors
  int halo_tma;  // 1: the halo is staged by TMA through the kernel's map (Halo::kTma, whole tensors)
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

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
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

// Pixels of a block's channel slice into shared memory, shared by the three depthwise kernels: Layout::kRows x
// Cols pixels from (y0, x0) of image n of grid `g`, Layout::kChannels channels from c0, InVec-wide copies with
// zero fill outside [0, g.height) x [0, g.width) (padding) and past `channels`, placed as Layout says (column
// residues). The caller commits the cp.async group.
// A thread owns one (column, vector) slot of a row (vector fastest, so a warp reads whole pixels) and copies it
// down the rows, Threads / slots rows apart: the index arithmetic, column bounds and offsets are computed once
// per slot, and each copy costs a row check and two additions (the copy loop is issue-bound otherwise).
template <class Layout, int Cols, int InVec, int Threads, class T>
__device__ inline void stage_pixels(T* dst, const T* src, const PixelGrid& g, int n, int y0, int x0, int channels,
                                    int c0, int tid) {
  constexpr int Rows = Layout::kRows, CB = Layout::kChannels, ColStep = Layout::kColStep;
  // At least one vector a pixel: instances whose in_vec exceeds the slice compile, and is_supported refuses them.
  constexpr unsigned kVecs = CB >= InVec ? CB / InVec : 1;
  constexpr unsigned kSlots = Cols * kVecs;  // copies of one row
  constexpr unsigned kRowGroups = Threads >= int(kSlots) ? Threads / kSlots : 1;  // rows copied at once
  constexpr int kRowStep = int(kRowGroups) * Layout::kRowPitch;  // elements between a slot's rows
  const int64_t step = int64_t(kRowGroups) * g.dh * g.tensor_w * channels;  // between a slot's rows in global
  for (unsigned u = unsigned(tid); u < kRowGroups * kSlots; u += unsigned(Threads)) {
    const unsigned group = u / kSlots, slot = u % kSlots;
    const unsigned x = slot / kVecs, v = slot % kVecs;
    const int gx = x0 + int(x), gc = c0 + int(v) * InVec;
    const bool column = unsigned(gx) < unsigned(g.width) && gc < channels;
    int gy = y0 + int(group);
    int64_t offset = pixel_offset(g, n, gy, gx, channels) + gc;
    T* to = dst + Layout::at(int(group), int(x % ColStep), int(x / ColStep)) + int(v) * InVec;
#pragma unroll 2
    for (int y = int(group); y < Rows; y += int(kRowGroups)) {
      const bool valid = column && unsigned(gy) < unsigned(g.height);
      copy_vector<InVec * int(sizeof(T))>(to, valid ? src + offset : src, valid);
      gy += int(kRowGroups), offset += step, to += kRowStep;
    }
  }
}

// The slice's Taps = FilterD x F x F weights (C, 1, FilterD, F, F, 1) as fp32: read tap-fastest (contiguous),
// stored channel-fastest for OutVec-wide reads; zeros past `channels`.
template <int Taps, int CB, class T>
__device__ inline void stage_weights(float* s_w, const T* weight, int c0, int channels, int tid, int threads) {
  for (int i = tid; i < Taps * CB; i += threads) {
    const int tap = i % Taps, c = i / Taps;
    const int gc = c0 + c;
    s_w[tap * CB + c] = gc < channels ? to_float(weight[int64_t(gc) * Taps + tap]) : 0.f;
  }
}

// A tile of the fwd and bwd_data walks: tile column fastest, then tile row, walked slice d, image n. `image` is
// the walked tensor's image index n * depth + d.
struct TilePlace {
  int tile_w, tile_h, image, n, d;
};
// A persistent block decodes two tiles a step (the one it stages, the one it computes): multiply-high divisions
// (FastDivisor) instead of two run-time integer divisions each.
__device__ inline TilePlace tile_place(int tile, FastDivisor by_tiles_w, FastDivisor by_tiles_h, int depth) {
  uint32_t tile_w = 0, tile_h = 0;
  const int image = int(by_tiles_h.divide(by_tiles_w.divide(uint32_t(tile), tile_w), tile_h));
  return {int(tile_w), int(tile_h), image, image / depth, image % depth};
}

// A block's walk over items first, first + step, ... < last through a ring of staged halos: stage(item, buffer)
// issues one item's cp.async copies (one commit group per item), compute(item, buffer) consumes them. With
// `prefetch` (two buffers) the next item's copies are in flight while this one is computed; without, an item is
// staged into buffer 0 once the previous one is computed. The barrier after compute keeps a buffer from being
// restaged while it is read.
template <class Stage, class Compute>
__device__ __forceinline__ void pipelined_walk(int64_t first, int64_t last, int64_t step, bool prefetch,
                                               Stage&& stage, Compute&& compute) {
  if (first < last) stage(first, 0);
  cp_async_commit();
  int buffer = 0;
  for (int64_t item = first; item < last; item += step) {
    const int64_t target = prefetch ? item + step : item;  // the item staged now (the first one already is)
    if (target != first && target < last) stage(target, prefetch ? buffer ^ 1 : 0);
    cp_async_commit();  // possibly empty: the group count stays one per iteration
    if (prefetch) {
      cp_async_wait<1>();  // all but the newest group, the next item's
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    compute(item, buffer);
    __syncthreads();
    if (prefetch) buffer ^= 1;
  }
}

// Where thread `tid` of a block works: its channel group (fastest: a pixel's NBatch groups are contiguous in smem
// and in gmem) and its sub-tile's column sx and row sy among the tile's ThreadsW x ThreadsH. Where a warp would
// span more than half of a row of sub-tiles, it covers half a row's columns over several rows instead (a band):
// on a tile cut by the tensor's right or bottom edge, whole warps then lie outside and skip their arithmetic
// (a 56-wide tensor in 16-wide tiles: the last tile's right half). Banded only where the lanes of one 128-byte
// shared-memory access still read one row's consecutive positions, as unbanded (no new bank conflicts).
struct ThreadPlace {
  int group, sx, sy;
};
template <class S>
struct WarpBand {
  static constexpr int kPerWarp = 32 / S::kNBatch;  // sub-tiles of a warp
  static constexpr int kWidth = S::kThreadsW / 2;    // sub-tile columns of a band
  static constexpr int kAccessBytes = S::kOutVec * int(sizeof(typename S::T)) < 16
                                          ? S::kOutVec * int(sizeof(typename S::T))
                                          : 16;
  static constexpr bool kBanded = S::kNBatch <= 32 && kWidth >= 1 && kPerWarp > kWidth && kPerWarp % kWidth == 0 &&
                                  S::kThreadsH % (kPerWarp / kWidth) == 0 &&
                                  kWidth * S::kNBatch * kAccessBytes >= 128;
};
template <class S>
__host__ __device__ __forceinline__ ThreadPlace thread_place(int tid) {
  using B = WarpBand<S>;
  const int group = tid % S::kNBatch, spatial = tid / S::kNBatch;
  if constexpr (!B::kBanded) {
    return {group, spatial % S::kThreadsW, spatial / S::kThreadsW};
  } else {
    constexpr int kRows = B::kPerWarp / B::kWidth;  // sub-tile rows of a band
    const int lane = spatial % B::kPerWarp, warp = spatial / B::kPerWarp;
    return {group, warp % 2 * B::kWidth + lane % B::kWidth, warp / 2 * kRows + lane / B::kWidth};
  }
}

// Adds one input slice's F x F taps to one output row r of a fwd thread's sub-tile (2D: the only slice).
// Weight reads are warp broadcasts (every thread of a channel group reads the same address).
template <class S>
__device__ __forceinline__ void fwd_row_taps(float (&acc)[S::kSubW][S::kOutVec], const typename S::T* s_slice,
                                             const float* s_wz, int group, int sx, int sy, int r) {
  using T = typename S::T;
  constexpr int F = S::kFilter, CB = S::kChannels, V = S::kOutVec;
#pragma unroll S::kFilterRowUnroll
  for (int fy = 0; fy < F; ++fy) {
    float w[F][V];
#pragma unroll
    for (int fx = 0; fx < F; ++fx)
#pragma unroll
      for (int v = 0; v < V; ++v) w[fx][v] = s_wz[(fy * F + fx) * CB + group * V + v];
    const T* row = s_slice + ((sy * S::kSubH + r) * S::kStrideH + fy) * S::Halo::kRowPitch + group * V;
    // Each input column of the thread's window is read once per filter row and used by every output column
    // it reaches (register-level reuse along W).
#pragma unroll
    for (int k = 0; k < S::kWindowW; ++k) {
      float xin[V];
      load_floats<V>(row + S::Halo::at(0, k % S::kColStep, sx + k / S::kColStep), xin);
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
}

// Stores a thread's whole SubH x SubW sub-tile of accumulators (the kRowReuse paths) from pixel (y0, x0) of image
// `image` of `grid`, channels from gc, where inside the grid.
template <int SubH, int SubW, int V, class T>
__device__ __forceinline__ void store_sub_tile(T* out, const PixelGrid& grid, int image, int y0, int x0,
                                               int channels, int gc, const float (&acc)[SubH][SubW][V]) {
  if (gc >= channels) return;
#pragma unroll
  for (int r = 0; r < SubH; ++r) {
#pragma unroll
    for (int c = 0; c < SubW; ++c) {
      if (y0 + r < grid.height && x0 + c < grid.width) {
        store_floats<V>(out + pixel_offset(grid, image, y0 + r, x0 + c, channels) + gc, acc[r][c]);
      }
    }
  }
}

// Adds every tap of a thread's whole 2D sub-tile, input row by input row (the kRowReuse paths): a row's window is
// read and converted once, then added to each output row it reaches with that row's filter row of weights. With
// kRotated the filter is turned by 180 degrees: bwd_data at stride 1 is this walk over dY, dX(y, x) taking tap
// (F - 1 - fy, F - 1 - fx) from dY window position (y + fy, x + fx).
template <class S, bool kRotated>
__device__ __forceinline__ void sub_tile_rows(float (&acc)[S::kSubH][S::kSubW][S::kOutVec],
                                              const typename S::T* s_slice, const float* s_w, int group, int sx,
                                              int sy) {
  constexpr int F = S::kFilter, CB = S::kChannels, V = S::kOutVec, SH = S::kStrideH;
  constexpr int kInRows = (S::kSubH - 1) * SH + F;
#pragma unroll
  for (int i = 0; i < kInRows; ++i) {
    const typename S::T* row = s_slice + (sy * S::kSubH * SH + i) * S::Halo::kRowPitch + group * V;
    float xin[S::kWindowW][V];
#pragma unroll
    for (int k = 0; k < S::kWindowW; ++k) {
      load_floats<V>(row + S::Halo::at(0, k % S::kColStep, sx + k / S::kColStep), xin[k]);
    }
#pragma unroll
    for (int r = 0; r < S::kSubH; ++r) {
      const int fy = i - r * SH;
      if (fy < 0 || fy >= F) continue;
      const int wy = kRotated ? F - 1 - fy : fy;
      float w[F][V];
#pragma unroll
      for (int fx = 0; fx < F; ++fx)
#pragma unroll
        for (int v = 0; v < V; ++v) w[fx][v] = s_w[(wy * F + (kRotated ? F - 1 - fx : fx)) * CB + group * V + v];
#pragma unroll
      for (int c = 0; c < S::kSubW; ++c)
#pragma unroll
        for (int fx = 0; fx < F; ++fx)
#pragma unroll
          for (int v = 0; v < V; ++v) acc[r][c][v] = fmaf(w[fx][v], xin[c * S::kStrideW + fx][v], acc[r][c][v]);
    }
  }
}

// One output tile of a fwd block from its staged halo slices `s_in` and weights `s_w`; `image` is the output's
// image index, depth tap z computed when bit z of `taps` is set (a slice staged for it; 3D only).
template <class S>
__device__ __forceinline__ void fwd_tile(const typename S::T* s_in, const float* s_w, const Params& p, int image,
                                         unsigned taps, int oh0, int ow0, int c0, int tid) {
  using T = typename S::T;
  constexpr int CB = S::kChannels, V = S::kOutVec;
  const auto [group, sx, sy] = thread_place<S>(tid);
  // Outside the tensor (a tile cut by its edge) the sub-tile has nothing to compute.
  if (oh0 + sy * S::kSubH >= p.out.height || ow0 + sx * S::kSubW >= p.out.width) return;
  const int gc = c0 + group * V;
  T* out = static_cast<T*>(p.output);
  if constexpr (S::kRowReuse) {
    float acc[S::kSubH][S::kSubW][V] = {};
    sub_tile_rows<S, false>(acc, s_in, s_w, group, sx, sy);
    store_sub_tile(out, p.out, image, oh0 + sy * S::kSubH, ow0 + sx * S::kSubW, p.C, gc, acc);
  } else {
    // One output row of the sub-tile at a time: SubW x OutVec accumulators and one filter row of weights live in
    // registers. The row and depth loops stay rolled: unrolled, the 5x5 / 8-wide sub-tiles exceed nvcc's unroll
    // budget and fall into local memory.
#pragma unroll 1
    for (int r = 0; r < S::kSubH; ++r) {
      float acc[S::kSubW][V];
#pragma unroll
      for (int c = 0; c < S::kSubW; ++c)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[c][v] = 0.f;
      if constexpr (S::kNDim == 2) {
        fwd_row_taps<S>(acc, s_in, s_w, group, sx, sy, r);
      } else {
#pragma unroll 1
        for (int fz = 0; fz < S::kFilterD; ++fz) {
          if ((taps >> fz & 1u) == 0) continue;
          fwd_row_taps<S>(acc, s_in + fz * S::kSliceElements, s_w + fz * S::kFilter * S::kFilter * CB, group, sx,
                          sy, r);
        }
      }
      const int oh = oh0 + sy * S::kSubH + r;
      if (gc < p.C && oh < p.out.height) {
#pragma unroll
        for (int c = 0; c < S::kSubW; ++c) {
          const int ow = ow0 + sx * S::kSubW + c;
          if (ow < p.out.width) {
            store_floats<V>(out + pixel_offset(p.out, image, oh, ow, p.C) + gc, acc[c]);
          }
        }
      }
    }
  }
}

// The FilterD slices of a fwd / bwd_data stage: slice z of `dst` gets the read tensor's slice that depth tap z
// of walked slice t.d reads (DepthMap), through stage_one(dst slice, read image index); taps that read none
// stage nothing (their compute is skipped).
template <class S, class StageOne>
__device__ __forceinline__ void stage_slices(typename S::T* dst, const DepthMap& depth, const TilePlace& t,
                                             StageOne&& stage_one) {
  if constexpr (S::kNDim == 2) {
    stage_one(dst, t.n);
  } else {
#pragma unroll 1
    for (int z = 0; z < S::kFilterD; ++z) {
      const int source = depth_source(depth, t.d, z);
      if (source >= 0) stage_one(dst + z * S::kSliceElements, t.n * depth.read + source);
    }
  }
}

// The block's dynamic shared memory; 128-byte aligned for the halos' TMA boxes.
__device__ __forceinline__ unsigned char* dynamic_smem() {
  extern __shared__ __align__(128) unsigned char smem[];
  return smem;
}

// The fwd and bwd_data block: its channel slice's weights once, then its tiles through pipelined_walk. Block b
// owns slice b % slices and walks tiles b / slices, + blocks per slice, ... (all of them when the launch is not
// persistent: one each). stage_tile(halo, buffer, place, h0, w0, c0) issues a tile's halo copies into stage
// `buffer` at `halo`; compute_tile(halo, buffer, s_w, place, h0, w0, c0) computes the tile whose origin is
// (h0, w0) in walked image place.image (TilePlace).
template <class S, class P, class StageTile, class ComputeTile>
__device__ __forceinline__ void walk_tiles(const P& p, const void* weight, StageTile&& stage_tile,
                                           ComputeTile&& compute_tile) {
  using T = typename S::T;
#if defined(__CUDA_ARCH__)
  // The traits' arch sized the kernel (shared memory): the device pass must target it.
  static_assert(__CUDA_ARCH__ == S::Target::kCudaArch, "compiled for another arch than its traits name (kArch)");
#endif
  unsigned char* smem = dynamic_smem();
  float* s_w = reinterpret_cast<float*>(smem + S::kWeightOffset);  // (FilterD*F*F, CB)
  const auto buffer_of = [&](int buffer) {                           // a halo stage
    return reinterpret_cast<T*>(smem + (buffer == 0 ? 0 : S::kSecondStageOffset));
  };
  const int c0 = int(blockIdx.x) % p.slices * S::kChannels;
  stage_weights<S::kWeightTaps, S::kChannels>(s_w, static_cast<const T*>(weight), c0, p.C, int(threadIdx.x),
                                              S::kThreads);
  const int depth = S::kNDim == 3 ? p.depth.walked : 1;  // 2D: image = n, folded at compile time
  const auto place = [&](int64_t tile) { return tile_place(int(tile), p.by_tiles_w, p.by_tiles_h, depth); };
  pipelined_walk(
      int(blockIdx.x) / p.slices, p.tiles, int(gridDim.x) / p.slices, S::kStages == 2,
      [&](int64_t tile, int buffer) {
        const TilePlace t = place(tile);
        stage_tile(buffer_of(buffer), buffer, t, t.tile_h * S::kTileH, t.tile_w * S::kTileW, c0);
      },
      [&](int64_t tile, int buffer) {
        const TilePlace t = place(tile);
        compute_tile(buffer_of(buffer), buffer, s_w, t, t.tile_h * S::kTileH, t.tile_w * S::kTileW, c0);
      });
}

// Halos by the tensor memory accelerator (2D, whole tensors; Layout::kTma and the launch's halo_tma): per item
// ColStep boxes a halo (Layout::kChannels channels, QW columns at a traversal stride of ColStep, kRows rows), box
// rho at column x0 + rho landing as column residue rho's block, zero-filled outside the tensor and past C as
// cp.async's zero fill. Thread 0 announces a stage's bytes on its barrier (StageBarriers::expect) and issues the
// boxes; every thread waits on the barrier before computing from the stage (pipelined_walk's block barrier after
// an item keeps a stage from being refilled while read). It takes the halo copies' instructions (about a quarter
// of the 16-bit 3x3 forward kernel's, session 48) off the threads.
template <class Layout, class T>
__device__ __forceinline__ void tma_load_pixels(const CUtensorMap* map, uint64_t* barrier, T* dst, int c0, int x0,
                                                int y0, int image) {
#pragma unroll
  for (int rho = 0; rho < Layout::kColStep; ++rho) {
    const int32_t at[5] = {c0, x0 + rho, y0, image, 0};
    sm90::tma_load_5d(map, barrier, dst + rho * Layout::kResiduePitch, at);
  }
}

// One mbarrier a halo stage, in shared memory: thread 0 initialises them (before it issues the first item's
// boxes; the other threads wait on them only after pipelined_walk's first block barrier) and each thread keeps
// the parity of each stage's next completion.
struct StageBarriers {
  uint64_t* barriers;
  uint32_t phases = 0;  // bit b: the parity of stage b's next completion

  __device__ StageBarriers(uint64_t* at, bool used) : barriers(at) {
    if (used && threadIdx.x == 0) {
      sm90::mbarrier_init(&barriers[0], 1);
      sm90::mbarrier_init(&barriers[1], 1);
      sm90::mbarrier_init_fence();
    }
  }
  // Thread 0: the stage's boxes will bring `bytes`.
  __device__ uint64_t* expect(int buffer, uint32_t bytes) const {
    sm90::mbarrier_arrive_expect_tx(&barriers[buffer], bytes);
    return &barriers[buffer];
  }
  // A stage of tile t's `S::Halo` slices from `map` (tma_load_pixels), issued by thread 0: 2D one, 3D each depth
  // slice the depth map has it read (stage_slices), the barrier expecting their boxes' bytes.
  template <class S, class T>
  __device__ void load(int buffer, const CUtensorMap* map, T* halo, const DepthMap& depth, const TilePlace& t,
                       int c0, int x0, int y0) const {
    if (threadIdx.x != 0) return;
    using Layout = typename S::Halo;
    int slices = 1;
    if constexpr (S::kNDim == 3) slices = __popc(depth_tap_mask(depth, t.d, S::kFilterD));
    uint64_t* barrier = expect(buffer, uint32_t(slices) * Layout::kStageBytes);
    stage_slices<S>(halo, depth, t, [&](T* slice, int image) {
      tma_load_pixels<Layout>(map, barrier, slice, c0, x0, y0, image);
    });
  }
  __device__ void wait(int buffer) {
    sm90::mbarrier_wait(&barriers[buffer], phases >> buffer & 1u);
    phases ^= 1u << buffer;
  }
};

template <class Traits>
__global__ void __launch_bounds__(Shape<Traits>::kThreads)
    depthwise_fwd_kernel(Params p, const __grid_constant__ CUtensorMap halo_map) {
  using S = Shape<Traits>;
  using T = typename S::T;
  using Halo = typename S::Halo;
  const bool by_tma = Halo::kTma && p.halo_tma != 0;  // compile-time false where the layout is not TMA's
  StageBarriers stages(reinterpret_cast<uint64_t*>(dynamic_smem() + S::kBarrierOffset), by_tma);
  walk_tiles<S>(
      p, p.weight,
      [&](T* s_in, int buffer, const TilePlace& t, int oh0, int ow0, int c0) {
        const int y0 = oh0 * S::kStrideH - S::kPadH, x0 = ow0 * S::kStrideW - S::kPadW;
        if (by_tma) {
          stages.load<S>(buffer, &halo_map, s_in, p.depth, t, c0, x0, y0);
          return;
        }
        stage_slices<S>(s_in, p.depth, t, [&](T* slice, int image) {
          stage_pixels<Halo, S::kInW, S::kInVec, S::kThreads>(slice, static_cast<const T*>(p.input), p.in, image,
                                                               y0, x0, p.C, c0, int(threadIdx.x));
        });
      },
      [&](const T* s_in, int buffer, const float* s_w, const TilePlace& t, int oh0, int ow0, int c0) {
        if (by_tma) stages.wait(buffer);
        const unsigned taps = S::kNDim == 3 ? depth_tap_mask(p.depth, t.d, S::kFilterD) : 1u;
        fwd_tile<S>(s_in, s_w, p, t.image, taps, oh0, ow0, c0, int(threadIdx.x));
      });
}

}  // namespace tiledispatch::kernels::depthwise
