// The Hopper path's epilogue: each consumer thread stores its fp32 accumulators straight from registers, or,
// for split-K and two-stage backward weight, writes fp32 into the split's own slice of the workspace (reduced
// afterwards in a fixed order: no atomics, bit-identical run to run).
//
// A wgmma accumulator fragment gives the four threads of a quad two adjacent columns each of every 8-column
// block (CuTe's CLayout_64xN). Stored as such, a warp writes 16 of every 32-byte sector. Where the store
// width allows (vector_size_c >= 8 for the output, always for the fp32 workspace) the quad transposes its
// pairs over four consecutive blocks with shuffles, so that each thread holds and stores one whole block:
// 16 bytes (two 16-byte stores for fp32), full sectors, a quarter of the store instructions. A tile computed
// transposed (bwd_weight, Sm90Config::kTransposed) has its contiguous dimension along the fragment's rows
// instead: store_transposed.
#pragma once

#include <cute/tensor.hpp>

#include <cstdint>
#include <type_traits>

#include "tiledispatch/kernels/implicit_gemm_kernel.cuh"

namespace tiledispatch::kernels::sm90 {

// Two adjacent outputs as one register word: packed 16-bit values, or two floats.
template <class Element>
struct OutputPair {
  using Bits = typename VectorBits<2 * int(sizeof(Element))>::type;
  __device__ static Bits pack(float a, float b) {
    alignas(sizeof(Bits)) Element out[2] = {Element(a), Element(b)};
    return *reinterpret_cast<const Bits*>(out);
  }
  __device__ static Element unpack(Bits bits, int which) {
    alignas(sizeof(Bits)) Element out[2];
    *reinterpret_cast<Bits*>(out) = bits;
    return which == 0 ? out[0] : out[1];
  }
};

// The value of `pairs` at a run-time index, by selects (a dynamic register index would go to local memory).
template <class Bits>
__device__ __forceinline__ Bits pick(const Bits (&pairs)[4], int index) {
  const Bits low = index & 1 ? pairs[1] : pairs[0];
  const Bits high = index & 1 ? pairs[3] : pairs[2];
  return index & 2 ? high : low;
}

// Quad transpose: on entry thread q of the quad holds pairs[j] = its pair of block j; on return it holds
// pairs[s] = the pair of thread s in block q, i.e. the 8 columns of block q in order.
template <class Bits>
__device__ __forceinline__ void transpose_quad(Bits (&pairs)[4], int q) {
  Bits out[4];
  CUTE_UNROLL
  for (int r = 0; r < 4; ++r) {
    const int from = (q + r) & 3;  // the thread whose pair of block q arrives in this round
    const Bits sent = pick(pairs, (q - r) & 3);
    const Bits got = r == 0 ? sent : __shfl_sync(0xffffffffu, sent, (int(threadIdx.x) & ~3) | from);
    CUTE_UNROLL
    for (int s = 0; s < 4; ++s) out[s] = from == s ? got : out[s];
  }
  CUTE_UNROLL
  for (int s = 0; s < 4; ++s) pairs[s] = out[s];
}

template <class Cfg>
struct DirectEpilogue {
  using Index = typename Cfg::Index;
  using View = typename Cfg::View;
  using Element = typename Cfg::ElementGlobal;

  template <class ThrMma, class Accum>
  __device__ static void store(const ThrMma& thr_mma, const Accum& accum, const View& view, Index m0, Index n0,
                               Element* gC, float* partial) {
    if constexpr (Cfg::kTransposed) {
      if (partial != nullptr) {
        store_transposed(thr_mma, accum, view, m0, n0, partial);
      } else {
        store_transposed(thr_mma, accum, view, m0, n0, gC);
      }
    } else if (partial != nullptr) {
      store_blocks(thr_mma, accum, view, m0, n0, partial);
    } else if constexpr (Cfg::kVectorC >= 8) {
      store_blocks(thr_mma, accum, view, m0, n0, gC);
    } else {
      store_pairs(thr_mma, accum, view, m0, n0, gC);
    }
  }

 private:
  // Transposed bwd_weight (Cfg::kTransposed): the accumulators hold the tile's transpose, wgmma row r being
  // GEMM column n0 + r (taps*C/G, contiguous in dW) and wgmma column c GEMM row m0 + c (K/G). A thread holds
  // columns c, c + 1 of row r (r even on lanes whose bit 2 is clear), the thread at lane ^ 4 the same columns
  // of row r + 1. One shuffle swaps a value between the two, so that each holds one column of both rows: two
  // elements adjacent in dW, stored as one pair where contiguous and aligned (a warp's stores then cover
  // 16-byte runs, 32-byte ones for the fp32 workspace), else one by one.
  template <class ThrMma, class Accum, class Out>
  __device__ static void store_transposed(const ThrMma& thr_mma, const Accum& accum, const View& view, Index m0,
                                          Index n0, Out* out) {
    using namespace cute;
    constexpr int kBlocks = decltype(size<0, 2>(accum))::value;
    static_assert(decltype(size<0, 0>(accum))::value == 2 && decltype(size<0, 1>(accum))::value == 2,
                  "a wgmma accumulator fragment: column pairs, two rows, 8-column blocks");
    Tensor cC = make_identity_tensor(Shape<Int<Cfg::kMmaM>, Int<Cfg::kMmaN>>{});  // (MMA_M,MMA_N) -> (r,c)
    Tensor tCcC = thr_mma.partition_C(cC);                                       // (MMA,MMA_M,MMA_N)
    const bool lower = get<0>(tCcC(0)) % 2 == 0;  // this thread keeps column c, its partner column c + 1
    CUTE_UNROLL
    for (int nn = 0; nn < size<2>(accum); ++nn) {
      CUTE_UNROLL
      for (int blk = 0; blk < kBlocks; ++blk) {
        const int column = get<1>(tCcC(make_coord(make_coord(0, 0, blk), 0, nn))) + (lower ? 0 : 1);
        const auto info = view.c_prepare(m0 + column);
        CUTE_UNROLL
        for (int mm = 0; mm < size<1>(accum); ++mm) {
          CUTE_UNROLL
          for (int row_half = 0; row_half < 2; ++row_half) {
            const float v0 = accum(make_coord(make_coord(0, row_half, blk), mm, nn));
            const float v1 = accum(make_coord(make_coord(1, row_half, blk), mm, nn));
            const float got = __shfl_xor_sync(0xffffffffu, lower ? v1 : v0, 4);
            const int row = get<0>(tCcC(make_coord(make_coord(0, row_half, blk), mm, nn))) - (lower ? 0 : 1);
            write_pair(view, info, n0 + row, lower ? v0 : got, lower ? got : v1, out);
          }
        }
      }
    }
  }

  // GEMM columns n, n + 1 of one row: one store where they are adjacent and the pair is aligned (vector_size_c
  // >= 2 for the output; the fp32 workspace always), else one by one.
  template <class Out>
  __device__ static void write_pair(const View& view, const typename View::CInfo& info, Index n, float a, float b,
                                    Out* out) {
    using Bits = typename OutputPair<Out>::Bits;
    constexpr bool kPairs = Cfg::kVectorC >= 2 || std::is_same_v<Out, float>;
    Index first = 0, second = 0;
    const bool has_first = view.c_locate(info, n, first), has_second = view.c_locate(info, n + 1, second);
    if (kPairs && has_first && has_second && second == first + 1 &&
        reinterpret_cast<uintptr_t>(out + first) % sizeof(Bits) == 0) {
      *reinterpret_cast<Bits*>(out + first) = OutputPair<Out>::pack(a, b);
      return;
    }
    if (has_first) out[first] = Out(a);
    if (has_second) out[second] = Out(b);
  }

  // One 8-column block per thread and store (accumulator modes ((2 cols, 2 rows, N/8 blocks), MMA_M, MMA_N)).
  template <class ThrMma, class Accum, class Out>
  __device__ static void store_blocks(const ThrMma& thr_mma, const Accum& accum, const View& view, Index m0,
                                      Index n0, Out* out) {
    using namespace cute;
    using Bits = typename OutputPair<Out>::Bits;
    constexpr int kBlocks = decltype(size<0, 2>(accum))::value;
    static_assert(decltype(size<0, 0>(accum))::value == 2 && decltype(size<0, 1>(accum))::value == 2,
                  "a wgmma accumulator fragment: column pairs, two rows, 8-column blocks");
    Tensor cC = make_identity_tensor(Shape<Int<Cfg::kTileM>, Int<Cfg::kTileN>>{});  // (TILE_M,TILE_N) -> (m,n)
    Tensor tCcC = thr_mma.partition_C(cC);                                         // (MMA,MMA_M,MMA_N)
    const int q = int(threadIdx.x) & 3;
    CUTE_UNROLL
    for (int mm = 0; mm < size<1>(accum); ++mm) {
      CUTE_UNROLL
      for (int nn = 0; nn < size<2>(accum); ++nn) {
        CUTE_UNROLL
        for (int row_half = 0; row_half < 2; ++row_half) {
          CUTE_UNROLL
          for (int b0 = 0; b0 < kBlocks; b0 += 4) {
            Bits pairs[4];
            CUTE_UNROLL
            for (int j = 0; j < 4; ++j) {
              const int blk = b0 + j < kBlocks ? b0 + j : b0;  // a last group of fewer than 4 blocks repeats
              pairs[j] = OutputPair<Out>::pack(accum(make_coord(make_coord(0, row_half, blk), mm, nn)),
                                               accum(make_coord(make_coord(1, row_half, blk), mm, nn)));
            }
            transpose_quad(pairs, q);
            if (b0 + q >= kBlocks) continue;
            const auto origin = tCcC(make_coord(make_coord(0, row_half, b0), mm, nn));  // (row, 8*b0 + 2q)
            const int row = get<0>(origin);
            const int col = get<1>(origin) - 2 * q + 8 * q;  // this thread's block after the transpose
            write_block(view, view.c_prepare(m0 + row), n0 + col, pairs, out);
          }
        }
      }
    }
  }

  // 8 consecutive GEMM columns from `n`: one vector where they are contiguous and aligned, else one by one.
  template <class Bits, class Out>
  __device__ static void write_block(const View& view, const typename View::CInfo& info, Index n,
                                     const Bits (&pairs)[4], Out* out) {
    Index first = 0, last = 0;
    if (view.c_locate(info, n, first) && view.c_locate(info, n + 7, last) && last == first + 7 && first % 8 == 0) {
      auto* dst = reinterpret_cast<uint4*>(out + first);
      if constexpr (sizeof(Bits) == 4) {
        dst[0] = make_uint4(pairs[0], pairs[1], pairs[2], pairs[3]);
      } else {
        CUTE_UNROLL
        for (int v = 0; v < 2; ++v) {
          const Bits a = pairs[2 * v], b = pairs[2 * v + 1];
          dst[v] = make_uint4(uint32_t(a), uint32_t(a >> 32), uint32_t(b), uint32_t(b >> 32));
        }
      }
      return;
    }
    CUTE_UNROLL
    for (int c = 0; c < 8; ++c) {
      Index offset = 0;
      if (view.c_locate(info, n + c, offset)) out[offset] = OutputPair<Out>::unpack(pairs[c / 2], c % 2);
    }
  }

  // Two adjacent columns per store (vector_size_c 2 or 4) or one (vector_size_c 1).
  template <class ThrMma, class Accum>
  __device__ static void store_pairs(const ThrMma& thr_mma, const Accum& accum, const View& view, Index m0,
                                     Index n0, Element* gC) {
    using namespace cute;
    Tensor cC = make_identity_tensor(Shape<Int<Cfg::kTileM>, Int<Cfg::kTileN>>{});
    Tensor tCcC = thr_mma.partition_C(cC);
    static_assert(decltype(size(tCcC))::value == decltype(size(accum))::value, "accumulator partition");
    CUTE_UNROLL
    for (int i = 0; i < size(accum); i += 2) {
      const int row = get<0>(tCcC(i));
      const int col = get<1>(tCcC(i));
      const auto info = view.c_prepare(m0 + row);
      Index offset = 0, offset_next = 0;
      const bool first = view.c_locate(info, n0 + col, offset);
      const bool second = view.c_locate(info, n0 + col + 1, offset_next);
      if (Cfg::kVectorC >= 2 && first && second && offset_next == offset + 1 && offset % 2 == 0) {
        *reinterpret_cast<typename OutputPair<Element>::Bits*>(gC + offset) =
            OutputPair<Element>::pack(accum(i), accum(i + 1));
      } else {
        if (first) gC[offset] = Element(accum(i));
        if (second) gC[offset_next] = Element(accum(i + 1));
      }
    }
  }
};

}  // namespace tiledispatch::kernels::sm90
