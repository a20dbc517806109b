// The persistent tile scheduler of the Hopper path: one CTA per SM walks the work units
// (tile_m, tile_n, merged-group block, split) in a fixed order, blockIdx.x, blockIdx.x + gridDim.x, ...
// (stride phases: every other round in reverse, unit_of_round). tile_m runs fastest so that CTAs working at
// the same time share the B tile (weights) in L2.
#pragma once

#include <cstdint>

#include "tiledispatch/kernels/conv_gemm_view.hpp"
#include "tiledispatch/kernels/fast_division.hpp"

namespace tiledispatch::kernels::sm90 {

// The unit CTA `cta` of `ctas` takes in its `round`-th turn: cta, cta + ctas, ... or, with `snake`, every
// odd round in reverse. The stride phases' units differ in length (a phase's k-tiles follow its taps) and come
// longest first: in snake order the CTAs whose first units were the longest take the shortest ones after (on
// r50_3x3_s2_14, 52 units of 32 k-tiles, 104 of 16 and 52 of 8 over 132 CTAs, the busiest CTA's k-tiles fall
// from 48 to 32: 35.3 -> 31 us on the H200). Increasing in `round` for every CTA, so a CTA is done at its
// first round past the units.
TD_HOST_DEVICE int64_t unit_of_round(int64_t round, int64_t cta, int64_t ctas, bool snake) {
  return round * ctas + (snake && (round & 1) != 0 ? ctas - 1 - cta : cta);
}

struct TileSchedule {
  // tiles_m, tiles_n and k_batch as divisors; as multipliers (fast_division.hpp) where `units` fits 31 bits
  // (`fast`): every CTA's producer and consumers decompose every unit, and 64-bit divisions there held the
  // stride phases' short units up.
  FastDivisor by_m, by_n, by_split;
  bool fast;
  int64_t units;  // tiles_m * tiles_n * group blocks * k_batch

  // Host: the schedule of tiles_m x tiles_n tiles x `group_blocks` x k_batch splits.
  static TileSchedule of(int tiles_m, int tiles_n, int64_t group_blocks, int k_batch) {
    TileSchedule s{};
    s.units = int64_t(tiles_m) * tiles_n * group_blocks * k_batch;
    s.fast = FastDivisor::fits(s.units);
    s.by_m = FastDivisor::of(uint32_t(tiles_m));
    s.by_n = FastDivisor::of(uint32_t(tiles_n));
    s.by_split = FastDivisor::of(uint32_t(k_batch));
    return s;
  }

  struct Unit {
    int tile_m, tile_n, split;
    int64_t group_block;
  };

  TD_HOST_DEVICE Unit unit(int64_t u) const {
    Unit w{};
    if (fast) {
      uint32_t rest = 0, v = by_m.divide(uint32_t(u), rest);
      w.tile_m = int(rest);
      v = by_n.divide(v, rest);
      w.tile_n = int(rest);
      v = by_split.divide(v, rest);
      w.split = int(rest);
      w.group_block = int64_t(v);
      return w;
    }
    const int64_t tiles_m = by_m.divisor, tiles_n = by_n.divisor, k_batch = by_split.divisor;
    w.tile_m = int(u % tiles_m);
    u /= tiles_m;
    w.tile_n = int(u % tiles_n);
    u /= tiles_n;
    w.split = int(u % k_batch);
    w.group_block = u / k_batch;
    return w;
  }
};

}  // namespace tiledispatch::kernels::sm90
