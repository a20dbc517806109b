// ImplicitGemmInstance<Traits>: a grouped-convolution instance (fwd, bwd_data or bwd_weight) built from a
// traits struct of named constexpr members (docs/architecture.md §2a). Its instance string is a compile-time
// constant of the traits; is_supported() is exact; run() launches implicit_gemm_kernel<Config>.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tiledispatch/kernels/channel_padding.cuh"
#include "tiledispatch/kernels/dependent_launch.hpp"
#include "tiledispatch/kernels/fixed_string.hpp"
#include "tiledispatch/kernels/group_pairing.cuh"
#include "tiledispatch/kernels/implicit_gemm_config.hpp"
#include "tiledispatch/kernels/implicit_gemm_kernel.cuh"
#include "tiledispatch/kernels/implicit_gemm_streamk.cuh"
#include "tiledispatch/kernels/instance_string.hpp"
#include "tiledispatch/kernels/merged_group_bwd_weight.cuh"
#include "tiledispatch/kernels/merged_group_direct.cuh"
#include "tiledispatch/kernels/sm90/kernel.cuh"
#include "tiledispatch/kernels/split_k_reduce.cuh"
#include "tiledispatch/kernels/stride_phases.cuh"
#include "tiledispatch/kernels/width_unfolding.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/device.hpp"
#include "tiledispatch/runtime/instance.hpp"
#include "tiledispatch/runtime/split_k.hpp"

namespace tiledispatch {

namespace kernels {

inline bool fits_int32(int64_t v) { return v <= int64_t(INT32_MAX); }

}  // namespace kernels

template <class Traits>
class ImplicitGemmInstance : public GroupedConvInstance {
 public:
  using Config = kernels::ImplicitGemmConfig<Traits>;
  using Sm90 = kernels::sm90::Sm90Config<Traits>;  // the Hopper path, where it can build this configuration
  using Sm90Columns = kernels::sm90::Sm90Config<Traits, true>;  // its column variant, where Sm90::kHasColumns
  static_assert(!Sm90::kHasColumns || (Sm90Columns::kSmemBytes == Sm90::kSmemBytes &&
                                       Sm90Columns::kStages == Sm90::kStages),
                "the column variant has the configuration's ring (the resource model describes both)");
  // Whether some kernel generation runs this configuration (ping-pong, num_wave_groups 2, only the Hopper path).
  static constexpr bool kRuns = Sm90::kBuildable || Config::kImplemented;
  static constexpr auto kInstanceString = kernels::build_instance_string<Traits>();
  static_assert(!kInstanceString.overflowed(), "instance string longer than its buffer");

  std::string_view instance_string() const override { return kInstanceString.view(); }

  Signature signature() const override {
    return {Traits::kDirection, Traits::kDataType, Traits::kNDimSpatial,
            Traits::kStreamK ? KernelFamily::kStreamK : KernelFamily::kImplicitGemm};
  }

  Support is_supported(const ConvProblem& p) const override {
    Support as_given = supports_as_given(p);
    if (!as_given && rewrite_unsupported(p).any()) return Support::yes();
    return as_given;
  }

  // The problem as given, its channels unpadded.
  static Support supports_as_given(const ConvProblem& p) {
    if (const std::string bad = p.validate(); !bad.empty()) return Support::no("invalid problem: " + bad);
    if constexpr (!kRuns) {
      return Support::no(std::string(Config::not_implemented()));
    } else {
      if (p.ndim_spatial != Traits::kNDimSpatial) {
        return Support::no("instance is " + std::to_string(Traits::kNDimSpatial) + "D, problem is " +
                           std::to_string(p.ndim_spatial) + "D");
      }
      if (Support s = check_geometry(p); !s) return s;
      const int64_t gm = Traits::kNumGroupsToMerge;
      // The direct kernel copies whole 16-byte vectors of the merged groups' channels and indexes in 64 bits
      // (make_merged_group_direct_plan holds its conditions): the GEMM's vectors and 32-bit offsets do not apply.
      // Both direct kernels also take a last block of fewer than gm groups; the GEMMs need gm to divide G.
      if (runs_merged_direct_activations(p)) return Support::yes();
      // The direct bwd_weight kernel moves whole channel rows by tensor-map boxes and writes the gradient
      // element by element, so the GEMM's vectors do not apply to it either: a C/G below them (C/G = 2) runs on
      // it as given rather than channel-padded.
      const bool direct_weight = runs_merged_direct(p);
      if (p.G % gm != 0 && !direct_weight) {
        return Support::no("num_groups_to_merge " + std::to_string(gm) + " does not divide G=" + std::to_string(p.G));
      }
      if (!direct_weight) {
        if (Support s = check_vectors(p); !s) return s;
      }
      if constexpr (!Traits::kSplitImage) {
        // the direct bwd_weight kernel reads the activations by tensor maps and offsets the gradient in 64 bits
        if ((!kernels::fits_int32(p.input_elements()) || !kernels::fits_int32(p.weight_elements()) ||
             !kernels::fits_int32(p.output_elements())) &&
            !direct_weight) {
          return Support::no("a tensor holds more than 2^31-1 elements and the instance is not split_image "
                             "(32-bit offsets)");
        }
      }
      const auto shape = kernels::make_conv_shape<int64_t>(p, Traits::kDirection, Traits::kNumGroupsToMerge);
      const int64_t tiles = ceil_div(shape.gemm_m, Traits::kTileM) * ceil_div(shape.gemm_n, Traits::kTileN);
      if (tiles > int64_t(INT32_MAX)) return Support::no("more than 2^31-1 output tiles");
      if constexpr (Traits::kStreamK) {
        // Stream-K numbers the tiles of all merged-group blocks in one grid dimension (the pieces of the
        // data-parallel grid are at most tiles + 2 * workers).
        if (tiles * (p.G / gm) > int64_t(INT32_MAX) / 2) return Support::no("more than 2^30-1 stream-K tiles");
      } else {
        if (p.G / gm > 65535) return Support::no("G / num_groups_to_merge exceeds 65535 (grid z)");
      }
      return Support::yes();
    }
  }

  // How a problem that does not run as given runs instead: as its width-unfolded layer of `unfolded` channels
  // (width_unfolding.hpp), else on `padded` channels per group (channel_padding.cuh); both 0 where it runs as
  // given or not at all. Each entry point works it out once.
  struct Rewrite {
    int64_t unfolded = 0;
    int64_t padded = 0;
    bool any() const { return unfolded > 0 || padded > 0; }
    // the problem the kernel runs (where `any()`)
    ConvProblem problem(const ConvProblem& p) const {
      return unfolded > 0 ? kernels::width_unfolded_problem(p, unfolded) : kernels::channel_padded_problem(p, padded);
    }
  };
  static Rewrite rewrite(const ConvProblem& p) { return supports_as_given(p) ? Rewrite{} : rewrite_unsupported(p); }

  // Channels padded to the vectors: the padded C/G that runs `p` where `p` runs only so (C/G a multiple of no
  // vector that reads a C/G run, e.g. C = 3) and is not width-unfolded, else 0.
  static int64_t channel_padding(const ConvProblem& p) { return rewrite(p).padded; }
  // Width unfolding: the channels C' (X*C rounded up to tile_k and the vectors) with which `p` runs as its
  // width-unfolded layer, else 0.
  static int64_t width_unfolding(const ConvProblem& p) { return rewrite(p).unfolded; }

  // Whether the Hopper kernel multiplies the merged groups of `p` by diagonal blocks, without zero MACs
  // (sm90/config.hpp, kDiagonal): the problem's per-group GEMM extents are the configuration's tile_k / GM and
  // tile_n / GM, and the im2col window fits the descriptor. A run also needs both tensor maps to encode (16-byte
  // aligned tensors, which check_args requires). Elsewhere the merged groups are gathered block-diagonally.
  static bool diagonal_groups(const ConvProblem& p) {
    kernels::sm90::Im2colGeometry geometry{};
    return diagonal_geometry(p, geometry);
  }

  // Groups paired at the MMA's granularity (group_pairing.cuh): the factor P > 1 where P consecutive groups of
  // `p`, run as one block-diagonal group, have the per-group extents of the diagonal mode (C/G = K/G = 8 on a
  // configuration whose tile_k / GM and tile_n / GM are 16: P = 2), else 1.
  static int pairing(const ConvProblem& p) {
    if constexpr (!Sm90::kBuildable || !Sm90::kDiagonal) {
      return 1;
    } else {
      constexpr bool kFwd = Traits::kDirection == ConvDirection::kFwd;
      const int64_t cg = p.C / p.G, kg = p.K / p.G;
      for (const int factor : {2, 4}) {
        if ((kFwd ? cg : kg) * factor != Sm90::kGroupTileK || (kFwd ? kg : cg) * factor != Sm90::kGroupTileN ||
            p.G % (factor * Traits::kNumGroupsToMerge) != 0) {
          continue;
        }
        return diagonal_groups(kernels::paired_problem(p, factor)) ? factor : 1;
      }
      return 1;
    }
  }

  // Whether `p` runs on the first-generation kernel of this configuration: where the Hopper path cannot build
  // it, and where the Hopper kernel is transposed (bwd_weight, tile_m below 64) but the input cannot come by TMA
  // (C/G not a multiple of its tile_m-wide atom: C/G = 4 or 8, and 16 on 32-row tiles). There the transposed
  // kernel gathers the input and runs at about half the first generation's speed (C/G = 8 on the H100: 0.16
  // against 0.32 of cuDNN, docs/performance.md, session 8). Merged groups are judged by one group's C/G too,
  // although gm x C/G may fill the atom (their transposed TMA runs were not measured against the first
  // generation). Only transposed configurations that both generations build compile the second kernel.
  static constexpr bool kFirstGenerationFallback = Sm90::kBuildable && Sm90::kTransposed && Config::kImplemented;
  static bool runs_first_generation(const ConvProblem& p) {
    if (runs_merged_direct(p)) return false;
    if constexpr (!Sm90::kBuildable) {
      return true;
    } else if constexpr (kFirstGenerationFallback) {
      return (p.C / p.G) % Sm90::kAtomN != 0;
    } else {
      return false;
    }
  }

  // Merged-group bwd_weight by the direct kernel (merged_group_bwd_weight.cuh; fp32 on TF32 MMAs): a
  // configuration whose num_groups_to_merge x K/G is its tile_m (a CTA owns its merged groups' whole gradient),
  // where the plan fits (channel runs of the merged groups a multiple of 8, the stages in shared memory). tile_k
  // is the MMA chain (pixels per fold), the waves the CTA's warps, the pipeline's stages (2 to 4) the copy
  // stages. Elsewhere the configuration runs its implicit GEMM.
  static constexpr bool kMergedDirect = Traits::kDirection == ConvDirection::kBwdWeight &&
                                        Traits::kNumGroupsToMerge > 1 && !Traits::kStreamK &&
                                        Traits::kTileK % 16 == 0;
  static constexpr int kDirectStages = std::min(std::max(Config::kStages, 2), 4);
  static bool merged_direct_plan(const ConvProblem& p, int k_batch, kernels::MergedGroupBwdWeightPlan& plan) {
    if constexpr (!kMergedDirect) {
      return false;
    } else {
      // (merged_by_tma's GEMM needs gm to divide G; a last block of fewer groups runs here)
      if (p.ndim_spatial != Traits::kNDimSpatial || p.K / p.G * Traits::kNumGroupsToMerge != Traits::kTileM ||
          (p.G % Traits::kNumGroupsToMerge == 0 && merged_by_tma(p))) {
        return false;
      }
      return kernels::make_merged_group_bwd_weight_plan(p, Traits::kNumGroupsToMerge, Config::kElemBytes,
                                                        Config::kThreads / 32, kDirectStages, Traits::kTileK,
                                                        Config::kSmemLimitBytes, k_batch, plan);
    }
  }
  static bool runs_merged_direct(const ConvProblem& p) {
    kernels::MergedGroupBwdWeightPlan plan;
    return merged_direct_plan(p, 1, plan);
  }
  // Merged-group fwd and bwd_data (the directions that write activations) by the direct kernel
  // (merged_group_direct.cuh; strided bwd_data by its stride phases, strides up to StridePhases::kMaxStride): a
  // configuration whose tile_k and tile_n are both num_groups_to_merge x C/G
  // (= K/G, one of 2, 4, 8, 16; fp32 also 32), where the plan fits the shared memory. A CTA reads its tiles' input windows
  // once and multiplies only the diagonal blocks; tile_m is its tile's pixel target, the waves its warps, the
  // pipeline's stages (2 or 3) its halo stages. Other problems of the configuration run its implicit GEMM
  // (paired or diagonal merged groups), as does 16-bit C/G = 16 fwd at a stride above 1
  // (kernels::merged_group_direct_preferred). fp32 multiplies as TF32, as its implicit GEMM does.
  static constexpr bool kMergedDirectActivations =
      Traits::kDirection != ConvDirection::kBwdWeight && Traits::kNumGroupsToMerge > 1 && !Traits::kStreamK &&
      Traits::kTileK == Traits::kTileN &&
      kernels::merged_group_direct_width(Traits::kTileN / Traits::kNumGroupsToMerge, Config::kElemBytes) &&
      Traits::kTileN % 16 == 0;
  static constexpr int kDirectActivationStages = std::min(std::max(Config::kStages, 2), 3);
  static bool merged_direct_activations_plan(const ConvProblem& p, kernels::MergedGroupDirectPlan& plan) {
    if constexpr (!kMergedDirectActivations) {
      return false;
    } else {
      if (p.ndim_spatial != Traits::kNDimSpatial || p.C / p.G * Traits::kNumGroupsToMerge != Traits::kTileN) {
        return false;
      }
      // where the diagonal mode is preferred it must be able to run the problem (gm divides G)
      const bool strided = p.stride[0] > 1 || p.stride[1] > 1 || p.stride[2] > 1;
      if (p.G % Traits::kNumGroupsToMerge == 0 &&
          !kernels::merged_group_direct_preferred(p.C / p.G, Traits::kDirection, strided, Traits::kDataType)) {
        return false;
      }
      return kernels::make_merged_group_direct_plan(p, Traits::kDirection, Traits::kNumGroupsToMerge, Traits::kTileN,
                                                    Config::kElemBytes, Config::kThreads / 32,
                                                    kDirectActivationStages, Traits::kTileM, Config::kSmemLimitBytes,
                                                    plan);
    }
  }
  static bool runs_merged_direct_activations(const ConvProblem& p) {
    kernels::MergedGroupDirectPlan plan;
    return merged_direct_activations_plan(p, plan);
  }
  // Merged groups whose tap runs (gm x C/G channels) fill the Hopper kernel's 128-byte input boxes run its GEMM,
  // both operands by TMA, rather than the direct kernel: it multiplies the gm x gm block product and keeps the
  // diagonal, but its copies run at TMA's pace. On the H100 (fp16, G = 32, C/G = K/G = 32, 3x3, N = 32) 64x128x64
  // gm 2 takes 16.5 us on 7x7 and 34.3 on 14x14, against 32.0 and 69.5 on the direct kernel (docs/performance.md,
  // sessions 25 and 26). Only gm 2 (half the MACs kept; gm 4 keeps a quarter and was not measured) and only the
  // 128-byte boxes it was measured with.
  static constexpr bool kMergedByTma = Sm90::kBuildable && Traits::kNumGroupsToMerge == 2 && Sm90::kTmaA &&
                                       Sm90::kTmaAtomsB && !Sm90::kTransposed &&
                                       Sm90::kAtomN * Config::kElemBytes == 128;
  static bool merged_by_tma(const ConvProblem& p) {
    if constexpr (!kMergedByTma) {
      return false;
    } else {
      if (p.ndim_spatial != Traits::kNDimSpatial) return false;
      const auto shape = kernels::make_conv_shape<int64_t>(p, Traits::kDirection, Traits::kNumGroupsToMerge);
      kernels::sm90::Im2colGeometry geometry{};
      return output_gradient_fits_tma(p, shape.gemm_k) && input_fits_im2col(p, Sm90::kAtomN, geometry);
    }
  }

  // bwd_data with stride > 1 by stride phases (stride_phases.hpp): unit-stride problems that multiply only the
  // taps meeting an output pixel, where every phase with taps is a problem of this configuration's
  // specialization (not Filter3x3, whose 3x3 filter the phases split). Elsewhere the strided problem's
  // zero-filled gathers.
  static bool stride_phases(const ConvProblem& p, kernels::StridePhases& phases) {
    if constexpr (Traits::kDirection != ConvDirection::kBwdData ||
                  Traits::kSpecialization == ConvSpecialization::kFilter3x3) {
      return false;
    } else {
      if (!kernels::make_stride_phases(p, phases)) return false;
      for (int phase = 0; phase < phases.count; ++phase) {
        if (!runs_phase(phases, phase)) continue;
        const ConvProblem q = kernels::phase_problem(p, phases, phase);
        if (q.output() != p.output() || !check_geometry(q)) return false;
      }
      return true;
    }
  }
  // Whether the launch of every phase is phase 0's alone, whose staged epilogue also stores the tap-less
  // phases' zeros beside its pixels (zeros_beside_phase_0; ConvShape::zero_siblings).
  static bool zeros_beside(const ConvProblem& p, const kernels::StridePhases& phases) {
    return Sm90::kStagedEpilogue && kernels::zeros_beside_phase_0(p, phases);
  }
  static bool runs_phase(const kernels::StridePhases& phases, int phase) {
    return phases.taps(phase) > 0 && phases.pixels_per_image(phase) > 0;
  }
  // Whether run() launches every stride phase of `p` at once (batch_phases), with these arguments' tensors.
  static bool phases_in_one_launch(const ConvProblem& p, const ConvArgs& args) {
    if constexpr (Sm90::kBuildable && Sm90::kMaxGemms > 1) {
      kernels::StridePhases phases;
      Sm90Launch sm90{};
      return stride_phases(p, phases) && batch_phases(p, args, phases, sm90);
    } else {
      return false;
    }
  }

  size_t workspace_bytes(const ConvProblem& p, int k_batch) const override {
    if (const Rewrite r = rewrite(p); r.any()) {
      const ConvProblem q = r.problem(p);
      return rewritten_tensors_bytes(q) + workspace_bytes(q, k_batch);
    }
    if (runs_merged_direct(p)) return splits_to_workspace(k_batch) ? split_bytes(p, k_batch) : 0;
    if (runs_merged_direct_activations(p)) return 0;
    if (Traits::kDirection != ConvDirection::kBwdWeight) {
      if (kernels::StridePhases phases; stride_phases(p, phases)) {
        // the phases' filters, then the expanded weights of the largest paired phase
        size_t paired = 0;
        for (int phase = 0; phase < phases.count; ++phase) {
          if (!runs_phase(phases, phase)) continue;
          paired = std::max(paired, pairing_bytes(kernels::phase_problem(p, phases, phase)));
        }
        return size_t(phases.filter_elements) * Config::kElemBytes + paired;
      }
      return pairing_bytes(p);
    }
    if constexpr (Traits::kStreamK) {
      // Two fp32 tile slots per worker (its first and last piece); the worker count follows the device.
      kernels::StreamKPlan plan{};
      if (streamk_plan(p, plan) != cudaSuccess) return 0;
      return size_t(2 * plan.workers) * size_t(Traits::kTileM) * size_t(Traits::kTileN) * sizeof(float);
    }
    // One fp32 slice of the weight gradient per split (two-stage: one), reduced in a fixed order; then the
    // Hopper path's outer accumulators where it folds (fold_bytes).
    size_t bytes = splits_to_workspace(k_batch) ? split_bytes(p, k_batch) : 0;
    if (folds(p)) {
      int sms = 0;
      if (sm_count(&sms) != cudaSuccess) return 0;
      bytes += size_t(sms) * size_t(Sm90::kTilesInFlight) * size_t(Traits::kTileM) * size_t(Traits::kTileN) *
               sizeof(float);
    }
    return bytes;
  }

  std::vector<int> split_k_candidates(const ConvProblem& p, int sms) const override {
    const SplitKWork work = split_k_work(p);
    if (work.units == 0) return {1};
    return auto_split_k(work.units, work.gemm_k, sms, work.min_per_split);
  }

  int preferred_split_k(const ConvProblem& p, int sms) const override {
    const SplitKWork work = split_k_work(p);
    return work.units == 0 ? 1 : one_wave_split_k(work.units, work.gemm_k, sms, work.min_per_split);
  }

  Support check_args(const ConvProblem& p, const ConvArgs& args) const override {
    if (args.k_batch < 1) return Support::no("k_batch " + std::to_string(args.k_batch) + " < 1");
    if (Traits::kStreamK && args.k_batch != 1) {
      return Support::no("k_batch " + std::to_string(args.k_batch) +
                         ": stream-K splits GEMM K itself, only k_batch 1 is accepted");
    }
    if (args.k_batch > 1 && Traits::kDirection != ConvDirection::kBwdWeight) {
      return Support::no("k_batch " + std::to_string(args.k_batch) + ": split-K is backward-weight only");
    }
    if (ceil_div(p.G, int64_t(Traits::kNumGroupsToMerge)) * int64_t(args.k_batch) > 65535) {
      return Support::no("G / num_groups_to_merge * k_batch exceeds 65535 (grid z)");
    }
    if (uses_workspace(p, args.k_batch)) {
      const size_t need = workspace_bytes(p, args.k_batch);
      if (need == 0) return Support::no("the CUDA device could not be queried for its SM count");
      if (args.workspace == nullptr || args.workspace_bytes < need) {
        return Support::no("workspace of " + std::to_string(need) + " bytes required");
      }
    }
    for (const void* ptr : {static_cast<const void*>(args.input), static_cast<const void*>(args.weight),
                            static_cast<const void*>(args.output)}) {
      if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0) return Support::no("tensor pointers must be 16-byte aligned");
    }
    return Support::yes();
  }

  cudaError_t run(const ConvProblem& p, const ConvArgs& args) const override {
    if constexpr (!kRuns) {
      return cudaErrorNotSupported;
    } else {
      const bool as_given = bool(supports_as_given(p));
      const Rewrite r = as_given ? Rewrite{} : rewrite_unsupported(p);
      if ((!as_given && !r.any()) || !check_args(p, args)) return cudaErrorInvalidValue;
      if (r.unfolded > 0) return run_width_unfolded(p, args, r.unfolded);
      if (r.padded > 0) return run_channel_padded(p, args, r.padded);
      if (kernels::MergedGroupBwdWeightPlan plan; merged_direct_plan(p, args.k_batch, plan)) {
        return run_merged_direct(p, args, plan);
      }
      if (kernels::MergedGroupDirectPlan plan; merged_direct_activations_plan(p, plan)) {
        return run_merged_direct_activations(p, args, plan);
      }
      if (kernels::StridePhases phases; stride_phases(p, phases)) return run_phases(p, args, phases);
      return run_grouped(p, args, nullptr);
    }
  }

 private:
  // What a split-K factor divides: `units` work units (output tiles, or the direct kernel's CTAs) each reducing
  // `gemm_k` (elements, or the direct kernel's steps), at least `min_per_split` a split. No units: the run
  // does not split (not bwd_weight, or stream-K).
  struct SplitKWork {
    int64_t units = 0, gemm_k = 0, min_per_split = kMinSplitK;
  };
  static SplitKWork split_k_work(const ConvProblem& p) {
    if (Traits::kDirection != ConvDirection::kBwdWeight || Traits::kStreamK) return {};
    if (const Rewrite r = rewrite(p); r.any()) return split_k_work(r.problem(p));
    if (kernels::MergedGroupBwdWeightPlan plan; merged_direct_plan(p, 1, plan)) {
      // A split is whole steps, at least two (one's copies overlap the other's MMAs).
      return {int64_t(plan.group_blocks) * ceil_div(plan.items, Config::kThreads / 32), plan.steps, 2};
    }
    const auto shape = kernels::make_conv_shape<int64_t>(p, Traits::kDirection, Traits::kNumGroupsToMerge);
    return {ceil_div(shape.gemm_m, Traits::kTileM) * ceil_div(shape.gemm_n, Traits::kTileN) *
                (p.G / Traits::kNumGroupsToMerge),
            shape.gemm_k};
  }

  // Every vector that reads a C/G run (of the input or the weights) divides the padded C/G.
  static constexpr int64_t kPaddingWidth = [] {
    constexpr DirectionRoles kRoles = direction_roles(Traits::kDirection);
    const std::pair<ConvTensor, int64_t> vectors[] = {
        {kRoles.a, Traits::kVectorSizeA}, {kRoles.b, Traits::kVectorSizeB}, {kRoles.c, Traits::kVectorSizeC}};
    int64_t width = 1;
    for (const auto& [tensor, vector] : vectors) {
      if (tensor != ConvTensor::kOutput) width = std::lcm(width, vector);
    }
    return width;
  }();
  // `p`'s rewrite, `p` known not to run as given.
  static Rewrite rewrite_unsupported(const ConvProblem& p) {
    if (const int64_t unfolded = unfolded_channels(p); unfolded > 0) return {unfolded, 0};
    return {0, padded_channels(p)};
  }
  // C' where the unfolded layer multiplies no more than the channel-padded one (GEMM K Z*Y*C' against Z*Y*X
  // times C/G padded) and this configuration runs it, else 0: fwd and bwd_weight of one group with a filter
  // wider than one tap (`p` known not to run as given).
  static int64_t unfolded_channels(const ConvProblem& p) {
    if constexpr (Traits::kDirection == ConvDirection::kBwdData) {
      return 0;
    } else {
      if (p.G != 1 || p.filter[2] == 1 || !p.validate().empty()) return 0;
      const int64_t width = std::lcm(int64_t(Traits::kTileK), kPaddingWidth);
      const int64_t unfolded = ceil_div(p.filter[2] * p.C, width) * width;
      if (unfolded > p.filter[2] * ceil_div(p.C, kPaddingWidth) * kPaddingWidth) return 0;
      if (!kernels::fits_int32(p.output()[2] * unfolded)) return 0;  // the unfolding kernel's index within a row
      return supports_as_given(kernels::width_unfolded_problem(p, unfolded)) ? unfolded : 0;
    }
  }
  // C/G rounded up to kPaddingWidth where that problem is supported as given, else 0 (the caller knows `p`
  // itself is not).
  static int64_t padded_channels(const ConvProblem& p) {
    const int64_t cg = p.c_per_group();
    if (cg % kPaddingWidth == 0) return 0;
    const int64_t padded = ceil_div(cg, kPaddingWidth) * kPaddingWidth;
    return supports_as_given(kernels::channel_padded_problem(p, padded)) ? padded : 0;
  }

  // A tensor of a rewritten problem (padded channels, unfolded width) in the workspace, 256-byte aligned.
  static size_t padded_tensor_bytes(const ConvProblem& q, ConvTensor tensor) {
    return (size_t(tensor_elements(q, tensor)) * Config::kElemBytes + 255) / 256 * 256;
  }
  static size_t rewritten_tensors_bytes(const ConvProblem& q) {
    return padded_tensor_bytes(q, ConvTensor::kInput) + padded_tensor_bytes(q, ConvTensor::kWeight);
  }
  // The arguments of rewritten problem `q`: its input and weights at the front of the workspace, the rest of the
  // workspace its own.
  static ConvArgs rewritten_args(const ConvProblem& q, const ConvArgs& args) {
    auto* base = static_cast<unsigned char*>(args.workspace);
    const size_t tensors_bytes = rewritten_tensors_bytes(q);
    ConvArgs sub = args;
    sub.input = base;
    sub.weight = base + padded_tensor_bytes(q, ConvTensor::kInput);
    sub.workspace = base + tensors_bytes;
    sub.workspace_bytes = args.workspace_bytes - tensors_bytes;
    return sub;
  }

  // `p` as the problem of `padded` channels per group: the tensors it reads with C/G channels copied into the
  // workspace with zero channels appended, the run, and the tensor it writes with C/G channels copied out.
  cudaError_t run_channel_padded(const ConvProblem& p, const ConvArgs& args, int64_t padded) const {
    using Element = typename Config::ElementGlobal;
    constexpr ConvDirection kDir = Traits::kDirection;
    const ConvProblem q = kernels::channel_padded_problem(p, padded);
    const int64_t cg = p.c_per_group();
    const ConvArgs sub = rewritten_args(q, args);
    const int64_t input_rows = kernels::channel_rows(p, ConvTensor::kInput);
    const int64_t weight_rows = kernels::channel_rows(p, ConvTensor::kWeight);
    if constexpr (kernels::pads_read(kDir, ConvTensor::kInput)) {
      TD_RETURN_IF_CUDA_ERROR(
          kernels::copy_channel_rows<Element>(args.input, sub.input, input_rows, cg, padded, args.stream));
    }
    if constexpr (kernels::pads_read(kDir, ConvTensor::kWeight)) {
      TD_RETURN_IF_CUDA_ERROR(
          kernels::copy_channel_rows<Element>(args.weight, sub.weight, weight_rows, cg, padded, args.stream));
    }
    TD_RETURN_IF_CUDA_ERROR(run(q, sub));
    if constexpr (kernels::pads_written(kDir, ConvTensor::kInput)) {
      return kernels::copy_channel_rows<Element>(sub.input, args.input, input_rows, padded, cg, args.stream);
    } else if constexpr (kernels::pads_written(kDir, ConvTensor::kWeight)) {
      return kernels::copy_channel_rows<Element>(sub.weight, args.weight, weight_rows, padded, cg, args.stream);
    } else {
      return cudaSuccess;
    }
  }

  // `p` as its width-unfolded layer of `unfolded` channels: the input unfolded into the workspace (fwd also the
  // weights, rows of X*C padded to C'), the run, and bwd_weight's unfolded weight gradient cut back to X*C.
  cudaError_t run_width_unfolded(const ConvProblem& p, const ConvArgs& args, int64_t unfolded) const {
    using Element = typename Config::ElementGlobal;
    const ConvProblem q = kernels::width_unfolded_problem(p, unfolded);
    const ConvArgs sub = rewritten_args(q, args);
    const int64_t row = p.filter[2] * p.C;  // a weight row (k, z, y): X taps of C channels
    const int64_t weight_rows = p.K * p.filter[0] * p.filter[1];
    const kernels::WidthUnfolding geometry = kernels::width_unfolding_geometry(p, unfolded);
    TD_RETURN_IF_CUDA_ERROR(kernels::unfold_width<Element>(args.input, sub.input, geometry, args.stream));
    if constexpr (Traits::kDirection == ConvDirection::kFwd) {
      TD_RETURN_IF_CUDA_ERROR(
          kernels::copy_channel_rows<Element>(args.weight, sub.weight, weight_rows, row, unfolded, args.stream));
    }
    TD_RETURN_IF_CUDA_ERROR(run(q, sub));
    if constexpr (Traits::kDirection == ConvDirection::kBwdWeight) {
      return kernels::copy_channel_rows<Element>(sub.weight, args.weight, weight_rows, unfolded, row, args.stream);
    } else {
      return cudaSuccess;
    }
  }

  static size_t pairing_bytes(const ConvProblem& p) {
    const int factor = pairing(p);  // the expanded weights
    return factor > 1 ? size_t(kernels::paired_weight_elements(p, factor)) * Config::kElemBytes : 0;
  }

  // The GEMM of `p`, its groups paired where they are few channels wide (the expanded weights go to the
  // workspace); `phase` maps the rows of a stride phase to the whole input gradient.
  cudaError_t run_grouped(const ConvProblem& p, const ConvArgs& args, const kernels::PhaseOutput* phase) const {
    if (const int factor = pairing(p); factor > 1) {
      TD_RETURN_IF_CUDA_ERROR(kernels::expand_paired_weights<typename Config::ElementGlobal>(
          p, factor, args.weight, args.workspace, args.stream));
      ConvArgs paired = args;
      paired.weight = args.workspace;
      paired.workspace = nullptr;
      paired.workspace_bytes = 0;
      return run_gemm(kernels::paired_problem(p, factor), paired, phase);
    }
    return run_gemm(p, args, phase);
  }

  // The phases' filters gathered into the workspace, then every phase in one launch of the Hopper kernel where
  // it can carry them (batch_phases), launched as a programmatic dependent of the gather: the launch and the
  // CTAs' setup overlap the gather, and the producer waits for the filters before its first load. Where phase 0
  // holds every tap (zeros_beside_phase_0) its filter is the weights as they are, and that launch runs alone.
  // Else zeros where a phase has no taps and one unit-stride GEMM per phase with taps (the workspace after the
  // filters serves each phase's paired weights in turn).
  cudaError_t run_phases(const ConvProblem& p, const ConvArgs& args, const kernels::StridePhases& phases) const {
    using Element = typename Config::ElementGlobal;
    auto* filters = static_cast<Element*>(args.workspace);
    if constexpr (Sm90::kBuildable && Sm90::kMaxGemms > 1) {
      Sm90Launch sm90{};
      if (batch_phases(p, args, phases, sm90)) {
        const bool gathers = !sm90.gemms[0].gemm.shape.zero_siblings;  // batch_phases chose zeros_beside
        if (gathers) {
          TD_RETURN_IF_CUDA_ERROR(
              kernels::gather_phase_filters<Element>(p, phases, args.weight, filters, args.stream));
        }
        sm90.operands_from_predecessor = gathers;
        return launch_sm90_params(sm90, args.stream, gathers);
      }
    }
    TD_RETURN_IF_CUDA_ERROR(kernels::gather_phase_filters<Element>(p, phases, args.weight, filters, args.stream));
    if (phases.zero_phases) {
      TD_RETURN_IF_CUDA_ERROR(kernels::zero_phase_pixels<Element>(p, phases, args.input, args.stream));
    }
    const size_t filter_bytes = size_t(phases.filter_elements) * Config::kElemBytes;
    bool first = true;
    for (int phase = 0; phase < phases.count; ++phase) {
      if (!runs_phase(phases, phase)) continue;
      ConvArgs sub = args;
      sub.weight = filters + phases.filter_offset[phase];
      sub.workspace = static_cast<unsigned char*>(args.workspace) + filter_bytes;
      sub.workspace_bytes = args.workspace_bytes - filter_bytes;
      const ConvProblem q = kernels::phase_problem(p, phases, phase);
      kernels::PhaseOutput output = kernels::phase_output(p, phases, phase);
      // A phase whose groups are paired expands its weights first, a kernel that must wait for the phase before.
      output.overlaps_previous = !first && pairing(q) == 1;
      first = false;
      TD_RETURN_IF_CUDA_ERROR(run_grouped(q, sub, &output));
    }
    return cudaSuccess;
  }

  // The kernels' parameters of the GEMM of `p` (`phase`: rows mapped to a stride phase's pixels).
  static kernels::ImplicitGemmParams<typename Config::Index> gemm_params(const ConvProblem& p, const ConvArgs& args,
                                                                        const kernels::PhaseOutput* phase) {
    using Index = typename Config::Index;
    kernels::ImplicitGemmParams<Index> params{};
    params.shape = kernels::make_conv_shape<Index>(p, Traits::kDirection, Traits::kNumGroupsToMerge);
    if (phase != nullptr) kernels::apply_phase_output(*phase, params.shape);
    const int64_t k_tiles = ceil_div(int64_t(params.shape.gemm_k), Traits::kTileK);
    const int k_batch = args.k_batch;
    params.shape.k_tiles_per_split = Index(ceil_div(k_tiles, int64_t(k_batch)));
    params.k_batch = k_batch;
    params.tiles_m = int(ceil_div(int64_t(params.shape.gemm_m), Traits::kTileM));
    constexpr DirectionRoles kRoles = direction_roles(Traits::kDirection);
    params.a = tensor_argument(args, kRoles.a);
    params.b = tensor_argument(args, kRoles.b);
    params.c = tensor_argument(args, kRoles.c);
    params.partial_slice = p.weight_elements();
    return params;
  }

  cudaError_t run_gemm(const ConvProblem& p, const ConvArgs& args, const kernels::PhaseOutput* phase) const {
    if constexpr (!kRuns) {
      return cudaErrorNotSupported;
    } else {
      const auto params = gemm_params(p, args, phase);
      if constexpr (Traits::kStreamK) {
        return run_streamk(p, args, params);
      } else {
        return run_split_k(p, args, params, phase != nullptr && phase->overlaps_previous);
      }
    }
  }

  // `overlap`: the Hopper kernel may start while the stream's previous kernel runs (a stride phase after the
  // first: phases write disjoint pixels and read what was written before the first one).
  cudaError_t run_split_k(const ConvProblem& p, const ConvArgs& args,
                          kernels::ImplicitGemmParams<typename Config::Index> params, bool overlap = false) const {
    const int k_batch = args.k_batch;
    const bool to_workspace = splits_to_workspace(k_batch);
    params.partial = to_workspace ? static_cast<float*>(args.workspace) : nullptr;
    if constexpr (!Sm90::kBuildable) {
      TD_RETURN_IF_CUDA_ERROR(launch_first_generation(p, args, params));
    } else if constexpr (kFirstGenerationFallback) {
      TD_RETURN_IF_CUDA_ERROR(runs_first_generation(p) ? launch_first_generation(p, args, params)
                                                       : launch_sm90(p, args, params, overlap));
    } else {
      TD_RETURN_IF_CUDA_ERROR(launch_sm90(p, args, params, overlap));
    }
    return to_workspace ? reduce_splits(p, args) : cudaSuccess;
  }

  // The weight gradient from the k_batch fp32 slices in the workspace, summed in a fixed order.
  static cudaError_t reduce_splits(const ConvProblem& p, const ConvArgs& args) {
    using Element = typename Config::ElementGlobal;
    return kernels::launch_reduce_partials(static_cast<const float*>(args.workspace),
                                           static_cast<Element*>(args.weight), p.weight_elements(), args.k_batch,
                                           args.stream);
  }

  cudaError_t run_merged_direct(const ConvProblem& p, const ConvArgs& args,
                                const kernels::MergedGroupBwdWeightPlan& plan) const {
    if constexpr (!kMergedDirect) {
      return cudaErrorNotSupported;
    } else {
      using Element = typename Config::ElementGlobal;
      using Mma = typename kernels::MmaOp<Traits::kDataType, Traits::kDataType == DataType::kFp32 ? 8 : 16>::type;
      auto* kernel =
          &kernels::merged_group_bwd_weight_kernel<Element, Mma, Config::kThreads, kDirectStages, Traits::kTileK>;
      TD_RETURN_IF_CUDA_ERROR(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(plan.smem_bytes)));
      const bool to_workspace = splits_to_workspace(args.k_batch);
      constexpr int kWarps = Config::kThreads / 32;
      const dim3 grid(unsigned(plan.k_batch), unsigned(ceil_div(plan.items, kWarps)), unsigned(plan.group_blocks));
      kernels::MergedGroupBwdWeightMaps maps;
      if (!kernels::encode_merged_group_bwd_weight_maps(plan, Traits::kDataType, args.input, args.output, maps)) {
        return cudaErrorNotSupported;  // the driver refused a tensor map (the plan keeps every box legal)
      }
      kernel<<<grid, Config::kThreads, plan.smem_bytes, args.stream>>>(
          plan, maps, static_cast<Element*>(args.weight), to_workspace ? static_cast<float*>(args.workspace) : nullptr);
      TD_RETURN_IF_CUDA_ERROR(cudaGetLastError());
      return to_workspace ? reduce_splits(p, args) : cudaSuccess;
    }
  }

  cudaError_t run_merged_direct_activations(const ConvProblem& p, const ConvArgs& args,
                                    kernels::MergedGroupDirectPlan plan) const {
    if constexpr (!kMergedDirectActivations) {
      return cudaErrorNotSupported;
    } else {
      using Element = typename Config::ElementGlobal;
      constexpr bool kFwd = Traits::kDirection == ConvDirection::kFwd;
      // strided bwd_data by stride phases: a kernel of its own (the one-phase kernel skips the phases' lookups);
      // fwd instances compile only the one-phase kernel (both branches name it)
      constexpr int kBlockK = kernels::merged_group_direct_block_k(Traits::kTileN / Traits::kNumGroupsToMerge);
      auto* kernel = plan.phases > 1 && !kFwd
                         ? &kernels::merged_group_direct_kernel<Traits::kDataType, Config::kThreads, Traits::kTileN,
                                                                kBlockK, kDirectActivationStages, !kFwd>
                         : &kernels::merged_group_direct_kernel<Traits::kDataType, Config::kThreads, Traits::kTileN,
                                                                kBlockK, kDirectActivationStages, false>;
      TD_RETURN_IF_CUDA_ERROR(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(plan.smem_bytes)));
      int per_sm = 0, sms = 0;
      TD_RETURN_IF_CUDA_ERROR(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Config::kThreads, plan.smem_bytes));
      TD_RETURN_IF_CUDA_ERROR(sm_count(&sms));
      kernels::merged_group_direct_grid(plan, int64_t(std::max(per_sm, 1)) * sms);
      const dim3 grid(unsigned(plan.ctas), unsigned(plan.group_blocks));
      CUtensorMap src_map;
      if (!kernels::encode_merged_group_direct_map(plan, Traits::kDataType, kFwd ? args.input : args.output, src_map)) {
        return cudaErrorNotSupported;  // the driver refused the tensor map (the plan keeps every box legal)
      }
      kernel<<<grid, Config::kThreads, plan.smem_bytes, args.stream>>>(
          plan, src_map, static_cast<const Element*>(args.weight),
          static_cast<Element*>(kFwd ? args.output : args.input));
      return cudaGetLastError();
    }
  }

  cudaError_t launch_first_generation(const ConvProblem& p, const ConvArgs& args,
                                      const kernels::ImplicitGemmParams<typename Config::Index>& params) const {
    const int tiles_n = int(ceil_div(int64_t(params.shape.gemm_n), Traits::kTileN));
    auto* kernel = &kernels::implicit_gemm_kernel<Config>;
    const int smem = int(Config::kSmemBytes);
    TD_RETURN_IF_CUDA_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const dim3 grid(unsigned(params.tiles_m) * unsigned(tiles_n), 1,
                    unsigned(p.G / Traits::kNumGroupsToMerge) * unsigned(args.k_batch));
    kernel<<<grid, Config::kThreads, smem, args.stream>>>(params);
    return cudaGetLastError();
  }

  using Sm90Launch = kernels::sm90::Sm90Params<typename Config::Index, Sm90::kMaxGemms>;

  // The Hopper kernel's GEMM of `p`: its work units and (`tma`) the tensor maps of the operands TMA can move.
  static kernels::sm90::Sm90Gemm<typename Config::Index> sm90_gemm(
      const ConvProblem& p, const kernels::ImplicitGemmParams<typename Config::Index>& params, int k_batch,
      bool tma = true) {
    kernels::sm90::Sm90Gemm<typename Config::Index> gemm{};
    gemm.gemm = params;
    gemm.schedule = kernels::sm90::TileSchedule::of(
        params.tiles_m, int(ceil_div(int64_t(params.shape.gemm_n), Traits::kTileN)), p.G / Traits::kNumGroupsToMerge,
        k_batch);
    if (tma) describe_tma_operands<Sm90>(p, params, gemm.tma);
    if constexpr (Sm90::kHasColumns) {
      // the column variant where the swizzled stages would gather the operand it takes by TMA
      constexpr bool kColumnOperandIsA = Sm90::kColumnsShapeA;
      if (tma && !(kColumnOperandIsA ? gemm.tma.use_a : gemm.tma.use_b)) {
        kernels::sm90::TmaOperands columns{};
        describe_tma_operands<Sm90Columns>(p, params, columns);
        if (kColumnOperandIsA ? columns.use_a : columns.use_b) {
          gemm.tma = columns;
          gemm.tma.columns = true;
        }
      }
    }
    return gemm;
  }

  cudaError_t launch_sm90(const ConvProblem& p, const ConvArgs& args,
                          const kernels::ImplicitGemmParams<typename Config::Index>& params, bool overlap) const {
    if constexpr (Sm90::kBuildable) {
      Sm90Launch sm90{};
      sm90.gemms[0] = sm90_gemm(p, params, args.k_batch);
      sm90.count = 1;
      sm90.units = sm90.gemms[0].schedule.units;
      describe_tma_store(params, sm90);
      if (folds(p)) {
        sm90.fold = static_cast<float*>(args.workspace) +
                    (splits_to_workspace(args.k_batch) ? split_bytes(p, args.k_batch) / sizeof(float) : 0);
      }
      return launch_sm90_params(sm90, args.stream, overlap);
    } else {
      return cudaErrorNotSupported;
    }
  }

  // The stride phases of `p` as the GEMMs of one launch (the filters already in the workspace): the phases
  // with most taps first, so that the persistent CTAs end on short units, and phases without taps last, GEMMs
  // of no k-tiles whose epilogue stores the zeros; where phase 0 alone has taps (zeros_beside), phase 0's GEMM
  // alone, whose epilogue stores the others' zeros beside each of its pixels (the units of no k-tiles took as
  // long as the GEMM itself on a 1x1 stride-2 layer: docs/performance.md, session 37). False where one launch
  // cannot carry them: more phases than Sm90::kMaxGemms, a phase on paired groups (its weights would expand
  // into workspace another phase uses) or on the first generation, or phases whose operands take different
  // paths (TMA or gathers, diagonal or not).
  static bool batch_phases(const ConvProblem& p, const ConvArgs& args, const kernels::StridePhases& phases,
                           Sm90Launch& sm90) {
    int order[kernels::StridePhases::kMaxPhases];
    int count = 0;
    const bool beside = zeros_beside(p, phases);
    for (int phase = 0; phase < (beside ? 1 : phases.count); ++phase) {
      if (phases.pixels_per_image(phase) > 0) order[count++] = phase;
    }
    if (count > Sm90::kMaxGemms) return false;
    std::stable_sort(order, order + count, [&](int a, int b) { return phases.taps(a) > phases.taps(b); });
    auto* filters = static_cast<typename Config::ElementGlobal*>(args.workspace);
    for (int i = 0; i < count; ++i) {
      const int phase = order[i];
      const bool zeros = !runs_phase(phases, phase);
      const ConvProblem q = kernels::phase_problem(p, phases, phase);
      if (!zeros && (pairing(q) > 1 || runs_first_generation(q))) return false;
      ConvArgs sub = args;
      if (!beside) sub.weight = filters + phases.filter_offset[phase];  // beside: phase 0's filter is the weights
      const kernels::PhaseOutput output = kernels::phase_output(p, phases, phase);
      auto params = gemm_params(q, sub, &output);
      params.shape.zero_siblings = beside;
      if (zeros) params.shape.gemm_k = params.shape.k_tiles_per_split = 0;
      auto& gemm = sm90.gemms[i];
      gemm = sm90_gemm(q, params, 1, !zeros);  // a GEMM of no k-tiles loads nothing
      const auto& first = sm90.gemms[0].tma;
      if (!zeros && (gemm.tma.use_a != first.use_a || gemm.tma.use_b != first.use_b ||
                     gemm.tma.diagonal != first.diagonal || gemm.tma.columns != first.columns)) {
        return false;
      }
      sm90.units += gemm.schedule.units;
    }
    sm90.count = count;
    return true;
  }

  // Persistent: one CTA per SM (at most one per work unit) walks the units of the launch's GEMMs. A launch of
  // one GEMM where the configuration carries several (bwd_data at unit stride, a stride phase launched alone)
  // takes the kernel of one GEMM (sm90/kernel.cuh, `Gemms`).
  static cudaError_t launch_sm90_params(const Sm90Launch& sm90, cudaStream_t stream, bool overlap) {
    int sms = 0;
    TD_RETURN_IF_CUDA_ERROR(sm_count(&sms));
    const unsigned ctas = unsigned(std::min<int64_t>(sm90.units, sms));
    if constexpr (Sm90::kMaxGemms > 1) {
      if (sm90.count == 1) return launch_sm90_diagonal_or_not(sm90.one_gemm(), ctas, stream, overlap);
    }
    return launch_sm90_diagonal_or_not(sm90, ctas, stream, overlap);
  }
  template <int Gemms>
  static cudaError_t launch_sm90_diagonal_or_not(const kernels::sm90::Sm90Params<typename Config::Index, Gemms>& sm90,
                                                 unsigned ctas, cudaStream_t stream, bool overlap) {
    if constexpr (Sm90::kDiagonal) {
      if (sm90.gemms[0].tma.diagonal) return launch_sm90_kernel<Sm90, true>(sm90, ctas, stream, overlap);
    }
    if constexpr (Sm90::kHasColumns) {
      if (sm90.gemms[0].tma.columns) return launch_sm90_kernel<Sm90Columns, false>(sm90, ctas, stream, overlap);
    }
    return launch_sm90_kernel<Sm90, false>(sm90, ctas, stream, overlap);
  }

  // A Hopper kernel of this configuration (`Cfg`: Sm90 or its column variant): the diagonal one (merged groups
  // by diagonal blocks) or the other.
  // `overlap`: a programmatic dependent launch, whose CTAs take the SMs the previous kernel's last CTAs leave
  // (the kernel lets dependents start at once and waits for its predecessor before it exits, so stream order
  // holds for whatever follows).
  template <class Cfg, bool Diagonal, int Gemms>
  static cudaError_t launch_sm90_kernel(const kernels::sm90::Sm90Params<typename Config::Index, Gemms>& sm90,
                                        unsigned ctas, cudaStream_t stream, bool overlap) {
    auto* kernel = &kernels::sm90::sm90_implicit_gemm_kernel<Cfg, Diagonal, Gemms>;
    if constexpr (Cfg::kReallocatesRegisters) {
      // The consumers' setmaxnreg.inc takes what the producer frees from the launch's registers; a kernel
      // compiled to fewer would wait forever, so refuse it (once per kernel: the count is fixed at build).
      static const int registers = [kernel] {
        cudaFuncAttributes attributes{};
        return cudaFuncGetAttributes(&attributes, kernel) == cudaSuccess ? attributes.numRegs : -1;
      }();
      if (registers != Cfg::kLaunchRegisters) return cudaErrorLaunchOutOfResources;
    }
    const int smem = int(Cfg::kSmemBytes);
    TD_RETURN_IF_CUDA_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    if (!overlap) {
      kernel<<<ctas, Cfg::kThreads, smem, stream>>>(sm90);
      return cudaGetLastError();
    }
    return kernels::launch_dependent(kernel, dim3(ctas), dim3(Cfg::kThreads), size_t(smem), stream, sm90);
  }

  // The output as a matrix of the GEMM's rows, for the staged epilogue's TMA stores (Sm90Config::kTmaStoreC):
  // fwd, and bwd_data at unit stride (outside a stride phase its GEMM rows are dX's pixels), written whole (no
  // split workspace), each staged slice (kEpilogueColumns) inside one group block (one group, or GEMM N a
  // multiple of the slice). The map is the views' own addressing (c_prepare: row m at m * columns, then the
  // group's base); its boxes are a slice of 64 staged rows, swizzled as staged.
  static void describe_tma_store(const kernels::ImplicitGemmParams<typename Config::Index>& params,
                                 Sm90Launch& sm90) {
    sm90.use_c = false;
    if constexpr (Sm90::kTmaStoreC) {
      const auto& shape = params.shape;
      constexpr bool kFwd = Traits::kDirection == ConvDirection::kFwd;
      const int64_t columns = kFwd ? int64_t(shape.K) : int64_t(shape.C);
      if (params.partial != nullptr || (!kFwd && shape.xsd != 0)) return;
      if (shape.G > 1 && int64_t(shape.gemm_n) % Sm90::kEpilogueColumns != 0) return;
      if (columns % 8 != 0 || reinterpret_cast<uintptr_t>(params.c) % 16 != 0) return;
      // TMA's coordinates are 32-bit; a tile's last rows may lie past GEMM M
      if (int64_t(shape.gemm_m) + Traits::kTileM > int64_t(INT32_MAX) || columns > int64_t(INT32_MAX)) return;
      const uint64_t extents[2] = {uint64_t(columns), uint64_t(shape.gemm_m)};
      const uint64_t pitch_bytes[1] = {uint64_t(columns) * uint64_t(Sm90::kElemBytes)};
      const uint32_t box[2] = {uint32_t(Sm90::kEpilogueColumns), 64u};
      sm90.use_c = kernels::sm90::encode_tma_tiled(sm90.c, Traits::kDataType, params.c, 2, extents, pitch_bytes, box,
                                                   Sm90::kEpilogueRowBytes);
    }
  }

  // The TMA tensor maps of the operands TMA can move for this problem (sm90/tma.hpp): plain strided boxes
  // where the row pitch and extents allow, and im2col windows where, in addition, a k-tile lies in one tap and
  // one group and the window's corners fit the descriptor; the producer gathers every other operand.
  template <class Cfg>
  static void describe_tma_operands(const ConvProblem& p,
                                    const kernels::ImplicitGemmParams<typename Config::Index>& params,
                                    kernels::sm90::TmaOperands& tma) {
    constexpr int64_t kCoordLimit = int64_t(INT32_MAX);
    const auto& shape = params.shape;
    tma.use_a = tma.use_b = tma.diagonal = tma.columns = false;
    if constexpr (Cfg::kDiagonal) {
      // Merged groups by diagonal blocks where the per-group GEMM extents are the configuration's tile_k / GM
      // and tile_n / GM (and both maps encode); any other problem keeps the zero-filled block-diagonal gathers.
      describe_diagonal_operands(p, params, tma);
      if (tma.diagonal) return;
    }
    if constexpr (Cfg::kTmaB) {
      const int64_t row = int64_t(shape.taps) * shape.Cg;  // weights: (taps*C/G, K) row-major
      const uint64_t extents[2] = {uint64_t(row), uint64_t(p.K)};
      const uint64_t pitches[1] = {uint64_t(row * Config::kElemBytes)};
      const uint32_t box[2] = {uint32_t(Traits::kTileK), uint32_t(Traits::kTileN)};
      if (pitches[0] % 16 == 0 && p.K + Traits::kTileN <= kCoordLimit) {
        tma.use_b = kernels::sm90::encode_tma_tiled(tma.b, Traits::kDataType, params.b, 2, extents, pitches, box,
                                                    Cfg::kSpanK);
        tma.b_group_step = int32_t(shape.Kg);
      }
    }
    if constexpr (Cfg::kTmaA) {
      const int64_t pixels = int64_t(shape.gemm_k);  // output gradient: (K, N*Do*Ho*Wo) row-major
      const uint64_t extents[2] = {uint64_t(p.K), uint64_t(pixels)};
      const uint64_t pitches[1] = {uint64_t(p.K * Config::kElemBytes)};
      const uint32_t box[2] = {uint32_t(Cfg::kAtomM), uint32_t(Traits::kTileK)};
      if (output_gradient_fits_tma(p, pixels)) {
        tma.use_a = kernels::sm90::encode_tma_tiled(tma.a, Traits::kDataType, params.a, 2, extents, pitches, box,
                                                    Cfg::kAtomM * Config::kElemBytes);
        tma.a_group_step = int32_t(shape.Kg * Traits::kNumGroupsToMerge);
      }
    }
    constexpr bool kBwdData = Traits::kDirection == ConvDirection::kBwdData;
    const typename Config::View view{shape, 0};
    const bool by_tile = view.tile_addressing(Traits::kTileK);
    if constexpr (Cfg::kColumnsA) {
      // boxes of one column (kColumnK channels) each, unswizzled, also where a k-tile spans whole taps
      kernels::sm90::Im2colGeometry geometry{};
      int64_t channels_per_group = 0;
      if ((by_tile || view.tap_addressing(Traits::kTileK)) && shape.Cg % Cfg::kColumnK == 0 &&
          im2col_geometry(p, kBwdData, geometry, channels_per_group)) {
        tma.use_a = kernels::sm90::encode_tma_im2col(tma.a, Traits::kDataType, params.a, geometry,
                                                     uint32_t(Cfg::kColumnK), Traits::kTileM, 16);
        tma.a_group_step = int32_t(channels_per_group);
      }
    } else if constexpr (Cfg::kTmaIm2colA) {
      kernels::sm90::Im2colGeometry geometry{};
      int64_t channels_per_group = 0;
      if (by_tile && im2col_geometry(p, kBwdData, geometry, channels_per_group)) {
        tma.use_a = kernels::sm90::encode_tma_im2col(tma.a, Traits::kDataType, params.a, geometry, Traits::kTileK,
                                                     Traits::kTileM, Cfg::kSpanK);
        tma.a_group_step = int32_t(channels_per_group);
      }
    }
    if constexpr (Cfg::kTmaAtomsB) {
      constexpr uint32_t kAtom = uint32_t(Cfg::kAtomN), kSpan = kAtom * uint32_t(Config::kElemBytes);
      if constexpr (kBwdData) {
        // weights as (C/G, taps, K): one box per atom of a k-tile, which lies in one tap
        const uint64_t extents[3] = {uint64_t(shape.Cg), uint64_t(shape.taps), uint64_t(p.K)};
        const uint64_t pitches[2] = {extents[0] * Config::kElemBytes, extents[0] * extents[1] * Config::kElemBytes};
        const uint32_t box[3] = {kAtom, 1, uint32_t(Traits::kTileK)};
        if (by_tile && pitches[0] % 16 == 0 && p.K + Traits::kTileK <= kCoordLimit) {
          tma.use_b = kernels::sm90::encode_tma_tiled(tma.b, Traits::kDataType, params.b, 3, extents, pitches, box,
                                                      int(kSpan));
          tma.b_group_step = int32_t(shape.Kg);
        }
      } else {
        kernels::sm90::Im2colGeometry geometry{};
        if (input_fits_im2col(p, int(kAtom), geometry)) {
          tma.use_b = kernels::sm90::encode_tma_im2col(tma.b, Traits::kDataType, params.b, geometry, kAtom,
                                                       uint32_t(Traits::kTileK), int(kSpan));
        }
      }
    }
  }

  // bwd_weight's output gradient as the tiled map of (K, `pixels`) rows: the row pitch, and a box's first element,
  // on 16 bytes. A group block's first output channel (g * GM * K/G, along the innermost dimension) lies there
  // only where GM * K/G does (K/G = 4: odd groups would not, and TMA stops such a load with an illegal
  // instruction); the tile and atom offsets within it do.
  static bool output_gradient_fits_tma(const ConvProblem& p, int64_t pixels) {
    const int64_t group_step = p.K / p.G * Traits::kNumGroupsToMerge;
    return p.K * Config::kElemBytes % 16 == 0 && group_step * Config::kElemBytes % 16 == 0 &&
           pixels + Traits::kTileK <= int64_t(INT32_MAX) && p.K + Traits::kTileM <= int64_t(INT32_MAX);
  }
  // bwd_weight's input through its im2col window (`geometry`), boxes of `atom` channels, each inside one tap's run
  // of GM x C/G channels.
  static bool input_fits_im2col(const ConvProblem& p, int atom, kernels::sm90::Im2colGeometry& geometry) {
    int64_t channels_per_group = 0;
    return im2col_geometry(p, false, geometry, channels_per_group) &&
           channels_per_group * Traits::kNumGroupsToMerge % atom == 0;
  }

  // diagonal_groups(p), and where it holds the im2col window of A (the input fwd, the output gradient bwd_data).
  static bool diagonal_geometry(const ConvProblem& p, kernels::sm90::Im2colGeometry& geometry) {
    if constexpr (!Sm90::kBuildable || !Sm90::kDiagonal) {
      return false;
    } else {
      constexpr bool kFwd = Traits::kDirection == ConvDirection::kFwd;
      if (p.ndim_spatial != Traits::kNDimSpatial || p.G % Traits::kNumGroupsToMerge != 0) return false;
      const int64_t cg = p.C / p.G, kg = p.K / p.G;
      if ((kFwd ? cg : kg) != Sm90::kGroupTileK || (kFwd ? kg : cg) != Sm90::kGroupTileN) return false;
      if (p.K + Traits::kTileN + Traits::kTileK > int64_t(INT32_MAX)) return false;
      int64_t channels_per_group = 0;
      return im2col_geometry(p, !kFwd, geometry, channels_per_group);
    }
  }

  // The diagonal mode's maps (sm90/tma.hpp): A by im2col (fwd the input; bwd_data the output gradient with
  // the filter flipped, unit stride), boxes of tile_k = GM x the per-group GEMM K channels (all merged groups of
  // one tap) by tile_m pixels; B the weights, boxes of one diagonal block: fwd (taps*C/G, K) by (C/G, K/G),
  // bwd_data (C/G, taps, K) by (C/G, 1, K/G). Sets tma.diagonal where the problem's C/G and K/G are the
  // configuration's and both maps encode.
  static void describe_diagonal_operands(const ConvProblem& p,
                                         const kernels::ImplicitGemmParams<typename Config::Index>& params,
                                         kernels::sm90::TmaOperands& tma) {
    constexpr bool kFwd = Traits::kDirection == ConvDirection::kFwd;
    const auto& shape = params.shape;
    kernels::sm90::Im2colGeometry geometry{};
    if (!diagonal_geometry(p, geometry)) return;
    const uint64_t elem = Config::kElemBytes;
    bool encoded = false;
    if constexpr (kFwd) {
      const uint64_t row = uint64_t(shape.taps) * uint64_t(shape.Cg);
      const uint64_t extents[2] = {row, uint64_t(p.K)};
      const uint64_t pitches[1] = {row * elem};
      const uint32_t box[2] = {uint32_t(Sm90::kGroupTileK), uint32_t(Sm90::kGroupTileN)};
      encoded = pitches[0] % 16 == 0 && kernels::sm90::encode_tma_tiled(tma.b, Traits::kDataType, params.b, 2,
                                                                         extents, pitches, box, Sm90::kGroupSpanB);
    } else {
      const uint64_t extents[3] = {uint64_t(shape.Cg), uint64_t(shape.taps), uint64_t(p.K)};
      const uint64_t pitches[2] = {extents[0] * elem, extents[0] * extents[1] * elem};
      const uint32_t box[3] = {uint32_t(Sm90::kGroupTileN), 1, uint32_t(Sm90::kGroupTileK)};
      encoded = pitches[0] % 16 == 0 && kernels::sm90::encode_tma_tiled(tma.b, Traits::kDataType, params.b, 3,
                                                                         extents, pitches, box, Sm90::kGroupSpanB);
    }
    if (!encoded || !kernels::sm90::encode_tma_im2col(tma.a, Traits::kDataType, params.a, geometry, Traits::kTileK,
                                                      Traits::kTileM, Sm90::kSpanK)) {
      return;
    }
    tma.a_group_step = int32_t(Traits::kTileK);                     // A's channels of a group block
    tma.b_group_step = int32_t(kFwd ? Traits::kTileN : Traits::kTileK);  // B's output channels of a group block
    tma.diagonal = true;
  }

  // The im2col view of an activation tensor: the input (fwd A, bwd_weight B), or the output gradient read
  // with the filter flipped (`flipped`, bwd_data A, unit stride only). False where the descriptor cannot
  // express it (row pitch, corner range, extents).
  static bool im2col_geometry(const ConvProblem& p, bool flipped, kernels::sm90::Im2colGeometry& g,
                              int64_t& channels_per_group) {
    const auto out = p.output();
    const int spatial = Traits::kNDimSpatial;
    // Corners are signed 16-bit numbers split over the spatial dimensions (2D: [-128, 127], 3D: [-16, 15]).
    const int corner_limit = spatial == 2 ? 128 : 16;
    const int64_t channels = flipped ? p.K : p.C;
    channels_per_group = channels / p.G;
    if (channels * Config::kElemBytes % 16 != 0) return false;
    g.spatial = spatial;
    g.extent[0] = uint64_t(channels);
    g.extent[4] = uint64_t(p.N);
    for (int i = 0; i < 3; ++i) {
      // The descriptor orders the spatial dimensions (W, H, D); the problem stores (D, H, W).
      const int axis = 2 - i;
      const auto& source = flipped ? out : p.input;
      g.extent[i + 1] = uint64_t(source[axis]);
      const int64_t window = (p.filter[axis] - 1) * p.dilation[axis];
      int64_t lower = 0, upper = 0;
      if (!flipped) {
        lower = -p.left_pad[axis];
        upper = p.right_pad[axis] - window;
        g.stride[i] = uint32_t(p.stride[axis]);
      } else {
        if (p.stride[axis] != 1) return false;
        lower = p.left_pad[axis] - window;
        upper = lower + p.input[axis] - out[axis];
        g.stride[i] = 1;
      }
      if (i >= spatial) continue;
      if (lower < -corner_limit || lower >= corner_limit || upper < -corner_limit || upper >= corner_limit ||
          window > UINT16_MAX || int64_t(g.extent[i + 1]) > kCoordLimitIm2col) {
        return false;
      }
      g.lower_corner[i] = int(lower);
      g.upper_corner[i] = int(upper);
    }
    if (spatial == 2) g.extent[3] = 1;
    return p.N <= kCoordLimitIm2col;
  }
  static constexpr int64_t kCoordLimitIm2col = int64_t(INT32_MAX) / 2;

  static constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

  // Whether the partial sums go to the workspace (stream-K slots, or one slice per split) before a reduction.
  static bool splits_to_workspace(int k_batch) {
    return Traits::kDirection == ConvDirection::kBwdWeight &&
           (Traits::kStreamK || Traits::kTwoStage || k_batch > 1);
  }
  static size_t split_bytes(const ConvProblem& p, int k_batch) {
    return size_t(std::max(k_batch, 1)) * size_t(p.weight_elements()) * sizeof(float);
  }
  // Whether the Hopper kernel folds its accumulators (sm90/config.hpp, kFolds) for this problem: where the
  // whole GEMM K (a k_batch-1 chain) is longer than kFoldTiles k-tiles. Decided on the problem alone, so that
  // the workspace grows with k_batch and one sized for a larger k_batch serves a smaller one.
  static bool folds(const ConvProblem& p) {
    if constexpr (!Sm90::kBuildable || !Sm90::kFolds) {
      return false;
    } else {
      const int64_t gemm_k = gemm_extents(Traits::kDirection, p, Traits::kNumGroupsToMerge).k;
      return ceil_div(gemm_k, Traits::kTileK) > Sm90::kFoldTiles;
    }
  }
  static bool uses_workspace(const ConvProblem& p, int k_batch) {
    if (rewrite(p).any()) return true;
    if (runs_merged_direct(p)) return splits_to_workspace(k_batch);
    if (runs_merged_direct_activations(p)) return false;
    kernels::StridePhases phases;
    return splits_to_workspace(k_batch) || folds(p) || pairing(p) > 1 || stride_phases(p, phases);
  }
  static constexpr auto streamk_kernel_ptr() {
    return &kernels::streamk_kernel<Config, Traits::kStreamKPersistent>;
  }

  // The stream-K partition of `p` on the current device (implicit_gemm_streamk.cuh): workers = SMs x the
  // blocks of this kernel that fit on one SM, at most one per MAC-loop iteration.
  static cudaError_t streamk_plan(const ConvProblem& p, kernels::StreamKPlan& plan) {
    if constexpr (!Config::kImplemented || !Traits::kStreamK) {
      return cudaErrorNotSupported;
    } else {
      int sms = 0, per_sm = 0;
      TD_RETURN_IF_CUDA_ERROR(sm_count(&sms));
      auto* kernel = streamk_kernel_ptr();
      const int smem = int(Config::kSmemBytes);
      TD_RETURN_IF_CUDA_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      TD_RETURN_IF_CUDA_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Config::kThreads, smem));
      const auto shape = kernels::make_conv_shape<int64_t>(p, Traits::kDirection, Traits::kNumGroupsToMerge);
      plan = kernels::make_streamk_plan(int(ceil_div(shape.gemm_m, Traits::kTileM)),
                                        int(ceil_div(shape.gemm_n, Traits::kTileN)),
                                        p.G / Traits::kNumGroupsToMerge, ceil_div(shape.gemm_k, Traits::kTileK),
                                        int64_t(sms) * std::max(per_sm, 1));
      return cudaSuccess;
    }
  }

  cudaError_t run_streamk(const ConvProblem& p, const ConvArgs& args,
                          kernels::ImplicitGemmParams<typename Config::Index> params) const {
    kernels::StreamKPlan plan{};
    TD_RETURN_IF_CUDA_ERROR(streamk_plan(p, plan));
    params.partial = nullptr;
    auto* slots = static_cast<float*>(args.workspace);
    const int smem = int(Config::kSmemBytes);
    const int64_t ctas =
        Traits::kStreamKPersistent ? plan.workers : plan.workers * int64_t(plan.max_pieces_per_worker);
    streamk_kernel_ptr()<<<unsigned(ctas), Config::kThreads, smem, args.stream>>>(params, plan, slots);
    TD_RETURN_IF_CUDA_ERROR(cudaGetLastError());
    constexpr int kTileElems = Traits::kTileM * Traits::kTileN;
    if (plan.max_pieces_per_tile < 2) return cudaSuccess;  // every tile was written whole
    if constexpr (Traits::kStreamKReduction == StreamKReduction::kTree) {
      for (int round = 0; (1 << round) < plan.max_pieces_per_tile; ++round) {
        const unsigned pairs = unsigned(ceil_div(plan.max_pieces_per_tile, int64_t(2) << round));
        kernels::streamk_tree_round<kTileElems>
            <<<dim3(unsigned(plan.tiles), pairs), 256, 0, args.stream>>>(plan, slots, round);
        TD_RETURN_IF_CUDA_ERROR(cudaGetLastError());
      }
    }
    kernels::streamk_finalize<Config, Traits::kStreamKReduction == StreamKReduction::kLinear>
        <<<unsigned(plan.tiles), 256, 0, args.stream>>>(params, plan, slots);
    return cudaGetLastError();
  }

  // Each vector must stay inside one run of contiguous, equally predicated elements (conv_gemm_view.hpp), of
  // the problem the kernel reads: paired groups read the paired problem's (the expanded weights).
  static Support check_vectors(const ConvProblem& p) {
    const int64_t gm = Traits::kNumGroupsToMerge;
    const int factor = pairing(p);
    const ConvProblem q = factor > 1 ? kernels::paired_problem(p, factor) : p;
    constexpr DirectionRoles kRoles = direction_roles(Traits::kDirection);
    if (Support s = check_vector("vector_size_a", Traits::kVectorSizeA, channel_run(q, kRoles.a, gm)); !s) return s;
    if (Support s = check_vector("vector_size_b", Traits::kVectorSizeB, channel_run(q, kRoles.b, gm)); !s) return s;
    return check_vector("vector_size_c", Traits::kVectorSizeC, channel_run(q, kRoles.c, gm));
  }

  static Support check_vector(const char* field, int width, const ChannelRun& run) {
    if (run.length % width != 0) {
      return Support::no(std::string(field) + " " + std::to_string(width) + " does not divide " + run.name + "=" +
                         std::to_string(run.length));
    }
    return Support::yes();
  }

  // The specialization (and explicit_gemm, which implies Filter1x1Stride1Pad0) against the problem.
  static Support check_geometry(const ConvProblem& p) {
    const int first = p.ndim_spatial == 3 ? 0 : 1;
    bool unit_filter = true, unit_stride = true, no_pad = true, filter3 = true;
    for (int i = first; i < 3; ++i) {
      unit_filter &= p.filter[i] == 1;
      unit_stride &= p.stride[i] == 1;
      no_pad &= p.left_pad[i] == 0 && p.right_pad[i] == 0;
      filter3 &= p.filter[i] == 3;
    }
    if (Traits::kExplicitGemm && !(unit_filter && unit_stride && no_pad)) {
      return Support::no("explicit_gemm needs a 1x1 filter, stride 1 and no padding");
    }
    switch (Traits::kSpecialization) {
      case ConvSpecialization::kDefault: break;
      case ConvSpecialization::kFilter1x1Pad0:
        if (!(unit_filter && no_pad)) return Support::no("Filter1x1Pad0 needs a 1x1 filter and no padding");
        break;
      case ConvSpecialization::kFilter1x1Stride1Pad0:
        if (!(unit_filter && unit_stride && no_pad)) {
          return Support::no("Filter1x1Stride1Pad0 needs a 1x1 filter, stride 1 and no padding");
        }
        break;
      case ConvSpecialization::kFilter3x3:
        if (!filter3 || p.c_per_group() != 1) {
          return Support::no("Filter3x3 needs a 3x3 (3x3x3) filter and C/G == 1, as in CK");
        }
        break;
    }
    return Support::yes();
  }
};

}  // namespace tiledispatch
