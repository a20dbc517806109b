// --select heuristic | topk=K: the exported selection models (instances/include/tiledispatch/selection) rank
// the supported instances of a job, and only the best K (instance, split-K) pairs run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "options.hpp"
#include "tiledispatch/runtime/instance.hpp"
#include "tiledispatch/selection/ranker.hpp"

namespace tiledispatch::profiler {

// The split-K factors a job tries on `instance`: 1 outside bwd_weight; --split-k when given; else the
// instance's own automatic list for a GPU with `sms` multiprocessors.
std::vector<int> split_ks_for(const Options& options, ConvDirection direction, const ConvProblem& problem,
                              const GroupedConvInstance& instance, int sms);

// What --select ranks: every supported instance with each factor it tries (split_ks_for), so that a pair is
// always one its instance accepts.
using LaunchPair = std::pair<const GroupedConvInstance*, int>;
std::vector<LaunchPair> selection_pairs(const Options& options, ConvDirection direction, const ConvProblem& problem,
                                        const std::vector<const GroupedConvInstance*>& supported, int sms);

class KernelSelection {
 public:
  // Loads the models of the options' directions from options.models_dir, else the models compiled into the
  // profiler (heuristics/models as the build found it); throws UsageError naming the file or folder.
  explicit KernelSelection(const Options& options);

  // The best options.select_top_k of `pairs`, best predicted first.
  std::vector<LaunchPair> choose(const ConvProblem& problem, ConvDirection direction, DataType dtype,
                                 const std::vector<LaunchPair>& pairs);

 private:
  size_t top_k_;
  selection::Ranker ranker_;
};

}  // namespace tiledispatch::profiler
