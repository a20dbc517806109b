// Width unfolding (kernels/width_unfolding.hpp) against the float64 reference: for problems of one group and a
// filter wider than one tap (strides, dilations, asymmetric padding, 2D and 3D), the unfolded layer over the
// unfolded input (unfolded_source) and the weights' rows padded to C' must give exactly the forward output of
// the layer as given, and its weight gradient, cut to X*C per row, exactly the weight gradient (small integer
// values: every sum is exact in double). The unfolded gradient's padding columns must be zero, and the unfolding
// kernel's chunks (unfolded_chunk) must give the same unfolded input.
// Host only; prints "problems N compared M mismatches K".
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tiledispatch/kernels/width_unfolding.hpp"
#include "tiledispatch/reference/host.hpp"

namespace {

using tiledispatch::ConvDirection;
using tiledispatch::ConvProblem;
namespace k = tiledispatch::kernels;
namespace ref = tiledispatch::reference;

uint64_t g_state = 0x2545F4914F6CDD1DULL;
double small_int() {  // -3 .. 3
  g_state = g_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return double(int64_t((g_state >> 33) % 7) - 3);
}
std::vector<double> random_values(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = small_int();
  return v;
}

ConvProblem make(int ndim, int64_t n, int64_t c, int64_t k, int64_t d, int64_t h, int64_t w, int64_t z, int64_t y,
                 int64_t x, int64_t sw, int64_t dw, int64_t lw, int64_t rw) {
  ConvProblem p;
  p.ndim_spatial = ndim;
  p.N = n;
  p.C = c;
  p.K = k;
  p.input = {ndim == 3 ? d : 1, h, w};
  p.filter = {ndim == 3 ? z : 1, y, x};
  p.stride = {1, 2, sw};
  p.dilation = {1, 1, dw};
  p.left_pad = {0, y / 2, lw};
  p.right_pad = {0, y / 2, rw};
  return p;
}

long long g_compared = 0, g_mismatches = 0;
void compare(const char* what, const ConvProblem& p, const std::vector<double>& want,
             const std::vector<double>& got) {
  if (want.size() != got.size()) {
    ++g_mismatches;
    std::printf("%s %s: sizes %zu and %zu\n", what, p.to_string().c_str(), want.size(), got.size());
    return;
  }
  for (size_t i = 0; i < want.size(); ++i) {
    ++g_compared;
    if (want[i] != got[i] && ++g_mismatches <= 10) {
      std::printf("mismatch %s %s at %zu: %g, unfolded %g\n", what, p.to_string().c_str(), i, want[i], got[i]);
    }
  }
}

template <int Chunk>
std::vector<double> chunked(const std::vector<double>& input, const k::WidthUnfolding& u) {
  std::vector<double> out(size_t(u.rows * u.out_width * u.unfolded));
  for (int64_t row = 0; row < u.rows; ++row)
    for (int64_t wo = 0; wo < u.out_width; ++wo)
      for (int j0 = 0; j0 < u.unfolded; j0 += Chunk)
        k::unfolded_chunk<double, Chunk>(input.data() + row * u.width * u.channels, u, wo, j0,
                                         out.data() + (row * u.out_width + wo) * u.unfolded + j0);
  return out;
}

void check(const ConvProblem& p, int64_t unfolded) {
  const ConvProblem q = k::width_unfolded_problem(p, unfolded);
  const k::WidthUnfolding u = k::width_unfolding_geometry(p, unfolded);
  if (!q.validate().empty() || q.output() != p.output()) {
    ++g_mismatches;
    std::printf("unfolded problem %s: %s\n", q.to_string().c_str(), q.validate().c_str());
    return;
  }
  const auto input = random_values(p.input_elements());
  const auto weight = random_values(p.weight_elements());
  const auto grad = random_values(p.output_elements());
  std::vector<double> input_u(size_t(q.input_elements()));
  for (int64_t row = 0; row < u.rows; ++row)
    for (int64_t wo = 0; wo < u.out_width; ++wo)
      for (int64_t j = 0; j < unfolded; ++j) {
        const int64_t from = k::unfolded_source(u, row, wo, j);
        input_u[size_t((row * u.out_width + wo) * unfolded + j)] = from < 0 ? 0.0 : input[size_t(from)];
      }
  // The kernel's chunks (unfolded_chunk, 8 and 1 elements a thread) give the same U.
  compare("unfolded chunks of 1", p, input_u, chunked<1>(input, u));
  if (unfolded % 8 == 0) compare("unfolded chunks of 8", p, input_u, chunked<8>(input, u));
  const int64_t row_len = p.filter[2] * p.C, weight_rows = p.K * p.filter[0] * p.filter[1];
  std::vector<double> weight_u(size_t(q.weight_elements()), 0.0);
  for (int64_t r = 0; r < weight_rows; ++r)
    for (int64_t j = 0; j < row_len; ++j) weight_u[size_t(r * unfolded + j)] = weight[size_t(r * row_len + j)];

  compare("fwd", p, ref::host_reference(ConvDirection::kFwd, p, input, weight, grad),
          ref::host_reference(ConvDirection::kFwd, q, input_u, weight_u, grad));

  const auto dw = ref::host_reference(ConvDirection::kBwdWeight, p, input, weight, grad);
  const auto dw_u = ref::host_reference(ConvDirection::kBwdWeight, q, input_u, weight_u, grad);
  std::vector<double> cut(dw.size()), padding;
  for (int64_t r = 0; r < weight_rows; ++r) {
    for (int64_t j = 0; j < unfolded; ++j) {
      const double v = dw_u[size_t(r * unfolded + j)];
      if (j < row_len) {
        cut[size_t(r * row_len + j)] = v;
      } else {
        padding.push_back(v);
      }
    }
  }
  compare("bwd_weight", p, dw, cut);
  compare("bwd_weight padding", p, std::vector<double>(padding.size(), 0.0), padding);
}

}  // namespace

int main() {
  int problems = 0;
  //                 nd  N  C  K  D   H   W  Z  Y  X  sw dw lw rw
  const ConvProblem cases[] = {
      make(2, 2, 3, 4, 1, 9, 23, 1, 7, 7, 2, 1, 3, 3),   // a stem
      make(2, 1, 3, 3, 1, 6, 17, 1, 7, 7, 2, 1, 3, 2),   // a stem, odd width, asymmetric padding
      make(2, 2, 1, 5, 1, 7, 13, 1, 5, 5, 1, 1, 2, 2),   // grayscale
      make(2, 1, 3, 2, 1, 5, 19, 1, 3, 5, 1, 2, 4, 4),   // dilation 2
      make(2, 1, 2, 3, 1, 4, 21, 1, 1, 3, 3, 2, 0, 5),   // stride 3, dilation 2, padding on the right only
      make(2, 1, 4, 2, 1, 3, 8, 1, 3, 8, 1, 1, 0, 0),    // the filter as wide as the image
      make(3, 1, 3, 3, 4, 5, 11, 3, 3, 5, 2, 1, 2, 2),   // 3D
      make(3, 2, 1, 2, 3, 4, 9, 2, 1, 3, 1, 3, 3, 3),    // 3D, dilation 3
  };
  for (const ConvProblem& p : cases) {
    if (const std::string bad = p.validate(); !bad.empty()) {
      std::printf("invalid case %s: %s\n", p.to_string().c_str(), bad.c_str());
      return 1;
    }
    const int64_t row = p.filter[2] * p.C;
    for (const int64_t unfolded : {row, (row + 7) / 8 * 8, (row + 31) / 32 * 32 + 32}) {
      check(p, unfolded);
      ++problems;
    }
  }
  std::printf("problems %d compared %lld mismatches %lld\n", problems, g_compared, g_mismatches);
  return g_mismatches == 0 ? 0 : 1;
}
