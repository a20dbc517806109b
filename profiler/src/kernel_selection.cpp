#include "kernel_selection.hpp"

#include <string>

#include "tiledispatch/selection/embedded_models.hpp"

namespace tiledispatch::profiler {

namespace {

// --models DIR, else the models compiled into this profiler (the runtime library's, which the C API ranks with).
selection::Ranker make_ranker(const Options& options) {
  if (!options.models_dir.empty()) return selection::Ranker(options.models_dir);
  return selection::Ranker(&selection::embedded_model, "heuristics/models (compiled in)");
}

}  // namespace

std::vector<int> split_ks_for(const Options& options, ConvDirection direction, const ConvProblem& problem,
                              const GroupedConvInstance& instance, int sms) {
  if (direction != ConvDirection::kBwdWeight) return {1};
  return options.split_k.empty() ? instance.split_k_candidates(problem, sms) : options.split_k;
}

std::vector<LaunchPair> selection_pairs(const Options& options, ConvDirection direction, const ConvProblem& problem,
                                        const std::vector<const GroupedConvInstance*>& supported, int sms) {
  std::vector<LaunchPair> pairs;
  for (const auto* instance : supported) {
    for (const int k : split_ks_for(options, direction, problem, *instance, sms)) pairs.emplace_back(instance, k);
  }
  return pairs;
}

KernelSelection::KernelSelection(const Options& options)
    : top_k_(static_cast<size_t>(options.select_top_k)),
      ranker_(make_ranker(options)) {
  try {
    for (const auto direction : options.directions) (void)ranker_.model(direction);
  } catch (const selection::ModelError& e) {
    throw UsageError(std::string("--select: ") + e.what());
  }
}

std::vector<LaunchPair> KernelSelection::choose(const ConvProblem& problem, ConvDirection direction, DataType dtype,
                                                const std::vector<LaunchPair>& pairs) {
  std::vector<selection::Candidate> candidates;
  candidates.reserve(pairs.size());
  for (const auto& [instance, k] : pairs) candidates.push_back({instance->name(), k});
  std::vector<LaunchPair> chosen;
  for (const auto& scored : ranker_.rank(problem, direction, dtype, candidates)) {
    if (chosen.size() == top_k_) break;
    chosen.push_back(pairs[scored.index]);
  }
  return chosen;
}

}  // namespace tiledispatch::profiler
