// The pixel tile of a direct kernel and the input window (halo) it reads, shared by the merged-group plans
// (merged_group_bwd_weight.cuh, merged_group_direct.cuh): a tile of tile_h x tile_w pixels of one (n, d), at the
// plan's filter (z, y, x), strides (sd, sh, sw) and dilations (dd, dh, dw), reads a window of halo_d x halo_h x
// halo_w pixels; pixels16 is the tile's pixel count rounded up to the MMA's 16 rows.
#pragma once

namespace tiledispatch::kernels {

template <class Plan>
void set_halo_tile(Plan& plan, int tile_h, int tile_w) {
  plan.tile_h = tile_h, plan.tile_w = tile_w;
  plan.halo_d = (plan.z - 1) * plan.dd + 1;
  plan.halo_h = (tile_h - 1) * plan.sh + (plan.y - 1) * plan.dh + 1;
  plan.halo_w = (tile_w - 1) * plan.sw + (plan.x - 1) * plan.dw + 1;
  plan.pixels16 = (tile_h * tile_w + 15) / 16 * 16;
}

}  // namespace tiledispatch::kernels
