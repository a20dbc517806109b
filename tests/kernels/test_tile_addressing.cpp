// Tile addressing (conv_gemm_view.hpp, used by the Hopper producer) against the general per-element addressing:
// for every view, geometry, merged-group count and tile_k, walking the k-tiles of a CTA tile with
// k_tile / advance / *_locate_tile must give the same validity and offset as *_locate for every (row, k) of
// the tile; the fwd A columns (Sm90Config::kColumnsA) must have the taps and channels of their GEMM K index.
// Host only; prints "checked N mismatches M" and the first mismatches.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tiledispatch/kernels/conv_gemm_view.hpp"

#include "cube_problem.hpp"

namespace {

using tiledispatch::ConvDirection;
using tiledispatch::ConvProblem;
namespace k = tiledispatch::kernels;
using tiledispatch::test::cube_problem;

long long g_checked = 0, g_mismatches = 0, g_tap_checked = 0, g_column_checked = 0, g_box_checked = 0;

void report(const char* what, long long row, long long kk, bool ga, long long oa, bool gb, long long ob) {
  if (++g_mismatches <= 10) {
    std::printf("mismatch %s row %lld k %lld: locate %d/%lld, tile %d/%lld\n", what, row, kk, ga, oa, gb, ob);
  }
}

// Walks the k-tiles [kt0, kt0 + tiles) of GEMM rows [0, rows) of A and columns [0, cols) of B.
template <class View>
void walk(const View& view, int tile_k, int64_t kt0, int tiles, int64_t rows, int64_t cols, const char* name) {
  if (!view.tile_addressing(tile_k)) return;
  std::vector<typename View::AInfo> a;
  std::vector<typename View::BInfo> b;
  for (int64_t m = 0; m < rows; ++m) a.push_back(view.a_prepare(m));
  for (int64_t n = 0; n < cols; ++n) b.push_back(view.b_prepare(n));
  auto t = view.k_tile(kt0 * tile_k);
  for (int kt = 0; kt < tiles; ++kt) {
    const int64_t k0 = (kt0 + kt) * tile_k;
    for (int kk = 0; kk < tile_k; ++kk) {
      for (int64_t m = 0; m < rows; ++m) {
        int64_t oa = 0, ob = 0;
        const bool ga = view.a_locate(a[m], k0 + kk, oa);
        const bool gb = view.a_locate_tile(a[m], t, kk, ob);
        ++g_checked;
        if (ga != gb || (ga && oa != ob)) report(name, m, k0 + kk, ga, oa, gb, ob);
      }
      for (int64_t n = 0; n < cols; ++n) {
        int64_t oa = 0, ob = 0;
        const bool ga = view.b_locate(b[n], k0 + kk, oa);
        const bool gb = view.b_locate_tile(b[n], t, kk, ob);
        ++g_checked;
        if (ga != gb || (ga && oa != ob)) report(name, n, k0 + kk, ga, oa, gb, ob);
      }
    }
    view.advance(t, tile_k);
  }
}

// Tap addressing: where a k-tile spans whole runs of a tap, a producer thread's A chunk of `vector` elements at
// k-tile offset kk walks a cursor started at its tap (kk rounded down to the run) with advance_runs, and must
// match a_locate at every row.
template <class View>
void walk_taps(const View& view, int tile_k, int vector, int64_t kt0, int tiles, int64_t rows, const char* name) {
  // a vector stays inside one run (the support check's vector rule)
  if (view.tile_addressing(tile_k) || !view.tap_addressing(tile_k) || view.tap_run() % vector != 0) return;
  std::vector<typename View::AInfo> a;
  for (int64_t m = 0; m < rows; ++m) a.push_back(view.a_prepare(m));
  for (int kk = 0; kk < tile_k; kk += vector) {
    const int64_t a_tap = kk - kk % view.tap_run();
    auto t = view.k_tile(kt0 * tile_k + a_tap);
    for (int kt = 0; kt < tiles; ++kt) {
      const int64_t k0 = (kt0 + kt) * tile_k;
      for (int64_t m = 0; m < rows; ++m) {
        for (int e = 0; e < vector; ++e) {
          int64_t oa = 0, ob = 0;
          const bool ga = view.a_locate(a[m], k0 + kk + e, oa);
          const bool gb = view.a_locate_tile(a[m], t, kk + e - a_tap, ob);
          ++g_checked;
          ++g_tap_checked;
          if (ga != gb || (ga && oa != ob)) report(name, m, k0 + kk + e, ga, oa, gb, ob);
        }
      }
      view.advance_runs(t, tile_k);
    }
  }
}

// A in columns (the Hopper producer's fwd A as im2col boxes of `width` channels, Sm90Config::kColumnsA): per
// k-tile, the columns walked by next_column from the k-tile cursor must have the tap offsets and channel of
// GEMM K index k0 + width j found by division, and lie in the filter exactly where that index is below GEMM K.
template <class View>
void walk_columns(const View& view, int tile_k, int width, int64_t kt0, int tiles, const char* name) {
  const bool by_tile = view.tile_addressing(tile_k);
  if ((!by_tile && !view.tap_addressing(tile_k)) || view.tap_run() % width != 0) return;
  const auto& s = view.s;
  auto t = view.k_tile(kt0 * tile_k);
  for (int kt = 0; kt < tiles; ++kt) {
    auto column = t;
    int64_t channel = view.run_channel(t);
    for (int j = 0; j < tile_k / width; ++j) {
      if (j > 0) view.next_column(column, channel, width);
      const int64_t k = (kt0 + kt) * tile_k + j * width;
      const bool inside = k < s.gemm_k;
      bool same = view.column_in_filter(column) == inside;
      if (inside && same) {
        const int64_t tap = k / view.tap_run();
        int64_t z = 0, y = 0, x = 0;
        View::TapsT::split(s, tap, z, y, x);
        uint16_t got[3];
        view.im2col_offsets(column, got);
        same = channel == k - tap * view.tap_run() && got[0] == x * s.dw && got[1] == y * s.dh &&
               got[2] == z * s.dd;
      }
      ++g_checked;
      ++g_column_checked;
      if (!same) report(name, j, k, inside, 0, view.column_in_filter(column), channel);
    }
    if (by_tile) {
      view.advance(t, tile_k);
    } else {
      view.advance_runs(t, tile_k);
    }
  }
}

template <int NDim, k::FilterGeometry Geometry, int GM>
void check_problem(const ConvProblem& p, const char* label) {
  for (const int tile_k : {16, 32, 64}) {
    const auto fwd = k::make_conv_shape<int64_t>(p, ConvDirection::kFwd, GM);
    const auto bwd_data = k::make_conv_shape<int64_t>(p, ConvDirection::kBwdData, GM);
    const auto bwd_weight = k::make_conv_shape<int64_t>(p, ConvDirection::kBwdWeight, GM);
    const int64_t f_tiles = (fwd.gemm_k + tile_k - 1) / tile_k, d_tiles = (bwd_data.gemm_k + tile_k - 1) / tile_k;
    const int64_t w_tiles = (bwd_weight.gemm_k + tile_k - 1) / tile_k;
    for (const int64_t g0 : {int64_t(0), p.G - GM}) {
      // From the first k-tile to the end, and from the middle of GEMM K (a split's start).
      for (const int64_t start : {int64_t(0), f_tiles / 2}) {
        walk(k::FwdView<int64_t, NDim, Geometry, GM>{fwd, g0}, tile_k, start, int(f_tiles - start),
             fwd.gemm_m < 40 ? fwd.gemm_m : 40, fwd.gemm_n, label);
        walk_taps(k::FwdView<int64_t, NDim, Geometry, GM>{fwd, g0}, tile_k, 4, start, int(f_tiles - start),
                  fwd.gemm_m < 40 ? fwd.gemm_m : 40, label);
        walk_columns(k::FwdView<int64_t, NDim, Geometry, GM>{fwd, g0}, tile_k, 8, start, int(f_tiles - start), label);
      }
      for (const int64_t start : {int64_t(0), d_tiles / 2}) {
        walk(k::BwdDataView<int64_t, NDim, Geometry, GM>{bwd_data, g0}, tile_k, start, int(d_tiles - start),
             bwd_data.gemm_m < 40 ? bwd_data.gemm_m : 40, bwd_data.gemm_n, label);
        walk_taps(k::BwdDataView<int64_t, NDim, Geometry, GM>{bwd_data, g0}, tile_k, 4, start, int(d_tiles - start),
                  bwd_data.gemm_m < 40 ? bwd_data.gemm_m : 40, label);
      }
      for (const int64_t start : {int64_t(0), w_tiles / 2}) {
        walk(k::BwdWeightView<int64_t, NDim, Geometry, GM>{bwd_weight, g0}, tile_k, start, int(w_tiles - start),
             bwd_weight.gemm_m, bwd_weight.gemm_n < 48 ? bwd_weight.gemm_n : 48, label);
      }
    }
  }
}

// bwd_weight B by TMA im2col boxes (the Hopper producer's AtomBoxesB): for every GEMM column n, the box's channel
// and tap offsets (im2col_column) from the window corner of output pixel k (im2col_corner) must address the
// element b_locate finds, and be padding exactly where it says; the `atom` columns a box holds (atom dividing
// the tap's run of GM x C/G channels) must be consecutive channels of one tap.
template <class View>
void walk_im2col_columns(const View& view, int atom, int64_t pixels, const char* name) {
  const auto& s = view.s;
  const int64_t run = s.gemm_n / s.taps;  // GM x C/G
  for (int64_t n = 0; n < s.gemm_n; ++n) {
    uint16_t whd[3];
    int32_t channel = 0;
    view.im2col_column(n, whd, channel);
    const auto info = view.b_prepare(n);
    for (int64_t k = 0; k < pixels && k < s.gemm_k; ++k) {
      int32_t corner[4];
      view.im2col_corner(view.split_pixel(k), corner);
      const int64_t w = corner[0] + whd[0], h = corner[1] + whd[1], d = corner[2] + whd[2], image = corner[3];
      const bool got = w >= 0 && w < s.Wi && h >= 0 && h < s.Hi && d >= 0 && d < s.Di;
      const int64_t offset = (((image * s.Di + d) * s.Hi + h) * s.Wi + w) * s.C + channel;
      int64_t expected = 0;
      const bool want = view.b_locate(info, k, expected);
      ++g_checked;
      ++g_box_checked;
      if (got != want || (got && offset != expected)) report(name, n, k, want, expected, got, offset);
    }
    if (run % atom == 0 && n % atom != 0) {
      uint16_t first[3];
      int32_t first_channel = 0;
      view.im2col_column(n - n % atom, first, first_channel);
      ++g_checked;
      if (channel != first_channel + n % atom || whd[0] != first[0] || whd[1] != first[1] || whd[2] != first[2]) {
        report(name, n, -1, true, first_channel + n % atom, false, channel);
      }
    }
  }
}

// The producer walks a box's output pixel by add_pixels(pixel, split_pixel(tile_k)): from every start of a few
// k-tiles it must reach split_pixel of each later k-tile's first GEMM-K index, across image rows, depth slices and
// images, for steps shorter and longer than a row, a plane and an image.
template <class View>
void walk_pixel_steps(const View& view, const char* name) {
  const auto& s = view.s;
  const int64_t plane = s.Wo * s.Ho, image = plane * s.Do;
  for (const int64_t step : {int64_t(1), int64_t(16), int64_t(64), int64_t(128), s.Wo + 1, plane - 1, image + 3}) {
    for (const int64_t start : {int64_t(0), s.Wo - 1, 3 * step + 5}) {
      auto pixel = view.split_pixel(start);
      const auto digits = view.split_pixel(step);
      for (int64_t k = start + step; k < s.gemm_k; k += step) {
        view.add_pixels(pixel, digits);
        const auto want = view.split_pixel(k);
        ++g_checked;
        ++g_box_checked;
        if (pixel.ow != want.ow || pixel.oh != want.oh || pixel.od != want.od || pixel.n != want.n) {
          report(name, step, k, true, ((want.n * s.Do + want.od) * s.Ho + want.oh) * s.Wo + want.ow, false,
                 ((pixel.n * s.Do + pixel.od) * s.Ho + pixel.oh) * s.Wo + pixel.ow);
        }
      }
    }
  }
}

template <int NDim, int GM>
void check_boxes(const ConvProblem& p, int atom, const char* label) {
  const auto shape = k::make_conv_shape<int64_t>(p, ConvDirection::kBwdWeight, GM);
  for (const int64_t g0 : {int64_t(0), p.G - GM}) {
    const k::BwdWeightView<int64_t, NDim, k::FilterGeometry::kGeneral, GM> view{shape, g0};
    walk_im2col_columns(view, atom, 200, label);
    walk_pixel_steps(view, label);
  }
}

}  // namespace

int main() {
  using G = k::FilterGeometry;
  // 2D and 3D, strides 1 and 2, padding wider than the filter radius, dilation, odd sizes, C/G and K/G of 16-64.
  check_problem<2, G::kGeneral, 1>(cube_problem(2, 1, 2, 64, 32, 7, 3, 1, 1, 1), "2d 3x3 s1");
  check_problem<2, G::kGeneral, 1>(cube_problem(2, 2, 1, 32, 64, 9, 3, 2, 2, 2), "2d 3x3 s2 d2 pad2 G2");
  check_problem<2, G::kGeneral, 2>(cube_problem(2, 4, 1, 128, 64, 6, 5, 1, 3, 1), "2d 5x5 gm2");
  check_problem<3, G::kGeneral, 1>(cube_problem(3, 1, 1, 32, 16, 4, 3, 1, 1, 1), "3d 3x3x3");
  check_problem<2, G::kFilter3x3, 1>(cube_problem(2, 1, 2, 32, 16, 5, 3, 1, 1, 1), "2d filter3x3 geometry");
  check_problem<2, G::kFilter1x1, 1>(cube_problem(2, 1, 2, 32, 32, 7, 1, 2, 0, 1), "2d 1x1 s2");
  check_problem<2, G::kPlainGemm, 1>(cube_problem(2, 1, 3, 64, 32, 5, 1, 1, 0, 1), "2d 1x1 s1 plain");
  // Tap addressing: C/G (fwd) or K/G (bwd_data) of 4, 8 and 16 under tile_k (a padded stem is C/G = 8, 7x7 s2).
  check_problem<2, G::kGeneral, 1>(cube_problem(2, 1, 2, 8, 8, 13, 7, 2, 3, 1), "2d 7x7 s2 C/G=8 (tap)");
  check_problem<2, G::kGeneral, 2>(cube_problem(2, 4, 1, 16, 16, 7, 3, 1, 1, 1), "2d 3x3 gm2 C/G=4 (tap)");
  check_problem<3, G::kGeneral, 1>(cube_problem(3, 1, 1, 16, 8, 5, 3, 2, 1, 1), "3d 3x3x3 s2 C/G=16 (tap)");
  check_problem<2, G::kGeneral, 1>(cube_problem(2, 2, 1, 16, 32, 8, 3, 1, 2, 2), "2d 3x3 d2 G2 C/G=8 (tap)");
  // bwd_weight's input boxes: one group's run (64-byte rows) and merged groups (gm 2: two groups' 32 channels
  // in one 128-byte box; gm 4), 2D and 3D, stride 2, dilation, padding past the radius, the last group block.
  check_boxes<2, 1>(cube_problem(2, 4, 2, 128, 128, 7, 3, 1, 1, 1), 32, "boxes 2d 32/32");
  check_boxes<2, 2>(cube_problem(2, 4, 2, 128, 128, 7, 3, 1, 1, 1), 64, "boxes 2d 32/32 gm2");
  check_boxes<2, 2>(cube_problem(2, 6, 1, 96, 192, 9, 3, 2, 2, 2), 32, "boxes 2d C/G=16 gm2 s2 d2 pad2");
  check_boxes<2, 4>(cube_problem(2, 8, 1, 128, 128, 6, 5, 1, 3, 1), 64, "boxes 2d 16/16 gm4 5x5 pad3");
  check_boxes<3, 2>(cube_problem(3, 4, 1, 128, 128, 4, 3, 2, 1, 1), 64, "boxes 3d 32/32 gm2 s2");
  std::printf("boxes %lld\n", g_box_checked);
  std::printf("tap addressing %lld\n", g_tap_checked);
  std::printf("columns %lld\n", g_column_checked);
  std::printf("checked %lld mismatches %lld\n", g_checked, g_mismatches);
  return g_mismatches == 0 ? 0 : 1;
}
