#include "kernel_selection.hpp"

#include <filesystem>
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
      ranker_(options.models_dir.empty() ? default_models_dir() : options.models_dir) {
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
