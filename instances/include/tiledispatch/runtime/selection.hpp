// Kernel selection: which supported instance runs a problem when the caller names none.
//
// KernelSelector is the plug-in point (a learned, CK-style TFLOP/s predictor will implement it later);
// TileHeuristicSelector is the documented default (docs/runtime.md, "Selection"):
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

namespace tiledispatch {

// The block tile an instance string states (MPerBlock, NPerBlock, KPerBlock, NumGroupsToMerge); depthwise
// strings give TileH x TileW as M, 1 as N and K. Empty when the string is not one of CK's kernel strings.
struct BlockTile {
  int64_t m = 0, n = 0, k = 0, groups_to_merge = 1;
};
std::optional<BlockTile> parse_block_tile(std::string_view instance_string);

class KernelSelector {
 public:
  virtual ~KernelSelector() = default;
  // Picks one of `candidates` (all signature-matched and supported) for `problem`; nullptr when empty.
  [[nodiscard]] virtual const GroupedConvInstance* select(
      const ConvProblem& problem, ConvDirection direction,
      const std::vector<const GroupedConvInstance*>& candidates) const = 0;
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

}  // namespace tiledispatch
