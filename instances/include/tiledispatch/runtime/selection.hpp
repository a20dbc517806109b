// Kernel selection: which supported instance runs a problem when the caller names none, and at which split-K
// factor (plan).
//
// KernelSelector is the plug-in point. LearnedSelector, the C API's, ranks (instance, split-K) pairs with the
// models compiled into the library (docs/runtime.md, "Selection"); TileHeuristicSelector is its fallback where
// the models cannot rank:
//   1. candidates are the instances whose signature matches the problem (direction, dtype, ndim) and whose
//      is_supported(problem) holds;
//   2. a depthwise instance, when one is supported, wins over implicit GEMM (it is specialised for G = C = K);
//   3. otherwise the highest score = fill x wave_eff x reuse, where for the direction's GEMM view
//      (M, N per group) and the instance's block tile (tile_m, tile_n) and num_groups_to_merge gm,
//        blocks     = ceil(M / tile_m) * ceil(N / tile_n) * ceil(G / gm)
//        fill       = M * N * G / (blocks * tile_m * tile_n * gm)        (work not wasted on tile padding)
//        wave_eff   = blocks / (ceil(blocks / kSmCount) * kSmCount)       (the last wave's idle SMs)
//        reuse      = min(1, tile_m * tile_n / (tile_m + tile_n) / 64)    (MACs per loaded element, relative
//                                                                          to a 128x128 tile)
//      with kSmCount = 132 (H100 SXM), fixed so that selection never touches the GPU;
//   4. ties (scores within 1e-9) go to the larger tile_m * tile_n * tile_k (more reuse per load), then to the
//      smaller name, so the choice is deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tiledispatch/runtime/instance.hpp"
#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/selection/ranker.hpp"

namespace tiledispatch {

// The block tile an instance string states (MPerBlock, NPerBlock, KPerBlock, NumGroupsToMerge); depthwise
// strings give TileH x TileW as M, 1 as N and K. Empty when the string is not one of CK's kernel strings.
struct BlockTile {
  int64_t m = 0, n = 0, k = 0, groups_to_merge = 1;
};
std::optional<BlockTile> parse_block_tile(std::string_view instance_string);

// What a run launches: an instance and its split-K factor.
struct LaunchChoice {
  const GroupedConvInstance* instance = nullptr;
  int k_batch = 1;
};

class KernelSelector {
 public:
  virtual ~KernelSelector() = default;
  // Picks one of `candidates` (all signature-matched and supported) for `problem`; nullptr when empty.
  [[nodiscard]] virtual const GroupedConvInstance* select(
      const ConvProblem& problem, ConvDirection direction,
      const std::vector<const GroupedConvInstance*>& candidates) const = 0;
  // The launch on a GPU of `sms` multiprocessors: select()'s instance at its preferred split-K factor
  // (bwd_weight; 1 otherwise). No instance when `candidates` is empty.
  [[nodiscard]] virtual LaunchChoice plan(const ConvProblem& problem, ConvDirection direction,
                                          const std::vector<const GroupedConvInstance*>& candidates,
                                          int sms) const {
    const GroupedConvInstance* chosen = select(problem, direction, candidates);
    if (chosen == nullptr) return {};
    return {chosen, direction == ConvDirection::kBwdWeight ? chosen->preferred_split_k(problem, sms) : 1};
  }
};

class TileHeuristicSelector final : public KernelSelector {
 public:
  static constexpr int64_t kSmCount = 132;
  [[nodiscard]] const GroupedConvInstance* select(
      const ConvProblem& problem, ConvDirection direction,
      const std::vector<const GroupedConvInstance*>& candidates) const override;
  // The score of step 3 (0 when the instance string states no tile).
  [[nodiscard]] static double score(const ConvProblem& problem, ConvDirection direction, const BlockTile& tile);
};

// The C API's selector: the models compiled into the library (selection/embedded_models.hpp) rank every
// candidate with each of its own split-K factors (split_k_candidates on `sms` multiprocessors; select() takes
// kSmCount), the same trees and features as heuristics.select.LearnedSelector in Python; where a depthwise
// instance is among the candidates, only the depthwise ones (as the tile heuristic's step 2). Where the models
// cannot rank the candidates (no model compiled in for the direction, a name the features do not parse), the
// tile heuristic and the instance's preferred factor decide. The models load on first use: not thread-safe
// on its own (the C API calls it under its lock).
class LearnedSelector final : public KernelSelector {
 public:
  LearnedSelector();
  [[nodiscard]] const GroupedConvInstance* select(
      const ConvProblem& problem, ConvDirection direction,
      const std::vector<const GroupedConvInstance*>& candidates) const override;
  [[nodiscard]] LaunchChoice plan(const ConvProblem& problem, ConvDirection direction,
                                  const std::vector<const GroupedConvInstance*>& candidates,
                                  int sms) const override;

 private:
  mutable selection::Ranker ranker_;
  TileHeuristicSelector fallback_;
};

}  // namespace tiledispatch
