// CPU check of the direct merged-group kernel's plan (kernels/merged_group_direct.cuh) over many problems:
// accepted exactly where the kernel's conditions hold (fwd, or bwd_data at strides up to 4, C = K, C/G of 2, 4,
// 8 or 16 (fp32 also 32), gm x C/G the CTA's channels, a multiple of 16, C whole 16-byte vectors (gm need not
// divide G: a last block of fewer groups), the shared memory within the limit); where accepted, each axis'
// phases give every written pixel exactly the (weight tap, source pixel) pairs of the convolution's definition, the tiles cover the written tensor with no empty tile row or column,
// every tap of every pixel of a tile reads inside the tile's halo, the halo is one legal TMA box (every extent
// within 256, rows of an odd number of 16-byte chunks) whose bytes the stage's barrier expects, the shared memory
// adds up within the limit with stages on 128-byte boundaries, and the grid has between one CTA and one per
// tile; for 16-bit and fp32 elements. Prints "<cases> cases, <accepted> accepted, <failures> failures".
#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include "tiledispatch/kernels/merged_group_direct.cuh"

#include "cube_problem.hpp"

namespace {
using namespace tiledispatch;
using test::image_problem;
using kernels::MergedGroupDirectPlan;

int failures = 0;
int checked_bytes = 2;  // element bytes of the cases being checked (16-bit, then fp32)
void expect(bool ok, const char* what, const ConvProblem& p, ConvDirection dir, int gm, int channels) {
  if (!ok && failures++ < 20) {
    std::printf("FAIL %s: %s %s gm %d channels %d, %d-byte elements\n", what,
                dir == ConvDirection::kFwd ? "fwd" : "bwd_data", p.to_string().c_str(), gm, channels, checked_bytes);
  }
}

// Every tap of every pixel of every tile of one phase reads inside its halo along one axis (phase pixel q of the
// tile starting at q0 reads src q * src_stride + origin + j * dilation; the halo starts at q0 * src_stride +
// origin).
bool taps_inside(int tile, int tiles, const kernels::DirectPhaseAxis& axis, int src_stride, int halo) {
  for (int b = 0; b < tiles; ++b) {
    for (int q = b * tile; q < std::min(axis.extent, (b + 1) * tile); ++q) {
      for (int j = 0; j < axis.taps; ++j) {
        const int offset = (q - b * tile) * src_stride + j * axis.dilation;
        if (offset < 0 || offset >= halo) return false;
      }
    }
  }
  return true;
}

// Along one axis, each written pixel gets exactly the (weight tap, source pixel) pairs of the definition: fwd,
// output o reads input o * s - pad + t * dil for every t; bwd_data, input-gradient pixel h reads output-gradient
// pixel (h + pad - t * dil) / s for every t where that divides (sources out of range are the padding's zeros,
// kept on both sides).
bool phases_exact(const MergedGroupDirectPlan& plan, int i, bool bwd, int filter, int stride, int pad, int dilation,
                  int written) {
  const int s = plan.dst_stride[i];
  for (int h = 0; h < written; ++h) {
    std::set<std::pair<int, int>> expected, got;
    for (int t = 0; t < filter; ++t) {
      if (!bwd) {
        expected.insert({t, h * stride - pad + t * dilation});
      } else if ((h + pad - t * dilation) % stride == 0) {
        expected.insert({t, (h + pad - t * dilation) / stride});
      }
    }
    const kernels::DirectPhaseAxis& axis = plan.axis[i][h % s];
    const int q = h / s;
    if (q >= axis.extent) return false;
    for (int j = 0; j < axis.taps; ++j) {
      got.insert({axis.wbase + j * axis.wstep, q * plan.src_stride[i] + axis.origin + j * axis.dilation});
    }
    if (got != expected || int(got.size()) != axis.taps) return false;
  }
  return true;
}
}  // namespace

int main() {
  std::vector<ConvProblem> problems;
  for (int64_t width : {1, 2, 4, 8, 16, 32}) {
    for (int64_t G : {4, 8, 13, 32}) {  // 13: a last block of fewer than gm groups
      problems.push_back(image_problem(2, G, 2, G * width, G * width, 1, 15, 13, 3, 1, 1, 1));
      problems.push_back(image_problem(2, G, 1, G * width, G * width, 1, 56, 56, 3, 2, 1, 1));
      problems.push_back(image_problem(2, G, 3, G * width, G * width, 1, 9, 150, 5, 1, 3, 2));
      problems.push_back(image_problem(2, G, 2, G * width, G * width, 1, 7, 7, 1, 1, 0, 1));
      problems.push_back(image_problem(3, G, 2, G * width, G * width, 5, 6, 7, 3, 1, 1, 1));
      problems.push_back(image_problem(2, G, 2, G * width, 2 * G * width, 1, 9, 9, 3, 1, 1, 1));  // C != K
      problems.push_back(image_problem(2, G, 1, G * width, G * width, 1, 5, 600, 3, 2, 1, 1));  // rows past a box
    }
  }
  int cases = 0, accepted = 0;
  for (const int bytes : {2, 4}) {
    checked_bytes = bytes;
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
              const bool ok =
                  kernels::make_merged_group_direct_plan(p, dir, gm, channels, bytes, 8, 2, 256, limit, plan);
              const int64_t width = p.C / p.G;
              const int64_t max_stride = std::max({p.stride[0], p.stride[1], p.stride[2]});
              const bool width_ok =  // 32 in fp32 only
                  width == 2 || width == 4 || width == 8 || width == 16 || (width == 32 && bytes == 4);
              const bool eligible = dir != ConvDirection::kBwdWeight && p.C == p.K && width_ok &&
                                    (p.C * bytes) % 16 == 0 && width * gm == channels && channels % 16 == 0 &&
                                    (dir == ConvDirection::kFwd || max_stride <= 4);
              expect(!ok || eligible, "accepted against the conditions", p, dir, gm, channels);
              if (!ok) {
                // refused although eligible: only where no tile's shared memory fits (the narrowest the plan
                // tries, one row of 16 pixels or of the whole row where narrower, does not)
                if (eligible) {
                  MergedGroupDirectPlan row;
                  const bool fits =
                      kernels::make_merged_group_direct_plan(p, dir, gm, channels, bytes, 8, 2, 16, limit, row) &&
                      row.tile_h * row.tile_w <= 16;
                  expect(!fits, "refused although a 16-pixel tile fits", p, dir, gm, channels);
                }
                continue;
              }
              ++accepted;
              // the phases' largest extents: ceil(written / stride) for bwd_data, the output for fwd
              const int rows = (dst_h + plan.dst_stride[1] - 1) / plan.dst_stride[1];
              const int cols = (dst_w + plan.dst_stride[2] - 1) / plan.dst_stride[2];
              expect(plan.tiles_h * plan.tile_h >= rows && (plan.tiles_h - 1) * plan.tile_h < rows, "rows covered", p,
                     dir, gm, channels);
              expect(plan.tiles_w * plan.tile_w >= cols && (plan.tiles_w - 1) * plan.tile_w < cols, "columns covered",
                     p, dir, gm, channels);
              expect(plan.tile_w <= 256 && plan.tile_h * plan.tile_w <= std::max(256, plan.tile_w),
                     "tile within target", p, dir, gm, channels);
              expect(int64_t(plan.tiles) == int64_t(plan.phases) * p.N * plan.depth * plan.tiles_h * plan.tiles_w &&
                         plan.phases == plan.dst_stride[0] * plan.dst_stride[1] * plan.dst_stride[2],
                     "tile count", p, dir, gm, channels);
              expect(plan.smem_bytes <= limit && plan.staging_offset % 16 == 0, "shared memory", p, dir, gm, channels);
              // the halo as one TMA box: extents within 256, 16-byte rows of an odd number of chunks, its bytes the
              // barrier's; stages from 128-byte boundaries, the barriers between the tables and the staging area
              const int64_t halo_pixels = int64_t(plan.halo_d) * plan.halo_h * plan.halo_w;
              const int chunk = 16 / bytes;  // elements of a 16-byte chunk
              expect(plan.halo_pitch <= 256 && plan.halo_w <= 256 && plan.halo_h <= 256 && plan.halo_d <= 256 &&
                         plan.halo_pitch % chunk == 0 && (plan.halo_pitch / chunk) % 2 == 1 &&
                         plan.halo_pitch >= channels && plan.halo_pitch <= channels + chunk &&
                         plan.element_bytes == bytes,
                     "halo box", p, dir, gm, channels);
              expect(int64_t(plan.stage_tx_bytes) == halo_pixels * plan.halo_pitch * bytes &&
                         int64_t(plan.halo_elems) >= halo_pixels * plan.halo_pitch,
                     "box bytes", p, dir, gm, channels);
              const size_t stages_end = size_t(plan.weight_words) * 4 + 2 * size_t(plan.halo_elems) * bytes;
              // B words a lane per (tap, 8 columns): an m16n8k8 fragment is one 16-bit pair or two TF32 words,
              // a group of 16 or 32 two or four times that
              const int b_words = (bytes == 4 ? 2 : 1) * (width >= 16 ? int(width) / 8 : 1);
              expect((size_t(plan.weight_words) * 4) % 128 == 0 && (size_t(plan.halo_elems) * bytes) % 128 == 0 &&
                         plan.weight_words == plan.taps * channels * 4 * b_words &&
                         plan.barrier_offset % 8 == 0 &&
                         plan.barrier_offset >=
                             stages_end + size_t(2 * plan.pixels16 + plan.phases + 1 + 2 * plan.taps) * 4 &&
                         plan.staging_offset >= plan.barrier_offset + 2 * 8,
                     "stage alignment and barriers", p, dir, gm, channels);
              expect(plan.staging_offset + size_t(plan.raw_weight_elems) * bytes <= plan.smem_bytes &&
                         plan.staging_offset + size_t(8 * 16 * (channels + 8) * bytes) <= plan.smem_bytes,
                     "copied weights and staging inside", p, dir, gm, channels);
              bool inside = true, exact = true;
              const int tile[3] = {1, plan.tile_h, plan.tile_w}, tiles[3] = {plan.depth, plan.tiles_h, plan.tiles_w};
              const int halo[3] = {plan.halo_d, plan.halo_h, plan.halo_w};
              const int written[3] = {dst_d, dst_h, dst_w};
              for (int i = 0; i < 3; ++i) {
                for (int a = 0; a < plan.dst_stride[i]; ++a) {
                  inside = inside && taps_inside(tile[i], tiles[i], plan.axis[i][a], plan.src_stride[i], halo[i]);
                }
                exact = exact && phases_exact(plan, i, bwd, int(p.filter[i]), int(p.stride[i]), int(p.left_pad[i]),
                                              int(p.dilation[i]), written[i]);
              }
              expect(inside, "every tap inside the halo", p, dir, gm, channels);
              expect(exact, "each pixel's taps and sources as defined", p, dir, gm, channels);
              for (int64_t resident : {1, 7, 264, 100000}) {
                MergedGroupDirectPlan grid = plan;
                kernels::merged_group_direct_grid(grid, resident);
                const int64_t blocks = (p.G + gm - 1) / gm;  // the last may hold fewer than gm groups
                expect(grid.group_blocks == blocks && grid.groups == p.G && grid.ctas >= 1 &&
                           grid.ctas <= grid.tiles && grid.ctas * blocks <= std::max(resident, blocks),
                       "grid", p, dir, gm, channels);
              }
            }
          }
        }
      }
    }
  }
  std::printf("%d cases, %d accepted, %d failures\n", cases, accepted, failures);
  return failures == 0 ? 0 : 1;
}
