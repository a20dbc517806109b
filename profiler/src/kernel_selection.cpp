#include "kernel_selection.hpp"

#include <set>
#include <string>

namespace tiledispatch::profiler {

std::vector<int> split_ks_for(const Options& options, ConvDirection direction, const ConvProblem& problem,
                              const GroupedConvInstance& instance, int sms) {
  if (direction != ConvDirection::kBwdWeight) return {1};
  return options.split_k.empty() ? instance.split_k_candidates(problem, sms) : options.split_k;
}

std::vector<int> split_ks_for_selection(const Options& options, ConvDirection direction, const ConvProblem& problem,
                                        const std::vector<const GroupedConvInstance*>& supported, int sms) {
  std::set<int> factors;
  for (const auto* instance : supported) {
    for (const int k : split_ks_for(options, direction, problem, *instance, sms)) factors.insert(k);
  }
  return {factors.begin(), factors.end()};
}

KernelSelection::KernelSelection(const Options& options)
    : top_k_(static_cast<size_t>(options.select_top_k)), ranker_(options.models_dir) {
  try {
    for (const auto direction : options.directions) (void)ranker_.model(direction);
  } catch (const selection::ModelError& e) {
    throw UsageError(std::string("--select: ") + e.what());
  }
}

std::vector<std::pair<const GroupedConvInstance*, int>> KernelSelection::choose(
    const ConvProblem& problem, ConvDirection direction, DataType dtype,
    const std::vector<const GroupedConvInstance*>& supported, const std::vector<int>& split_ks) {
  std::vector<std::pair<const GroupedConvInstance*, int>> pairs;
  std::vector<selection::Candidate> candidates;
  for (const auto* instance : supported) {
    for (const int k : split_ks) {
      pairs.emplace_back(instance, k);
      candidates.push_back({instance->name(), k});
    }
  }
  std::vector<std::pair<const GroupedConvInstance*, int>> chosen;
  for (const auto& scored : ranker_.rank(problem, direction, dtype, candidates)) {
    if (chosen.size() == top_k_) break;
    chosen.push_back(pairs[scored.index]);
  }
  return chosen;
}

}  // namespace tiledispatch::profiler
