// Exact comparison on small integer data, for the host tests of the depthwise index maps
// (test_dilation_residues.cu, test_depth_map.cu): sums of products of values in [-3, 3] are exact, so any
// difference is an indexing error. Prints the first ten mismatches.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::test {

struct ExactTally {
  long long checked = 0, mismatches = 0;
};

inline void compare_exact(ExactTally& tally, const ConvProblem& p, const char* what, const std::vector<int64_t>& got,
                          const std::vector<int64_t>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    ++tally.checked;
    if (got[i] != want[i] && ++tally.mismatches <= 10) {
      std::printf("mismatch %s at %zu: got %lld want %lld (%s)\n", what, i, static_cast<long long>(got[i]),
                  static_cast<long long>(want[i]), p.to_string().c_str());
    }
  }
}

// `count` values in [-3, 3] from a linear congruential sequence seeded by `seed`.
inline std::vector<int64_t> small_integers(int64_t count, uint32_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  for (auto& x : v) x = int64_t((seed = seed * 1664525u + 1013904223u) >> 24) % 7 - 3;
  return v;
}

}  // namespace tiledispatch::test
