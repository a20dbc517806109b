// The split-K factors a backward-weight run tries when none is given (docs/architecture.md, "Split-K").
// Backward weight's output is small (K x taps x C/G per group) and its GEMM K long (N x Do x Ho x Wo), so at
// k_batch 1 a few CTAs reduce everything; each doubling of k_batch doubles the work units. Tried: 1, then
// doublings while the previous factor left fewer than two waves of work units on the SMs, each split still
// reducing at least kMinSplitK GEMM-K elements, up to kMaxSplitK.
#pragma once

#include <cstdint>
#include <vector>

namespace tiledispatch {

constexpr int kMaxSplitK = 64;
constexpr int64_t kMinSplitK = 256;

inline std::vector<int> auto_split_k(int64_t output_tiles, int64_t gemm_k, int sms) {
  std::vector<int> factors{1};
  for (int k = 2; k <= kMaxSplitK; k *= 2) {
    const bool previous_fills_two_waves = output_tiles * (k / 2) >= 2 * int64_t(sms);
    if (previous_fills_two_waves || gemm_k / k < kMinSplitK) break;
    factors.push_back(k);
  }
  return factors;
}

}  // namespace tiledispatch
