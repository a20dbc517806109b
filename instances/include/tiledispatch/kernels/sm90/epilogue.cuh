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
#include <cstring>
#include <type_traits>
#include <utility>

#include "tiledispatch/kernels/implicit_gemm_kernel.cuh"
#include "tiledispatch/kernels/sm90/tma.hpp"

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

// 8 consecutive GEMM columns from `n` of the row `info` describes: one 16-byte store where they are contiguous
// and aligned, else one by one. `pairs`: the columns as four pairs.
template <class View, class Index, class Bits, class Out>
__device__ __forceinline__ void write_block(const View& view, const typename View::CInfo& info, Index n,
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

// Views whose rows can carry the zeros of tap-less stride phases (BwdDataView::c_siblings).
template <class View, class = void>
struct HasSiblings : std::false_type {};
template <class View>
struct HasSiblings<View, std::void_t<decltype(std::declval<const typename View::CInfo&>().siblings)>>
    : std::true_type {};

// Zeros at the tap-less phases' pixels beside 8 consecutive GEMM columns from `n` of the row `info` describes
// (ConvShape::zero_siblings): one 16-byte store each where the columns are contiguous and aligned (so is every
// neighbour: zero_siblings needs C a multiple of 8), else one by one.
template <class View, class Index, class Out>
__device__ __forceinline__ void zero_siblings_of_block(const View& view, const typename View::CInfo& info, Index n,
                                                       Out* out) {
  Index first = 0, last = 0;
  if (view.c_locate(info, n, first) && view.c_locate(info, n + 7, last) && last == first + 7 && first % 8 == 0) {
    view.c_siblings(info, [&](Index delta) {
      *reinterpret_cast<uint4*>(out + first + delta) = make_uint4(0u, 0u, 0u, 0u);
    });
    return;
  }
#pragma unroll 1
  for (int c = 0; c < 8; ++c) {
    Index offset = 0;
    if (view.c_locate(info, n + c, offset)) view.c_siblings(info, [&](Index delta) { out[offset + delta] = Out(0); });
  }
}

// The staged epilogue (Sm90Config::kStagedEpilogue: fwd and bwd_data, 16-bit outputs, 16-byte stores). A
// consumer warpgroup stores its tile kEpilogueColumns columns at a time through its own shared memory: each
// warp writes its accumulators as 8x8 matrices with stmatrix (the wgmma fragment is stmatrix's register
// layout), the warpgroup synchronises on its named barrier, and each thread stores 16-byte chunks of whole rows,
// a warp covering 128 contiguous bytes of each of 4 rows. The 16-byte chunks of a staged row are XOR-swizzled
// as TMA swizzles rows of that width (chunk_offset). Each row's output address (View::CInfo) is computed once
// per tile, by one thread, into the row's slot after the values.
// With `c_map` (Cfg::kTmaStoreC, where the host found the output a matrix of the GEMM's rows) one thread stores
// each staged 64-row block by TMA instead: the staged rows are already TMA's swizzled boxes, the stores
// run asynchronously while the warpgroup goes on, and only a rewrite of the staging waits for their reads.
template <class Cfg>
struct StagedEpilogue {
  using Index = typename Cfg::Index;
  using View = typename Cfg::View;
  using Element = typename Cfg::ElementGlobal;
  using CInfo = typename View::CInfo;
  static constexpr int kRows = Cfg::kWarpgroupMmaM;
  static constexpr int kColumns = Cfg::kEpilogueColumns;
  static constexpr int kChunks = kColumns / 8;  // 16-byte chunks of a staged row
  static constexpr int kSlices = Cfg::kWarpgroupMmaN / kColumns;
  static constexpr int kRowBytes = kColumns * int(sizeof(Element));
  static constexpr size_t kValueBytes = size_t(kRows) * kColumns * sizeof(Element);
  static_assert(sizeof(CInfo) <= Cfg::kEpilogueRowInfoBytes, "a row's output address fits its slot");
  static_assert(kChunks % 2 == 0 && kRows % 64 == 0, "stmatrix x4 covers two 8-column blocks of 16 rows");

  // TMA's swizzle of kRowBytes-wide rows (32, 64 or 128 bytes, from a 1024-byte boundary): address bits 4..
  // XOR bits 7.., so that the 8 rows of an 8x8 matrix, and the chunks of a row, fall in different banks.
  __device__ static uint32_t chunk_offset(int row, int chunk) {
    const uint32_t bytes = uint32_t(row * kRowBytes + chunk * 16);
    return bytes ^ (((bytes >> 7) & uint32_t(kChunks - 1)) << 4);
  }

  // `staging`: this warpgroup's shared memory (Cfg::kEpilogueWarpgroupBytes), `warpgroup` its index among
  // the CTA's consumer warpgroups (its named barrier is 1 + warpgroup); `zero_row`: Cfg::kZeroRowBytes of zeros
  // in shared memory (bwd_data).
  template <class ThrMma, class Accum>
  __device__ static void store(const ThrMma& thr_mma, const Accum& accum, const View& view, Index m0, Index n0,
                               Element* gC, unsigned char* staging, int warpgroup, const CUtensorMap* c_map,
                               uint32_t zero_row) {
    using namespace cute;
    static_assert(decltype(size<0, 2>(accum))::value * 8 == Cfg::kWarpgroupMmaN &&
                      decltype(size<1>(accum))::value * 64 == kRows && decltype(size<2>(accum))::value == 1,
                  "a warpgroup's wgmma fragment: (column pairs, two rows, 8-column blocks), 64-row blocks");
    const int thread = int(threadIdx.x) % 128, lane = thread % 32, warp = thread / 32;
    const uint32_t barrier = 1u + uint32_t(warpgroup);
    // Where the warpgroup's 64-row blocks (staged rows 64*mm ...) and columns lie in the tile: this thread's
    // first accumulator of block mm sits at its row 16*warp + lane/4 and column 2*(lane%4). (With warpgroups
    // along M a warpgroup's blocks alternate with the other's.)
    Tensor cC = make_identity_tensor(Shape<Int<Cfg::kTileM>, Int<Cfg::kTileN>>{});
    Tensor tCcC = thr_mma.partition_C(cC);
    int block_row[kRows / 64];
    CUTE_UNROLL
    for (int mm = 0; mm < kRows / 64; ++mm) {
      block_row[mm] = get<0>(tCcC(make_coord(make_coord(0, 0, 0), mm, 0))) - 16 * warp - lane / 4;
    }
    const int col0 = get<1>(tCcC(0)) - 2 * (lane % 4);
    auto* rows = reinterpret_cast<CInfo*>(staging + kValueBytes);
    const uint32_t values = uint32_t(__cvta_generic_to_shared(staging));
    const uint32_t info_base = values + uint32_t(kValueBytes);
    const bool by_tma = Cfg::kTmaStoreC && c_map != nullptr;
    const auto staging_free = [&] {  // the warpgroup's reads of the staging, and TMA's, are done
      if constexpr (Cfg::kTmaStoreC) {
        if (by_tma && thread == 0) tma_store_wait_read();
      }
      sync(barrier);
    };
    staging_free();
    if (!by_tma) {
      CUTE_UNROLL
      for (int mm = 0; mm < kRows / 64; ++mm) {
        if (thread < 64) rows[64 * mm + thread] = view.c_prepare(m0 + block_row[mm] + thread);
      }
    }
    CUTE_UNROLL
    for (int slice = 0; slice < kSlices; ++slice) {
      if (slice > 0) staging_free();
      CUTE_UNROLL
      for (int mm = 0; mm < kRows / 64; ++mm) {
        CUTE_UNROLL
        for (int b = 0; b < kChunks; b += 2) {
          // matrices (rows 0-7, block b), (rows 8-15, b), (0-7, b + 1), (8-15, b + 1) of the warp's 16 rows
          uint32_t r[4];
          CUTE_UNROLL
          for (int j = 0; j < 4; ++j) {
            const int blk = slice * kChunks + b + j / 2;
            r[j] = OutputPair<Element>::pack(accum(make_coord(make_coord(0, j % 2, blk), mm, 0)),
                                              accum(make_coord(make_coord(1, j % 2, blk), mm, 0)));
          }
          const int matrix = lane / 8;  // this lane gives the address of row lane % 8 of that matrix
          const int row = 64 * mm + 16 * warp + 8 * (matrix % 2) + lane % 8;
          asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                           values + chunk_offset(row, b + matrix / 2)),
                       "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                       : "memory");
        }
      }
      if constexpr (Cfg::kTmaStoreC) {
        if (by_tma) {
          fence_smem_for_tma();
          sync(barrier);
          const Index n = n0 + Index(col0 + slice * kColumns);
          if (thread == 0 && n < view.s.gemm_n) {
            const int32_t column = int32_t(view.c_column_base() + n);
            CUTE_UNROLL
            for (int mm = 0; mm < kRows / 64; ++mm) {
              tma_store_2d(c_map, staging + size_t(64 * mm) * kRowBytes, column, int32_t(m0 + block_row[mm]));
            }
            tma_store_commit();
          }
          continue;
        }
      }
      sync(barrier);
      CUTE_UNROLL
      for (int i = 0; i < kRows * kChunks / 128; ++i) {
        const int index = thread + 128 * i, row = index / kChunks, chunk = index % kChunks;
        // explicit shared loads (load_shared): generic ones of the staging cost the stride phases 3-8 %
        uint32_t pairs[4];
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(pairs[0]), "=r"(pairs[1]), "=r"(pairs[2]), "=r"(pairs[3])
                     : "r"(values + chunk_offset(row, chunk)));
        write_block(view, load_shared(info_base + uint32_t(row * sizeof(CInfo))),
                    n0 + Index(col0 + slice * kColumns + chunk * 8), pairs, gC);
      }
    }
    // A stride phase's rows that also carry the tap-less phases' zeros, after the values, so that every other
    // launch runs the code it had: where no stride exceeds 2 and the warpgroup's columns of a row are whole
    // 16-byte chunks, one bulk copy of the row of zeros (`zero_row`, Cfg::kZeroRowBytes) per row and sibling,
    // issued by a thread a row (kRows may exceed the warpgroup's threads): asynchronous, so the warpgroup goes on
    // to its next tile at once (three quarters of dX on a 1x1 stride-2 layer); else the same 16-byte chunks of
    // every staged row, in a rolled loop.
    if constexpr (HasSiblings<View>::value) {
      if (!by_tma && view.s.zero_siblings) {
        const Index n = n0 + Index(col0);
        const Index count = cute::min(view.s.gemm_n - n, Index(Cfg::kWarpgroupMmaN));
        if (Cfg::kZeroRowBytes > 0 && view.c_siblings_in_cube() && count > 0 && count % 8 == 0 &&
            view.s.C % 8 == 0 && (view.c_column_base() + n) % 8 == 0) {
          CUTE_UNROLL
          for (int row = thread; row < kRows; row += kWarpgroupThreads) {
            const CInfo info = load_shared(info_base + uint32_t(row * sizeof(CInfo)));
            Index first = 0;
            if (view.c_locate(info, n, first)) {
              const uint32_t bits = view.c_sibling_bits(info);
              CUTE_UNROLL
              for (int b = 1; b < 8; ++b) {
                if ((bits >> b) & 1u) {
                  bulk_store(gC + first + view.c_sibling_offset(b), zero_row, uint32_t(count) * sizeof(Element));
                }
              }
              tma_store_commit();
            }
          }
        } else {
#pragma unroll 1
          for (int i = 0; i < kSlices * kRows * kChunks / 128; ++i) {
            const int index = thread + 128 * i, row = index / kChunks % kRows, chunk = index % kChunks;
            const int slice = index / (kChunks * kRows);
            zero_siblings_of_block(view, load_shared(info_base + uint32_t(row * sizeof(CInfo))),
                                   n0 + Index(col0 + slice * kColumns + chunk * 8), gC);
          }
        }
      }
    }
  }

 private:
  // A row's output address from its slot by shared-memory loads (the staging's pointer reaches the kernel
  // through an integer, so plain loads of it are generic ones).
  __device__ static CInfo load_shared(uint32_t address) {
    static_assert(sizeof(CInfo) % 4 == 0, "a row's slot is whole words");
    uint32_t words[sizeof(CInfo) / 4];
    CUTE_UNROLL
    for (int i = 0; i < int(sizeof(CInfo) / 4); ++i) {
      asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(words[i]) : "r"(address + 4u * uint32_t(i)));
    }
    CInfo info;
    memcpy(&info, words, sizeof(CInfo));
    return info;
  }
  __device__ static void sync(uint32_t barrier) { asm volatile("bar.sync %0, 128;\n" ::"r"(barrier) : "memory"); }
};

template <class Cfg>
struct DirectEpilogue {
  using Index = typename Cfg::Index;
  using View = typename Cfg::View;
  using Element = typename Cfg::ElementGlobal;

  // `staging`, `warpgroup`: the staged epilogue's shared memory and warpgroup (StagedEpilogue), where the
  // configuration has it and the results go to the output; `zero_row`: the shared address of its row of zeros.
  template <class ThrMma, class Accum>
  __device__ static void store(const ThrMma& thr_mma, const Accum& accum, const View& view, Index m0, Index n0,
                               Element* gC, float* partial, unsigned char* staging, int warpgroup,
                               const CUtensorMap* c_map, uint32_t zero_row) {
    if constexpr (Cfg::kStagedEpilogue) {
      if (partial == nullptr) {
        StagedEpilogue<Cfg>::store(thr_mma, accum, view, m0, n0, gC, staging, warpgroup, c_map, zero_row);
        return;
      }
    }
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
  // 16-byte runs, 32-byte ones for the fp32 workspace), else one by one. A thread's GEMM columns are the same in
  // every 8-column block, so their places in dW (View::c_column) are found once.
  template <class ThrMma, class Accum, class Out>
  __device__ static void store_transposed(const ThrMma& thr_mma, const Accum& accum, const View& view, Index m0,
                                          Index n0, Out* out) {
    using namespace cute;
    constexpr int kBlocks = decltype(size<0, 2>(accum))::value;
    constexpr int kRowBlocks = decltype(size<1>(accum))::value;
    static_assert(decltype(size<0, 0>(accum))::value == 2 && decltype(size<0, 1>(accum))::value == 2,
                  "a wgmma accumulator fragment: column pairs, two rows, 8-column blocks");
    Tensor cC = make_identity_tensor(Shape<Int<Cfg::kMmaM>, Int<Cfg::kMmaN>>{});  // (MMA_M,MMA_N) -> (r,c)
    Tensor tCcC = thr_mma.partition_C(cC);                                       // (MMA,MMA_M,MMA_N)
    const bool lower = get<0>(tCcC(0)) % 2 == 0;  // this thread keeps column c, its partner column c + 1
    typename View::CColumn first[kRowBlocks][2], second[kRowBlocks][2];
    CUTE_UNROLL
    for (int mm = 0; mm < kRowBlocks; ++mm) {
      CUTE_UNROLL
      for (int row_half = 0; row_half < 2; ++row_half) {
        const int row = get<0>(tCcC(make_coord(make_coord(0, row_half, 0), mm, 0))) - (lower ? 0 : 1);
        first[mm][row_half] = view.c_column(n0 + row);
        second[mm][row_half] = view.c_column(n0 + row + 1);
      }
    }
    CUTE_UNROLL
    for (int nn = 0; nn < size<2>(accum); ++nn) {
      CUTE_UNROLL
      for (int blk = 0; blk < kBlocks; ++blk) {
        const int column = get<1>(tCcC(make_coord(make_coord(0, 0, blk), 0, nn))) + (lower ? 0 : 1);
        const auto info = view.c_prepare(m0 + column);
        CUTE_UNROLL
        for (int mm = 0; mm < kRowBlocks; ++mm) {
          CUTE_UNROLL
          for (int row_half = 0; row_half < 2; ++row_half) {
            const float v0 = accum(make_coord(make_coord(0, row_half, blk), mm, nn));
            const float v1 = accum(make_coord(make_coord(1, row_half, blk), mm, nn));
            const float got = __shfl_xor_sync(0xffffffffu, lower ? v1 : v0, 4);
            write_pair(view, info, first[mm][row_half], second[mm][row_half], lower ? v0 : got, lower ? got : v1,
                       out);
          }
        }
      }
    }
  }

  // GEMM columns `a_column`, `b_column` (adjacent) of one row: one store where they are adjacent in dW and the
  // pair is aligned (vector_size_c >= 2 for the output; the fp32 workspace always), else one by one.
  template <class Column, class Out>
  __device__ static void write_pair(const View& view, const typename View::CInfo& info, const Column& a_column,
                                    const Column& b_column, float a, float b, Out* out) {
    using Bits = typename OutputPair<Out>::Bits;
    constexpr bool kPairs = Cfg::kVectorC >= 2 || std::is_same_v<Out, float>;
    Index first = 0, second = 0;
    const bool has_first = view.c_locate(info, a_column, first), has_second = view.c_locate(info, b_column, second);
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
