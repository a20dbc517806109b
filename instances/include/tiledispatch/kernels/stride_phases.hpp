// Backward data by stride phases (issue 10, F2; docs/pipelines.md, "Backward data, stride > 1").
//
// Along an axis of stride s, input-gradient pixel i = s*q + a (a in [0, s): its phase) receives exactly the taps
// t with t*dil = a + pad (mod s). They form a run t0, t0 + step, ... (step = s / gcd(s, dil)), and tap j of the
// run reads output pixel q + c0 - j*dil' with c0 = (a + pad - t0*dil) / s and dil' = step*dil / s. Each phase is
// therefore a unit-stride bwd_data problem over its own pixels, with the run as its filter and c0 as its left
// padding; the implicit GEMM then multiplies only taps that meet an output pixel, where the strided problem
// gathers all of them and zero-fills the (1 - 1/s^ndim) that do not. A phase without taps along some axis
// receives nothing: its pixels are stored as zeros.
//
// Host and device: the decomposition (make_stride_phases), the problem of one phase (phase_problem), where a
// weight goes in the phases' filters (phase_filter_index) and where a phase's GEMM row lands in the whole input
// gradient (apply_phase_output, read by BwdDataView::c_prepare).
#pragma once

#include <cstdint>

#include "tiledispatch/kernels/conv_gemm_view.hpp"
#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::kernels {

struct PhaseAxis {
  int first_tap, taps, step;  // the run of taps: first_tap + j*step, j < taps
  int pad, dilation;          // the phase problem's left padding (c0) and dilation (dil')
  int extent;                 // the phase's pixels along the axis: ceil((input - a) / s)
};

struct StridePhases {
  static constexpr int kMaxStride = 4;  // larger strides keep the gathers
  static constexpr int kMaxPhases = kMaxStride * kMaxStride * kMaxStride;
  static constexpr int kAlignElements = 64;  // each phase's filter starts 128-byte aligned for 16-bit types
  int stride[3];
  int filter[3], dilation[3], pad[3];  // the whole problem's (Z, Y, X), dilations, left paddings
  int count;      // phases: stride[0] * stride[1] * stride[2], indexed (a_d * s_h + a_h) * s_w + a_w
  PhaseAxis axis[3][kMaxStride];
  int64_t filter_offset[kMaxPhases];  // elements into the phases' filters; each phase K x its taps x C/G
  int64_t filter_elements;            // all phases' filters, aligned
  bool zero_phases;                   // a phase with pixels has no taps: the zero-store kernel runs

  TD_HOST_DEVICE void residues(int phase, int (&a)[3]) const {
    a[2] = phase % stride[2];
    a[1] = phase / stride[2] % stride[1];
    a[0] = phase / (stride[2] * stride[1]);
  }
  TD_HOST_DEVICE int64_t pixels_per_image(int phase) const {
    int a[3];
    residues(phase, a);
    return int64_t(axis[0][a[0]].extent) * axis[1][a[1]].extent * axis[2][a[2]].extent;
  }
  TD_HOST_DEVICE int taps(int phase) const {
    int a[3];
    residues(phase, a);
    return axis[0][a[0]].taps * axis[1][a[1]].taps * axis[2][a[2]].taps;
  }
};

// The decomposition of `p` (a bwd_data problem). False where it does not apply: unit strides, or a stride above
// kMaxStride. Phases whose left padding c0 comes out negative (dilation sharing a factor with the stride) are
// kept: the views treat negative offsets as out of range, as they do padding.
inline bool make_stride_phases(const ConvProblem& p, StridePhases& phases) {
  phases = StridePhases{};
  bool strided = false;
  for (int i = 0; i < 3; ++i) {
    if (p.stride[i] > StridePhases::kMaxStride) return false;
    strided |= p.stride[i] > 1;
  }
  if (!strided) return false;
  phases.count = 1;
  for (int i = 0; i < 3; ++i) {
    const int s = int(p.stride[i]), filter = int(p.filter[i]), dil = int(p.dilation[i]), pad = int(p.left_pad[i]);
    phases.stride[i] = s;
    phases.filter[i] = filter, phases.dilation[i] = dil, phases.pad[i] = pad;
    phases.count *= s;
    int common = s;  // gcd(s, dil)
    for (int r = dil % common; r != 0;) {
      const int next = common % r;
      common = r, r = next;
    }
    for (int a = 0; a < s; ++a) {
      PhaseAxis& axis = phases.axis[i][a];
      axis.step = s / common;
      axis.dilation = dil / common;
      axis.extent = a < p.input[i] ? int((p.input[i] - a + s - 1) / s) : 0;
      axis.first_tap = -1;
      for (int t = 0; t < filter; ++t) {
        if (((t * dil - a - pad) % s + s) % s != 0) continue;
        if (axis.first_tap < 0) axis.first_tap = t;
        ++axis.taps;
      }
      axis.pad = axis.taps > 0 ? (a + pad - axis.first_tap * dil) / s : 0;
    }
  }
  int64_t offset = 0;
  const int64_t per_tap = p.K * (p.C / p.G);
  for (int phase = 0; phase < phases.count; ++phase) {
    phases.filter_offset[phase] = offset;
    const int64_t elements = per_tap * phases.taps(phase);
    offset += (elements + StridePhases::kAlignElements - 1) / StridePhases::kAlignElements *
              StridePhases::kAlignElements;
    if (phases.taps(phase) == 0 && phases.pixels_per_image(phase) > 0) phases.zero_phases = true;
  }
  phases.filter_elements = offset;
  return true;
}

// The unit-stride problem of one phase: its pixels as the input, the run of taps as the filter, c0 as the left
// padding and the right padding that keeps the output gradient's extents. An axis without taps gets one tap
// and no padding, which only keeps the shape well formed: such a phase's GEMM is given no K by the caller
// (batch_phases), so its epilogue stores its zeros.
inline ConvProblem phase_problem(const ConvProblem& p, const StridePhases& phases, int phase) {
  int a[3];
  phases.residues(phase, a);
  ConvProblem q = p;
  const auto out = p.output();
  for (int i = 0; i < 3; ++i) {
    const PhaseAxis& axis = phases.axis[i][a[i]];
    const bool taps = axis.taps > 0;
    q.input[i] = axis.extent;
    q.filter[i] = taps ? axis.taps : 1;
    q.stride[i] = 1;
    q.dilation[i] = taps ? axis.dilation : 1;
    q.left_pad[i] = taps ? axis.pad : 0;
    // out = input + left + right - dil' (taps - 1)
    q.right_pad[i] = out[i] - q.input[i] - q.left_pad[i] + q.dilation[i] * (q.filter[i] - 1);
  }
  return q;
}

// Where weight (k, tap (z, y, x), c) of a group's K x taps x C/G block goes in the phases' filters (each
// phase's filter is GKZYXC over its own taps, K = all output channels). Every tap belongs to exactly one phase.
TD_HOST_DEVICE int64_t phase_filter_index(const StridePhases& phases, int64_t cg, int64_t k, const int (&tap)[3],
                                          int64_t c) {
  int a[3], j[3];
  for (int i = 0; i < 3; ++i) {
    const int s = phases.stride[i];
    a[i] = ((tap[i] * phases.dilation[i] - phases.pad[i]) % s + s) % s;
    j[i] = (tap[i] - phases.axis[i][a[i]].first_tap) / phases.axis[i][a[i]].step;
  }
  const int phase = (a[0] * phases.stride[1] + a[1]) * phases.stride[2] + a[2];
  const int taps_y = phases.axis[1][a[1]].taps, taps_x = phases.axis[2][a[2]].taps;
  const int64_t phase_tap = (int64_t(j[0]) * taps_y + j[1]) * taps_x + j[2];
  return phases.filter_offset[phase] + (k * phases.taps(phase) + phase_tap) * cg + c;
}

// The input-gradient pixels of phase `phase` of `p`, for BwdDataView's output rows (ConvShape's phase fields).
struct PhaseOutput {
  int64_t extent[3];  // the whole input gradient's Di, Hi, Wi
  int stride[3], residue[3];
  bool overlaps_previous;  // the phase's kernel may start while the previous phase's runs (disjoint pixels)
};
inline PhaseOutput phase_output(const ConvProblem& p, const StridePhases& phases, int phase) {
  PhaseOutput out{};
  phases.residues(phase, out.residue);
  for (int i = 0; i < 3; ++i) out.extent[i] = p.input[i], out.stride[i] = phases.stride[i];
  return out;
}
template <class Index>
void apply_phase_output(const PhaseOutput& out, ConvShape<Index>& s) {
  s.Dx = Index(out.extent[0]), s.Hx = Index(out.extent[1]), s.Wx = Index(out.extent[2]);
  s.xsd = Index(out.stride[0]), s.xsh = Index(out.stride[1]), s.xsw = Index(out.stride[2]);
  s.xad = Index(out.residue[0]), s.xah = Index(out.residue[1]), s.xaw = Index(out.residue[2]);
}

// Whether phase 0 is the only phase with taps (a 1x1 filter without padding, the strided projection of a
// residual block; or a dilation and padding that are multiples of the stride) and C a multiple of 8 (a pixel's
// neighbours as aligned as it for 16-byte stores).
// Phase 0 then holds every tap in order (each axis' run is the whole filter), so its filter is the weights as
// they are, and every other pixel s*q + a (a != 0) of the input gradient is a zero beside phase 0's pixel s*q,
// whose extents are the largest: its epilogue can store them (ConvShape::zero_siblings).
inline bool zeros_beside_phase_0(const ConvProblem& p, const StridePhases& phases) {
  if (p.C % 8 != 0 || phases.taps(0) == 0) return false;
  for (int phase = 1; phase < phases.count; ++phase) {
    if (phases.taps(phase) > 0) return false;
  }
  return true;
}

}  // namespace tiledispatch::kernels
