// The split-K factors a backward-weight run tries when none is given (docs/architecture.md, "Split-K").
// Backward weight's output is small (K x taps x C/G per group) and its GEMM K long (N x Do x Ho x Wo), so at
// k_batch 1 a few CTAs reduce everything. Tried: 1; doublings while the previous factor left fewer than two
// waves of work units on the SMs; and the wave-filling factors floor(w x SMs / tiles) for w = 1..kFillWaves,
// because a persistent grid's time is set by its fullest SM: 9 tiles at k_batch 16 make 144 units, two rounds
// on 132 SMs for 55 % of the work, where k_batch 14 makes 126 units in one round. Every split still reduces at
// least min_per_split GEMM-K elements (kMinSplitK; a kernel with coarser units passes its own count and
// minimum), and no factor exceeds kMaxSplitK.
//
// An instance's own preferred factor (preferred_split_k: what the library's plan falls back to where its models
// cannot rank) is one_wave_split_k: the largest candidate that keeps every work unit in the first round on the
// SMs, since a split adds a reduction and a second round waits for the first (docs/runtime.md, "Split-K",
// measures it against the other candidates).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tiledispatch {

constexpr int kMaxSplitK = 64;
constexpr int64_t kMinSplitK = 256;
constexpr int kFillWaves = 4;

inline std::vector<int> auto_split_k(int64_t output_tiles, int64_t gemm_k, int sms,
                                     int64_t min_per_split = kMinSplitK) {
  const auto allowed = [&](int64_t k) { return k >= 2 && k <= kMaxSplitK && gemm_k / k >= min_per_split; };
  std::vector<int> factors{1};
  for (int k = 2; k <= kMaxSplitK; k *= 2) {
    const bool previous_fills_two_waves = output_tiles * (k / 2) >= 2 * int64_t(sms);
    if (previous_fills_two_waves || !allowed(k)) break;
    factors.push_back(k);
  }
  for (int waves = 1; waves <= kFillWaves && output_tiles > 0; ++waves) {
    const int64_t k = waves * int64_t(sms) / output_tiles;
    if (allowed(k)) factors.push_back(int(k));
  }
  std::sort(factors.begin(), factors.end());
  factors.erase(std::unique(factors.begin(), factors.end()), factors.end());
  return factors;
}

inline int one_wave_split_k(int64_t output_tiles, int64_t gemm_k, int sms, int64_t min_per_split = kMinSplitK) {
  const int64_t fits = std::max<int64_t>(1, int64_t(sms) / std::max<int64_t>(1, output_tiles));
  int chosen = 1;
  for (const int k : auto_split_k(output_tiles, gemm_k, sms, min_per_split)) {
    if (k <= fits) chosen = k;
  }
  return chosen;
}

}  // namespace tiledispatch
