// Dilated depthwise problems as residue sub-problems (depthwise_instance.hpp, for_each_residue; depthwise_kernel.cuh,
// PixelGrid / pixel_offset), on the host: for each problem an instance accepts (dilations 1 to 4 per axis, stride 2
// along an axis whose dilation it divides, paddings of dilation x the instance's pad, right pads that grow or
// shrink the output, odd sizes, extents below the dilation), every residue is computed as the undilated stride-1
// problem with the instance's pad that the kernels compute, through the grids' addresses: fwd and bwd_data write
// their residue's tensor, bwd_weight adds each residue's sum. The results must equal the direct dilated
// convolution exactly (integer data); fwd must write every element once, and bwd_data every element once or,
// where no output reads it (has_unread_inputs: zeroed before the residues), none. Host only; prints
// "problems N checked M mismatches K".
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../../bench/gpu_check/battery.hpp"
#include "../../bench/gpu_check/hand_depthwise_traits.hpp"
#include "exact_compare.hpp"

using namespace tiledispatch;
namespace k = tiledispatch::kernels;
using Grid = k::ResidueGrid;

// The instances whose is_supported decides which problems run: 3x3 pad 1 and 5x5 pad 2 (fwd), as in `default`.
TD_HAND_DW_INSTANCE(fwd3, DepthwiseInstance, kFwd, kFp16, 8, 16, 3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DW_INSTANCE(fwd5, DepthwiseInstance, kFwd, kFp16, 8, 16, 5, 1, 1, 2, 2, 4, 2, 4, 8, 8)

namespace {

constexpr int64_t kPoison = -999999;
test::ExactTally g_tally;

// Direct dilated depthwise convolution (2D): out[n, y, x, c] = sum over taps of
// in[n, sh*y + dh*fy - pad_h, sw*x + dw*fx - pad_w, c] * w[c, fy, fx]; bwd_data and bwd_weight are its transposes.
struct Direct {
  const ConvProblem& p;
  int64_t F, Ho, Wo;
  template <class Visit>
  void each(Visit&& visit) const {  // visit(input index, output index, weight index) for every product
    for (int64_t n = 0; n < p.N; ++n)
      for (int64_t y = 0; y < Ho; ++y)
        for (int64_t x = 0; x < Wo; ++x)
          for (int64_t fy = 0; fy < F; ++fy)
            for (int64_t fx = 0; fx < F; ++fx) {
              const int64_t iy = p.stride[1] * y + p.dilation[1] * fy - p.left_pad[1];
              const int64_t ix = p.stride[2] * x + p.dilation[2] * fx - p.left_pad[2];
              if (iy < 0 || ix < 0 || iy >= p.input[1] || ix >= p.input[2]) continue;
              for (int64_t c = 0; c < p.C; ++c) {
                visit(((n * p.input[1] + iy) * p.input[2] + ix) * p.C + c, ((n * Ho + y) * Wo + x) * p.C + c,
                      (c * F + fy) * F + fx);
              }
            }
  }
};

// The same products, residue by residue, as the kernels form them: the undilated stride-1 problem with the
// instance's pad `pad` on the residue's grids (zero outside the input grid), addressed through pixel_offset.
template <class Visit>
void each_by_residue(const ConvProblem& p, int64_t F, int64_t pad_h, int64_t pad_w, Visit&& visit) {
  k::for_each_residue(p, k::Walked::kOutput, [&](const Grid& in, const Grid& out) {
    for (int n = 0; n < int(p.N); ++n)
      for (int y = 0; y < out.grid.height; ++y)
        for (int x = 0; x < out.grid.width; ++x)
          for (int fy = 0; fy < int(F); ++fy)
            for (int fx = 0; fx < int(F); ++fx) {
              const int iy = y + fy - int(pad_h), ix = x + fx - int(pad_w);
              if (iy < 0 || ix < 0 || iy >= in.grid.height || ix >= in.grid.width) continue;
              for (int c = 0; c < int(p.C); ++c) {
                visit(in.origin + k::depthwise::pixel_offset(in.grid, n, iy, ix, int(p.C)) + c,
                      out.origin + k::depthwise::pixel_offset(out.grid, n, y, x, int(p.C)) + c, (c * F + fy) * F + fx);
              }
            }
    return cudaSuccess;
  });
}

void check_residues(const ConvProblem& p, const GroupedConvInstance& instance, int64_t F, int64_t pad) {
  if (!instance.is_supported(p)) {
    std::printf("refused %s: %s\n", p.to_string().c_str(), instance.is_supported(p).reason.c_str());
    ++g_tally.mismatches;
    return;
  }
  const auto o = p.output();
  const Direct direct{p, F, o[1], o[2]};
  const auto x = test::small_integers(p.input_elements(), 7u), dy = test::small_integers(p.output_elements(), 11u);
  const auto w = test::small_integers(p.C * F * F, 13u);

  // fwd: each output element written by exactly one residue (the sum is formed in one place, as a thread does).
  std::vector<int64_t> want(size_t(p.output_elements()), 0), got(want.size(), kPoison);
  direct.each([&](int64_t i, int64_t out, int64_t t) { want[size_t(out)] += x[size_t(i)] * w[size_t(t)]; });
  std::vector<int> writes(want.size(), 0);
  std::vector<int64_t> sums(want.size(), 0);
  k::for_each_residue(p, k::Walked::kOutput, [&](const Grid&, const Grid& out) {
    for (int n = 0; n < int(p.N); ++n)
      for (int y = 0; y < out.grid.height; ++y)
        for (int xx = 0; xx < out.grid.width; ++xx)
          for (int c = 0; c < int(p.C); ++c) {
            ++writes[size_t(out.origin + k::depthwise::pixel_offset(out.grid, n, y, xx, int(p.C)) + c)];
          }
    return cudaSuccess;
  });
  each_by_residue(p, F, pad, pad, [&](int64_t i, int64_t out, int64_t t) {
    sums[size_t(out)] += x[size_t(i)] * w[size_t(t)];
  });
  for (size_t i = 0; i < got.size(); ++i) got[i] = writes[i] == 1 ? sums[i] : kPoison;
  test::compare_exact(g_tally, p, "fwd", got, want);

  // bwd_data: dX[i] gathers dY over the same products; every dX element belongs to one residue.
  std::vector<int64_t> dx_want(size_t(p.input_elements()), 0), dx_sums(dx_want.size(), 0);
  direct.each([&](int64_t i, int64_t out, int64_t t) { dx_want[size_t(i)] += dy[size_t(out)] * w[size_t(t)]; });
  std::vector<int> dx_owner(dx_want.size(), 0);
  // bwd_data walks dX: the residues whose dX grid is not empty.
  k::for_each_residue(p, k::Walked::kInput, [&](const Grid& in, const Grid&) {
    for (int n = 0; n < int(p.N); ++n)
      for (int y = 0; y < in.grid.height; ++y)
        for (int xx = 0; xx < in.grid.width; ++xx)
          for (int c = 0; c < int(p.C); ++c) {
            ++dx_owner[size_t(in.origin + k::depthwise::pixel_offset(in.grid, n, y, xx, int(p.C)) + c)];
          }
    return cudaSuccess;
  });
  each_by_residue(p, F, pad, pad, [&](int64_t i, int64_t out, int64_t t) {
    dx_sums[size_t(i)] += dy[size_t(out)] * w[size_t(t)];
  });
  std::vector<int64_t> dx_got(dx_want.size());
  const bool zeroed = k::has_unread_inputs(p);
  for (size_t i = 0; i < dx_got.size(); ++i) {
    dx_got[i] = dx_owner[i] == 1 ? dx_sums[i] : (dx_owner[i] == 0 && zeroed ? 0 : kPoison);
  }
  test::compare_exact(g_tally, p, "bwd_data", dx_got, dx_want);

  // bwd_weight: the residues' sums added.
  std::vector<int64_t> dw_want(size_t(p.C * F * F), 0), dw_got(dw_want.size(), 0);
  direct.each([&](int64_t i, int64_t out, int64_t t) { dw_want[size_t(t)] += dy[size_t(out)] * x[size_t(i)]; });
  each_by_residue(p, F, pad, pad, [&](int64_t i, int64_t out, int64_t t) {
    dw_got[size_t(t)] += dy[size_t(out)] * x[size_t(i)];
  });
  test::compare_exact(g_tally, p, "bwd_weight", dw_got, dw_want);
}

// Depthwise, stride sh x sw, dilation dh x dw with the "same" padding dilation x (F - 1) / 2.
ConvProblem dilated(int64_t N, int64_t C, int64_t H, int64_t W, int64_t F, int64_t dh, int64_t dw, int64_t sh = 1,
                    int64_t sw = 1) {
  ConvProblem p = check::conv2d(C, N, C, C, H, W, F, 1, 0, 1);
  p.stride = {1, sh, sw};
  p.dilation = {1, dh, dw};
  p.left_pad = p.right_pad = {0, dh * (F / 2), dw * (F / 2)};
  return p;
}

}  // namespace

int main() {
  const fwd3 i3;
  const fwd5 i5;
  int problems = 0;
  for (int64_t dh = 1; dh <= 4; ++dh)
    for (int64_t dw = 1; dw <= 4; ++dw)
      for (int64_t H : {1, 3, 7, 10})
        for (int64_t W : {2, 9, 13}) {
          ConvProblem p = dilated(2, 8, H, W, 3, dh, dw);
          for (int64_t right : {0, 1, 2}) {  // right pad of dilation x {0, 1, 2}: smaller, same, larger outputs
            p.right_pad = {0, dh * right, dw * right};
            if (p.validate().empty()) check_residues(p, i3, 3, 1), ++problems;
          }
        }
  for (int64_t d : {2, 3})
    for (int64_t H : {5, 11}) check_residues(dilated(1, 16, H, H + 4, 5, d, d), i5, 5, 2), ++problems;
  // Stride 2 along an axis whose dilation (2 or 4) it divides; the other axis undilated at stride 1 or dilated.
  for (int64_t dh : {2, 4})
    for (int64_t dw : {1, 2, 3, 4})
      for (int64_t H : {3, 8, 11})
        for (int64_t W : {4, 9}) {
          ConvProblem p = dilated(2, 8, H, W, 3, dh, dw, 2, dw % 2 == 0 ? 2 : 1);
          for (int64_t right : {0, 1}) {
            p.right_pad = {0, dh * right, dw * right};
            if (p.validate().empty()) check_residues(p, i3, 3, 1), ++problems;
          }
        }
  for (int64_t H : {9, 14}) check_residues(dilated(1, 16, H, H + 3, 5, 2, 2, 2, 2), i5, 5, 2), ++problems;
  std::printf("problems %d checked %lld mismatches %lld\n", problems, g_tally.checked, g_tally.mismatches);
  return g_tally.mismatches == 0 ? 0 : 1;
}
