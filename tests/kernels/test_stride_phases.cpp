// bwd_data by stride phases (stride_phases.hpp) against the strided problem, on the host: for strided problems
// (2D and 3D, strides 2 to 4, dilations 1 to 3, paddings 0 to 3, odd sizes, merged groups) the phases' filters
// are gathered with phase_filter_index, the pixels of phases without taps set to zero, and every phase with taps
// computed as the implicit GEMM of BwdDataView over its unit-stride problem (a_locate, b_locate, and c_prepare /
// c_locate with the phase's output map). Where phase 0 alone has taps (zeros_beside_phase_0), its filter must
// be the weights as they are, and its rows store the other phases' zeros (zero_siblings, c_siblings). The
// result must equal a direct strided bwd_data exactly (integer data), every input-gradient element must be
// written once, and every slot of the phases' filters filled once. Host only; prints "checked N mismatches M"
// and the first mismatches.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tiledispatch/kernels/stride_phases.hpp"

#include "cube_problem.hpp"

namespace {

using tiledispatch::ConvDirection;
using tiledispatch::ConvProblem;
namespace k = tiledispatch::kernels;
using tiledispatch::test::cube_problem;

constexpr int64_t kPoison = -999999;
long long g_checked = 0, g_mismatches = 0, g_phased = 0, g_beside = 0, g_cube_rows = 0;

void mismatch(const ConvProblem& p, const char* what, int64_t index, int64_t got, int64_t want) {
  if (++g_mismatches <= 10) {
    std::printf("mismatch %s at %lld: got %lld want %lld (%s)\n", what, static_cast<long long>(index),
                static_cast<long long>(got), static_cast<long long>(want), p.to_string().c_str());
  }
}

// dX[n, d, h, w, g, c] = sum over k of group g and taps of dY[n, od, oh, ow, g, k] * W[g, k, tap, c] where
// d + pd - z*dd = od*sd (and so on), directly from the strided problem.
std::vector<int64_t> direct_bwd_data(const ConvProblem& p, const std::vector<int64_t>& dy,
                                     const std::vector<int64_t>& w) {
  const auto out = p.output();
  const int64_t cg = p.C / p.G, kg = p.K / p.G, taps = p.filter_spatial();
  std::vector<int64_t> dx(size_t(p.input_elements()), 0);
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t d = 0; d < p.input[0]; ++d)
      for (int64_t h = 0; h < p.input[1]; ++h)
        for (int64_t x = 0; x < p.input[2]; ++x)
          for (int64_t c = 0; c < p.C; ++c) {
            const int64_t g = c / cg;
            int64_t sum = 0;
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t tz = t / (p.filter[1] * p.filter[2]), ty = t / p.filter[2] % p.filter[1];
              const int64_t tx = t % p.filter[2];
              const int64_t vd = d + p.left_pad[0] - tz * p.dilation[0], vh = h + p.left_pad[1] - ty * p.dilation[1];
              const int64_t vw = x + p.left_pad[2] - tx * p.dilation[2];
              if (vd < 0 || vh < 0 || vw < 0 || vd % p.stride[0] || vh % p.stride[1] || vw % p.stride[2]) continue;
              const int64_t od = vd / p.stride[0], oh = vh / p.stride[1], ow = vw / p.stride[2];
              if (od >= out[0] || oh >= out[1] || ow >= out[2]) continue;
              for (int64_t kk = 0; kk < kg; ++kk) {
                const int64_t pixel = ((n * out[0] + od) * out[1] + oh) * out[2] + ow;
                sum += dy[size_t(pixel * p.K + g * kg + kk)] * w[size_t(((g * kg + kk) * taps + t) * cg + c % cg)];
              }
            }
            dx[size_t((((n * p.input[0] + d) * p.input[1] + h) * p.input[2] + x) * p.C + c)] = sum;
          }
  return dx;
}

// Where no stride exceeds 2, the siblings of row `c` as cube bits and offsets (c_sibling_bits, c_sibling_offset,
// the staged epilogue's bulk copies) must be exactly those c_siblings lists.
template <class View>
void check_cube(const ConvProblem& p, const View& view, const typename View::CInfo& c, int64_t m) {
  std::vector<int64_t> listed, cube;
  view.c_siblings(c, [&](int64_t delta) { listed.push_back(delta); });
  const uint32_t bits = view.c_sibling_bits(c);
  for (int b = 1; b < 8; ++b) {
    if ((bits >> b) & 1u) cube.push_back(view.c_sibling_offset(b));
  }
  std::sort(listed.begin(), listed.end());
  std::sort(cube.begin(), cube.end());
  ++g_checked;
  ++g_cube_rows;
  if (listed != cube) mismatch(p, "siblings in the cube", m, int64_t(cube.size()), int64_t(listed.size()));
}

template <int NDim, k::FilterGeometry Geometry, int GM>
void check(const ConvProblem& p) {
  k::StridePhases phases;
  if (!k::make_stride_phases(p, phases)) {
    std::printf("no phases for %s\n", p.to_string().c_str());
    ++g_mismatches;
    return;
  }
  ++g_phased;
  std::vector<int64_t> dy(size_t(p.output_elements())), w(size_t(p.weight_elements()));
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = int64_t((i * 7 + 3) % 11) - 5;
  for (size_t i = 0; i < w.size(); ++i) w[i] = int64_t((i * 5 + 1) % 9) - 4;
  const std::vector<int64_t> want = direct_bwd_data(p, dy, w);

  // the phases' filters: every weight once, every slot of a phase's K x taps x C/G filled once
  std::vector<int64_t> filters(size_t(phases.filter_elements), kPoison);
  const int64_t cg = p.C / p.G, taps = p.filter_spatial();
  for (int64_t i = 0; i < p.weight_elements(); ++i) {
    const int tap = int(i / cg % taps);
    const int zyx[3] = {int(tap / (p.filter[1] * p.filter[2])), int(tap / p.filter[2] % p.filter[1]),
                        int(tap % p.filter[2])};
    const int64_t to = k::phase_filter_index(phases, cg, i / (cg * taps), zyx, i % cg);
    ++g_checked;
    if (to < 0 || to >= phases.filter_elements || filters[size_t(to)] != kPoison) {
      mismatch(p, "filter slot", i, to, -1);
      continue;
    }
    filters[size_t(to)] = w[size_t(i)];
  }
  for (int phase = 0; phase < phases.count; ++phase) {
    const int64_t used = p.K * cg * phases.taps(phase);
    for (int64_t i = 0; i < used; ++i) {
      ++g_checked;
      if (filters[size_t(phases.filter_offset[phase] + i)] == kPoison) mismatch(p, "unfilled filter", i, phase, 0);
    }
  }

  std::vector<int64_t> got(want.size(), kPoison);
  const bool beside = k::zeros_beside_phase_0(p, phases);
  g_beside += beside ? 1 : 0;
  for (int64_t i = 0; beside && i < p.weight_elements(); ++i) {  // the kernel then reads the weights as phase 0's
    ++g_checked;
    if (filters[size_t(phases.filter_offset[0] + i)] != w[size_t(i)]) mismatch(p, "phase 0's filter", i, 0, 0);
  }
  for (int64_t pixel = 0; pixel < p.N * p.input_spatial() && !beside; ++pixel) {
    const int64_t x = pixel % p.input[2], h = pixel / p.input[2] % p.input[1];
    const int64_t d = pixel / (p.input[2] * p.input[1]) % p.input[0];
    const int phase = int((d % p.stride[0] * p.stride[1] + h % p.stride[1]) * p.stride[2] + x % p.stride[2]);
    if (phases.taps(phase) > 0) continue;
    for (int64_t c = 0; c < p.C; ++c) got[size_t(pixel * p.C + c)] = 0;
  }
  for (int phase = 0; phase < phases.count; ++phase) {
    if (phases.taps(phase) == 0 || phases.pixels_per_image(phase) == 0) continue;
    const ConvProblem q = k::phase_problem(p, phases, phase);
    if (q.output() != p.output() || q.filter_spatial() != phases.taps(phase)) {
      mismatch(p, "phase problem", phase, q.output()[1], p.output()[1]);
      continue;
    }
    auto shape = k::make_conv_shape<int64_t>(q, ConvDirection::kBwdData, GM);
    k::apply_phase_output(k::phase_output(p, phases, phase), shape);
    shape.zero_siblings = beside;
    const int64_t* phase_filter = filters.data() + phases.filter_offset[phase];
    for (int64_t g0 = 0; g0 < p.G; g0 += GM) {
      const k::BwdDataView<int64_t, NDim, Geometry, GM> view{shape, g0};
      for (int64_t m = 0; m < shape.gemm_m; ++m) {
        const auto a = view.a_prepare(m);
        const auto c = view.c_prepare(m);
        if (beside && view.c_siblings_in_cube()) check_cube(p, view, c, m);
        for (int64_t n = 0; n < shape.gemm_n; ++n) {
          const auto b = view.b_prepare(n);
          int64_t sum = 0;
          for (int64_t kk = 0; kk < shape.gemm_k; ++kk) {
            int64_t oa = 0, ob = 0;
            if (view.a_locate(a, kk, oa) && view.b_locate(b, kk, ob)) sum += dy[size_t(oa)] * phase_filter[ob];
          }
          int64_t offset = 0;
          if (!view.c_locate(c, n, offset)) continue;
          ++g_checked;
          if (got[size_t(offset)] != kPoison) mismatch(p, "written twice", offset, got[size_t(offset)], sum);
          got[size_t(offset)] = sum;
          view.c_siblings(c, [&](int64_t delta) {
            const int64_t at = offset + delta;
            ++g_checked;
            if (at < 0 || at >= int64_t(got.size()) || got[size_t(at)] != kPoison) {
              mismatch(p, "zero beside phase 0", at, at < 0 || at >= int64_t(got.size()) ? -1 : got[size_t(at)], 0);
              return;
            }
            got[size_t(at)] = 0;
          });
        }
      }
    }
  }
  for (size_t i = 0; i < want.size(); ++i) {
    ++g_checked;
    if (got[i] != want[i]) mismatch(p, "input gradient", int64_t(i), got[i], want[i]);
  }
}

}  // namespace

int main() {
  using G = k::FilterGeometry;
  // 2D: strides 2 to 4, filters 1 to 5, paddings 0 to 3, dilations 1 to 3, odd and even sizes
  for (const int64_t stride : {2, 3, 4})
    for (const int64_t filter : {1, 2, 3, 5})
      for (const int64_t pad : {0, 1, 3})
        for (const int64_t dil : {1, 2, 3})
          for (const int64_t size : {7, 10}) {
            const ConvProblem p = cube_problem(2, 2, 2, 4, 6, size, filter, stride, pad, dil);
            if (!p.validate().empty()) continue;
            check<2, G::kGeneral, 1>(p);
          }
  // filters smaller than the stride: phases without taps store zeros; the 1x1 geometry
  check<2, G::kFilter1x1, 1>(cube_problem(2, 1, 2, 8, 4, 9, 1, 2, 0, 1));
  check<2, G::kFilter1x1, 1>(cube_problem(2, 2, 1, 4, 8, 12, 1, 3, 0, 1));
  // 1x1 without padding, C a multiple of 8: phase 0 alone has taps and stores the others' zeros (C = 12 not)
  for (const int ndim : {2, 3})
    for (const int64_t stride : {2, 3, 4})
      for (const int64_t size : {5, 10})
        for (const int64_t c : {16, 12}) {
          const ConvProblem p = cube_problem(ndim, 2, 2, c, 6, size, 1, stride, 0, 1);
          if (ndim == 2) check<2, G::kFilter1x1, 1>(p);
          if (ndim == 3) check<3, G::kGeneral, 1>(p);
        }
  // merged groups (block-diagonal B), grouped 3x3 stride 2
  check<2, G::kGeneral, 2>(cube_problem(2, 4, 2, 8, 8, 9, 3, 2, 1, 1));
  check<2, G::kGeneral, 4>(cube_problem(2, 8, 1, 16, 8, 8, 3, 2, 1, 1));
  // unequal strides along the axes, H only
  {
    ConvProblem p = cube_problem(2, 1, 2, 4, 4, 9, 3, 1, 1, 1);
    p.stride[1] = 2;
    check<2, G::kGeneral, 1>(p);
    p.stride = {1, 1, 3};
    p.filter = {1, 5, 2};
    check<2, G::kGeneral, 1>(p);
  }
  // 3D
  for (const int64_t stride : {2, 3})
    for (const int64_t filter : {1, 3})
      for (const int64_t dil : {1, 2}) {
        const ConvProblem p = cube_problem(3, 2, 1, 4, 4, 5, filter, stride, filter / 2, dil);
        if (!p.validate().empty()) continue;
        check<3, G::kGeneral, 1>(p);
      }
  std::printf("phased %lld problems, %lld with zeros beside phase 0, %lld rows' siblings in the cube\n", g_phased,
              g_beside, g_cube_rows);
  std::printf("checked %lld mismatches %lld\n", g_checked, g_mismatches);
  return g_mismatches == 0 ? 0 : 1;
}
