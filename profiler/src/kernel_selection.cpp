#include "kernel_selection.hpp"

#include <filesystem>
#include <set>
#include <string>
#include <system_error>

namespace tiledispatch::profiler {

namespace {

constexpr const char* kPassModels =
    "pass --models DIR, a folder holding fwd.trees, bwd_data.trees and bwd_weight.trees (the repository's "
    "heuristics/models)";

}  // namespace

std::string default_models_dir() {
  namespace fs = std::filesystem;
  std::error_code error;
  // /proc/self/exe, not argv[0]: the executable's real path whether it was started by name through PATH, by a
  // relative path or through a symbolic link.
  const fs::path exe = fs::canonical("/proc/self/exe", error);
  if (error) {
    throw UsageError("--select: cannot resolve this executable's path (/proc/self/exe: " + error.message() +
                     "); " + kPassModels);
  }
  for (fs::path dir = exe.parent_path();; dir = dir.parent_path()) {
    const fs::path candidate = dir / "heuristics" / "models";
    if (fs::is_directory(candidate, error)) return candidate.string();
    if (dir == dir.parent_path()) break;  // the root: nothing above
  }
  throw UsageError("--select: no heuristics/models folder in " + exe.parent_path().string() +
                   " or any folder above it (this executable's repository); " + kPassModels);
}

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
    : top_k_(static_cast<size_t>(options.select_top_k)),
      ranker_(options.models_dir.empty() ? default_models_dir() : options.models_dir) {
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
