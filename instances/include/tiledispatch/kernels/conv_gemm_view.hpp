// The implicit-GEMM views of a grouped convolution (ck_conventions §1), one per direction.
//
// A block computes one (TILE_M, TILE_N) tile of the GEMM of `GM` merged groups g0 .. g0+GM-1
// (num_groups_to_merge). Merged groups widen the GEMM the way CK does:
//   fwd       M = N*Do*Ho*Wo      N = (gl, k)  GM*K/G   K = (tap, gl, c)  taps*GM*C/G   B block-diagonal
//   bwd_data  M = N*Di*Hi*Wi      N = (gl, c)  GM*C/G   K = (tap, gl, k)  taps*GM*K/G   B block-diagonal
//   bwd_weight M = (gl, k) GM*K/G N = (tap, gl, c)      K = N*Do*Ho*Wo                  C: diagonal stored
// Within a merged (gl, c) or (gl, k) run the elements are contiguous in NDHWGC / NDHWGK, which is what lets a
// vector cross group boundaries in the activations. The block-diagonal operand reads zeros off the diagonal
// (zero-filled gathers), and bwd_weight stores only the diagonal blocks of its result. (The Hopper path's
// diagonal kernel, sm90/config.hpp kDiagonal, loads and multiplies only the diagonal blocks instead.)
//
// Each operand view answers two questions: `prepare(mn)` (the part of an address that depends on the GEMM
// row/column, computed once per thread) and `locate(info, k, offset)` (the element offset for GEMM-K index k,
// false where the element is padding, out of range or off the diagonal: the loader then zero-fills).
//
// Tile addressing (the Hopper producer): where a GEMM-K tile lies inside one filter tap and one merged group
// (`tile_addressing(tile_k)`, a property of the problem), `k_tile(k0)` splits the tap once per CTA tile,
// `advance` moves to the next k-tile with adds, and `a_locate_tile` / `b_locate_tile` find each chunk with adds
// and compares only. Tap addressing: where a k-tile instead spans whole runs of a tap
// (`tap_addressing(tile_k)`: tile_k a multiple of the run, e.g. C/G = 8 with tile_k 32), every chunk of a
// K-major operand still lies in one tap; the producer then starts a cursor at each thread's tap (`k_tile` of
// the chunk's first k) and walks it by whole runs (`advance_runs`). Views without either answer false, and the
// producer uses `locate` per chunk.
#pragma once

#include <cstdint>

#include "tiledispatch/kernels/host_device.hpp"
#include "tiledispatch/runtime/direction.hpp"
#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::kernels {

// Problem extents in the kernel's index type (int32_t, or int64_t for split_image instances).
template <class Index>
struct ConvShape {
  Index G, N, K, C, Kg, Cg;
  Index Di, Hi, Wi, Do, Ho, Wo;
  Index Z, Y, X;
  Index sd, sh, sw, dd, dh, dw, pd, ph, pw;
  Index taps;        // Z*Y*X
  Index gemm_m, gemm_n, gemm_k;
  Index k_tiles_per_split;  // GEMM-K tiles each split (blockIdx.z % k_batch) reduces
  // bwd_data by stride phases (stride_phases.hpp): GEMM row m, pixel q of the phase (Di x Hi x Wi above), is
  // pixel xs*q + xa of the whole input gradient (Dx x Hx x Wx). xsd = 0 outside a phase. zero_siblings: the
  // phase is phase 0, the only one with taps, and its epilogue also stores the zeros of the other phases'
  // pixels xs*q + a (a != 0) beside each of its own (BwdDataView::c_siblings).
  Index Dx, Hx, Wx, xsd, xsh, xsw, xad, xah, xaw;
  bool zero_siblings;
};

template <class Index>
ConvShape<Index> make_conv_shape(const ConvProblem& p, ConvDirection direction, int groups_to_merge) {
  ConvShape<Index> s{};
  const auto out = p.output();
  s.G = static_cast<Index>(p.G);
  s.N = static_cast<Index>(p.N);
  s.K = static_cast<Index>(p.K);
  s.C = static_cast<Index>(p.C);
  s.Kg = static_cast<Index>(p.K / p.G);
  s.Cg = static_cast<Index>(p.C / p.G);
  s.Di = static_cast<Index>(p.input[0]);
  s.Hi = static_cast<Index>(p.input[1]);
  s.Wi = static_cast<Index>(p.input[2]);
  s.Do = static_cast<Index>(out[0]);
  s.Ho = static_cast<Index>(out[1]);
  s.Wo = static_cast<Index>(out[2]);
  s.Z = static_cast<Index>(p.filter[0]);
  s.Y = static_cast<Index>(p.filter[1]);
  s.X = static_cast<Index>(p.filter[2]);
  s.sd = static_cast<Index>(p.stride[0]);
  s.sh = static_cast<Index>(p.stride[1]);
  s.sw = static_cast<Index>(p.stride[2]);
  s.dd = static_cast<Index>(p.dilation[0]);
  s.dh = static_cast<Index>(p.dilation[1]);
  s.dw = static_cast<Index>(p.dilation[2]);
  s.pd = static_cast<Index>(p.left_pad[0]);
  s.ph = static_cast<Index>(p.left_pad[1]);
  s.pw = static_cast<Index>(p.left_pad[2]);
  s.taps = s.Z * s.Y * s.X;
  const GemmExtents gemm = gemm_extents(direction, p, groups_to_merge);
  s.gemm_m = static_cast<Index>(gemm.m);
  s.gemm_n = static_cast<Index>(gemm.n);
  s.gemm_k = static_cast<Index>(gemm.k);
  return s;
}

// How much of the filter geometry is known at compile time (the specializations, ck_conventions §1).
//   kGeneral:   any filter, stride, dilation, padding
//   kFilter1x1: 1x1(x1) filter, no padding, any stride (Filter1x1Pad0)
//   kPlainGemm: 1x1(x1) filter, stride 1, no padding: the tensors are plain matrices (Filter1x1Stride1Pad0,
//               and explicit_gemm)
//   kFilter3x3: 3x3(x3) filter, one channel per group (Filter3x3, as CK requires C/G == 1)
enum class FilterGeometry { kGeneral, kFilter1x1, kPlainGemm, kFilter3x3 };

template <class Index, int NDim, FilterGeometry Geometry>
struct Taps {
  static constexpr bool kUnit = Geometry == FilterGeometry::kFilter1x1 || Geometry == FilterGeometry::kPlainGemm;
  // (z, y, x) of filter tap `tap` (taps ordered z, y, x with x fastest, as GKZYXC stores them).
  TD_HOST_DEVICE static void split(const ConvShape<Index>& s, Index tap, Index& z, Index& y, Index& x) {
    if constexpr (kUnit) {
      z = y = x = 0;
    } else if constexpr (Geometry == FilterGeometry::kFilter3x3) {
      if constexpr (NDim == 3) {
        z = tap / 9;
        tap -= z * 9;
      } else {
        z = 0;
      }
      y = tap / 3;
      x = tap - y * 3;
    } else {
      const Index yx = s.Y * s.X;
      z = tap / yx;
      tap -= z * yx;
      y = tap / s.X;
      x = tap - y * s.X;
    }
  }
  TD_HOST_DEVICE static Index channels_per_group(const ConvShape<Index>& s) {
    if constexpr (Geometry == FilterGeometry::kFilter3x3) {
      return 1;
    } else {
      return s.Cg;
    }
  }
  TD_HOST_DEVICE static Index count(const ConvShape<Index>& s) {
    if constexpr (kUnit) {
      return 1;
    } else if constexpr (Geometry == FilterGeometry::kFilter3x3) {
      return NDim == 3 ? 27 : 9;
    } else {
      return s.taps;
    }
  }
};

TD_HOST_DEVICE bool in_range(long long v, long long extent) { return v >= 0 && v < extent; }

// The k-tile cursor of tile addressing (FwdView, BwdDataView): GEMM K runs over (tap, merged group, a run of `run`
// channels); with tile_k dividing `run`, a k-tile lies in one tap and one group. `start` divides once; `step`
// moves one k-tile on with adds. off_a / off_b are filled in by the view.
template <class Index, int NDim, FilterGeometry Geometry, int GM>
struct KTileCursor {
  Index k0, x, y, z, dx, dy, dz, tap, gl, r0, off_a, off_b;

  TD_HOST_DEVICE static KTileCursor start(const ConvShape<Index>& s, Index k0, Index run) {
    KTileCursor t{};
    t.k0 = k0;
    t.tap = k0 / (GM * run);
    const Index r = k0 - t.tap * GM * run;
    t.gl = GM > 1 ? r / run : 0;
    t.r0 = r - t.gl * run;
    Taps<Index, NDim, Geometry>::split(s, t.tap, t.z, t.y, t.x);
    t.dz = t.z * s.dd, t.dy = t.y * s.dh, t.dx = t.x * s.dw;
    return t;
  }
  TD_HOST_DEVICE void step(const ConvShape<Index>& s, int tile_k, Index run) {
    k0 += tile_k;
    r0 += tile_k;
    if (r0 != run) return;
    r0 = 0;
    if (++gl != GM) return;
    gl = 0;
    next_tap(s);
  }
  // Tap addressing: one k-tile on where tile_k is a multiple of `run` (r0 stays 0).
  TD_HOST_DEVICE void step_runs(const ConvShape<Index>& s, int tile_k, Index run) {
    k0 += tile_k;
    for (Index k = run; k <= tile_k; k += run) {
      if (++gl == GM) gl = 0, next_tap(s);
    }
  }
  // The first k-tile of the next tap (fwd merged groups by diagonal blocks: a k-tile spans a whole tap).
  TD_HOST_DEVICE void next_tap(const ConvShape<Index>& s) {
    ++tap;
    dx += s.dw;
    if (++x != s.X) return;
    x = 0, dx = 0, dy += s.dh;
    if (++y == s.Y) y = 0, dy = 0, ++z, dz += s.dd;
  }
};

// ---------------------------------------------------------------------------------------------- forward
template <class Index, int NDim, FilterGeometry Geometry, int GM>
struct FwdView {
  using TapsT = Taps<Index, NDim, Geometry>;
  ConvShape<Index> s;
  Index g0;  // first group of this block

  // A (M, K), K-major: input pixels gathered through the filter window. `pix`: the offset of the window's
  // corner pixel (possibly in the padding) relative to `base`, for tile addressing.
  struct AInfo { Index base; Index d, h, w; Index pix; bool valid; };
  TD_HOST_DEVICE AInfo a_prepare(Index m) const {
    AInfo i{};
    i.valid = m < s.gemm_m;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      i.base = m * s.C + g0 * TapsT::channels_per_group(s);
    } else {
      Index t = m;
      const Index ow = t % s.Wo; t /= s.Wo;
      const Index oh = t % s.Ho; t /= s.Ho;
      const Index od = t % s.Do;
      const Index n = t / s.Do;
      i.d = od * s.sd - s.pd;
      i.h = oh * s.sh - s.ph;
      i.w = ow * s.sw - s.pw;
      i.base = n * s.Di * s.Hi * s.Wi * s.C + g0 * TapsT::channels_per_group(s);
      i.pix = ((i.d * s.Hi + i.h) * s.Wi + i.w) * s.C;
    }
    return i;
  }
  TD_HOST_DEVICE bool a_locate(const AInfo& i, Index k, Index& offset) const {
    if (!i.valid || k >= s.gemm_k) return false;
    const Index gc = GM * TapsT::channels_per_group(s);
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      offset = i.base + k;
      return true;
    } else {
      const Index tap = k / gc;
      const Index r = k - tap * gc;
      Index z, y, x;
      TapsT::split(s, tap, z, y, x);
      const Index di = i.d + z * s.dd, hi = i.h + y * s.dh, wi = i.w + x * s.dw;
      if constexpr (Geometry != FilterGeometry::kFilter1x1) {
        if (!in_range(di, s.Di) || !in_range(hi, s.Hi) || !in_range(wi, s.Wi)) return false;
      }
      offset = i.base + ((di * s.Hi + hi) * s.Wi + wi) * s.C + r;
      return true;
    }
  }

  // B (N, K), K-major: weights, block-diagonal over the merged groups.
  struct BInfo { Index base; Index gl; bool valid; };
  TD_HOST_DEVICE BInfo b_prepare(Index n) const {
    BInfo i{};
    i.valid = n < s.gemm_n;
    i.gl = n / s.Kg;
    const Index k_out = n - i.gl * s.Kg;
    i.base = ((g0 + i.gl) * s.Kg + k_out) * TapsT::count(s) * TapsT::channels_per_group(s);
    return i;
  }
  TD_HOST_DEVICE bool b_locate(const BInfo& i, Index k, Index& offset) const {
    if (!i.valid || k >= s.gemm_k) return false;
    if constexpr (GM == 1) {  // a weight row is GEMM K itself: (tap, c) contiguous
      offset = i.base + k;
    } else {
      const Index cg = TapsT::channels_per_group(s);
      const Index gc = GM * cg;
      const Index tap = k / gc;
      Index r = k - tap * gc;
      const Index gl = r / cg;
      if (gl != i.gl) return false;
      r -= gl * cg;
      offset = i.base + tap * cg + r;
    }
    return true;
  }

  // Tile addressing: C/G a multiple of tile_k puts a k-tile inside one tap and one group; off_a / off_b are
  // the k-tile's offsets relative to a chunk's corner pixel (A) and weight row (B).
  TD_HOST_DEVICE bool tile_addressing(int tile_k) const { return TapsT::channels_per_group(s) % tile_k == 0; }
  TD_HOST_DEVICE Index tap_run() const { return GM * TapsT::channels_per_group(s); }  // GEMM K of one tap
  TD_HOST_DEVICE bool tap_addressing(int tile_k) const { return tile_k % tap_run() == 0; }
  using KTile = KTileCursor<Index, NDim, Geometry, GM>;
  TD_HOST_DEVICE void k_tile_offsets(KTile& t) const {
    const Index cg = TapsT::channels_per_group(s);
    t.off_a = ((t.dz * s.Hi + t.dy) * s.Wi + t.dx) * s.C + t.gl * cg + t.r0;
    t.off_b = t.tap * cg + t.r0;
  }
  TD_HOST_DEVICE KTile k_tile(Index k0) const {
    KTile t = KTile::start(s, k0, TapsT::channels_per_group(s));
    k_tile_offsets(t);
    return t;
  }
  // The next k-tile (tile_k further along GEMM K).
  TD_HOST_DEVICE void advance(KTile& t, int tile_k) const {
    t.step(s, tile_k, TapsT::channels_per_group(s));
    k_tile_offsets(t);
  }
  TD_HOST_DEVICE void advance_runs(KTile& t, int tile_k) const {
    t.step_runs(s, tile_k, TapsT::channels_per_group(s));
    k_tile_offsets(t);
  }
  TD_HOST_DEVICE bool a_locate_tile(const AInfo& i, const KTile& t, Index kk, Index& offset) const {
    if (!i.valid || t.k0 >= s.gemm_k) return false;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      offset = i.base + t.k0 + kk;
    } else {
      if constexpr (Geometry != FilterGeometry::kFilter1x1) {
        if (!in_range(i.d + t.dz, s.Di) || !in_range(i.h + t.dy, s.Hi) || !in_range(i.w + t.dx, s.Wi)) return false;
      }
      offset = i.base + i.pix + t.off_a + kk;
    }
    return true;
  }
  TD_HOST_DEVICE bool b_locate_tile(const BInfo& i, const KTile& t, Index kk, Index& offset) const {
    if (!i.valid || t.k0 >= s.gemm_k || (GM > 1 && t.gl != i.gl)) return false;
    offset = i.base + t.off_b + kk;
    return true;
  }

  // A by TMA im2col (sm90/tma.hpp): the input window corner (w, h, d, n) of GEMM row m at tap offset 0, and
  // the k-tile's tap offset (w, h, d) from it.
  TD_HOST_DEVICE void im2col_corner(Index m, int32_t (&whdn)[4]) const {
    const Index ow = m % s.Wo; m /= s.Wo;
    const Index oh = m % s.Ho; m /= s.Ho;
    const Index od = m % s.Do;
    whdn[0] = int32_t(ow * s.sw - s.pw);
    whdn[1] = int32_t(oh * s.sh - s.ph);
    whdn[2] = int32_t(od * s.sd - s.pd);
    whdn[3] = int32_t(m / s.Do);
  }
  TD_HOST_DEVICE void im2col_offsets(const KTile& t, uint16_t (&whd)[3]) const {
    whd[0] = uint16_t(t.dx), whd[1] = uint16_t(t.dy), whd[2] = uint16_t(t.dz);
  }
  // A in columns (sm90 Sm90Config::kColumnsA): column j of a k-tile is GEMM K [k0 + width j, k0 + width (j+1)),
  // inside one tap where the tap's run is a multiple of `width`. A copy of the k-tile's cursor and the channel
  // in the tap's run (merged group and channel: `run_channel`) walk from column to column by adds; a column past
  // the filter's last tap lies in the tail of GEMM K (`column_in_filter` false: its box is zeros).
  TD_HOST_DEVICE Index run_channel(const KTile& t) const { return t.gl * TapsT::channels_per_group(s) + t.r0; }
  TD_HOST_DEVICE void next_column(KTile& column, Index& channel, int width) const {
    channel += width;
    if (channel == tap_run()) {
      channel = 0;
      column.next_tap(s);
    }
  }
  TD_HOST_DEVICE bool column_in_filter(const KTile& column) const { return column.tap < s.taps; }

  // C (M, N): output pixels, N contiguous.
  struct CInfo { Index base; Index gl; bool valid; };
  TD_HOST_DEVICE CInfo c_prepare(Index m) const { return {m * s.K + g0 * s.Kg, 0, m < s.gemm_m}; }
  // The output's column of GEMM column 0 (the output as a (GEMM rows, K) matrix: the Hopper TMA stores).
  TD_HOST_DEVICE Index c_column_base() const { return g0 * s.Kg; }
  TD_HOST_DEVICE bool c_locate(const CInfo& i, Index n, Index& offset) const {
    if (!i.valid || n >= s.gemm_n) return false;
    offset = i.base + n;
    return true;
  }
};

// -------------------------------------------------------------------------------------- backward data
template <class Index, int NDim, FilterGeometry Geometry, int GM>
struct BwdDataView {
  using TapsT = Taps<Index, NDim, Geometry>;
  ConvShape<Index> s;
  Index g0;

  // A (M, K), K-major: output-gradient pixels that see input pixel m through tap (z,y,x). With stride > 1
  // most (pixel, tap) pairs hit no output pixel; those gathers are predicated off (zero-filled). Instances run
  // strided problems by stride phases where they can (stride_phases.hpp): unit-stride problems of this view.
  struct AInfo { Index base; Index d, h, w; Index pix; bool valid; };
  TD_HOST_DEVICE AInfo a_prepare(Index m) const {
    AInfo i{};
    i.valid = m < s.gemm_m;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      i.base = m * s.K + g0 * s.Kg;
    } else {
      Index t = m;
      const Index wi = t % s.Wi; t /= s.Wi;
      const Index hi = t % s.Hi; t /= s.Hi;
      const Index di = t % s.Di;
      const Index n = t / s.Di;
      i.d = di + s.pd;
      i.h = hi + s.ph;
      i.w = wi + s.pw;
      i.base = n * s.Do * s.Ho * s.Wo * s.K + g0 * s.Kg;
      i.pix = ((i.d * s.Ho + i.h) * s.Wo + i.w) * s.K;  // unit strides: the output pixel of tap 0
    }
    return i;
  }
  TD_HOST_DEVICE bool a_locate(const AInfo& i, Index k, Index& offset) const {
    if (!i.valid || k >= s.gemm_k) return false;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      offset = i.base + k;
      return true;
    } else {
      const Index gk = GM * s.Kg;
      const Index tap = k / gk;
      const Index r = k - tap * gk;
      Index z, y, x;
      TapsT::split(s, tap, z, y, x);
      const Index td = i.d - z * s.dd, th = i.h - y * s.dh, tw = i.w - x * s.dw;
      if (td < 0 || th < 0 || tw < 0) return false;
      if (td % s.sd != 0 || th % s.sh != 0 || tw % s.sw != 0) return false;
      const Index od = td / s.sd, oh = th / s.sh, ow = tw / s.sw;
      if (od >= s.Do || oh >= s.Ho || ow >= s.Wo) return false;
      offset = i.base + ((od * s.Ho + oh) * s.Wo + ow) * s.K + r;
      return true;
    }
  }

  // B (N, K), N-major: weights w[g][k][tap][c] with n = (gl, c), k = (tap, gl, k); block-diagonal.
  struct BInfo { Index base; Index gl; bool valid; };
  TD_HOST_DEVICE BInfo b_prepare(Index n) const {
    BInfo i{};
    const Index cg = TapsT::channels_per_group(s);
    i.valid = n < s.gemm_n;
    i.gl = n / cg;
    i.base = (g0 + i.gl) * s.Kg * TapsT::count(s) * cg + (n - i.gl * cg);
    return i;
  }
  TD_HOST_DEVICE bool b_locate(const BInfo& i, Index k, Index& offset) const {
    if (!i.valid || k >= s.gemm_k) return false;
    const Index cg = TapsT::channels_per_group(s);
    const Index gk = GM * s.Kg;
    const Index tap = k / gk;
    Index r = k - tap * gk;
    if constexpr (GM > 1) {
      const Index gl = r / s.Kg;
      if (gl != i.gl) return false;
      r -= gl * s.Kg;
    }
    offset = i.base + (r * TapsT::count(s) + tap) * cg;
    return true;
  }

  // Tile addressing: K/G a multiple of tile_k puts a k-tile inside one tap and one group; unit strides make
  // every (pixel, tap) pair hit an output pixel or padding, with no division.
  TD_HOST_DEVICE bool tile_addressing(int tile_k) const {
    return s.Kg % tile_k == 0 && s.sd == 1 && s.sh == 1 && s.sw == 1;
  }
  TD_HOST_DEVICE Index tap_run() const { return GM * s.Kg; }  // GEMM K of one tap
  TD_HOST_DEVICE bool tap_addressing(int tile_k) const {
    return tile_k % tap_run() == 0 && s.sd == 1 && s.sh == 1 && s.sw == 1;
  }
  using KTile = KTileCursor<Index, NDim, Geometry, GM>;
  TD_HOST_DEVICE void k_tile_offsets(KTile& t) const {
    t.off_a = t.gl * s.Kg + t.r0 - ((t.dz * s.Ho + t.dy) * s.Wo + t.dx) * s.K;
    t.off_b = (t.r0 * TapsT::count(s) + t.tap) * TapsT::channels_per_group(s);
  }
  TD_HOST_DEVICE KTile k_tile(Index k0) const {
    KTile t = KTile::start(s, k0, s.Kg);
    k_tile_offsets(t);
    return t;
  }
  TD_HOST_DEVICE void advance(KTile& t, int tile_k) const {
    t.step(s, tile_k, s.Kg);
    k_tile_offsets(t);
  }
  TD_HOST_DEVICE void advance_runs(KTile& t, int tile_k) const {
    t.step_runs(s, tile_k, s.Kg);
    k_tile_offsets(t);
  }
  TD_HOST_DEVICE bool a_locate_tile(const AInfo& i, const KTile& t, Index kk, Index& offset) const {
    if (!i.valid || t.k0 >= s.gemm_k) return false;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      offset = i.base + t.k0 + kk;
    } else {
      if (!in_range(i.d - t.dz, s.Do) || !in_range(i.h - t.dy, s.Ho) || !in_range(i.w - t.dx, s.Wo)) return false;
      offset = i.base + i.pix + t.off_a + kk;
    }
    return true;
  }
  TD_HOST_DEVICE bool b_locate_tile(const BInfo& i, const KTile& t, Index kk, Index& offset) const {
    if (!i.valid || t.k0 >= s.gemm_k || (GM > 1 && t.gl != i.gl)) return false;
    offset = i.base + t.off_b + kk * TapsT::count(s) * TapsT::channels_per_group(s);
    return true;
  }

  // A by TMA im2col at unit stride (sm90/tma.hpp): the filter flipped, so that tap offsets grow from the
  // window corner (w, h, d, n) of GEMM row m, as in the forward direction.
  TD_HOST_DEVICE void im2col_corner(Index m, int32_t (&whdn)[4]) const {
    const Index wi = m % s.Wi; m /= s.Wi;
    const Index hi = m % s.Hi; m /= s.Hi;
    const Index di = m % s.Di;
    whdn[0] = int32_t(wi + s.pw - (s.X - 1) * s.dw);
    whdn[1] = int32_t(hi + s.ph - (s.Y - 1) * s.dh);
    whdn[2] = int32_t(di + s.pd - (s.Z - 1) * s.dd);
    whdn[3] = int32_t(m / s.Di);
  }
  TD_HOST_DEVICE void im2col_offsets(const KTile& t, uint16_t (&whd)[3]) const {
    whd[0] = uint16_t((s.X - 1) * s.dw - t.dx);
    whd[1] = uint16_t((s.Y - 1) * s.dh - t.dy);
    whd[2] = uint16_t((s.Z - 1) * s.dd - t.dz);
  }

  // C (M, N): input-gradient pixels, N contiguous; a stride phase's rows are every s-th pixel. `siblings`
  // (ConvShape::zero_siblings): how many residues along D, H and W have a pixel beside this row's.
  struct CInfo { Index base; Index gl; bool valid; uint8_t siblings[3]; };
  TD_HOST_DEVICE CInfo c_prepare(Index m) const {
    if (s.xsd == 0) return {m * s.C + g0 * TapsT::channels_per_group(s), 0, m < s.gemm_m, {}};
    Index t = m;
    const Index wq = t % s.Wi; t /= s.Wi;
    const Index hq = t % s.Hi; t /= s.Hi;
    const Index dq = t % s.Di;
    const Index n = t / s.Di;
    const Index pixel = ((n * s.Dx + s.xsd * dq + s.xad) * s.Hx + s.xsh * hq + s.xah) * s.Wx + s.xsw * wq + s.xaw;
    CInfo info{pixel * s.C + g0 * TapsT::channels_per_group(s), 0, m < s.gemm_m, {}};
    if (s.zero_siblings) {
      const auto residues = [](Index stride, Index left) { return uint8_t(left < stride ? left : stride); };
      info.siblings[0] = residues(s.xsd, s.Dx - s.xsd * dq);
      info.siblings[1] = residues(s.xsh, s.Hx - s.xsh * hq);
      info.siblings[2] = residues(s.xsw, s.Wx - s.xsw * wq);
    }
    return info;
  }
  // `zero(delta)` for each tap-less phase's pixel beside the row's (zero_siblings): its offset from the row's
  // elements. None outside zero_siblings (siblings all 0).
  template <class Zero>
  TD_HOST_DEVICE void c_siblings(const CInfo& i, Zero&& zero) const {
    if (!i.valid) return;
    for (int ad = 0; ad < i.siblings[0]; ++ad) {
      for (int ah = 0; ah < i.siblings[1]; ++ah) {
        for (int aw = 0; aw < i.siblings[2]; ++aw) {
          if (ad + ah + aw > 0) zero(((Index(ad) * s.Hx + ah) * s.Wx + aw) * s.C);
        }
      }
    }
  }
  // Where no stride exceeds 2, the same pixels as bits of the 2x2x2 cube of residues (ad, ah, aw), bit
  // 4 ad + 2 ah + aw, and each one's offset (the staged epilogue's bulk copies of zeros).
  TD_HOST_DEVICE bool c_siblings_in_cube() const { return s.xsd <= 2 && s.xsh <= 2 && s.xsw <= 2; }
  TD_HOST_DEVICE uint32_t c_sibling_bits(const CInfo& i) const {
    uint32_t bits = 0;
    for (int b = 1; b < 8; ++b) {
      if (i.valid && (b >> 2) < i.siblings[0] && ((b >> 1) & 1) < i.siblings[1] && (b & 1) < i.siblings[2]) {
        bits |= 1u << b;
      }
    }
    return bits;
  }
  TD_HOST_DEVICE Index c_sibling_offset(int bit) const {
    return ((Index(bit >> 2) * s.Hx + ((bit >> 1) & 1)) * s.Wx + (bit & 1)) * s.C;
  }
  // The input gradient's column of GEMM column 0 (at unit stride, xsd == 0, dX as a (GEMM rows, C) matrix).
  TD_HOST_DEVICE Index c_column_base() const { return g0 * TapsT::channels_per_group(s); }
  TD_HOST_DEVICE bool c_locate(const CInfo& i, Index n, Index& offset) const {
    if (!i.valid || n >= s.gemm_n) return false;
    offset = i.base + n;
    return true;
  }
};

// ------------------------------------------------------------------------------------ backward weight
template <class Index, int NDim, FilterGeometry Geometry, int GM>
struct BwdWeightView {
  using TapsT = Taps<Index, NDim, Geometry>;
  ConvShape<Index> s;
  Index g0;

  // A (M, K), M-major: output gradient, m = (gl, k) contiguous in NDHWGK, k = output pixel.
  struct AInfo { Index base; Index d, h, w; bool valid; };
  TD_HOST_DEVICE AInfo a_prepare(Index m) const { return {g0 * s.Kg + m, 0, 0, 0, m < s.gemm_m}; }
  TD_HOST_DEVICE bool a_locate(const AInfo& i, Index k, Index& offset) const {
    if (!i.valid || k >= s.gemm_k) return false;
    offset = k * s.K + i.base;
    return true;
  }

  // B (N, K), N-major: input pixels, n = (tap, gl, c) with (gl, c) contiguous in NDHWGC, k = output pixel.
  // Tile addressing keeps the output pixel (n, od, oh, ow) of the chunk's last k in `pixel`, at GEMM-K index
  // `k_at` (-1: none yet), and walks it forward by the k-tile instead of dividing by Wo, Ho and Do per chunk.
  struct Pixel { Index n, od, oh, ow; };
  struct BInfo { Index base; Index d, h, w; bool valid; Index k_at; Pixel pixel; };
  TD_HOST_DEVICE Pixel split_pixel(Index k) const {
    Pixel p{};
    p.ow = k % s.Wo; k /= s.Wo;
    p.oh = k % s.Ho; k /= s.Ho;
    p.od = k % s.Do;
    p.n = k / s.Do;
    return p;
  }
  TD_HOST_DEVICE BInfo b_prepare(Index n) const {
    BInfo i{};
    i.k_at = -1;
    const Index gc = GM * TapsT::channels_per_group(s);
    i.valid = n < s.gemm_n;
    const Index tap = n / gc;
    Index z, y, x;
    TapsT::split(s, tap, z, y, x);
    i.d = z * s.dd - s.pd;
    i.h = y * s.dh - s.ph;
    i.w = x * s.dw - s.pw;
    i.base = g0 * TapsT::channels_per_group(s) + (n - tap * gc);
    return i;
  }
  TD_HOST_DEVICE bool b_locate(const BInfo& i, Index k, Index& offset) const {
    if (!i.valid || k >= s.gemm_k) return false;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      offset = k * s.C + i.base;
      return true;
    } else {
      return b_locate_pixel(i, split_pixel(k), offset);
    }
  }
  TD_HOST_DEVICE bool b_locate_pixel(const BInfo& i, const Pixel& p, Index& offset) const {
    const Index di = p.od * s.sd + i.d, hi = p.oh * s.sh + i.h, wi = p.ow * s.sw + i.w;
    if constexpr (Geometry != FilterGeometry::kFilter1x1) {
      if (!in_range(di, s.Di) || !in_range(hi, s.Hi) || !in_range(wi, s.Wi)) return false;
    }
    offset = (((p.n * s.Di + di) * s.Hi + hi) * s.Wi + wi) * s.C + i.base;
    return true;
  }

  // B by TMA im2col (sm90/tma.hpp): the input window corner (w, h, d, n) of output pixel p at tap offset 0;
  // the tap offset (w, h, d) and input channel of GEMM column n; and p moved `step` pixels on.
  TD_HOST_DEVICE void im2col_corner(const Pixel& p, int32_t (&whdn)[4]) const {
    whdn[0] = int32_t(p.ow * s.sw - s.pw);
    whdn[1] = int32_t(p.oh * s.sh - s.ph);
    whdn[2] = int32_t(p.od * s.sd - s.pd);
    whdn[3] = int32_t(p.n);
  }
  // A column's run is its tap's (gl, c): GM x C/G channels.
  TD_HOST_DEVICE void im2col_column(Index n, uint16_t (&whd)[3], int32_t& channel) const {
    const Index cg = TapsT::channels_per_group(s), gc = GM * cg;
    const Index column = n < s.gemm_n ? n : 0;  // columns past the tile's end are read, never stored
    const Index tap = column / gc;
    Index z, y, x;
    TapsT::split(s, tap, z, y, x);
    whd[0] = uint16_t(x * s.dw), whd[1] = uint16_t(y * s.dh), whd[2] = uint16_t(z * s.dd);
    channel = int32_t(g0 * cg + (column - tap * gc));
  }
  // p moved on by a step given as its digits split_pixel(step): one carry per digit, where step_pixel loops once
  // per image row the step crosses (the Hopper producer's k-tile step: 9 rows of a 7x7 image at tile_k 64,
  // half of the producer thread's instructions, which bound grouped bwd_weight on the H100).
  TD_HOST_DEVICE void add_pixels(Pixel& p, const Pixel& step) const {
    p.ow += step.ow;
    const bool w_carry = p.ow >= s.Wo;
    if (w_carry) p.ow -= s.Wo;
    p.oh += step.oh + Index(w_carry);
    const bool h_carry = p.oh >= s.Ho;
    if (h_carry) p.oh -= s.Ho;
    p.od += step.od + Index(h_carry);
    const bool d_carry = p.od >= s.Do;
    if (d_carry) p.od -= s.Do;
    p.n += step.n + Index(d_carry);
  }
  TD_HOST_DEVICE void step_pixel(Pixel& p, Index step) const {
    p.ow += step;
    while (p.ow >= s.Wo) {
      p.ow -= s.Wo;
      if (++p.oh == s.Ho) {
        p.oh = 0;
        if (++p.od == s.Do) p.od = 0, ++p.n;
      }
    }
  }

  // Tile addressing: every problem (a k-tile is a run of output pixels; B walks its pixel forward).
  TD_HOST_DEVICE bool tile_addressing(int) const { return true; }
  TD_HOST_DEVICE Index tap_run() const { return 1; }
  TD_HOST_DEVICE bool tap_addressing(int) const { return false; }
  struct KTile { Index k0; };
  TD_HOST_DEVICE KTile k_tile(Index k0) const { return {k0}; }
  TD_HOST_DEVICE void advance(KTile& t, int tile_k) const { t.k0 += tile_k; }
  TD_HOST_DEVICE void advance_runs(KTile& t, int tile_k) const { t.k0 += tile_k; }
  TD_HOST_DEVICE bool a_locate_tile(const AInfo& i, const KTile& t, Index kk, Index& offset) const {
    return a_locate(i, t.k0 + kk, offset);
  }
  TD_HOST_DEVICE bool b_locate_tile(BInfo& i, const KTile& t, Index kk, Index& offset) const {
    const Index k = t.k0 + kk;
    if (!i.valid || k >= s.gemm_k) return false;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      offset = k * s.C + i.base;
      return true;
    } else {
      const Index step = k - i.k_at;
      if (i.k_at < 0 || step >= 4 * s.Wo) {
        i.pixel = split_pixel(k);
      } else {
        step_pixel(i.pixel, step);
      }
      i.k_at = k;
      return b_locate_pixel(i, i.pixel, offset);
    }
  }

  // C (M, N): weights w[g][k][tap][c]; only the diagonal blocks (gl of m == gl of n) are stored.
  struct CInfo { Index base; Index gl; bool valid; };
  TD_HOST_DEVICE CInfo c_prepare(Index m) const {
    const Index gl = m / s.Kg;
    const Index k_out = m - gl * s.Kg;
    return {((g0 + gl) * s.Kg + k_out) * TapsT::count(s) * TapsT::channels_per_group(s), gl, m < s.gemm_m};
  }
  // GEMM column n's place in a row of dW, (tap, c), and its group in the block: divided out once per column, so
  // that an epilogue thread storing one column into many rows divides once (c_locate per element cost the
  // merged-group tiles several microseconds of divisions per CTA on the H100).
  struct CColumn { Index offset; Index gl; bool valid; };
  TD_HOST_DEVICE CColumn c_column(Index n) const {
    const Index cg = TapsT::channels_per_group(s);
    const Index gc = GM * cg;
    const Index tap = n / gc;
    Index r = n - tap * gc, gl = 0;
    if constexpr (GM > 1) {
      gl = r / cg;
      r -= gl * cg;
    }
    return {tap * cg + r, gl, n < s.gemm_n};
  }
  TD_HOST_DEVICE bool c_locate(const CInfo& i, const CColumn& c, Index& offset) const {
    if (!i.valid || !c.valid || (GM > 1 && c.gl != i.gl)) return false;
    offset = i.base + c.offset;
    return true;
  }
  TD_HOST_DEVICE bool c_locate(const CInfo& i, Index n, Index& offset) const {
    return c_locate(i, c_column(n), offset);
  }
};

template <ConvDirection Direction, class Index, int NDim, FilterGeometry Geometry, int GM>
struct ViewFor;
template <class Index, int NDim, FilterGeometry Geometry, int GM>
struct ViewFor<ConvDirection::kFwd, Index, NDim, Geometry, GM> {
  using type = FwdView<Index, NDim, Geometry, GM>;
};
template <class Index, int NDim, FilterGeometry Geometry, int GM>
struct ViewFor<ConvDirection::kBwdData, Index, NDim, Geometry, GM> {
  using type = BwdDataView<Index, NDim, Geometry, GM>;
};
template <class Index, int NDim, FilterGeometry Geometry, int GM>
struct ViewFor<ConvDirection::kBwdWeight, Index, NDim, Geometry, GM> {
  using type = BwdWeightView<Index, NDim, Geometry, GM>;
};

}  // namespace tiledispatch::kernels
