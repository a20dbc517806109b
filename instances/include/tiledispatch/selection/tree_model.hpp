// Evaluates the tree ensembles that `python -m heuristics train` exports (heuristics/tree_model.py documents
// the text format): the score of a feature vector is the sum over trees of the leaf it reaches, going left
// when value <= threshold. Header-only, C++17, no CUDA, no Python.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tiledispatch::selection {

// A model file that cannot be read or does not follow the format: the message names the file and line.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TreeModel {
 public:
  // Reads the format from `in`; `source` names it in errors.
  static TreeModel parse(std::istream& in, const std::string& source) {
    LineReader r{in, source};
    TreeModel model;
    if (r.line() != "tiledispatch-trees 1") r.fail("not a 'tiledispatch-trees 1' file");
    model.direction_ = r.keyed("direction");
    const size_t features = r.count("features");
    for (size_t i = 0; i < features; ++i) model.feature_names_.push_back(r.line());
    const size_t trees = r.count("trees");
    for (size_t t = 0; t < trees; ++t) {
      Tree tree;
      const size_t internal = r.count("tree");
      tree.split_feature = r.numbers<int32_t>(internal);
      tree.threshold = r.numbers<double>(internal);
      tree.left = r.numbers<int32_t>(internal);
      tree.right = r.numbers<int32_t>(internal);
      tree.leaf_value = r.numbers<double>(internal + 1);
      for (size_t i = 0; i < internal; ++i) {
        const auto n = static_cast<int32_t>(internal);
        if (tree.split_feature[i] < 0 || static_cast<size_t>(tree.split_feature[i]) >= features ||
            tree.left[i] < -n - 1 || tree.left[i] >= n || tree.right[i] < -n - 1 || tree.right[i] >= n) {
          r.fail("a split names a feature or child out of range");
        }
      }
      model.trees_.push_back(std::move(tree));
    }
    return model;
  }

  const std::string& direction() const { return direction_; }
  const std::vector<std::string>& feature_names() const { return feature_names_; }

  // `features` holds feature_names().size() values.
  double predict(const double* features) const {
    double total = 0.0;
    for (const Tree& tree : trees_) {
      if (tree.split_feature.empty()) {
        total += tree.leaf_value[0];
        continue;
      }
      int32_t node = 0;
      while (node >= 0) {
        const auto i = static_cast<size_t>(node);
        node = features[tree.split_feature[i]] <= tree.threshold[i] ? tree.left[i] : tree.right[i];
      }
      total += tree.leaf_value[static_cast<size_t>(~node)];
    }
    return total;
  }

 private:
  struct Tree {
    std::vector<int32_t> split_feature;
    std::vector<double> threshold;
    std::vector<int32_t> left, right;  // >= 0 an internal node, < 0 the leaf ~child
    std::vector<double> leaf_value;
  };

  class LineReader {
   public:
    LineReader(std::istream& in, const std::string& source) : in_(in), source_(source) {}
    [[noreturn]] void fail(const std::string& what) const {
      throw ModelError(source_ + ":" + std::to_string(line_no_) + ": " + what);
    }
    std::string line() {
      std::string text;
      if (!std::getline(in_, text)) {
        ++line_no_;
        fail("unexpected end of file");
      }
      ++line_no_;
      if (!text.empty() && text.back() == '\r') text.pop_back();
      return text;
    }
    std::string keyed(const std::string& key) {
      std::istringstream s(line());
      std::string word, value, extra;
      if (!(s >> word >> value) || word != key || (s >> extra)) fail("expected '" + key + " <value>'");
      return value;
    }
    size_t count(const std::string& key) {
      const std::string value = keyed(key);
      size_t used = 0;
      unsigned long long n = 0;
      try {
        n = std::stoull(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || value.empty() || value[0] == '-') fail(key + ": '" + value + "' is not a count");
      return static_cast<size_t>(n);
    }
    template <class T>
    std::vector<T> numbers(size_t expected) {
      std::istringstream s(line());
      std::vector<T> values;
      T value{};
      while (s >> value) values.push_back(value);
      if (!s.eof()) fail("not a number list");
      if (values.size() != expected) {
        fail(std::to_string(values.size()) + " values, expected " + std::to_string(expected));
      }
      return values;
    }

   private:
    std::istream& in_;
    const std::string& source_;
    size_t line_no_ = 0;
  };

  std::string direction_;
  std::vector<std::string> feature_names_;
  std::vector<Tree> trees_;
};

}  // namespace tiledispatch::selection
