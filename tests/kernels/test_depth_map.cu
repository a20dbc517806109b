// The depth axis of 3D depthwise problems (depthwise_kernel.cuh, DepthMap / depth_source / depth_tap_mask;
// depthwise_instance.hpp, depth_map), on the host: for every 3D problem a 3x3x3 or 5x5x5 instance accepts (depth
// strides 1-3, dilations 1-3, left and right pads 0-4, depths 1-9), the depth part of each direction is computed
// as the kernels compute it: fwd and bwd_weight walk the output's slices and read input slice depth_source(d, z),
// bwd_data walks dX's slices and reads dY slice depth_source(i, z) of the inverse map, skipping taps the mask
// clears. With the spatial plane reduced to one pixel and one channel, the results must equal the direct
// convolution and its transposes exactly (integer data). Host only; prints "problems N checked M mismatches K".
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../../bench/gpu_check/battery.hpp"
#include "../../bench/gpu_check/hand_depthwise_traits.hpp"
#include "exact_compare.hpp"

using namespace tiledispatch;
namespace k = tiledispatch::kernels;

// The instances whose is_supported decides which problems run: unpadded planes, one channel.
TD_HAND_DW_INSTANCE_ND(fwd3, DepthwiseInstance, kFwd, 3, kFp16, 8, 16, 3, 1, 1, 0, 0, 1, 1, 4, 1, 1)
TD_HAND_DW_INSTANCE_ND(fwd5, DepthwiseInstance, kFwd, 3, kFp16, 8, 16, 5, 1, 1, 0, 0, 1, 1, 4, 1, 1)

namespace {

test::ExactTally g_tally;

// One channel and an F x F plane without padding (one output pixel per slice): only the depth axis varies.
ConvProblem depth_problem(int64_t N, int64_t D, int64_t F, int64_t stride, int64_t dilation, int64_t left,
                          int64_t right) {
  ConvProblem p = check::conv3d(1, N, 1, 1, D, F, F, F, 1, 0, 1);
  p.stride[0] = stride, p.dilation[0] = dilation, p.left_pad[0] = left, p.right_pad[0] = right;
  return p;
}

void check_depth(const ConvProblem& p, const GroupedConvInstance& instance, int F) {
  if (!instance.is_supported(p)) {
    std::printf("refused %s: %s\n", p.to_string().c_str(), instance.is_supported(p).reason.c_str());
    ++g_tally.mismatches;
    return;
  }
  const int64_t D = p.input[0], Do = p.output()[0], N = p.N;
  const auto x = test::small_integers(N * D, 7u), dy = test::small_integers(N * Do, 11u);
  const auto w = test::small_integers(F, 13u);
  // Direct: y[n, d] = sum_z x[n, d*s - pad + z*dil] w[z] over the taps inside [0, D).
  const auto each = [&](auto&& visit) {  // visit(input index, output index, tap)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < Do; ++d)
        for (int64_t z = 0; z < F; ++z) {
          const int64_t i = d * p.stride[0] - p.left_pad[0] + z * p.dilation[0];
          if (i >= 0 && i < D) visit(n * D + i, n * Do + d, z);
        }
  };
  const k::depthwise::DepthMap forward = k::depth_map(p, false), inverse = k::depth_map(p, true);
  // Images as the kernels index them: n * slices + slice.
  std::vector<int64_t> y_want(size_t(N * Do), 0), y_got(y_want.size(), 0);
  std::vector<int64_t> dx_want(size_t(N * D), 0), dx_got(dx_want.size(), 0);
  std::vector<int64_t> dw_want(size_t(F), 0), dw_got(dw_want.size(), 0);
  each([&](int64_t i, int64_t o, int64_t z) {
    y_want[size_t(o)] += x[size_t(i)] * w[size_t(z)];
    dx_want[size_t(i)] += dy[size_t(o)] * w[size_t(z)];
    dw_want[size_t(z)] += dy[size_t(o)] * x[size_t(i)];
  });
  for (int n = 0; n < int(N); ++n) {
    for (int d = 0; d < forward.walked; ++d) {  // fwd: an output slice's taps, as fwd_tile skips cleared ones
      const unsigned mask = k::depthwise::depth_tap_mask(forward, d, F);
      for (int z = 0; z < F; ++z) {
        if ((mask >> z & 1u) == 0) continue;
        const int source = k::depthwise::depth_source(forward, d, z);
        y_got[size_t(n * forward.walked + d)] += x[size_t(n * forward.read + source)] * w[size_t(z)];
      }
    }
    for (int z = 0; z < F; ++z)  // bwd_weight: the block of tap z over every dY slice whose X slice exists
      for (int d = 0; d < forward.walked; ++d) {
        const int source = k::depthwise::depth_source(forward, d, z);
        if (source >= 0) {
          dw_got[size_t(z)] += dy[size_t(n * forward.walked + d)] * x[size_t(n * forward.read + source)];
        }
      }
    for (int i = 0; i < inverse.walked; ++i) {  // bwd_data: a dX slice's taps through the inverse map
      const unsigned mask = k::depthwise::depth_tap_mask(inverse, i, F);
      for (int z = 0; z < F; ++z) {
        if ((mask >> z & 1u) == 0) continue;
        const int source = k::depthwise::depth_source(inverse, i, z);
        dx_got[size_t(n * inverse.walked + i)] += dy[size_t(n * inverse.read + source)] * w[size_t(z)];
      }
    }
  }
  test::compare_exact(g_tally, p, "fwd", y_got, y_want);
  test::compare_exact(g_tally, p, "bwd_data", dx_got, dx_want);
  test::compare_exact(g_tally, p, "bwd_weight", dw_got, dw_want);
}

}  // namespace

int main() {
  const fwd3 i3;
  const fwd5 i5;
  int problems = 0;
  for (int64_t D = 1; D <= 9; ++D)
    for (int64_t s = 1; s <= 3; ++s)
      for (int64_t dil = 1; dil <= 3; ++dil)
        for (int64_t left = 0; left <= 4; ++left)
          for (int64_t right = 0; right <= 4; ++right) {
            for (int F : {3, 5}) {
              const ConvProblem p = depth_problem(2, D, F, s, dil, left, right);
              if (!p.validate().empty() || p.output()[0] < 1) continue;
              check_depth(p, F == 3 ? static_cast<const GroupedConvInstance&>(i3) : i5, F);
              ++problems;
            }
          }
  std::printf("problems %d checked %lld mismatches %lld\n", problems, g_tally.checked, g_tally.mismatches);
  return g_tally.mismatches == 0 ? 0 : 1;
}
