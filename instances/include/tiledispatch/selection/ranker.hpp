// Ranks candidate (kernel, split-K) pairs of one problem by the exported model of their direction:
// <model_dir>/<direction>.trees, or the same text compiled into the library (embedded_models.hpp), read on
// first use. Ties keep the candidates' order, as heuristics.select.rank does. Header-only, C++17, no CUDA, no
// Python; independent of any C API over the registry.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"
#include "tiledispatch/selection/features.hpp"
#include "tiledispatch/selection/kernel_traits.hpp"
#include "tiledispatch/selection/tree_model.hpp"

namespace tiledispatch::selection {

struct Candidate {
  std::string_view kernel;  // a kernel name (the configuration's features come from it)
  int split_k = 1;
};

struct Scored {
  size_t index;  // into the candidates given to rank()
  double score;
};

class Ranker {
 public:
  using ModelSource = std::string_view (*)(ConvDirection);

  // Models read from <model_dir>/<direction>.trees.
  explicit Ranker(std::string model_dir) : model_dir_(std::move(model_dir)) {}
  // Models parsed from the texts `source` returns (selection::embedded_model: compiled into the library);
  // `origin` stands for the folder in error messages.
  Ranker(ModelSource source, std::string origin) : model_dir_(std::move(origin)), source_(source) {}

  // The model of a direction, loaded once. Throws ModelError when it is missing, malformed, or was trained
  // on a different feature list.
  const TreeModel& model(ConvDirection direction) {
    const auto found = models_.find(direction);
    if (found != models_.end()) return found->second;
    const std::string path = model_dir_ + "/" + std::string(to_token(direction)) + ".trees";
    TreeModel loaded = source_ != nullptr ? parse_text(source_(direction), path) : parse_file(path);
    const auto& names = loaded.feature_names();
    if (!std::equal(names.begin(), names.end(), kFeatureNames.begin(), kFeatureNames.end())) {
      throw ModelError(path + ": its feature list differs from selection/features.hpp (retrain)");
    }
    if (loaded.direction() != to_token(direction)) {
      throw ModelError(path + ": a model of direction '" + loaded.direction() + "'");
    }
    return models_.emplace(direction, std::move(loaded)).first->second;
  }

  // Every candidate scored, best first. Throws ModelError for a candidate whose name is not a kernel name
  // of `direction` and `dtype`.
  std::vector<Scored> rank(const ConvProblem& problem, ConvDirection direction, DataType dtype,
                           const std::vector<Candidate>& candidates) {
    const TreeModel& trees = model(direction);
    std::vector<Scored> scored;
    scored.reserve(candidates.size());
    for (size_t i = 0; i < candidates.size(); ++i) {
      const auto traits = parse_kernel_traits(candidates[i].kernel);
      if (!traits || traits->direction != direction || traits->dtype != dtype) {
        throw ModelError("cannot rank '" + std::string(candidates[i].kernel) + "': not a " +
                         std::string(to_token(direction)) + " " + std::string(to_token(dtype)) + " kernel name");
      }
      const FeatureVector features = compute_features(problem, direction, dtype, *traits, candidates[i].split_k);
      scored.push_back({i, trees.predict(features.data())});
    }
    std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });
    return scored;
  }

 private:
  static TreeModel parse_file(const std::string& path) {
    std::ifstream in(path);
    // The committed models live in the repository's heuristics/models; a relative model_dir resolves against
    // the working directory, so say both where they are and how to rebuild them.
    if (!in) {
      throw ModelError(path +
                       ": cannot open (the committed models are the repository's heuristics/models: run from its "
                       "root or pass that folder; retrain: python -m heuristics train --data "
                       "heuristics/data/*.csv.gz)");
    }
    return TreeModel::parse(in, path);
  }
  static TreeModel parse_text(std::string_view text, const std::string& path) {
    if (text.empty()) throw ModelError(path + ": no model was compiled in");
    std::istringstream in{std::string(text)};
    return TreeModel::parse(in, path);
  }

  std::string model_dir_;
  ModelSource source_ = nullptr;
  std::map<ConvDirection, TreeModel> models_;
};

}  // namespace tiledispatch::selection
