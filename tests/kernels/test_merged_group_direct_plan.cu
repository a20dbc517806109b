// CPU check of the direct merged-group kernel's plan (kernels/merged_group_direct.cuh) over many problems:
// accepted exactly where the kernel's conditions hold (fwd or unit-stride bwd_data, C = K, C/G of 2, 4 or 8,
// gm x C/G the CTA's channels, a multiple of 16, G divisible by gm, the shared memory within the limit); where
// accepted, the tiles cover the written tensor with no empty tile row or column, every tap of every pixel of a
// tile reads inside the tile's halo, the shared memory adds up within the limit, and the grid has between one
// CTA and one per tile. Prints "<cases> cases, <accepted> accepted, <failures> failures".
#include <algorithm>
#include <cstdio>
#include <vector>

#include "tiledispatch/kernels/merged_group_direct.cuh"

namespace {
using namespace tiledispatch;
using kernels::MergedGroupDirectPlan;

int failures = 0;
void expect(bool ok, const char* what, const ConvProblem& p, ConvDirection dir, int gm, int channels) {
  if (!ok && failures++ < 20) {
    std::printf("FAIL %s: %s %s gm %d channels %d\n", what, dir == ConvDirection::kFwd ? "fwd" : "bwd_data",
                p.to_string().c_str(), gm, channels);
  }
}

ConvProblem problem(int nd, int64_t G, int64_t N, int64_t C, int64_t K, int64_t D, int64_t H, int64_t W, int64_t f,
                    int64_t s, int64_t pad, int64_t dil) {
  ConvProblem p;
  p.ndim_spatial = nd;
  p.G = G, p.N = N, p.C = C, p.K = K;
  p.input = {nd == 3 ? D : 1, H, W};
  p.filter = {nd == 3 ? f : 1, f, f};
  p.stride = {nd == 3 ? s : 1, s, s};
  p.dilation = {nd == 3 ? dil : 1, dil, dil};
  p.left_pad = p.right_pad = {nd == 3 ? pad : 0, pad, pad};
  return p;
}

// Every tap of every pixel of every tile reads inside its halo along one axis (dst pixel q of the tile starting at
// q0 reads src q * s - pad + t * dil; the halo starts at q0 * s - pad).
bool taps_inside(int tile, int tiles, int extent, int stride, int taps, int dilation, int halo) {
  for (int b = 0; b < tiles; ++b) {
    for (int q = b * tile; q < std::min(extent, (b + 1) * tile); ++q) {
      for (int t = 0; t < taps; ++t) {
        const int offset = (q - b * tile) * stride + t * dilation;
        if (offset < 0 || offset >= halo) return false;
      }
    }
  }
  return true;
}
}  // namespace

int main() {
  std::vector<ConvProblem> problems;
  for (int64_t width : {1, 2, 4, 8, 16}) {
    for (int64_t G : {4, 8, 32}) {
      problems.push_back(problem(2, G, 2, G * width, G * width, 1, 15, 13, 3, 1, 1, 1));
      problems.push_back(problem(2, G, 1, G * width, G * width, 1, 56, 56, 3, 2, 1, 1));
      problems.push_back(problem(2, G, 3, G * width, G * width, 1, 9, 150, 5, 1, 3, 2));
      problems.push_back(problem(2, G, 2, G * width, G * width, 1, 7, 7, 1, 1, 0, 1));
      problems.push_back(problem(3, G, 2, G * width, G * width, 5, 6, 7, 3, 1, 1, 1));
      problems.push_back(problem(2, G, 2, G * width, 2 * G * width, 1, 9, 9, 3, 1, 1, 1));  // C != K
    }
  }
  int cases = 0, accepted = 0;
  for (const ConvProblem& p : problems) {
    for (ConvDirection dir : {ConvDirection::kFwd, ConvDirection::kBwdData, ConvDirection::kBwdWeight}) {
      for (int gm : {1, 2, 4, 8, 16}) {
        for (int channels : {16, 32, 64, 128}) {
          for (size_t limit : {size_t(227) * 1024, size_t(40) * 1024, size_t(4) * 1024}) {
            ++cases;
            const bool bwd = dir == ConvDirection::kBwdData;
            const auto out = p.output();
            const int dst_h = int(bwd ? p.input[1] : out[1]), dst_w = int(bwd ? p.input[2] : out[2]);
            const int dst_d = int(bwd ? p.input[0] : out[0]);
            MergedGroupDirectPlan plan;
            const bool ok = kernels::make_merged_group_direct_plan(p, dir, gm, channels, 8, 2, 256, limit, plan);
            const int64_t width = p.C / p.G;
            const bool unit = p.stride[0] == 1 && p.stride[1] == 1 && p.stride[2] == 1;
            const bool eligible = dir != ConvDirection::kBwdWeight && p.C == p.K && p.G % gm == 0 &&
                                  (width == 2 || width == 4 || width == 8) && width * gm == channels &&
                                  channels % 16 == 0 && (dir == ConvDirection::kFwd || unit);
            expect(!ok || eligible, "accepted against the conditions", p, dir, gm, channels);
            if (!ok) {
              // refused although eligible: only where no tile's shared memory fits (one row of the same width
              // does not)
              if (eligible) {
                MergedGroupDirectPlan row;
                const bool fits = kernels::make_merged_group_direct_plan(p, dir, gm, channels, 8, 2,
                                                                         std::min(dst_w, 256), limit, row);
                expect(!fits, "refused although one row fits", p, dir, gm, channels);
              }
              continue;
            }
            ++accepted;
            expect(plan.tiles_h * plan.tile_h >= dst_h && (plan.tiles_h - 1) * plan.tile_h < dst_h, "rows covered",
                   p, dir, gm, channels);
            expect(plan.tiles_w * plan.tile_w >= dst_w && (plan.tiles_w - 1) * plan.tile_w < dst_w,
                   "columns covered", p, dir, gm, channels);
            expect(plan.tile_w <= 256 && plan.tile_h * plan.tile_w <= std::max(256, plan.tile_w), "tile within target",
                   p, dir, gm, channels);
            expect(int64_t(plan.tiles) == p.N * dst_d * plan.tiles_h * plan.tiles_w, "tile count", p, dir, gm,
                   channels);
            expect(plan.smem_bytes <= limit && plan.staging_offset % 16 == 0, "shared memory", p, dir, gm, channels);
            expect(plan.staging_offset + size_t(plan.raw_weight_elems) * 2 <= plan.smem_bytes &&
                       plan.staging_offset + size_t(8 * 16 * (channels + 8) * 2) <= plan.smem_bytes,
                   "copied weights and staging inside", p, dir, gm, channels);
            const int sh = bwd ? 1 : int(p.stride[1]), sw = bwd ? 1 : int(p.stride[2]), sd = bwd ? 1 : int(p.stride[0]);
            expect(taps_inside(plan.tile_h, plan.tiles_h, dst_h, sh, int(p.filter[1]), int(p.dilation[1]),
                               plan.halo_h) &&
                       taps_inside(plan.tile_w, plan.tiles_w, dst_w, sw, int(p.filter[2]), int(p.dilation[2]),
                                   plan.halo_w) &&
                       taps_inside(1, dst_d, dst_d, sd, int(p.filter[0]), int(p.dilation[0]), plan.halo_d),
                   "every tap inside the halo", p, dir, gm, channels);
            // bwd_data reads the output gradient with the padding mirrored: dX pixel h, tap t' reads dY
            // h - ((f - 1) dil - pad) + t' dil, dY's pixel for weight tap f - 1 - t'
            const int pad_h = bwd ? int((p.filter[1] - 1) * p.dilation[1] - p.left_pad[1]) : int(p.left_pad[1]);
            expect(plan.ph == pad_h, "padding as the window sees src", p, dir, gm, channels);
            for (int64_t resident : {1, 7, 264, 100000}) {
              MergedGroupDirectPlan grid = plan;
              kernels::merged_group_direct_grid(grid, p.G, resident);
              const int64_t blocks = p.G / gm;
              expect(grid.ctas >= 1 && grid.ctas <= grid.tiles && grid.ctas * blocks <= std::max(resident, blocks),
                     "grid", p, dir, gm, channels);
            }
          }
        }
      }
    }
  }
  std::printf("%d cases, %d accepted, %d failures\n", cases, accepted, failures);
  return failures == 0 ? 0 : 1;
}
