// Everything an implicit-GEMM kernel derives from a traits struct (docs/architecture.md §2a): thread counts,
// the warp arrangement of a CK wave, the MMA and copy atoms, the shared-memory layouts, the pipeline strategy.
// The host chooses here; the kernel body (implicit_gemm_kernel.cuh) stays generic. Arch limits and the
// pipeline table come from ArchTraits<Traits::kArch> (the generated arch header), never from constants here.
#pragma once

#include <cute/tensor.hpp>
// (cute/tensor.hpp first: the atom headers rely on what it declares)
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_atom.hpp>

#include <cstdint>
#include <string_view>

// Generated from generators/arch.py into the build's generated directory (generators/arch_header.py).
#include "tiledispatch/generated/arch_traits.hpp"
#include "tiledispatch/kernels/conv_gemm_view.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::kernels {

// Storage type in global memory and operand type of the MMA. fp32 runs through TF32 tensor cores (as cuDNN
// does by default): operands are rounded to TF32 (round-to-nearest) in registers, accumulation is fp32.
template <DataType D> struct ElementTypes;
template <> struct ElementTypes<DataType::kFp16> { using Global = cute::half_t; using Mma = cute::half_t; };
template <> struct ElementTypes<DataType::kBf16> { using Global = cute::bfloat16_t; using Mma = cute::bfloat16_t; };
template <> struct ElementTypes<DataType::kFp32> { using Global = float; using Mma = cute::tfloat32_t; };

// mma.sync atoms: m16n8k16 / m16n8k8 for fp16 and bf16, m16n8k8 / m16n8k4 for TF32.
template <DataType D, int AtomK> struct MmaOp;
template <> struct MmaOp<DataType::kFp16, 16> { using type = cute::SM80_16x8x16_F32F16F16F32_TN; };
template <> struct MmaOp<DataType::kFp16, 8> { using type = cute::SM80_16x8x8_F32F16F16F32_TN; };
template <> struct MmaOp<DataType::kBf16, 16> { using type = cute::SM80_16x8x16_F32BF16BF16F32_TN; };
template <> struct MmaOp<DataType::kBf16, 8> { using type = cute::SM80_16x8x8_F32BF16BF16F32_TN; };
template <> struct MmaOp<DataType::kFp32, 8> { using type = cute::SM80_16x8x8_F32TF32TF32F32_TN; };
template <> struct MmaOp<DataType::kFp32, 4> { using type = cute::SM80_16x8x4_F32TF32TF32F32_TN; };

constexpr int log2_floor(int v) {
  int r = 0;
  while (v > 1) {
    v >>= 1;
    ++r;
  }
  return r;
}
constexpr bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }
// Largest power of two dividing `extent`, capped at `cap`.
constexpr int pow2_divisor(int extent, int cap) {
  int w = 1;
  while (w < cap && extent % (2 * w) == 0) w *= 2;
  return w;
}

// Swizzled shared-memory atom of one operand tile. K-major tiles are (MN, K) with K contiguous, MN-major
// tiles (MN, K) with MN contiguous; rows of up to 128 bytes, 16-byte chunks XOR-swizzled by row so that
// ldmatrix and the 16-byte gathers are bank-conflict free (Swizzle<B, log2(16 B / elem), 3>).
template <class Elem, bool KMajor, int TileMN, int TileK>
constexpr auto make_smem_atom() {
  using namespace cute;
  constexpr int kBytes = int(sizeof(Elem));
  constexpr int kChunkElems = 16 / kBytes;
  constexpr int kContig = KMajor ? TileK : TileMN;
  constexpr int kWidth = pow2_divisor(kContig, 128 / kBytes);
  static_assert(kWidth >= kChunkElems, "operand tile: contiguous extent must hold a 16-byte chunk");
  constexpr int kBits = log2_floor(kWidth / kChunkElems);
  constexpr int kBase = log2_floor(kChunkElems);
  if constexpr (KMajor) {
    return composition(Swizzle<kBits, kBase, 3>{}, Layout<Shape<_8, Int<kWidth>>, Stride<Int<kWidth>, _1>>{});
  } else {
    return composition(Swizzle<kBits, kBase, 3>{}, Layout<Shape<Int<kWidth>, _8>, Stride<_1, Int<kWidth>>>{});
  }
}

// Shared -> register copy atom for one operand: ldmatrix (transposed for MN-major 16-bit tiles) moving
// exactly the registers one MMA atom needs per thread; 32-bit MN-major tiles have no ldmatrix form and use
// scalar shared loads.
template <DataType D, bool KMajor, int RegsPerThread>
struct SmemCopyOp;
template <DataType D> struct SmemCopyOp<D, true, 4> { using type = cute::SM75_U32x4_LDSM_N; };
template <DataType D> struct SmemCopyOp<D, true, 2> { using type = cute::SM75_U32x2_LDSM_N; };
template <DataType D> struct SmemCopyOp<D, true, 1> { using type = cute::SM75_U32x1_LDSM_N; };
template <DataType D> struct SmemCopyOp<D, false, 4> { using type = cute::SM75_U16x8_LDSM_T; };
template <DataType D> struct SmemCopyOp<D, false, 2> { using type = cute::SM75_U16x4_LDSM_T; };
template <DataType D> struct SmemCopyOp<D, false, 1> { using type = cute::SM75_U16x2_LDSM_T; };
template <> struct SmemCopyOp<DataType::kFp32, false, 4> { using type = cute::UniversalCopy<cute::tfloat32_t>; };
template <> struct SmemCopyOp<DataType::kFp32, false, 2> { using type = cute::UniversalCopy<cute::tfloat32_t>; };
template <> struct SmemCopyOp<DataType::kFp32, false, 1> { using type = cute::UniversalCopy<cute::tfloat32_t>; };

// Where the outer fp32 accumulator of the accumulator fold lives (ImplicitGemmConfig::kFoldPlace).
enum class FoldPlace { kNone, kRegisters, kSharedMemory };

template <class Traits>
struct ImplicitGemmConfig {
  using Target = ArchTraits<Traits::kArch>;  // the arch the instance is built for, and its limits
  static constexpr ConvDirection kDirection = Traits::kDirection;
  static constexpr DataType kDataType = Traits::kDataType;
  static constexpr int kNDim = Traits::kNDimSpatial;
  using ElementGlobal = typename ElementTypes<kDataType>::Global;
  using ElementMma = typename ElementTypes<kDataType>::Mma;
  static constexpr int kElemBytes = element_bytes(kDataType);
  // A vector of vector_size elements is moved in accesses of at most kMaxAccessBytes (16: the widest load and
  // cp.async), so a 32-byte vector (16 fp16/bf16, 8 fp32) is two accesses; the vector size itself stays the
  // alignment a problem's channel runs must have (ImplicitGemmInstance::is_supported).
  static constexpr int kMaxAccess = Target::kMaxAccessBytes / kElemBytes;
  static constexpr int kMaxVector = Target::kMaxVectorBytes / kElemBytes;

  static constexpr int kTileM = Traits::kTileM, kTileN = Traits::kTileN, kTileK = Traits::kTileK;
  static constexpr int kWaveM = Traits::kWaveM, kWaveN = Traits::kWaveN, kWaveK = Traits::kWaveK;
  static constexpr int kWarpTileM = Traits::kWarpTileM, kWarpTileN = Traits::kWarpTileN;
  static constexpr int kWarpTileK = Traits::kWarpTileK;
  static constexpr int kVectorA = Traits::kVectorSizeA, kVectorB = Traits::kVectorSizeB;
  static constexpr int kVectorC = Traits::kVectorSizeC;
  static constexpr int kAccessA = kVectorA < kMaxAccess ? kVectorA : kMaxAccess;  // elements per access
  static constexpr int kAccessB = kVectorB < kMaxAccess ? kVectorB : kMaxAccess;
  static constexpr int kAccessC = kVectorC < kMaxAccess ? kVectorC : kMaxAccess;
  static constexpr int kGroupsToMerge = Traits::kNumGroupsToMerge;
  static constexpr Epilogue kEpilogue = Traits::kEpilogue;
  static constexpr int kBlockPerCu = Traits::kBlockPerCu;  // __launch_bounds__ minimum blocks per SM

  // A CK wave is 64 lanes = two 32-lane warps; the wave's warp tile is split between them along M when
  // warp_tile_m is a multiple of 32, else along N.
  static constexpr int kThreads = 64 * kWaveM * kWaveN * kWaveK;
  static constexpr int kMmaThreads = kThreads / kWaveK;  // threads of one K group (wave_k splits the block's K)
  static constexpr bool kSplitWaveAlongM = kWarpTileM % 32 == 0;
  static constexpr int kWarpsM = kWaveM * (kSplitWaveAlongM ? 2 : 1);
  static constexpr int kWarpsN = kWaveN * (kSplitWaveAlongM ? 1 : 2);
  static constexpr int kWarpM = kSplitWaveAlongM ? kWarpTileM / 2 : kWarpTileM;  // one warp's share
  static constexpr int kWarpN = kSplitWaveAlongM ? kWarpTileN : kWarpTileN / 2;
  static constexpr int kGroupK = kTileK / kWaveK;  // K extent each K group reduces per tile

  // Operand majorness of the GEMM views (conv_gemm_view.hpp).
  static constexpr bool kAKMajor = direction_roles(kDirection).a_k_major;
  static constexpr bool kBKMajor = direction_roles(kDirection).b_k_major;

  // The MMA atom: the largest k that divides warp_tile_k.
  static constexpr int kLargeAtomK = kDataType == DataType::kFp32 ? 8 : 16;
  static constexpr int kAtomK = kWarpTileK % kLargeAtomK == 0 ? kLargeAtomK : kLargeAtomK / 2;
  static constexpr int kAtomsPerStep = kWarpTileK / kAtomK;
  static constexpr int kSteps = kGroupK / kWarpTileK;  // k-steps (warp-tile K extents) per tile and K group

  static constexpr PipelineStrategy kStrategy =
      Target::pipeline_strategy(Traits::kPipeline, Traits::kDoubleSmemBuffer);
  static constexpr int kStages = kStrategy.stages;
  static constexpr bool kInterwave = Traits::kScheduler == Scheduler::kInterwave;

  static constexpr size_t kMainloopSmemBytes =
      size_t(kStages) * size_t(kTileM + kTileN) * size_t(kTileK) * size_t(kElemBytes);
  static constexpr int kEpilogueRowPitch = kTileN + 4;  // floats; the pad spreads accumulator rows over banks
  static constexpr bool kNeedsAccumulatorTile = Traits::kEpilogue == Epilogue::kCShuffle || kWaveK > 1;
  static constexpr size_t kEpilogueSmemBytes =
      kNeedsAccumulatorTile ? size_t(kTileM) * size_t(kEpilogueRowPitch) * sizeof(float) : 0;
  static constexpr size_t kSmemLimitBytes = size_t(Target::kSmemPerBlockBytes);  // the opt-in maximum
  static constexpr int kAccumulatorsPerThread = kTileM * kTileN / kMmaThreads;

  // Accumulation (docs/pipelines.md, "Accumulation"): mma.sync adds into its fp32 accumulators rounding
  // toward zero, so a chain of L MMAs shrinks the result by about L * 2^-24 (measured on H200): a bias, not
  // noise. Backward weight's GEMM K (N*Do*Ho*Wo) is unbounded: there the MMA accumulators cover at most
  // kFoldTiles k-tiles (about kFoldChainMmas MMAs), are then added with a round-to-nearest FADD into an outer
  // fp32 accumulator and cleared. fwd / bwd_data reduce C*taps or K*taps, short enough to need no fold.
  static constexpr int kMmasPerTile = kSteps * kAtomsPerStep;  // chain growth per k-tile
  static constexpr int kFoldChainMmas = 256;                  // bias bound: about 256 * 2^-24 ~ 1.5e-5
  static constexpr int kFoldTiles =
      kMmasPerTile < 1 || kMmasPerTile >= kFoldChainMmas ? 1 : kFoldChainMmas / kMmasPerTile;
  // Where the outer accumulator lives: registers while the doubled count stays within the arch's accumulator
  // budget; else shared memory beside the operand stages (one slot per accumulator and thread), where that
  // fits; else registers anyway (ptxas then keeps it in local memory, touched only at folds).
  static constexpr size_t kFoldSmemOffset = (kMainloopSmemBytes + 15) / 16 * 16;
  static constexpr size_t kFoldSmemBytes = size_t(kThreads) * size_t(kAccumulatorsPerThread) * sizeof(float);
  static constexpr FoldPlace kFoldPlace = kDirection != ConvDirection::kBwdWeight ? FoldPlace::kNone
                                          : 2 * kAccumulatorsPerThread <= Target::kMaxAccumulatorsPerThread
                                              ? FoldPlace::kRegisters
                                          : kFoldSmemOffset + kFoldSmemBytes <= kSmemLimitBytes
                                              ? FoldPlace::kSharedMemory
                                              : FoldPlace::kRegisters;
  static constexpr size_t kMainloopAndFoldSmemBytes =
      kFoldPlace == FoldPlace::kSharedMemory ? kFoldSmemOffset + kFoldSmemBytes : kMainloopSmemBytes;
  static constexpr size_t kSmemBytes =
      kMainloopAndFoldSmemBytes > kEpilogueSmemBytes ? kMainloopAndFoldSmemBytes : kEpilogueSmemBytes;

  // Index width: 32-bit offsets unless the instance is split_image (64-bit offsets for > 2^31 elements).
  using Index = std::conditional_t<Traits::kSplitImage, int64_t, int32_t>;

  static constexpr FilterGeometry kGeometry =
      (Traits::kExplicitGemm || Traits::kSpecialization == ConvSpecialization::kFilter1x1Stride1Pad0)
          ? FilterGeometry::kPlainGemm
      : Traits::kSpecialization == ConvSpecialization::kFilter1x1Pad0 ? FilterGeometry::kFilter1x1
      : Traits::kSpecialization == ConvSpecialization::kFilter3x3     ? FilterGeometry::kFilter3x3
                                                                      : FilterGeometry::kGeneral;
  using View = typename ViewFor<kDirection, Index, kNDim, kGeometry, kGroupsToMerge>::type;

  // Features not implemented on NVIDIA by either kernel generation (empty when one of them may run it).
  static constexpr std::string_view not_implemented_anywhere() {
    if (Traits::kStreamK && kDirection != ConvDirection::kBwdWeight) {
      return "not implemented: stream-K outside backward weight (CK has it for bwd_weight only)";
    }
    if (Traits::kStreamK && Traits::kTwoStage) {
      return "not implemented: stream-K with two_stage (stream-K already reduces in an fp32 workspace)";
    }
    if (!is_pow2(kVectorA) || !is_pow2(kVectorB) || !is_pow2(kVectorC)) {
      return "not implemented: vector sizes that are not powers of two";
    }
    return {};
  }

  // Why the first-generation kernel (mma.sync + cp.async) cannot run this configuration; is_supported()
  // reports it for every problem where the Hopper path does not build it either (empty when it can).
  static constexpr std::string_view not_implemented() {
    if (const auto anywhere = not_implemented_anywhere(); !anywhere.empty()) return anywhere;
    // CK's ping-pong wave groups are Hopper's warp-specialised ping-pong consumers (sm90/config.hpp); the
    // mma.sync kernel, where every warp both loads and multiplies, has no counterpart (docs/pipelines.md,
    // "num_wave_groups").
    if (Traits::kNumWaveGroups != 1) {
      return "not implemented: num_wave_groups != 1 outside the Hopper path (ping-pong consumer warpgroups "
             "need wgmma and a producer warpgroup)";
    }
    if (kWarpTileK % (kLargeAtomK / 2) != 0) return "not implemented: warp_tile_k below the smallest MMA k";
    if (kAccumulatorsPerThread > Target::kMaxAccumulatorsPerThread) {
      return "not buildable: more fp32 accumulators per thread than the arch's budget (rule register_budget)";
    }
    return {};
  }
  static constexpr bool kImplemented = not_implemented().empty();

  // ---- CuTe types (only meaningful when kImplemented) --------------------------------------------------
  using MmaAtom = cute::MMA_Atom<typename MmaOp<kDataType, kImplemented ? kAtomK : kLargeAtomK>::type>;
  // Permutations keep each warp's MMA atoms contiguous: warp w owns rows [w*WarpM, (w+1)*WarpM).
  using PermM = cute::Layout<cute::Shape<cute::_16, cute::Int<kWarpsM>, cute::Int<kWarpM / 16>>,
                             cute::Stride<cute::_1, cute::Int<kWarpM>, cute::_16>>;
  using PermN = cute::Layout<cute::Shape<cute::_8, cute::Int<kWarpsN>, cute::Int<kWarpN / 8>>,
                             cute::Stride<cute::_1, cute::Int<kWarpN>, cute::_8>>;
  using TiledMma = decltype(cute::make_tiled_mma(
      MmaAtom{}, cute::Layout<cute::Shape<cute::Int<kWarpsM>, cute::Int<kWarpsN>, cute::_1>>{},
      cute::Tile<PermM, PermN, cute::Underscore>{}));

  static constexpr int kRegsA = 16 * kAtomK * kElemBytes / (32 * 4);
  static constexpr int kRegsB = 8 * kAtomK * kElemBytes / (32 * 4);
  using SmemCopyAtomA = cute::Copy_Atom<typename SmemCopyOp<kDataType, kAKMajor, kRegsA>::type, ElementMma>;
  using SmemCopyAtomB = cute::Copy_Atom<typename SmemCopyOp<kDataType, kBKMajor, kRegsB>::type, ElementMma>;

  using SmemLayoutA = decltype(cute::tile_to_shape(
      make_smem_atom<ElementMma, kAKMajor, kTileM, kTileK>(),
      cute::make_shape(cute::Int<kTileM>{}, cute::Int<kTileK>{}, cute::Int<kStages>{})));
  using SmemLayoutB = decltype(cute::tile_to_shape(
      make_smem_atom<ElementMma, kBKMajor, kTileN, kTileK>(),
      cute::make_shape(cute::Int<kTileN>{}, cute::Int<kTileK>{}, cute::Int<kStages>{})));
};

}  // namespace tiledispatch::kernels
