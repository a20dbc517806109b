// Depthwise backward direct convolutions (2D and 3D, G = C = K, channels-last dX/X N(D)HWGC, W GK(Z)YXC =
// (C, 1, (Z,) Y, X, 1), dY N(D)HWGK; docs/depthwise.md). 3D: bwd_data stages the FilterD dY slices a dX slice
// reads through the inverse depth map (as the forward kernel stages input slices); a bwd_weight block computes
// one depth tap's F x F weights (blockIdx.y) over every dY slice whose X slice that tap reads. Both reuse the
// forward kernel's block structure (depthwise_kernel.cuh): a block owns a slice of NBatch * OutVec channels,
// NBatch channel groups of threads each cover the block's tile, a thread a SubH x SubW sub-tile for OutVec
// channels, and halos are staged with cp.async (zero fill = padding).
//
// bwd_data (dX = dY (*) flipped W, strides as phases). A dX index i with i + pad = q * s + r receives the taps
// f = r, r + s, ... < F, tap f from dY index (i + pad - f) / s = q - (f - r) / s. The block's tile and each
// thread's sub-tile start on multiples of the stride (SubH % StrideH == 0), so the phase r of every pixel of a
// sub-tile, and with it its taps, is a compile-time constant: a pixel multiplies exactly the taps that reach a
// dY pixel, never a zero of the strided dY grid.
//
//   gmem dY --(2D: TMA; else cp.async InVec-wide along C; zero fill outside dY)--> smem dY halo (Halo)
//   gmem W  --(converted to fp32)-----------------------------------> smem weights (F*F, CB)
//   smem    --(OutVec-wide, one filter row in registers)------------> fp32 accumulators (SubW, OutVec), one row
//   accumulators --(converted, OutVec-wide stores)------------------> gmem dX
//
// bwd_weight (dW[c, tap] = sum over n, output pixels of dY * X). Deterministic: a block walks a fixed range of
// (image, tile) items for its channel slice (with kStagePrefetch, staging the next item's halos while it computes
// this one) and keeps F*F*OutVec fp32 accumulators per thread; at the end the
// threads of a channel group are summed by a fixed xor-butterfly per warp and then warp by warp in order, and
// the block writes one partial row per (chunk, tap) to the workspace. A second kernel sums the chunks of each
// (tap, channel) in a fixed order and converts. No float atomics: results are bit-identical run to run.
//
//   gmem X  --(2D: TMA, else cp.async)--> smem X halo (XHalo), as the forward input halo
//   gmem dY --(2D: TMA, else cp.async)--> smem dY tile (DyTile), columns in SubW residues
//   smem    --> fp32 accumulators (F, F, OutVec) --> shuffles + smem --> workspace (chunks, F*F, slices*CB)
//   workspace --(fixed-order sum over chunks)--> gmem dW
#pragma once

#include <climits>
#include <cstdint>

#include "tiledispatch/kernels/depthwise_kernel.cuh"

namespace tiledispatch::kernels::depthwise {

// --- bwd_data geometry along one axis (pure, shared with generators/validity.py's depthwise_smem_bytes) ---

// The lowest dY offset, relative to i0 / s for a dX origin i0 that is a multiple of s, that any dX index of
// [i0, i0 + s) reads (phases without taps, r >= F, read nothing).
constexpr int bwd_data_dy_lo(int filter, int stride, int pad) {
  int lo = INT_MAX;
  for (int i = 0; i < stride; ++i) {
    const int r = (i + pad) % stride;
    if (r >= filter) continue;
    const int f_max = r + (filter - 1 - r) / stride * stride;
    lo = (i + pad - f_max) / stride < lo ? (i + pad - f_max) / stride : lo;  // exact division
  }
  return lo;
}

// The highest dY offset (relative to i0 / s) that any dX index of [i0 + extent - s, i0 + extent) reads.
constexpr int bwd_data_dy_hi(int extent, int filter, int stride, int pad) {
  int hi = INT_MIN;
  for (int i = extent - stride; i < extent; ++i) {
    const int r = (i + pad) % stride;
    if (r >= filter) continue;
    hi = (i + pad - r) / stride > hi ? (i + pad - r) / stride : hi;
  }
  return hi;
}

template <class Traits>
struct BwdDataShape {
  using Target = ArchTraits<Traits::kArch>;
  using T = typename ElementOf<Traits::kDataType>::type;
  static constexpr int kTileH = Traits::kTileH, kTileW = Traits::kTileW, kFilter = Traits::kFilter;
  static constexpr int kStrideH = Traits::kStrideH, kStrideW = Traits::kStrideW;
  static constexpr int kPadH = Traits::kPadH, kPadW = Traits::kPadW;
  static constexpr int kNBatch = Traits::kNBatch, kSubH = Traits::kSubH, kSubW = Traits::kSubW;
  static constexpr int kInVec = Traits::kInVec, kOutVec = Traits::kOutVec;
  static_assert(kTileH % kSubH == 0 && kTileW % kSubW == 0, "the sub-tile must divide the tile");
  static_assert(kSubH % kStrideH == 0 && kSubW % kStrideW == 0,
                "bwd_data sub-tiles are whole stride phases (the taps of each pixel are compile-time)");
  static_assert(kInVec >= 1 && kOutVec >= 1 && (kInVec & (kInVec - 1)) == 0 && (kOutVec & (kOutVec - 1)) == 0,
                "vector widths are powers of two");
  static_assert(kInVec * sizeof(T) <= Target::kMaxVectorBytes && kOutVec * sizeof(T) <= Target::kMaxVectorBytes,
                "vectors are at most two of the arch's widest accesses (32 bytes)");

  static constexpr int kChannels = kNBatch * kOutVec;
  static constexpr int kThreadsW = kTileW / kSubW, kThreadsH = kTileH / kSubH;
  static constexpr int kThreads = kThreadsW * kThreadsH * kNBatch;
  static constexpr int kLoH = bwd_data_dy_lo(kFilter, kStrideH, kPadH);
  static constexpr int kLoW = bwd_data_dy_lo(kFilter, kStrideW, kPadW);
  static constexpr int kHaloH = bwd_data_dy_hi(kTileH, kFilter, kStrideH, kPadH) - kLoH + 1;
  static constexpr int kHaloW = bwd_data_dy_hi(kTileW, kFilter, kStrideW, kPadW) - kLoW + 1;
  static constexpr int kColStep = kSubW / kStrideW;  // dY columns between neighbouring threads
  static constexpr int kQW = ceil_div(kHaloW, kColStep);
  static constexpr int kWindowW = bwd_data_dy_hi(kSubW, kFilter, kStrideW, kPadW) - kLoW + 1;
  // 3D: a stage holds the FilterD dY slices a dX slice reads, the weights all FilterD x F x F taps.
  static constexpr int kNDim = Traits::kNDim, kFilterD = depth_taps(kNDim, kFilter);
  using Halo = PixelLayout<T, kHaloH, kChannels, kColStep, kQW, halo_by_tma<T>(kNDim, kInVec)>;  // a dY slice
  static constexpr int kSliceBytes = Halo::kBytes;
  static constexpr int kSliceElements = kSliceBytes / int(sizeof(T));
  static constexpr int kInputBytes = kFilterD * kSliceBytes;
  static constexpr int kWeightTaps = kFilterD * kFilter * kFilter;
  static constexpr int kWeightBytes = kWeightTaps * kChannels * int(sizeof(float));
  // [dY stage 0][weights][two stage barriers][dY stage 1], as the forward kernel's shared memory.
  static constexpr int kWeightOffset = kInputBytes, kBarrierOffset = kInputBytes + align16(kWeightBytes);
  static constexpr int kSmemBytes = kBarrierOffset + kStageBarrierBytes;
  static constexpr int kSecondStageOffset = align128(kSmemBytes);
  static constexpr int kStages = ring_stages(kSecondStageOffset, kInputBytes, Target::kSmemPerBlockBytes);
  static constexpr int kRingSmemBytes = kStages == 2 ? kSecondStageOffset + kInputBytes : kSmemBytes;
  static constexpr bool kVectorsFitSlice = kChannels % kInVec == 0;
  // Filter rows unrolled (1: rolled; the weights are reloaded per row either way). Measured on the H200
  // (docs/performance.md, session 48): fp32 2D unrolled, the 7x7 sub2x4 vec-4 shape exceeded nvcc's unroll budget
  // and put its weights in local memory (2.4 KB a thread, 0.6 TFLOP/s; rolled 14.7, other fp32 2D shapes level
  // or faster), and 16-bit 3D 7x7x7 runs 11-28 % faster rolled; every other shape 2-18 % slower rolled.
  static constexpr int kFilterRowUnroll =
      (sizeof(T) == 4 && kNDim == 2) || (sizeof(T) == 2 && kNDim == 3 && kFilter == 7) ? 1 : kFilter;
  // As the forward kernel's Shape::kRowReuse: 2D stride-1 sub-tiles walk their dY rows once (sub_tile_rows, the
  // filter turned by 180 degrees). H200, session 52: 16-bit +2-15 % (sub2x2 +28-52 %), fp32 3x3 +2-6 %, fp32 5x5
  // 10 % slower (the row loop it replaces stays rolled there, kFilterRowUnroll), so fp32 walks 3x3 only.
  static constexpr bool kRowReuse = kNDim == 2 && kSubH > 1 && kStrideH == 1 && kStrideW == 1 &&
                                    kSubH * kSubW * kOutVec <= 64 && kFilter <= (sizeof(T) == 4 ? 3 : 5);
};

template <class Traits>
struct BwdWeightShape {
  using Target = ArchTraits<Traits::kArch>;
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
  static_assert(32 % kNBatch == 0, "a warp holds whole channel-group sets (the butterfly reduction's lanes)");

  static constexpr int kChannels = kNBatch * kOutVec;
  static constexpr int kThreadsW = kTileW / kSubW, kThreadsH = kTileH / kSubH;
  static constexpr int kThreads = kThreadsW * kThreadsH * kNBatch;  // threads with pixels
  static constexpr int kLaunchThreads = ceil_div(kThreads, 32) * 32;  // whole warps for the shuffles
  static constexpr int kWarps = kLaunchThreads / 32;
  static constexpr int kTaps = kFilter * kFilter;  // of one depth tap: a block computes one (blockIdx.y)
  static constexpr int kNDim = Traits::kNDim, kFilterD = depth_taps(kNDim, kFilter);
  static constexpr int kWeightTaps = kFilterD * kTaps;  // per channel of dW and of a workspace chunk
  static constexpr int kInH = (kTileH - 1) * kStrideH + kFilter;
  static constexpr int kInW = (kTileW - 1) * kStrideW + kFilter;
  static constexpr int kColStep = kSubW * kStrideW;
  static constexpr int kQW = ceil_div(kInW, kColStep);
  static constexpr int kWindowW = (kSubW - 1) * kStrideW + kFilter;
  static constexpr int kWindowH = (kSubH - 1) * kStrideH + kFilter;  // X rows of a thread's window
  // The X halo as the forward input halo; the dY tile's columns in SubW residues of ThreadsW positions, so that
  // the threads of a row read consecutive positions. A 3D block stages 2D slices (one depth tap), by TMA where a
  // vector is 16 bytes (halo_by_tma).
  using XHalo = PixelLayout<T, kInH, kChannels, kColStep, kQW, halo_by_tma<T>(kNDim, kInVec)>;
  using DyTile = PixelLayout<T, kTileH, kChannels, kSubW, kThreadsW, halo_by_tma<T>(kNDim, kInVec)>;
  static constexpr bool kTma = XHalo::kTma && DyTile::kTma;
  static constexpr int kInputBytes = XHalo::kBytes;
  static constexpr int kDyBytes = DyTile::kBytes;
  static constexpr int kPartialBytes = kWarps * kTaps * kChannels * int(sizeof(float));
  // [X stage 0][dY stage 0][partials][two stage barriers][X stage 1][dY stage 1]; kSmemBytes (one stage) is what
  // the configuration must fit, the second stage is added when it fits too.
  static constexpr int kPartialOffset = kInputBytes + kDyBytes;
  static constexpr int kBarrierOffset = kPartialOffset + align16(kPartialBytes);
  static constexpr int kSmemBytes = kBarrierOffset + kStageBarrierBytes;
  static constexpr int kSecondStageOffset = align128(kSmemBytes);
  static constexpr int kStages = ring_stages(kSecondStageOffset, kInputBytes + kDyBytes, Target::kSmemPerBlockBytes);
  static constexpr int kRingSmemBytes = kStages == 2 ? kSecondStageOffset + kInputBytes + kDyBytes : kSmemBytes;
  static constexpr int kAccumulators = kTaps * kOutVec;  // fp32 registers per thread
  static constexpr bool kVectorsFitSlice = kChannels % kInVec == 0;
};

// The shape of an instance's kernel, by direction (generated traits name kDirection).
template <class Traits, ConvDirection D = Traits::kDirection>
struct ShapeOf {
  using type = Shape<Traits>;
};
template <class Traits>
struct ShapeOf<Traits, ConvDirection::kBwdData> {
  using type = BwdDataShape<Traits>;
};
template <class Traits>
struct ShapeOf<Traits, ConvDirection::kBwdWeight> {
  using type = BwdWeightShape<Traits>;
};

struct BwdDataParams {
  const void* dy;
  const void* weight;
  void* dx;
  int C;
  PixelGrid dy_grid, dx_grid;  // dY (the forward output, read) and dX (the forward input, written)
  DepthMap depth;                // walked: dX slices, read: dY slices, transposed
  int tiles_w, tiles_h, slices;  // over dX; tiles of one slice: tiles_w * tiles_h * N * dX depth
  int tiles;                     // grid = slices * blocks per slice, slice fastest (as the forward kernel's)
  FastDivisor by_tiles_w, by_tiles_h;  // tile_place's divisors
  int halo_tma;  // 1: the dY halo is staged by TMA through the kernel's map (Halo::kTma, whole tensors)
};

// Adds one dY slice's F x F taps to dX row (qr, phase ry) of a bwd_data thread's sub-tile (2D: the only slice).
// ry is an unrolled loop index at every call: the phase's filter rows are compile-time.
template <class S>
__device__ __forceinline__ void bwd_data_row_taps(float (&acc)[S::kSubW][S::kOutVec], const typename S::T* s_slice,
                                                  const float* s_wz, int group, int sx, int sy, int qr, int ry) {
  using T = typename S::T;
  constexpr int F = S::kFilter, CB = S::kChannels, V = S::kOutVec;
  constexpr int SH = S::kStrideH, SW = S::kStrideW;
  const T* dy_base = s_slice + group * V;
#pragma unroll S::kFilterRowUnroll
  for (int fy = 0; fy < F; ++fy) {
    if ((ry + S::kPadH - fy) % SH != 0) continue;  // filter row fy does not reach this row's phase
    float w[F][V];
#pragma unroll
    for (int fx = 0; fx < F; ++fx)
#pragma unroll
      for (int v = 0; v < V; ++v) w[fx][v] = s_wz[(fy * F + fx) * CB + group * V + v];
    const int dy_row = sy * (S::kSubH / SH) + qr + (ry + S::kPadH - fy) / SH - S::kLoH;
    const T* row = dy_base + dy_row * S::Halo::kRowPitch;
#pragma unroll
    for (int k = 0; k < S::kWindowW; ++k) {
      // Column c takes dY column k (relative to its window) through tap fx = c + pad - s*(k + lo); a column k no
      // pixel's tap reaches is never read.
      bool used = false;
#pragma unroll
      for (int c = 0; c < S::kSubW; ++c) {
        const int fx = c + S::kPadW - SW * (k + S::kLoW);
        used = used || (fx >= 0 && fx < F);
      }
      if (!used) continue;
      float g[V];
      load_floats<V>(row + S::Halo::at(0, k % S::kColStep, sx + k / S::kColStep), g);
#pragma unroll
      for (int c = 0; c < S::kSubW; ++c) {
        const int fx = c + S::kPadW - SW * (k + S::kLoW);
        if (fx >= 0 && fx < F) {
#pragma unroll
          for (int v = 0; v < V; ++v) acc[c][v] = fmaf(w[fx][v], g[v], acc[c][v]);
        }
      }
    }
  }
}

// One dX tile of a bwd_data block from its staged dY halo slices and weights; `image` is dX's image index,
// depth tap z computed when bit z of `taps` is set (3D only).
template <class S>
__device__ __forceinline__ void bwd_data_tile(const typename S::T* s_dy, const float* s_w, const BwdDataParams& p,
                                              int image, unsigned taps, int ih0, int iw0, int c0, int tid) {
  using T = typename S::T;
  constexpr int CB = S::kChannels, V = S::kOutVec, SH = S::kStrideH;
  const auto [group, sx, sy] = thread_place<S>(tid);
  if (ih0 + sy * S::kSubH >= p.dx_grid.height || iw0 + sx * S::kSubW >= p.dx_grid.width) return;
  const int gc = c0 + group * V;
  T* dx = static_cast<T*>(p.dx);
  if constexpr (S::kRowReuse) {
    float acc[S::kSubH][S::kSubW][V] = {};
    sub_tile_rows<S, true>(acc, s_dy, s_w, group, sx, sy);  // stride 1: the forward walk, filter turned
    store_sub_tile(dx, p.dx_grid, image, ih0 + sy * S::kSubH, iw0 + sx * S::kSubW, p.C, gc, acc);
  } else {
    // Rows in groups of SH: the phase ry of a row, hence its filter rows, is compile-time; the group and depth
    // loops stay rolled (code size, as in the forward kernel).
#pragma unroll 1
    for (int qr = 0; qr < S::kSubH / SH; ++qr) {
#pragma unroll
      for (int ry = 0; ry < SH; ++ry) {
        float acc[S::kSubW][V];
#pragma unroll
        for (int c = 0; c < S::kSubW; ++c)
#pragma unroll
          for (int v = 0; v < V; ++v) acc[c][v] = 0.f;
        if constexpr (S::kNDim == 2) {
          bwd_data_row_taps<S>(acc, s_dy, s_w, group, sx, sy, qr, ry);
        } else {
#pragma unroll 1
          for (int fz = 0; fz < S::kFilterD; ++fz) {
            if ((taps >> fz & 1u) == 0) continue;
            bwd_data_row_taps<S>(acc, s_dy + fz * S::kSliceElements, s_w + fz * S::kFilter * S::kFilter * CB, group,
                                 sx, sy, qr, ry);
          }
        }
        const int ih = ih0 + sy * S::kSubH + qr * SH + ry;
        if (gc < p.C && ih < p.dx_grid.height) {
#pragma unroll
          for (int c = 0; c < S::kSubW; ++c) {
            const int iw = iw0 + sx * S::kSubW + c;
            if (iw < p.dx_grid.width) {
              store_floats<V>(dx + pixel_offset(p.dx_grid, image, ih, iw, p.C) + gc, acc[c]);
            }
          }
        }
      }
    }
  }
}

// Launched and walked as the forward kernel (walk_tiles), over dX tiles: their origins are stride multiples, and
// the dY halo starts at origin / stride + lo.
// The dY halo goes by TMA as the forward input halo does (tma_load_pixels; BwdDataParams::halo_tma).
template <class Traits>
__global__ void __launch_bounds__(BwdDataShape<Traits>::kThreads)
    depthwise_bwd_data_kernel(BwdDataParams p, const __grid_constant__ CUtensorMap halo_map) {
  using S = BwdDataShape<Traits>;
  using T = typename S::T;
  using Halo = typename S::Halo;
  const bool by_tma = Halo::kTma && p.halo_tma != 0;  // compile-time false where the layout is not TMA's
  StageBarriers stages(reinterpret_cast<uint64_t*>(dynamic_smem() + S::kBarrierOffset), by_tma);
  walk_tiles<S>(
      p, p.weight,
      [&](T* s_dy, int buffer, const TilePlace& t, int ih0, int iw0, int c0) {
        const int y0 = ih0 / S::kStrideH + S::kLoH, x0 = iw0 / S::kStrideW + S::kLoW;
        if (by_tma) {
          stages.load<S>(buffer, &halo_map, s_dy, p.depth, t, c0, x0, y0);
          return;
        }
        stage_slices<S>(s_dy, p.depth, t, [&](T* slice, int image) {
          stage_pixels<Halo, S::kHaloW, S::kInVec, S::kThreads>(slice, static_cast<const T*>(p.dy), p.dy_grid, image,
                                                                 y0, x0, p.C, c0, int(threadIdx.x));
        });
      },
      [&](const T* s_dy, int buffer, const float* s_w, const TilePlace& t, int ih0, int iw0, int c0) {
        if (by_tma) stages.wait(buffer);
        const unsigned taps = S::kNDim == 3 ? depth_tap_mask(p.depth, t.d, S::kFilterD) : 1u;
        bwd_data_tile<S>(s_dy, s_w, p, t.image, taps, ih0, iw0, c0, int(threadIdx.x));
      });
}

struct BwdWeightParams {
  const void* x;
  const void* dy;
  float* partials;  // (chunks, FilterD*F*F, slices * NBatch * OutVec channels)
  int C;
  PixelGrid x_grid, dy_grid;
  DepthMap depth;  // walked: dY slices, read: X slices; a block computes the depth tap blockIdx.y
  int tiles_w, tiles_h, slices, chunks;
  int staging;    // kStagePrefetch | kStageTma bits
  int64_t items;  // N * dY depth * tiles_h * tiles_w; chunk k walks items [k * items / chunks, (k + 1) * ...)
};
// Kept at 128 bytes: ptxas gave the 2D kernels 128 -> 151 registers (3x3, vec 8) with 8 bytes more.
static_assert(sizeof(BwdWeightParams) <= 128, "bwd_weight parameters past 128 bytes cost the kernels registers");
// BwdWeightParams::staging: two halo stages (the next item staged while this one is computed); the X halo and the
// dY tile by TMA through the kernel's maps (XHalo / DyTile::kTma, whole tensors; tma_load_pixels).
constexpr int kStagePrefetch = 1, kStageTma = 2;

template <class Traits>
__global__ void __launch_bounds__(BwdWeightShape<Traits>::kLaunchThreads)
    depthwise_bwd_weight_kernel(BwdWeightParams p, const __grid_constant__ CUtensorMap x_map,
                                const __grid_constant__ CUtensorMap dy_map) {
  using S = BwdWeightShape<Traits>;
  using T = typename S::T;
#if defined(__CUDA_ARCH__)
  static_assert(__CUDA_ARCH__ == S::Target::kCudaArch, "compiled for another arch than its traits name (kArch)");
#endif
  constexpr int F = S::kFilter, CB = S::kChannels, V = S::kOutVec, NB = S::kNBatch;
  constexpr int SH = S::kStrideH, SW = S::kStrideW;
  unsigned char* smem = dynamic_smem();
  float* s_part = reinterpret_cast<float*>(smem + S::kPartialOffset);  // (kWarps, F*F, CB)
  const auto s_x = [&](int buffer) {                                   // S::XHalo
    return reinterpret_cast<T*>(smem + (buffer == 0 ? 0 : S::kSecondStageOffset));
  };
  const auto s_dy = [&](int buffer) {  // S::DyTile
    return reinterpret_cast<T*>(smem + (buffer == 0 ? 0 : S::kSecondStageOffset) + S::kInputBytes);
  };
  using XHalo = typename S::XHalo;
  using DyTile = typename S::DyTile;
  const bool by_tma = S::kTma && (p.staging & kStageTma) != 0;  // compile-time false without TMA's layout
  StageBarriers stages(reinterpret_cast<uint64_t*>(smem + S::kBarrierOffset), by_tma);

  const int slice = int(blockIdx.x) % p.slices;
  const int chunk = int(blockIdx.x) / p.slices;
  const int fz = S::kNDim == 3 ? int(blockIdx.y) : 0;  // the depth tap whose F x F weights the block reduces
  const int c0 = slice * CB;
  const int tid = int(threadIdx.x);
  const ThreadPlace place = thread_place<S>(tid);  // named members: the lambdas below capture them (C++17)
  const int group = place.group, sx = place.sx, sy = place.sy;
  const bool computes = tid < S::kThreads;
  const T* x_in = static_cast<const T*>(p.x);
  const T* dy_in = static_cast<const T*>(p.dy);

  float acc[F][F][V];
#pragma unroll
  for (int fy = 0; fy < F; ++fy)
#pragma unroll
    for (int fx = 0; fx < F; ++fx)
#pragma unroll
      for (int v = 0; v < V; ++v) acc[fy][fx][v] = 0.f;

  const int64_t first = int64_t(chunk) * p.items / p.chunks, last = int64_t(chunk + 1) * p.items / p.chunks;
  // Bit b of `idle` marks the item staged in buffer b as one this thread adds nothing from, for its compute to
  // skip: its sub-tile lies outside dY (a tile cut by dY's edge), or (3D) depth tap fz reads no X slice.
  unsigned idle = 0;
  pipelined_walk(
      first, last, 1, (p.staging & kStagePrefetch) != 0,
      [&](int64_t item, int buffer) {
        const int tile_w = int(item % p.tiles_w);
        const int tile_h = int(item / p.tiles_w % p.tiles_h);
        const int image = int(item / p.tiles_w / p.tiles_h);  // of dY: n (2D), n * depth + d (3D)
        const int oh0 = tile_h * S::kTileH, ow0 = tile_w * S::kTileW;
        const bool outside = oh0 + sy * S::kSubH >= p.dy_grid.height || ow0 + sx * S::kSubW >= p.dy_grid.width;
        idle = outside ? idle | 1u << buffer : idle & ~(1u << buffer);
        int x_slice = image;
        if constexpr (S::kNDim == 3) {
          const int source = depth_source(p.depth, image % p.depth.walked, fz);
          if (source < 0) {
            idle |= 1u << buffer;
            if (by_tma && tid == 0) stages.expect(buffer, 0);  // nothing to stage: the phase completes at once
            return;
          }
          x_slice = image / p.depth.walked * p.depth.read + source;
        }
        const int y0 = oh0 * SH - S::kPadH, x0 = ow0 * SW - S::kPadW;
        if (by_tma) {
          if (tid == 0) {
            uint64_t* barrier = stages.expect(buffer, XHalo::kStageBytes + DyTile::kStageBytes);
            tma_load_pixels<XHalo>(&x_map, barrier, s_x(buffer), c0, x0, y0, x_slice);
            tma_load_pixels<DyTile>(&dy_map, barrier, s_dy(buffer), c0, ow0, oh0, image);
          }
          return;
        }
        stage_pixels<XHalo, S::kInW, S::kInVec, S::kLaunchThreads>(s_x(buffer), x_in, p.x_grid, x_slice, y0, x0, p.C,
                                                                    c0, tid);
        stage_pixels<DyTile, S::kTileW, S::kInVec, S::kLaunchThreads>(s_dy(buffer), dy_in, p.dy_grid, image, oh0,
                                                                      ow0, p.C, c0, tid);
      },
      [&](int64_t /*item*/, int buffer) {
        if (!computes) return;
        if (by_tma) stages.wait(buffer);  // every computing thread, idle or not: the parities stay in step
        if ((idle >> buffer & 1u) != 0) return;
        const T* x_stage = s_x(buffer);
        const T* dy_stage = s_dy(buffer);
        // X-row order: each staged X vector of the thread's window is loaded and converted once and added to
        // every (dY row, tap) it feeds; dY row r is converted when its first X row (r * SH) comes up and stays in
        // registers for its F rows. Per (fy, fx) the products still come in (r, c) order: a thread's sums are
        // those of the dY-row order.
        float g[S::kSubH][S::kSubW][V];
#pragma unroll
        for (int j = 0; j < S::kWindowH; ++j) {
          if (j % SH == 0 && j / SH < S::kSubH) {
            const T* dy_row = dy_stage + (sy * S::kSubH + j / SH) * DyTile::kRowPitch + group * V;
#pragma unroll
            for (int c = 0; c < S::kSubW; ++c) load_floats<V>(dy_row + DyTile::at(0, c, sx), g[j / SH][c]);
          }
          const T* row = x_stage + (sy * S::kSubH * SH + j) * XHalo::kRowPitch + group * V;
#pragma unroll
          for (int k = 0; k < S::kWindowW; ++k) {
            float xin[V];
            load_floats<V>(row + XHalo::at(0, k % S::kColStep, sx + k / S::kColStep), xin);
#pragma unroll
            for (int r = 0; r < S::kSubH; ++r) {
              const int fy = j - r * SH;
              if (fy < 0 || fy >= F) continue;
#pragma unroll
              for (int c = 0; c < S::kSubW; ++c) {
                const int fx = k - c * SW;
                if (fx >= 0 && fx < F) {
#pragma unroll
                  for (int v = 0; v < V; ++v) acc[fy][fx][v] = fmaf(g[r][c][v], xin[v], acc[fy][fx][v]);
                }
              }
            }
          }
        }
      });

  // Fixed-order reduction: within a warp, lanes of one channel group are lane % NB; the xor butterfly over the
  // other lane bits leaves every lane with the same, order-fixed sum. Lane `group` (< NB) stores it.
  const int lane = tid % 32, warp = tid / 32;
#pragma unroll
  for (int fy = 0; fy < F; ++fy)
#pragma unroll
    for (int fx = 0; fx < F; ++fx)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        float value = acc[fy][fx][v];
#pragma unroll
        for (int offset = NB; offset < 32; offset *= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
        if (lane < NB) s_part[(warp * S::kTaps + fy * F + fx) * CB + lane * V + v] = value;
      }
  __syncthreads();
  for (int i = tid; i < S::kTaps * CB; i += S::kLaunchThreads) {
    float sum = 0.f;
#pragma unroll 1
    for (int w = 0; w < S::kWarps; ++w) sum += s_part[w * S::kTaps * CB + i];
    const int tap = i / CB, c = i % CB;
    p.partials[(int64_t(chunk) * S::kWeightTaps + fz * S::kTaps + tap) * (p.slices * CB) + c0 + c] = sum;
  }
}

// dW[c, tap] = the sum of the chunks' partials in chunk order: 32 channels x 32 lanes per block, lane j adding
// chunks j, j + 32, ... in turn, then lane sums added in lane order. Grid (ceil(C / 32), Taps = FilterD*F*F).
constexpr int kReduceLanes = 32;

template <class T, int Taps>
__global__ void __launch_bounds__(32 * kReduceLanes)
    depthwise_bwd_weight_reduce_kernel(const float* partials, T* dw, int C, int padded_c, int chunks) {
  __shared__ float lanes[kReduceLanes][33];
  asm volatile("griddepcontrol.wait;" ::: "memory");  // launched dependent on the kernel writing the chunks
  const int c = int(blockIdx.x) * 32 + int(threadIdx.x);
  const int tap = int(blockIdx.y);
  float sum = 0.f;
  if (c < C) {
    for (int k = int(threadIdx.y); k < chunks; k += kReduceLanes) {
      sum += partials[(int64_t(k) * Taps + tap) * padded_c + c];
    }
  }
  lanes[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    float total = 0.f;
#pragma unroll 1
    for (int j = 0; j < kReduceLanes; ++j) total += lanes[j][threadIdx.x];
    dw[int64_t(c) * Taps + tap] = from_float<T>(total);
  }
}

}  // namespace tiledispatch::kernels::depthwise
