// The persistent tile scheduler of the Hopper path: one CTA per SM walks the work units
// (tile_m, tile_n, merged-group block, split) in a fixed order, blockIdx.x, blockIdx.x + gridDim.x, ...
// tile_m runs fastest so that CTAs working at the same time share the B tile (weights) in L2.
#pragma once

#include <cstdint>

#include "tiledispatch/kernels/conv_gemm_view.hpp"

namespace tiledispatch::kernels::sm90 {

struct TileSchedule {
  int tiles_m;
  int tiles_n;
  int k_batch;
  int64_t units;  // tiles_m * tiles_n * group blocks * k_batch

  struct Unit {
    int tile_m, tile_n, split;
    int64_t group_block;
  };

  TD_HOST_DEVICE Unit unit(int64_t u) const {
    Unit w{};
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
