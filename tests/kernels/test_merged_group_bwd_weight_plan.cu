// CPU check of the direct merged-group bwd_weight kernel's plan (kernels/merged_group_bwd_weight.cuh) over many
// problems and CTA shapes: accepted only where the kernel's conditions hold (C and K whole 16-byte vectors; gm need
// not divide G: a last block of fewer groups; the merged channel runs gm x C/G and gm x K/G multiples of 8 and at
// most 128, chains of at least 16 pixels) and refused where they hold only if not even a one-row tile's stages
// fit; where accepted, the work items' blocks are
// exactly the 16 x 16 blocks of the CTA's gradient that meet a diagonal group block, the tap chunks partition the
// taps in whole batches of kTapBatch (where the filter has that many) of at most kMaxTaps, each step's location
// by multiply-high division is the plain one, the steps' tiles cover the output exactly, every tap of every tile
// pixel reads inside the halo, the rows are conflict-free (16-bit: 8 consecutive pixels' ldmatrix rows in 8 bank
// groups; fp32: each lane's loads of pixels t, t + 4 at channels g, g + 8 in 32 banks), the stage boxes are legal
// (extents at most 256, whole 16-byte chunks, 128-byte aligned starts, the expected bytes their sum), the splits
// cover the steps and the shared memory adds up within the limit; for 16-bit and fp32 elements.
// Prints "<cases> cases, <accepted> accepted, <failures> failures".
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "tiledispatch/kernels/merged_group_bwd_weight.cuh"

#include "cube_problem.hpp"

namespace {
using namespace tiledispatch;
using test::image_problem;
using kernels::MergedGroupBwdWeightPlan;

int failures = 0;
int checked_bytes = 2;  // element bytes of the cases being checked (16-bit, then fp32)
void expect(bool ok, const char* what, const ConvProblem& p, int gm, int warps, int stages, int chain) {
  if (!ok && failures++ < 20) {
    std::printf("FAIL %s: %s gm %d warps %d stages %d chain %d, %d-byte elements\n", what, p.to_string().c_str(), gm,
                warps, stages, chain, checked_bytes);
  }
}

// Whether some (m, n) of the 16 x 16 block (mb, nb) of a kc x cc gradient lies in one group.
bool meets_diagonal(int mb, int nb, int kc, int cc, int kg, int cg) {
  for (int m = mb * 16; m < std::min(kc, mb * 16 + 16); ++m) {
    for (int n = nb * 16; n < std::min(cc, nb * 16 + 16); ++n) {
      if (m / kg == n / cg) return true;
    }
  }
  return false;
}

void check_plan(const MergedGroupBwdWeightPlan& plan, const ConvProblem& p, int gm, int warps, int stages, int chain,
                size_t limit) {
  const auto fail = [&](bool ok, const char* what) { expect(ok, what, p, gm, warps, stages, chain); };
  const int kg = int(p.K / p.G), cg = int(p.C / p.G);
  // blocks: exactly those that meet a group, each once
  std::vector<int> listed;
  for (int i = 0; i < plan.blocks_count; ++i) listed.push_back(plan.blocks[i]);
  int expected_blocks = 0;
  for (int mb = 0; mb * 16 < plan.kc; ++mb) {
    for (int nb = 0; nb * 16 < plan.cc; ++nb) {
      const bool meets = meets_diagonal(mb, nb, plan.kc, plan.cc, kg, cg);
      expected_blocks += meets;
      const int found = int(std::count(listed.begin(), listed.end(), (mb << 8) | nb));
      fail(found == (meets ? 1 : 0), "blocks: the diagonal ones, once");
    }
  }
  fail(expected_blocks == plan.blocks_count, "block count");
  fail(plan.group_blocks == (p.G + gm - 1) / gm, "group blocks: the last may hold fewer than gm groups");
  // tap chunks: a partition of the taps in whole batches
  constexpr int kMaxTaps = MergedGroupBwdWeightPlan::kMaxTaps, kTapBatch = MergedGroupBwdWeightPlan::kTapBatch;
  std::vector<int> covered(size_t(plan.taps), 0);
  for (int c = 0; c < plan.tap_chunks; ++c) {
    const int tap0 = c * plan.chunk_taps, ntaps = std::min(plan.chunk_taps, plan.taps - tap0);
    fail(ntaps > 0, "no empty tap chunk");
    for (int t = tap0; t < tap0 + ntaps && t < plan.taps; ++t) ++covered[size_t(t)];
  }
  fail(std::all_of(covered.begin(), covered.end(), [](int n) { return n == 1; }), "each tap in one chunk");
  fail(plan.chunk_taps >= 1 && plan.chunk_taps <= kMaxTaps, "at most kMaxTaps taps a chunk");
  fail(plan.taps < kTapBatch || plan.chunk_taps % kTapBatch == 0, "whole tap batches");
  fail(plan.items == plan.blocks_count * plan.tap_chunks, "items");
  // steps: multiply-high location, tiles covering every output pixel once
  const auto out = p.output();
  const int ho = int(out[1]), wo = int(out[2]), do_ = int(out[0]);
  fail(plan.steps == int(p.N) * do_ * plan.steps_h * plan.steps_w, "step count");
  fail(plan.steps_h * plan.tile_h >= ho && (plan.steps_h - 1) * plan.tile_h < ho, "rows covered, none empty");
  fail(plan.steps_w * plan.tile_w >= wo && (plan.steps_w - 1) * plan.tile_w < wo, "columns covered, none empty");
  bool located = true;
  for (int step = 0; step < plan.steps; ++step) {
    uint32_t wb, hb, od;
    const uint32_t n = plan.by_do.divide(plan.by_steps_h.divide(plan.by_steps_w.divide(uint32_t(step), wb), hb), od);
    located = located && int(wb) == step % plan.steps_w && int(hb) == step / plan.steps_w % plan.steps_h &&
              int(od) == step / (plan.steps_w * plan.steps_h) % do_ &&
              int(n) == step / (plan.steps_w * plan.steps_h * do_);
  }
  fail(located, "step location");
  fail(plan.k_batch >= 1 && plan.steps_per_split * plan.k_batch >= plan.steps &&
           (plan.steps_per_split - 1) * plan.k_batch < plan.steps,
       "splits cover the steps");
  // every tap of every tile pixel inside the halo
  bool inside = true;
  for (int th = 0; th < plan.tile_h; ++th) {
    for (int tw = 0; tw < plan.tile_w; ++tw) {
      for (int t = 0; t < plan.taps; ++t) {
        const int tz = t / (plan.y * plan.x), ty = t / plan.x % plan.y, tx = t % plan.x;
        inside = inside && tz * plan.dd < plan.halo_d && th * plan.sh + ty * plan.dh < plan.halo_h &&
                 tw * plan.sw + tx * plan.dw < plan.halo_w;
      }
    }
  }
  fail(inside, "taps inside the halo");
  fail(plan.pixels16 % 16 == 0 && plan.pixels16 >= plan.tile_h * plan.tile_w &&
           plan.pixels16 - 16 < plan.tile_h * plan.tile_w,
       "pixels rounded to 16");
  // rows: every channel of the CTA, at most 8 more, whole 16-byte chunks, and 16-bit: 8 consecutive pixels at
  // one channel chunk in 8 different bank groups (conflict-free ldmatrix); fp32: pixels t and t + 4 (t < 4) at
  // channels g (g < 8) in 32 different banks (a k-step's single loads), g + 8 likewise
  const auto rows_ok = [](int pitch, int channels) {
    uint64_t banks = 0;
    if (checked_bytes == 2) {
      for (int pixel = 0; pixel < 8; ++pixel) banks |= uint64_t(1) << (pixel * pitch * 2 / 16 % 8);
    } else {
      for (int half = 0; half < 2; ++half) {
        uint64_t half_banks = 0;
        for (int t = 0; t < 4; ++t) {
          for (int g = 0; g < 8; ++g) half_banks |= uint64_t(1) << ((t + 4 * half) * pitch + g) % 32;
        }
        banks |= half_banks == 0xFFFFFFFFu ? uint64_t(1) << half : 0;
      }
    }
    const uint64_t all = checked_bytes == 2 ? 0xFFu : 0x3u;
    return pitch >= channels && pitch - channels <= 8 && pitch % 8 == 0 && banks == all;
  };
  fail(rows_ok(plan.dy_pitch, plan.kc) && rows_ok(plan.x_pitch, plan.cc), "conflict-free rows");
  // boxes: dY (dy_pitch, tile_w, tile_h) and the halo (x_pitch, halo_w, halo_h, halo_d), each at a 128-byte
  // boundary
  const size_t halo = size_t(plan.halo_d) * size_t(plan.halo_h) * size_t(plan.halo_w) * size_t(plan.x_pitch);
  const size_t dy_box = size_t(plan.tile_h) * size_t(plan.tile_w) * size_t(plan.dy_pitch);
  const int box_max = std::max({plan.dy_pitch, plan.x_pitch, plan.tile_w, plan.tile_h, plan.halo_w, plan.halo_h,
                                plan.halo_d});
  fail(box_max <= 256, "box extents");
  fail(size_t(plan.halo_offset) == size_t(plan.pixels16) * size_t(plan.dy_pitch) && plan.halo_offset % 64 == 0 &&
           plan.stage_elems % 64 == 0 && size_t(plan.stage_elems) >= size_t(plan.halo_offset) + halo &&
           size_t(plan.stage_elems) < size_t(plan.halo_offset) + halo + 64,
       "stage layout: 128-byte aligned boxes");
  fail(plan.stage_tx_bytes == size_t(checked_bytes) * (dy_box + halo) && plan.element_bytes == checked_bytes,
       "expected bytes: the two boxes");
  const size_t tables = size_t(stages) * size_t(plan.stage_elems) * checked_bytes + size_t(plan.pixels16) * 4;
  fail(plan.barrier_offset == tables && plan.barrier_offset % 8 == 0 && plan.smem_bytes == tables + 8 * stages &&
           plan.smem_bytes <= limit,
       "shared memory");
}

}  // namespace

int main() {
  std::vector<ConvProblem> problems;
  for (const auto [cg, kg] :
       {std::pair{2, 2}, {4, 4}, {8, 8}, {16, 16}, {32, 32}, {4, 8}, {8, 4}, {3, 3}, {6, 6}, {12, 12}}) {
    for (int64_t G : {8, 13, 32}) {  // 13: a last block of fewer than gm groups
      problems.push_back(image_problem(2, G, 2, G * cg, G * kg, 1, 15, 13, 3, 1, 1, 1));
      problems.push_back(image_problem(2, G, 1, G * cg, G * kg, 1, 56, 56, 3, 2, 1, 1));
      problems.push_back(image_problem(2, G, 3, G * cg, G * kg, 1, 9, 150, 5, 1, 3, 2));
      problems.push_back(image_problem(2, G, 2, G * cg, G * kg, 1, 7, 7, 1, 1, 0, 1));
      problems.push_back(image_problem(3, G, 2, G * cg, G * kg, 5, 6, 7, 3, 1, 1, 1));
      problems.push_back(image_problem(2, G, 1, G * cg, G * kg, 1, 3, 700, 3, 2, 1, 2));  // rows past a box
    }
  }
  int cases = 0, accepted = 0;
  for (const int bytes : {2, 4}) {
    checked_bytes = bytes;
    for (const ConvProblem& p : problems) {
      for (int gm : {1, 2, 4, 8, 16, 32}) {
        for (int warps : {2, 4, 8}) {
          for (int stages : {2, 4}) {
            for (int chain : {8, 64, 128}) {
              for (size_t limit : {size_t(227) * 1024, size_t(24) * 1024}) {
                for (int k_batch : {1, 5}) {
                  ++cases;
                  MergedGroupBwdWeightPlan plan;
                  const bool ok =
                      kernels::make_merged_group_bwd_weight_plan(p, gm, bytes, warps, stages, chain, limit, k_batch,
                                                                 plan);
                  const int64_t cg = p.C / p.G, kg = p.K / p.G;
                  const bool eligible = chain >= 16 && (gm * cg) % 8 == 0 && (gm * kg) % 8 == 0 &&
                                        gm * cg <= 128 && gm * kg <= 128 && (p.C * bytes) % 16 == 0 &&
                                        (p.K * bytes) % 16 == 0;
                  expect(!ok || eligible, "accepted against the conditions", p, gm, warps, stages, chain);
                  if (!ok) {
                    if (eligible) {  // refused although eligible: only where the stages of a one-row tile of 16
                                     // pixels (or of the whole row where narrower) do not fit
                      const int64_t kc = gm * kg, cc = gm * cg, wo = p.output()[2];
                      const auto pitch = [&](int64_t c) {
                        return bytes == 2 ? (c / 8 % 2 == 1 ? c : c + 8) : (c % 16 == 8 ? c : c + 8);
                      };
                      const int64_t reach = (p.filter[2] - 1) * p.dilation[2] + 1;  // a halo row within a box
                      const int64_t tile_w = std::min<int64_t>(wo, 16);
                      const int64_t pixels16 = (tile_w + 15) / 16 * 16;
                      const int64_t halo = ((p.filter[0] - 1) * p.dilation[0] + 1) *
                                           ((p.filter[1] - 1) * p.dilation[1] + 1) *
                                           ((tile_w - 1) * p.stride[2] + reach);
                      const int64_t halo_bytes = (halo * pitch(cc) + 63) / 64 * 64 * bytes;
                      const int64_t smem =
                          stages * (bytes * pixels16 * pitch(kc) + halo_bytes) + pixels16 * 4 + 8 * stages;
                      expect(reach > 256 || smem > int64_t(limit), "refused although a 16-pixel row fits", p, gm,
                             warps, stages, chain);
                    }
                    continue;
                  }
                  ++accepted;
                  check_plan(plan, p, gm, warps, stages, chain, limit);
                }
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
