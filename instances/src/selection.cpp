#include "tiledispatch/runtime/selection.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "tiledispatch/runtime/direction.hpp"
#include "tiledispatch/selection/embedded_models.hpp"

namespace tiledispatch {
namespace {

std::vector<std::string_view> template_fields(std::string_view s) {
  std::vector<std::string_view> fields;
  const size_t open = s.find('<');
  const size_t close = s.rfind('>');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return fields;
  std::string_view body = s.substr(open + 1, close - open - 1);
  while (true) {
    const size_t comma = body.find(',');
    fields.push_back(body.substr(0, comma));
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return fields;
}

std::optional<int64_t> to_int(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::optional<BlockTile> parse_block_tile(std::string_view s) {
  const auto fields = template_fields(s);
  // Field positions of ck_conventions §3: forward and backward weight carry ExplicitGemm (M at 12),
  // backward data does not (M at 11); NumGroupsToMerge is field 9 in all three. Depthwise: field 2 is
  // "Depthwise", TileH and TileW are fields 7 and 8.
  const bool depthwise = fields.size() > 2 && fields[2] == "Depthwise";
  if (depthwise) {
    if (fields.size() < 9) return std::nullopt;
    const auto h = to_int(fields[7]), w = to_int(fields[8]);
    if (!h || !w) return std::nullopt;
    return BlockTile{*h * *w, 1, 1, 1};
  }
  size_t m_at = 0;
  if (s.rfind("GroupedConvolutionBackwardDataKernel<", 0) == 0) {
    m_at = 11;
  } else if (s.rfind("GroupedConvolutionForwardKernel<", 0) == 0 ||
             s.rfind("GroupedConvolutionBackwardWeightKernel<", 0) == 0) {
    m_at = 12;
  } else {
    return std::nullopt;
  }
  if (fields.size() < m_at + 3) return std::nullopt;
  const auto m = to_int(fields[m_at]), n = to_int(fields[m_at + 1]), k = to_int(fields[m_at + 2]);
  const auto gm = to_int(fields[9]);
  if (!m || !n || !k || !gm) return std::nullopt;
  return BlockTile{*m, *n, *k, *gm};
}

double TileHeuristicSelector::score(const ConvProblem& p, ConvDirection direction, const BlockTile& tile) {
  if (tile.m < 1 || tile.n < 1 || tile.groups_to_merge < 1) return 0.0;
  const GemmExtents gemm = gemm_extents(direction, p);  // one group (ck_conventions §1)
  const int64_t m = gemm.m, n = gemm.n;
  const int64_t group_blocks = ceil_div(p.G, tile.groups_to_merge);
  const double blocks = double(ceil_div(m, tile.m)) * double(ceil_div(n, tile.n)) * double(group_blocks);
  const double fill = double(m) * double(n) * double(p.G) /
                      (blocks * double(tile.m) * double(tile.n) * double(tile.groups_to_merge));
  const double waves = double(ceil_div(int64_t(blocks), kSmCount));
  const double wave_eff = blocks / (waves * double(kSmCount));
  const double reuse = std::min(1.0, double(tile.m) * double(tile.n) / double(tile.m + tile.n) / 64.0);
  return fill * wave_eff * reuse;
}

const GroupedConvInstance* TileHeuristicSelector::select(
    const ConvProblem& problem, ConvDirection direction,
    const std::vector<const GroupedConvInstance*>& candidates) const {
  const GroupedConvInstance* best = nullptr;
  double best_score = -1.0;
  int64_t best_volume = 0;
  bool best_depthwise = false;
  for (const GroupedConvInstance* instance : candidates) {
    const bool depthwise = instance->signature().family == KernelFamily::kDepthwise;
    const auto tile = parse_block_tile(instance->instance_string());
    const double score = tile ? TileHeuristicSelector::score(problem, direction, *tile) : 0.0;
    const int64_t volume = tile ? tile->m * tile->n * tile->k : 0;
    bool better = false;
    if (best == nullptr || depthwise != best_depthwise) {
      better = best == nullptr || depthwise;
    } else if (score > best_score + 1e-9) {
      better = true;
    } else if (score >= best_score - 1e-9) {
      better = volume > best_volume || (volume == best_volume && instance->name() < best->name());
    }
    if (better) best = instance, best_score = score, best_volume = volume, best_depthwise = depthwise;
  }
  return best;
}

LearnedSelector::LearnedSelector() : ranker_(&selection::embedded_model, "heuristics/models (compiled in)") {}

const GroupedConvInstance* LearnedSelector::select(const ConvProblem& problem, ConvDirection direction,
                                                   const std::vector<const GroupedConvInstance*>& candidates) const {
  return plan(problem, direction, candidates, int(TileHeuristicSelector::kSmCount)).instance;
}

LaunchChoice LearnedSelector::plan(const ConvProblem& problem, ConvDirection direction,
                                   const std::vector<const GroupedConvInstance*>& all, int sms) const {
  if (all.empty()) return {};
  // A supported depthwise instance is specialised for G = C = K: the models rank among those alone (they
  // score implicit GEMM tiles too well on depthwise layers, where those multiply a single channel a group).
  std::vector<const GroupedConvInstance*> candidates;
  for (const GroupedConvInstance* instance : all) {
    if (instance->signature().family == KernelFamily::kDepthwise) candidates.push_back(instance);
  }
  if (candidates.empty()) candidates = all;
  std::vector<LaunchChoice> pairs;
  std::vector<selection::Candidate> named;
  for (const GroupedConvInstance* instance : candidates) {
    const std::vector<int> factors =
        direction == ConvDirection::kBwdWeight ? instance->split_k_candidates(problem, sms) : std::vector<int>{1};
    for (const int k : factors) {
      pairs.push_back({instance, k});
      named.push_back({instance->name(), k});
    }
  }
  try {
    const auto ranked = ranker_.rank(problem, direction, candidates.front()->signature().dtype, named);
    return pairs[ranked.front().index];
  } catch (const selection::ModelError&) {
    return fallback_.plan(problem, direction, candidates, sms);
  }
}

}  // namespace tiledispatch
