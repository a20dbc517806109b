// The persistent CTAs' unit order (sm90/tile_scheduler.hpp, unit_of_round): every unit taken exactly once and
// each CTA's units increasing (a CTA stops at its first round past the units), in order and in snake order;
// and the snake's balance on the stride phases of a 3x3 stride-2 layer at 14x14 (units longest first).
// Host only; prints "checked N mismatches M" and the busiest CTA's k-tiles in both orders.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tiledispatch/kernels/sm90/tile_scheduler.hpp"

namespace {

using tiledispatch::kernels::sm90::unit_of_round;

long long g_checked = 0, g_mismatches = 0;

void mismatch(const char* what, int64_t units, int64_t ctas, bool snake, int64_t at) {
  if (++g_mismatches <= 10) {
    std::printf("mismatch %s: %lld units, %lld CTAs, snake %d, at %lld\n", what, static_cast<long long>(units),
                static_cast<long long>(ctas), int(snake), static_cast<long long>(at));
  }
}

void check_cover(int64_t units, int64_t ctas, bool snake) {
  std::vector<int> taken(size_t(units), 0);
  for (int64_t cta = 0; cta < ctas; ++cta) {
    int64_t last = -1;
    for (int64_t round = 0;; ++round) {
      const int64_t u = unit_of_round(round, cta, ctas, snake);
      ++g_checked;
      if (u <= last) mismatch("not increasing", units, ctas, snake, u);
      last = u;
      if (u >= units) break;
      ++taken[size_t(u)];
    }
  }
  for (int64_t u = 0; u < units; ++u) {
    ++g_checked;
    if (taken[size_t(u)] != 1) mismatch("taken other than once", units, ctas, snake, u);
  }
}

// The k-tiles of the busiest CTA when `ctas` CTAs walk units of the given lengths in order.
int64_t busiest(const std::vector<int64_t>& lengths, int64_t ctas, bool snake) {
  std::vector<int64_t> load(size_t(ctas), 0);
  const auto units = int64_t(lengths.size());
  for (int64_t cta = 0; cta < ctas; ++cta) {
    for (int64_t round = 0;; ++round) {
      const int64_t u = unit_of_round(round, cta, ctas, snake);
      if (u >= units) break;
      load[size_t(cta)] += lengths[size_t(u)];
    }
  }
  return *std::max_element(load.begin(), load.end());
}

}  // namespace

int main() {
  for (int64_t ctas : {1, 2, 7, 132}) {
    for (int64_t units : {int64_t(0), int64_t(1), ctas - 1, ctas, ctas + 1, 3 * ctas + 5, int64_t(784)}) {
      for (bool snake : {false, true}) check_cover(units, ctas, snake);
    }
  }
  // r50_3x3_s2_14 (N = 32, C = K = 512, 128x128x64 tiles): phase (1,1) 4 taps, (0,1) and (1,0) 2, (0,0) 1;
  // 13 row tiles x 4 column tiles a phase, 8 k-tiles a tap
  std::vector<int64_t> lengths;
  for (int64_t k_tiles : {32, 16, 16, 8}) lengths.insert(lengths.end(), 52, k_tiles);
  std::printf("busiest CTA k-tiles in order %lld snake %lld\n", static_cast<long long>(busiest(lengths, 132, false)),
              static_cast<long long>(busiest(lengths, 132, true)));
  std::printf("checked %lld mismatches %lld\n", g_checked, g_mismatches);
  return g_mismatches == 0 ? 0 : 1;
}
