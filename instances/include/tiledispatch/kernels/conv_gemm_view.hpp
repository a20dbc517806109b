// The implicit-GEMM views of a grouped convolution (ck_conventions §1), one per direction.
//
// A block computes one (TILE_M, TILE_N) tile of the GEMM of `GM` merged groups g0 .. g0+GM-1
// (num_groups_to_merge). Merged groups widen the GEMM the way CK does:
//   fwd       M = N*Do*Ho*Wo      N = (gl, k)  GM*K/G   K = (tap, gl, c)  taps*GM*C/G   B block-diagonal
//   bwd_data  M = N*Di*Hi*Wi      N = (gl, c)  GM*C/G   K = (tap, gl, k)  taps*GM*K/G   B block-diagonal
//   bwd_weight M = (gl, k) GM*K/G N = (tap, gl, c)      K = N*Do*Ho*Wo                  C: diagonal stored
// Within a merged (gl, c) or (gl, k) run the elements are contiguous in NDHWGC / NDHWGK, which is what lets a
// vector cross group boundaries in the activations. The block-diagonal operand reads zeros off the diagonal
// (zero-filled gathers), and bwd_weight stores only the diagonal blocks of its result.
//
// Each operand view answers two questions: `prepare(mn)` (the part of an address that depends on the GEMM
// row/column, computed once per thread) and `locate(info, k, offset)` (the element offset for GEMM-K index k,
// false where the element is padding, out of range or off the diagonal: the loader then zero-fills).
//
// Tile addressing (the Hopper producer): where a GEMM-K tile lies inside one filter tap and one merged group
// (`tile_addressing(tile_k)`, a property of the problem), `a_tile(k0)` / `b_tile(k0)` split the tap once per
// k-tile and `a_locate_tile` / `b_locate_tile` find each chunk with adds and compares only. Views without it
// answer `tile_addressing` false and the producer uses `locate` per chunk.
#pragma once

#include <cstdint>

#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

#if defined(__CUDACC__)
#define TD_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TD_HOST_DEVICE inline
#endif

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
  const Index gm = static_cast<Index>(groups_to_merge);
  switch (direction) {
    case ConvDirection::kFwd:
      s.gemm_m = s.N * s.Do * s.Ho * s.Wo;
      s.gemm_n = gm * s.Kg;
      s.gemm_k = s.taps * gm * s.Cg;
      break;
    case ConvDirection::kBwdData:
      s.gemm_m = s.N * s.Di * s.Hi * s.Wi;
      s.gemm_n = gm * s.Cg;
      s.gemm_k = s.taps * gm * s.Kg;
      break;
    case ConvDirection::kBwdWeight:
      s.gemm_m = gm * s.Kg;
      s.gemm_n = s.taps * gm * s.Cg;
      s.gemm_k = s.N * s.Do * s.Ho * s.Wo;
      break;
  }
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

// ---------------------------------------------------------------------------------------------- forward
template <class Index, int NDim, FilterGeometry Geometry, int GM>
struct FwdView {
  using TapsT = Taps<Index, NDim, Geometry>;
  ConvShape<Index> s;
  Index g0;  // first group of this block

  // A (M, K), K-major: input pixels gathered through the filter window.
  struct AInfo { Index base; Index d, h, w; bool valid; };
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
    const Index cg = TapsT::channels_per_group(s);
    const Index gc = GM * cg;
    const Index tap = k / gc;
    Index r = k - tap * gc;
    if constexpr (GM > 1) {
      const Index gl = r / cg;
      if (gl != i.gl) return false;
      r -= gl * cg;
    }
    offset = i.base + tap * cg + r;
    return true;
  }

  // Tile addressing: C/G a multiple of tile_k puts a k-tile inside one tap and one group.
  TD_HOST_DEVICE bool tile_addressing(int tile_k) const { return TapsT::channels_per_group(s) % tile_k == 0; }
  struct KTile { Index k0, dz, dy, dx, tap, gl, r0; };  // r0: channel of k0 within its group
  TD_HOST_DEVICE KTile k_tile(Index k0) const {
    KTile t{};
    const Index cg = TapsT::channels_per_group(s);
    const Index gc = GM * cg;
    t.k0 = k0;
    t.tap = k0 / gc;
    const Index r = k0 - t.tap * gc;
    t.gl = GM > 1 ? r / cg : 0;
    t.r0 = r - t.gl * cg;
    Index z, y, x;
    TapsT::split(s, t.tap, z, y, x);
    t.dz = z * s.dd, t.dy = y * s.dh, t.dx = x * s.dw;
    return t;
  }
  TD_HOST_DEVICE bool a_locate_tile(const AInfo& i, const KTile& t, Index kk, Index& offset) const {
    if (!i.valid || t.k0 >= s.gemm_k) return false;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      offset = i.base + t.k0 + kk;
    } else {
      const Index di = i.d + t.dz, hi = i.h + t.dy, wi = i.w + t.dx;
      if constexpr (Geometry != FilterGeometry::kFilter1x1) {
        if (!in_range(di, s.Di) || !in_range(hi, s.Hi) || !in_range(wi, s.Wi)) return false;
      }
      offset = i.base + ((di * s.Hi + hi) * s.Wi + wi) * s.C + t.gl * TapsT::channels_per_group(s) + t.r0 + kk;
    }
    return true;
  }
  TD_HOST_DEVICE bool b_locate_tile(const BInfo& i, const KTile& t, Index kk, Index& offset) const {
    if (!i.valid || t.k0 >= s.gemm_k || (GM > 1 && t.gl != i.gl)) return false;
    offset = i.base + t.tap * TapsT::channels_per_group(s) + t.r0 + kk;
    return true;
  }

  // C (M, N): output pixels, N contiguous.
  struct CInfo { Index base; Index gl; bool valid; };
  TD_HOST_DEVICE CInfo c_prepare(Index m) const { return {m * s.K + g0 * s.Kg, 0, m < s.gemm_m}; }
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
  // most (pixel, tap) pairs hit no output pixel; those gathers are predicated off (zero-filled).
  struct AInfo { Index base; Index d, h, w; bool valid; };
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
  struct KTile { Index k0, dz, dy, dx, tap, gl, r0; };  // r0: output channel of k0 within its group
  TD_HOST_DEVICE KTile k_tile(Index k0) const {
    KTile t{};
    const Index gk = GM * s.Kg;
    t.k0 = k0;
    t.tap = k0 / gk;
    const Index r = k0 - t.tap * gk;
    t.gl = GM > 1 ? r / s.Kg : 0;
    t.r0 = r - t.gl * s.Kg;
    Index z, y, x;
    TapsT::split(s, t.tap, z, y, x);
    t.dz = z * s.dd, t.dy = y * s.dh, t.dx = x * s.dw;
    return t;
  }
  TD_HOST_DEVICE bool a_locate_tile(const AInfo& i, const KTile& t, Index kk, Index& offset) const {
    if (!i.valid || t.k0 >= s.gemm_k) return false;
    if constexpr (Geometry == FilterGeometry::kPlainGemm) {
      offset = i.base + t.k0 + kk;
    } else {
      const Index od = i.d - t.dz, oh = i.h - t.dy, ow = i.w - t.dx;
      if (!in_range(od, s.Do) || !in_range(oh, s.Ho) || !in_range(ow, s.Wo)) return false;
      offset = i.base + ((od * s.Ho + oh) * s.Wo + ow) * s.K + t.gl * s.Kg + t.r0 + kk;
    }
    return true;
  }
  TD_HOST_DEVICE bool b_locate_tile(const BInfo& i, const KTile& t, Index kk, Index& offset) const {
    if (!i.valid || t.k0 >= s.gemm_k || (GM > 1 && t.gl != i.gl)) return false;
    offset = i.base + ((t.r0 + kk) * TapsT::count(s) + t.tap) * TapsT::channels_per_group(s);
    return true;
  }

  // C (M, N): input-gradient pixels, N contiguous.
  struct CInfo { Index base; Index gl; bool valid; };
  TD_HOST_DEVICE CInfo c_prepare(Index m) const {
    return {m * s.C + g0 * TapsT::channels_per_group(s), 0, m < s.gemm_m};
  }
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
  struct BInfo { Index base; Index d, h, w; bool valid; };
  TD_HOST_DEVICE BInfo b_prepare(Index n) const {
    BInfo i{};
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
      Index t = k;
      const Index ow = t % s.Wo; t /= s.Wo;
      const Index oh = t % s.Ho; t /= s.Ho;
      const Index od = t % s.Do;
      const Index n = t / s.Do;
      const Index di = od * s.sd + i.d, hi = oh * s.sh + i.h, wi = ow * s.sw + i.w;
      if constexpr (Geometry != FilterGeometry::kFilter1x1) {
        if (!in_range(di, s.Di) || !in_range(hi, s.Hi) || !in_range(wi, s.Wi)) return false;
      }
      offset = (((n * s.Di + di) * s.Hi + hi) * s.Wi + wi) * s.C + i.base;
      return true;
    }
  }

  // No tile addressing: GEMM K runs over output pixels (`locate` per chunk).
  TD_HOST_DEVICE bool tile_addressing(int) const { return false; }
  struct KTile { Index k0; };
  TD_HOST_DEVICE KTile k_tile(Index k0) const { return {k0}; }
  TD_HOST_DEVICE bool a_locate_tile(const AInfo& i, const KTile& t, Index kk, Index& offset) const {
    return a_locate(i, t.k0 + kk, offset);
  }
  TD_HOST_DEVICE bool b_locate_tile(const BInfo& i, const KTile& t, Index kk, Index& offset) const {
    return b_locate(i, t.k0 + kk, offset);
  }

  // C (M, N): weights w[g][k][tap][c]; only the diagonal blocks (gl of m == gl of n) are stored.
  struct CInfo { Index base; Index gl; bool valid; };
  TD_HOST_DEVICE CInfo c_prepare(Index m) const {
    const Index gl = m / s.Kg;
    const Index k_out = m - gl * s.Kg;
    return {((g0 + gl) * s.Kg + k_out) * TapsT::count(s) * TapsT::channels_per_group(s), gl, m < s.gemm_m};
  }
  TD_HOST_DEVICE bool c_locate(const CInfo& i, Index n, Index& offset) const {
    if (!i.valid || n >= s.gemm_n) return false;
    const Index cg = TapsT::channels_per_group(s);
    const Index gc = GM * cg;
    const Index tap = n / gc;
    Index r = n - tap * gc;
    if constexpr (GM > 1) {
      const Index gl = r / cg;
      if (gl != i.gl) return false;
      r -= gl * cg;
    }
    offset = i.base + tap * cg + r;
    return true;
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
