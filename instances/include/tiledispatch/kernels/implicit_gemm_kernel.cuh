// The one implicit-GEMM kernel template behind every fwd / bwd_data / bwd_weight instance.
//
//   gmem --(gathers: cp.async zero-fill, or ld.global -> st.shared)--> smem (swizzled, PIPE stages)
//        --(ldmatrix / lds)--> registers --(mma.sync)--> fp32 accumulators
//        --(wave_k > 1: K groups reduced through smem)--> epilogue (cshuffle: via smem, vector stores;
//          default: straight from registers) --> output, or an fp32 workspace (split-K, two-stage)
//
// What each pipeline and scheduler does is in docs/pipelines.md; the direction-specific addressing is in
// conv_gemm_view.hpp. Nothing here names a concrete instruction: the config (implicit_gemm_config.hpp) does.
#pragma once

#include <cute/arch/copy_sm80.hpp>
#include <cute/tensor.hpp>

#include <cstdint>

#include "tiledispatch/kernels/conv_gemm_view.hpp"
#include "tiledispatch/kernels/implicit_gemm_config.hpp"
#include "tiledispatch/kernels/tf32.cuh"

namespace tiledispatch::kernels {

template <class Index>
struct ImplicitGemmParams {
  ConvShape<Index> shape;
  const void* a;   // the tensors of the direction's roles (runtime/direction.hpp)
  const void* b;
  void* c;
  float* partial;  // fp32 workspace when results are reduced afterwards (split-K, two-stage), else nullptr
  int64_t partial_slice;  // elements between the workspace slices of consecutive splits
  int k_batch;     // splits of GEMM K (blockIdx.z = group_block * k_batch + split)
  int tiles_m;
};

// Moves one vector of V elements from global to shared memory. 4-, 8- and 16-byte vectors use cp.async with
// zero-fill (src-size 0 when !valid: padding and out-of-range elements become zeros without a global read);
// 2-byte vectors (16-bit types, vector size 1) have no cp.async form and go through a register.
template <int Bytes> struct VectorBits;
template <> struct VectorBits<2> { using type = uint16_t; };
template <> struct VectorBits<4> { using type = uint32_t; };
template <> struct VectorBits<8> { using type = uint64_t; };
template <> struct VectorBits<16> { using type = cute::uint128_t; };

template <int Bytes, bool Async>
__device__ __forceinline__ void copy_vector(const void* src, void* dst, bool valid) {
  using V = typename VectorBits<Bytes>::type;
  if constexpr (Async && Bytes == 16) {
    cute::SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<V>::copy(*static_cast<const V*>(src), *static_cast<V*>(dst), valid);
  } else if constexpr (Async && Bytes >= 4) {
    cute::SM80_CP_ASYNC_CACHEALWAYS_ZFILL<V>::copy(*static_cast<const V*>(src), *static_cast<V*>(dst), valid);
  } else {
    *static_cast<V*>(dst) = valid ? *static_cast<const V*>(src) : V{};
  }
}

// fp32 bits held in a tfloat32_t -> the nearest TF32 value (tf32.cuh).
__device__ __forceinline__ cute::tfloat32_t round_to_tf32(cute::tfloat32_t raw_fp32) {
  return cute::tfloat32_t::bitcast(tf32_bits(__uint_as_float(raw_fp32.raw())));
}

// The gather of one operand tile (MN, K) into shared memory. Chunks of V contiguous elements are numbered
// contiguous-dimension first (coalesced), thread t owns chunks t, t + T, t + 2T, ...; the MN-dependent part
// of each chunk's address is prepared once, the K-dependent part per tile.
template <class Cfg, bool KMajor, int TileMN, int V, class Info>
struct OperandGather {
  using Index = typename Cfg::Index;
  using Element = typename Cfg::ElementGlobal;
  static constexpr int kTileK = Cfg::kTileK;
  static constexpr int kThreads = Cfg::kThreads;
  static constexpr int kBytes = V * Cfg::kElemBytes;
  static constexpr int kContig = KMajor ? kTileK : TileMN;
  static constexpr int kStrided = KMajor ? TileMN : kTileK;
  static constexpr int kChunksPerLine = kContig / V;
  static constexpr int kChunks = kChunksPerLine * kStrided;
  static constexpr int kIters = (kChunks + kThreads - 1) / kThreads;
  static_assert(kContig % V == 0, "operand tile: vector size must divide the contiguous tile extent");
  using Vec = typename VectorBits<kBytes>::type;

  Info info[kIters];
  int k_in_tile[kIters];
  int mn_in_tile[kIters];
  Vec staged[kIters];  // register path (basic_v1/v2, 2-byte vectors)
  bool staged_valid[kIters];

  template <class PrepareFn>
  __device__ void init(int tid, Index mn0, PrepareFn&& prepare) {
    CUTE_UNROLL
    for (int i = 0; i < kIters; ++i) {
      const int chunk = tid + i * kThreads;
      const int line = chunk / kChunksPerLine;
      const int offset = (chunk % kChunksPerLine) * V;
      mn_in_tile[i] = KMajor ? line : offset;
      k_in_tile[i] = KMajor ? offset : line;
      info[i] = prepare(mn0 + (chunk < kChunks ? mn_in_tile[i] : 0));
    }
  }

  static __device__ bool owns(int tid, int i) { return kChunks % kThreads == 0 || tid + i * kThreads < kChunks; }

  // Issues chunks [begin, end) of the tile at GEMM-K offset k0 into `stage` of `smem` ((MN, K, PIPE)).
  template <bool Async, class SmemTensor, class LocateFn>
  __device__ void copy(int tid, int begin, int end, Index k0, const Element* gmem, SmemTensor& smem, int stage,
                       LocateFn&& locate) {
    CUTE_UNROLL
    for (int i = 0; i < kIters; ++i) {
      if (i < begin || i >= end || !owns(tid, i)) continue;
      Index offset = 0;
      const bool valid = locate(info[i], k0 + k_in_tile[i], offset);
      copy_vector<kBytes, Async>(valid ? gmem + offset : gmem, &smem(mn_in_tile[i], k_in_tile[i], stage), valid);
    }
  }

  // Register path: load chunks [begin, end) into registers now, store them to shared memory later.
  template <class LocateFn>
  __device__ void load(int tid, int begin, int end, Index k0, const Element* gmem, LocateFn&& locate) {
    CUTE_UNROLL
    for (int i = 0; i < kIters; ++i) {
      if (i < begin || i >= end || !owns(tid, i)) continue;
      Index offset = 0;
      const bool valid = locate(info[i], k0 + k_in_tile[i], offset);
      staged[i] = valid ? *reinterpret_cast<const Vec*>(gmem + offset) : Vec{};
    }
  }
  template <class SmemTensor>
  __device__ void store(int tid, SmemTensor& smem, int stage) {
    CUTE_UNROLL
    for (int i = 0; i < kIters; ++i) {
      if (!owns(tid, i)) continue;
      *reinterpret_cast<Vec*>(&smem(mn_in_tile[i], k_in_tile[i], stage)) = staged[i];
    }
  }
};

// One block's share of the GEMM: the (TILE_M, TILE_N) tile (tile_m, tile_n) of merged-group block
// `group_block`, reduced over GEMM-K tiles [kt_begin, kt_end). The result goes through the epilogue to the
// output, or as fp32 to `partial` (its split's own workspace slice, plain stores: the slices are reduced in
// a fixed order afterwards), or, when `tile_partial` is set (a stream-K piece that does not cover the whole
// K range), as raw fp32 accumulators to that dense (TILE_M, TILE_N) row-major slot.
template <class Index>
struct TileWork {
  int tile_m, tile_n;
  Index group_block;
  Index kt_begin, kt_end;
  float* partial;
  float* tile_partial;
};

template <class Cfg>
__device__ __forceinline__ void gemm_tile(const ImplicitGemmParams<typename Cfg::Index>& params,
                                          unsigned char* smem_raw, const TileWork<typename Cfg::Index>& work) {
  using namespace cute;
  using Index = typename Cfg::Index;
  using View = typename Cfg::View;
  using ElementGlobal = typename Cfg::ElementGlobal;
  using ElementMma = typename Cfg::ElementMma;
  constexpr int kTileM = Cfg::kTileM, kTileN = Cfg::kTileN, kTileK = Cfg::kTileK;
  constexpr int kThreads = Cfg::kThreads;
  constexpr int kStages = Cfg::kStages;
  constexpr PipelineStrategy kStrategy = Cfg::kStrategy;

  // ---- preconditions: a badly assembled traits struct does not compile ---------------------------------
  static_assert(Cfg::kImplemented, "instantiate the kernel only for implemented configurations");
#if defined(__CUDA_ARCH__)
  // The traits' arch sized this kernel (shared memory, accumulators): the device pass must target it.
  static_assert(__CUDA_ARCH__ == Cfg::Target::kCudaArch, "compiled for another arch than its traits name (kArch)");
#endif
  static_assert(kThreads <= Cfg::Target::kMaxThreadsPerBlock,
                "block: 64 * wave_m * wave_n * wave_k threads must not exceed the arch's threads per block");
  static_assert(kTileM % (Cfg::kWaveM * Cfg::kWarpTileM) == 0, "tile_m must be a multiple of wave_m * warp_tile_m");
  static_assert(kTileN % (Cfg::kWaveN * Cfg::kWarpTileN) == 0, "tile_n must be a multiple of wave_n * warp_tile_n");
  static_assert(kTileK % (Cfg::kWaveK * Cfg::kWarpTileK) == 0, "tile_k must be a multiple of wave_k * warp_tile_k");
  static_assert(Cfg::kWarpM % 16 == 0 && Cfg::kWarpN % 8 == 0,
                "a wave's warp tile must split into two warps of whole 16x8 MMA atoms");
  static_assert(Cfg::kWarpTileK % Cfg::kAtomK == 0, "warp_tile_k must be a multiple of the MMA atom k");
  static_assert(Cfg::kVectorA <= Cfg::kMaxVector && Cfg::kVectorB <= Cfg::kMaxVector &&
                    Cfg::kVectorC <= Cfg::kMaxVector,
                "vector sizes: at most 16 elements for fp16/bf16, 8 for fp32 (32 bytes: two accesses)");
  static_assert(Cfg::kSmemBytes <= Cfg::kSmemLimitBytes, "shared memory exceeds the target arch's limit");
  static_assert(size(typename Cfg::TiledMma{}) == Cfg::kMmaThreads, "tiled MMA thread count");

  const int tid = int(threadIdx.x);

  // ---- block coordinates --------------------------------------------------------------------------------
  const View view{params.shape, work.group_block * Cfg::kGroupsToMerge};
  const Index m0 = Index(work.tile_m) * kTileM;
  const Index n0 = Index(work.tile_n) * kTileN;
  const Index kt_begin = work.kt_begin;
  const int num_k_tiles = work.kt_end > kt_begin ? int(work.kt_end - kt_begin) : 0;

  // ---- shared memory --------------------------------------------------------------------------------------
  ElementMma* smem_a = reinterpret_cast<ElementMma*>(smem_raw);
  ElementMma* smem_b = smem_a + cosize(typename Cfg::SmemLayoutA{});
  Tensor sA = make_tensor(make_smem_ptr(smem_a), typename Cfg::SmemLayoutA{});  // (TILE_M,TILE_K,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(smem_b), typename Cfg::SmemLayoutB{});  // (TILE_N,TILE_K,PIPE)

  // ---- global -> shared gathers ---------------------------------------------------------------------------
  const auto* gA = static_cast<const ElementGlobal*>(params.a);
  const auto* gB = static_cast<const ElementGlobal*>(params.b);
  using GatherA = OperandGather<Cfg, Cfg::kAKMajor, kTileM, Cfg::kAccessA, typename View::AInfo>;
  using GatherB = OperandGather<Cfg, Cfg::kBKMajor, kTileN, Cfg::kAccessB, typename View::BInfo>;
  GatherA gather_a;
  GatherB gather_b;
  gather_a.init(tid, m0, [&](Index m) { return view.a_prepare(m); });
  gather_b.init(tid, n0, [&](Index n) { return view.b_prepare(n); });
  auto locate_a = [&](const typename View::AInfo& i, Index k, Index& off) { return view.a_locate(i, k, off); };
  auto locate_b = [&](const typename View::BInfo& i, Index k, Index& off) { return view.b_locate(i, k, off); };
  constexpr bool kAsyncA = kStrategy.async_copy && GatherA::kBytes >= 4;
  constexpr bool kAsyncB = kStrategy.async_copy && GatherB::kBytes >= 4;

  // Copies the part `slice` of `slices` of a tile (intrawave spreads a tile's copies over its k-steps).
  auto copy_tile = [&](int k_tile, int stage, int slice, int slices) {
    const Index k0 = (kt_begin + k_tile) * kTileK;
    gather_a.template copy<kAsyncA>(tid, slice * GatherA::kIters / slices, (slice + 1) * GatherA::kIters / slices,
                                    k0, gA, sA, stage, locate_a);
    gather_b.template copy<kAsyncB>(tid, slice * GatherB::kIters / slices, (slice + 1) * GatherB::kIters / slices,
                                    k0, gB, sB, stage, locate_b);
  };
  auto load_tile_to_registers = [&](int k_tile, int slice, int slices) {
    const Index k0 = (kt_begin + k_tile) * kTileK;
    gather_a.load(tid, slice * GatherA::kIters / slices, (slice + 1) * GatherA::kIters / slices, k0, gA, locate_a);
    gather_b.load(tid, slice * GatherB::kIters / slices, (slice + 1) * GatherB::kIters / slices, k0, gB, locate_b);
  };

  // ---- MMA partitions: K group `k_group` reduces columns [k_group*GROUP_K, (k_group+1)*GROUP_K) of a tile --
  typename Cfg::TiledMma tiled_mma;
  const int mma_tid = tid % Cfg::kMmaThreads;
  const int k_group = tid / Cfg::kMmaThreads;
  auto thr_mma = tiled_mma.get_slice(mma_tid);
  Tensor sA_groups = flat_divide(sA, make_tile(Int<kTileM>{}, Int<Cfg::kGroupK>{}));  // (TILE_M,GROUP_K,1,WAVE_K,PIPE)
  Tensor sB_groups = flat_divide(sB, make_tile(Int<kTileN>{}, Int<Cfg::kGroupK>{}));  // (TILE_N,GROUP_K,1,WAVE_K,PIPE)
  Tensor sA_k = sA_groups(_, _, 0, k_group, _);  // (TILE_M,GROUP_K,PIPE)
  Tensor sB_k = sB_groups(_, _, 0, k_group, _);  // (TILE_N,GROUP_K,PIPE)

  Tensor tCrA = thr_mma.partition_fragment_A(sA_k(_, _, 0));  // (MMA,MMA_M,MMA_K)
  Tensor tCrB = thr_mma.partition_fragment_B(sB_k(_, _, 0));  // (MMA,MMA_N,MMA_K)
  Tensor tCrC = partition_fragment_C(tiled_mma, Shape<Int<kTileM>, Int<kTileN>>{});  // (MMA,MMA_M,MMA_N)
  clear(tCrC);

  auto s2r_copy_a = make_tiled_copy_A(typename Cfg::SmemCopyAtomA{}, tiled_mma);
  auto s2r_thr_a = s2r_copy_a.get_slice(mma_tid);
  Tensor tXsA = s2r_thr_a.partition_S(sA_k);  // (CPY,CPY_M,CPY_K,PIPE)
  Tensor tXrA = s2r_thr_a.retile_D(tCrA);     // (CPY,CPY_M,CPY_K)
  auto s2r_copy_b = make_tiled_copy_B(typename Cfg::SmemCopyAtomB{}, tiled_mma);
  auto s2r_thr_b = s2r_copy_b.get_slice(mma_tid);
  Tensor tXsB = s2r_thr_b.partition_S(sB_k);  // (CPY,CPY_N,CPY_K,PIPE)
  Tensor tXrB = s2r_thr_b.retile_D(tCrB);     // (CPY,CPY_N,CPY_K)
  static_assert(decltype(size<2>(tCrA))::value == Cfg::kSteps * Cfg::kAtomsPerStep, "MMA_K per K group");
  static_assert(decltype(size<2>(tXrA))::value == decltype(size<2>(tCrA))::value, "ldmatrix K blocks");
  static_assert(decltype(size<2>(tXrB))::value == decltype(size<2>(tCrB))::value, "ldmatrix K blocks");

  // Accumulator fold (Cfg::kFoldPlace, docs/pipelines.md "Accumulation"): every kFoldTiles k-tiles the MMA
  // accumulators are added into an outer fp32 accumulator with round-to-nearest FADDs and cleared, which
  // bounds the chain of truncating tensor-core additions. Shared-memory slots: accumulator i of thread t at
  // i * THREADS + t (consecutive threads, consecutive banks), each thread touching only its own.
  constexpr FoldPlace kFoldPlace = Cfg::kFoldPlace;
  Tensor tCrOuter = make_fragment_like(tCrC);  // (MMA,MMA_M,MMA_N), used when folding in registers
  float* fold_slots = reinterpret_cast<float*>(smem_raw + Cfg::kFoldSmemOffset);
  if constexpr (kFoldPlace == FoldPlace::kRegisters) {
    clear(tCrOuter);
  } else if constexpr (kFoldPlace == FoldPlace::kSharedMemory) {
    CUTE_UNROLL
    for (int i = 0; i < size(tCrC); ++i) fold_slots[i * kThreads + tid] = 0.f;
  }
  auto fold_after_tile = [&](int kt) {
    if constexpr (kFoldPlace != FoldPlace::kNone) {
      if ((kt + 1) % Cfg::kFoldTiles != 0) return;
      CUTE_UNROLL
      for (int i = 0; i < size(tCrC); ++i) {
        if constexpr (kFoldPlace == FoldPlace::kRegisters) {
          tCrOuter(i) += tCrC(i);
        } else {
          fold_slots[i * kThreads + tid] += tCrC(i);
        }
        tCrC(i) = 0.f;
      }
    }
  };
  // After the main loop: the remaining chain plus the outer accumulator (read before the barrier that
  // hands shared memory to the epilogue).
  auto fold_final = [&] {
    if constexpr (kFoldPlace != FoldPlace::kNone) {
      CUTE_UNROLL
      for (int i = 0; i < size(tCrC); ++i) {
        if constexpr (kFoldPlace == FoldPlace::kRegisters) {
          tCrC(i) += tCrOuter(i);
        } else {
          tCrC(i) += fold_slots[i * kThreads + tid];
        }
      }
    }
  };

  // One k-step = warp_tile_k of the K group: its ldmatrix loads, then its MMAs.
  auto load_fragments = [&](int stage, int step) {
    CUTE_UNROLL
    for (int a = 0; a < Cfg::kAtomsPerStep; ++a) {
      const int k = step * Cfg::kAtomsPerStep + a;
      copy(s2r_copy_a, tXsA(_, _, k, stage), tXrA(_, _, k));
      copy(s2r_copy_b, tXsB(_, _, k, stage), tXrB(_, _, k));
      if constexpr (Cfg::kDataType == DataType::kFp32) {
        // The fragments hold the fp32 bits from shared memory; round them to TF32 (cvt.rna: nearest, low 13
        // bits cleared). Not float(tfloat32_t): that clears the low bits first, i.e. truncates, which biased
        // every product toward zero by ~2^-11 (docs/pipelines.md, "Accumulation").
        CUTE_UNROLL
        for (int i = 0; i < size(tCrA(_, _, k)); ++i) tCrA(_, _, k)(i) = round_to_tf32(tCrA(_, _, k)(i));
        CUTE_UNROLL
        for (int i = 0; i < size(tCrB(_, _, k)); ++i) tCrB(_, _, k)(i) = round_to_tf32(tCrB(_, _, k)(i));
      }
    }
  };
  auto mma_step = [&](int step) {
    CUTE_UNROLL
    for (int a = 0; a < Cfg::kAtomsPerStep; ++a) {
      const int k = step * Cfg::kAtomsPerStep + a;
      gemm(tiled_mma, tCrA(_, _, k), tCrB(_, _, k), tCrC);
    }
  };
  // The MMAs of one tile; `issue(step)` is called before the MMAs of each k-step to interleave copies.
  auto compute_tile = [&](int stage, auto&& issue) {
    if constexpr (Cfg::kStrategy.fragment_double_buffer) {
      load_fragments(stage, 0);
      CUTE_UNROLL
      for (int step = 0; step < Cfg::kSteps; ++step) {
        issue(step);
        if (step + 1 < Cfg::kSteps) load_fragments(stage, step + 1);
        mma_step(step);
      }
    } else {
      CUTE_UNROLL
      for (int step = 0; step < Cfg::kSteps; ++step) {
        issue(step);
        load_fragments(stage, step);
        mma_step(step);
      }
    }
  };
  // Scheduler: interwave issues a tile's copies in one burst before its MMAs, intrawave spreads them over
  // the k-steps (slice `step` of kSteps before the MMAs of that step).
  constexpr int kSlices = Cfg::kInterwave ? 1 : Cfg::kSteps;
  auto slice_of = [&](int step) { return Cfg::kInterwave ? (step == 0 ? 0 : -1) : step; };

  // ---- main loop ----------------------------------------------------------------------------------------
  if constexpr (kStrategy.async_copy && kStrategy.prefetch) {
    // mem / compv3..v6 / comp_async / wavelet: PIPE-1 tiles in flight. Tile kt lives in stage kt % PIPE;
    // after the barrier at the top of iteration kt, every thread is done with stage (kt-1) % PIPE, which
    // receives tile kt + PIPE - 1 during the MMAs of tile kt.
    CUTE_UNROLL
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < num_k_tiles) copy_tile(s, s, 0, 1);
      cp_async_fence();
    }
    CUTE_NO_UNROLL
    for (int kt = 0; kt < num_k_tiles; ++kt) {
      cp_async_wait<kStages - 2>();
      __syncthreads();
      const int read_stage = kt % kStages;
      const int next = kt + kStages - 1;
      const int write_stage = next % kStages;
      const bool has_next = next < num_k_tiles;
      compute_tile(read_stage, [&](int step) {
        const int slice = slice_of(step);
        if (has_next && slice >= 0) copy_tile(next, write_stage, slice, kSlices);
      });
      fold_after_tile(kt);
      cp_async_fence();
    }
  } else if constexpr (kStrategy.async_copy) {
    // basic_async_v1: no prefetch. Each tile is copied (cp.async) and waited for before its MMAs; two
    // stages let the copy of tile kt start while slower warps still read tile kt-1, so one barrier per tile.
    CUTE_NO_UNROLL
    for (int kt = 0; kt < num_k_tiles; ++kt) {
      const int stage = kt % kStages;
      copy_tile(kt, stage, 0, 1);
      cp_async_fence();
      cp_async_wait<0>();
      __syncthreads();
      compute_tile(stage, [](int) {});
      fold_after_tile(kt);
    }
  } else if constexpr (!kStrategy.register_prefetch) {
    // basic_v1: ld.global -> registers -> st.shared, then the MMAs; nothing overlaps. With one stage a
    // barrier guards the overwrite; with double_smem_buffer the tile alternates stages and one barrier suffices.
    CUTE_NO_UNROLL
    for (int kt = 0; kt < num_k_tiles; ++kt) {
      const int stage = kt % kStages;
      load_tile_to_registers(kt, 0, 1);
      if constexpr (kStages == 1) __syncthreads();
      gather_a.store(tid, sA, stage);
      gather_b.store(tid, sB, stage);
      __syncthreads();
      compute_tile(stage, [](int) {});
      fold_after_tile(kt);
    }
  } else {
    // basic_v2: the next tile is loaded into registers while the MMAs of this tile run, then stored.
    if (num_k_tiles > 0) {
      load_tile_to_registers(0, 0, 1);
      gather_a.store(tid, sA, 0);
      gather_b.store(tid, sB, 0);
    }
    __syncthreads();
    CUTE_NO_UNROLL
    for (int kt = 0; kt < num_k_tiles; ++kt) {
      const int stage = kt % kStages;
      const bool has_next = kt + 1 < num_k_tiles;
      compute_tile(stage, [&](int step) {
        const int slice = slice_of(step);
        if (has_next && slice >= 0) load_tile_to_registers(kt + 1, slice, kSlices);
      });
      fold_after_tile(kt);
      if (has_next) {
        if constexpr (kStages == 1) __syncthreads();
        gather_a.store(tid, sA, (kt + 1) % kStages);
        gather_b.store(tid, sB, (kt + 1) % kStages);
        __syncthreads();
      }
    }
  }
  fold_final();
  cp_async_wait<0>();
  __syncthreads();  // the operand stages are free: the epilogue reuses their shared memory

  // ---- wave_k > 1: reduce the K groups' partial accumulators through shared memory -----------------------
  float* smem_c = reinterpret_cast<float*>(smem_raw);
  Tensor sC = make_tensor(make_smem_ptr(smem_c),
                          make_layout(Shape<Int<kTileM>, Int<kTileN>>{},
                                      Stride<Int<Cfg::kEpilogueRowPitch>, _1>{}));  // (TILE_M,TILE_N)
  Tensor tCsC = thr_mma.partition_C(sC);  // (MMA,MMA_M,MMA_N)
  if constexpr (Cfg::kWaveK > 1) {
    // A fixed order (group 1, then 2, ...) keeps results bit-identical from run to run.
    CUTE_NO_UNROLL
    for (int g = 1; g < Cfg::kWaveK; ++g) {
      if (k_group == g) copy(tCrC, tCsC);
      __syncthreads();
      if (k_group == 0) {
        CUTE_UNROLL
        for (int i = 0; i < size(tCrC); ++i) tCrC(i) += tCsC(i);
      }
      __syncthreads();
    }
  }

  // ---- epilogue ---------------------------------------------------------------------------------------
  auto* gC = static_cast<ElementGlobal*>(params.c);
  if (work.tile_partial != nullptr) {
    // Stream-K partial piece: the raw accumulators, every element of the tile, no bounds (the reduction
    // applies them); plain stores, so the fixed-order reduction stays deterministic.
    if (k_group == 0) {
      Tensor gP = make_tensor(make_gmem_ptr(work.tile_partial),
                              make_layout(Shape<Int<kTileM>, Int<kTileN>>{}, Stride<Int<kTileN>, _1>{}));
      copy(tCrC, thr_mma.partition_C(gP));
    }
  } else if constexpr (Cfg::kEpilogue == Epilogue::kCShuffle) {
    // Stage the tile in shared memory, then every thread stores row segments of one access of vector_size_c.
    if (k_group == 0) copy(tCrC, tCsC);
    __syncthreads();
    constexpr int kVc = Cfg::kAccessC;
    constexpr int kChunksPerRow = kTileN / kVc;
    static_assert(kTileN % kVc == 0, "vector_size_c must divide tile_n");
    CUTE_NO_UNROLL
    for (int chunk = tid; chunk < kTileM * kChunksPerRow; chunk += kThreads) {
      const int row = chunk / kChunksPerRow;
      const int col = (chunk % kChunksPerRow) * kVc;
      const auto info = view.c_prepare(m0 + row);
      Index offset = 0;
      if (!view.c_locate(info, n0 + col, offset)) continue;
      const float* src = &sC(row, col);
      if (work.partial != nullptr) {
        CUTE_UNROLL
        for (int e = 0; e < kVc; ++e) work.partial[offset + e] = src[e];
      } else {
        using Vec = typename VectorBits<kVc * Cfg::kElemBytes>::type;
        alignas(16) ElementGlobal out[kVc];
        CUTE_UNROLL
        for (int e = 0; e < kVc; ++e) out[e] = ElementGlobal(src[e]);
        *reinterpret_cast<Vec*>(gC + offset) = *reinterpret_cast<const Vec*>(out);
      }
    }
  } else {
    // Default: each thread stores its accumulators straight from registers, two adjacent columns at once
    // (the widest contiguous run of an m16n8 accumulator fragment) when vector_size_c allows.
    if (k_group == 0) {
      Tensor cC = make_identity_tensor(Shape<Int<kTileM>, Int<kTileN>>{});  // (TILE_M,TILE_N) -> (m,n)
      Tensor tCcC = thr_mma.partition_C(cC);                                // (MMA,MMA_M,MMA_N)
      CUTE_UNROLL
      for (int i = 0; i < size(tCrC); ++i) {
        const int row = get<0>(tCcC(i));
        const int col = get<1>(tCcC(i));
        const bool pair_start = Cfg::kVectorC >= 2 && (i % 2 == 0) && i + 1 < size(tCrC) &&
                                get<0>(tCcC(i + 1)) == row && get<1>(tCcC(i + 1)) == col + 1;
        const bool pair_second = Cfg::kVectorC >= 2 && (i % 2 == 1) && get<0>(tCcC(i - 1)) == row &&
                                 get<1>(tCcC(i - 1)) == col - 1;
        if (pair_second) continue;  // stored with its left neighbour
        const auto info = view.c_prepare(m0 + row);
        Index offset = 0;
        if (!view.c_locate(info, n0 + col, offset)) continue;
        Index offset_next = 0;
        const bool has_next = pair_start && view.c_locate(info, n0 + col + 1, offset_next);
        if (work.partial == nullptr && has_next && offset_next == offset + 1 && offset % 2 == 0) {
          using Vec = typename VectorBits<2 * Cfg::kElemBytes>::type;
          alignas(8) ElementGlobal out[2] = {ElementGlobal(tCrC(i)), ElementGlobal(tCrC(i + 1))};
          *reinterpret_cast<Vec*>(gC + offset) = *reinterpret_cast<const Vec*>(out);
          continue;
        }
        const int count = has_next ? 2 : 1;
        CUTE_UNROLL
        for (int e = 0; e < 2; ++e) {
          if (e >= count) break;
          const Index at = e == 0 ? offset : offset_next;
          const float value = tCrC(i + e);
          if (work.partial == nullptr) {
            gC[at] = ElementGlobal(value);
          } else {
            work.partial[at] = value;
          }
        }
      }
    }
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kBlockPerCu)
    implicit_gemm_kernel(ImplicitGemmParams<typename Cfg::Index> params) {
  using Index = typename Cfg::Index;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const int split = int(blockIdx.z % unsigned(params.k_batch));
  const Index k_tiles = (params.shape.gemm_k + Cfg::kTileK - 1) / Cfg::kTileK;
  const Index kt_begin = Index(split) * params.shape.k_tiles_per_split;
  TileWork<Index> work;
  work.tile_m = int(blockIdx.x % unsigned(params.tiles_m));
  work.tile_n = int(blockIdx.x / unsigned(params.tiles_m));
  work.group_block = Index(blockIdx.z / unsigned(params.k_batch));
  work.kt_begin = kt_begin;
  work.kt_end = cute::min(k_tiles, kt_begin + params.shape.k_tiles_per_split);
  work.partial = params.partial == nullptr ? nullptr : params.partial + int64_t(split) * params.partial_slice;
  work.tile_partial = nullptr;
  gemm_tile<Cfg>(params, smem_raw, work);
}

}  // namespace tiledispatch::kernels
