// Prints, for a few depthwise instances of the three directions, the compiled instance string and is_supported /
// check_args / workspace_bytes on crafted problems (host only: nothing is launched).
// tests/kernels/test_depthwise.py checks the lines.
#include <cstdio>
#include <string>

#include "../../bench/gpu_check/hand_depthwise_traits.hpp"

using namespace tiledispatch;

// One stride and one pad for both axes.
#define TRAITS(NAME, DT, TH, TW, F, S, P, NB, SH, SW, IV, OV) \
  TD_HAND_DW_INSTANCE(NAME, DepthwiseInstance, kFwd, DT, TH, TW, F, S, S, P, P, NB, SH, SW, IV, OV)
#define TRAITS_BWD(NAME, CLASS, DIR, DT, TH, TW, F, S, P, NB, SH, SW, IV, OV) \
  TD_HAND_DW_INSTANCE(NAME, CLASS, DIR, DT, TH, TW, F, S, S, P, P, NB, SH, SW, IV, OV)

TRAITS(a, kFp16, 8, 8, 3, 1, 1, 8, 2, 2, 2, 2)
TRAITS(b, kBf16, 32, 32, 5, 2, 2, 1, 2, 8, 8, 8)
TRAITS(c, kFp32, 32, 32, 9, 1, 4, 16, 4, 4, 4, 4)  // 40x40 halo and 81 taps of 64 fp32 channels: over 227 KB
TRAITS(d, kFp16, 8, 8, 3, 1, 1, 1, 2, 2, 8, 4)    // in_vec 8 wider than the block's 4 channels
TRAITS_BWD(e, DepthwiseBwdDataInstance, kBwdData, kFp16, 16, 16, 3, 2, 1, 8, 2, 2, 8, 8)
TRAITS_BWD(f, DepthwiseBwdWeightInstance, kBwdWeight, kBf16, 16, 16, 5, 1, 2, 4, 2, 4, 4, 4)
// 3D: a 3x3x3 forward and bwd_weight
TD_HAND_DW_INSTANCE_ND(g, DepthwiseInstance, kFwd, 3, kFp16, 8, 16, 3, 1, 1, 1, 1, 4, 1, 4, 8, 8)
TD_HAND_DW_INSTANCE_ND(h, DepthwiseBwdWeightInstance, kBwdWeight, 3, kBf16, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)

ConvProblem dw(int64_t N, int64_t C, int64_t H, int64_t W, int64_t f, int64_t s, int64_t pad) {
  ConvProblem p;
  p.G = C, p.N = N, p.C = C, p.K = C;
  p.input = {1, H, W};
  p.filter = {1, f, f};
  p.stride = {1, s, s};
  p.left_pad = {0, pad, pad};
  p.right_pad = {0, pad, pad};
  return p;
}

// 3D, a cubic filter f along all three axes; depth stride, pad and dilation given apart.
ConvProblem dw3(int64_t N, int64_t C, int64_t D, int64_t H, int64_t W, int64_t f, int64_t pad, int64_t sd,
                int64_t pd, int64_t dd) {
  ConvProblem p = dw(N, C, H, W, f, 1, pad);
  p.ndim_spatial = 3;
  p.input[0] = D, p.filter[0] = f, p.stride[0] = sd, p.left_pad[0] = p.right_pad[0] = pd, p.dilation[0] = dd;
  return p;
}

void report(const char* label, const GroupedConvInstance& inst, const ConvProblem& p) {
  const Support s = inst.is_supported(p);
  std::printf("%s %s\n", label, s ? "yes" : ("no: " + s.reason).c_str());
}

int main() {
  const a ia;
  const b ib;
  const c ic;
  const d id;
  std::printf("string_a %s\n", std::string(ia.instance_string()).c_str());
  std::printf("string_b %s\n", std::string(ib.instance_string()).c_str());
  report("a_match", ia, dw(2, 32, 10, 10, 3, 1, 1));
  ConvProblem right_pad_zero = dw(2, 32, 10, 10, 3, 1, 1);
  right_pad_zero.right_pad = {0, 0, 0};
  report("a_right_pad_zero", ia, right_pad_zero);
  report("a_odd_c", ia, dw(1, 3, 10, 10, 3, 1, 1));
  report("a_filter", ia, dw(1, 32, 10, 10, 5, 1, 2));
  report("a_stride", ia, dw(1, 32, 10, 10, 3, 2, 1));
  report("a_pad", ia, dw(1, 32, 10, 10, 3, 1, 0));
  ConvProblem grouped = dw(1, 32, 10, 10, 3, 1, 1);
  grouped.G = 16;
  report("a_grouped", ia, grouped);
  ConvProblem dilated = dw(1, 32, 10, 10, 3, 1, 2);
  dilated.dilation = {1, 2, 2};
  report("a_dilation", ia, dilated);
  ConvProblem dilated_w = dw(1, 32, 10, 10, 3, 1, 1);
  dilated_w.dilation = {1, 1, 3};
  dilated_w.left_pad = dilated_w.right_pad = {0, 1, 3};
  report("a_dilation_w", ia, dilated_w);
  ConvProblem dilated_strided = dw(1, 32, 11, 10, 3, 2, 2);  // stride 2 divides dilation 2: stride-1 residues
  dilated_strided.dilation = {1, 2, 2};
  report("a_dilation_stride", ia, dilated_strided);
  ConvProblem dilated_stride3 = dw(1, 32, 11, 10, 3, 2, 3);
  dilated_stride3.dilation = {1, 3, 3};
  report("a_dilation_stride3", ia, dilated_stride3);
  ConvProblem dilated_pad = dw(1, 32, 10, 10, 3, 1, 1);
  dilated_pad.dilation = {1, 2, 2};
  report("a_dilation_pad", ia, dilated_pad);
  ConvProblem three_d = dw(1, 32, 10, 10, 3, 1, 1);
  three_d.ndim_spatial = 3;
  three_d.input = {4, 10, 10};
  report("a_3d", ia, three_d);
  report("b_match", ib, dw(1, 240, 56, 56, 5, 2, 2));
  report("b_c_not_multiple", ib, dw(1, 36, 56, 56, 5, 2, 2));
  report("c_smem", ic, dw(1, 32, 64, 64, 9, 1, 4));
  report("d_slice", id, dw(1, 32, 10, 10, 3, 1, 1));
  ConvArgs args;
  alignas(16) static char buffer[64];
  args.input = buffer + 2, args.output = buffer;
  const Support misaligned = ib.check_args(dw(1, 240, 56, 56, 5, 2, 2), args);
  std::printf("b_misaligned %s\n", misaligned ? "yes" : ("no: " + misaligned.reason).c_str());
  args.input = buffer, args.k_batch = 2;
  const Support k_batch = ib.check_args(dw(1, 240, 56, 56, 5, 2, 2), args);
  std::printf("b_k_batch %s\n", k_batch ? "yes" : ("no: " + k_batch.reason).c_str());

  const e ie;
  const f iff;
  std::printf("string_e %s\n", std::string(ie.instance_string()).c_str());
  std::printf("string_f %s\n", std::string(iff.instance_string()).c_str());
  std::printf("signature_e %d %d\n", int(ie.signature().direction), int(ie.signature().family));
  std::printf("signature_f %d %d\n", int(iff.signature().direction), int(iff.signature().family));
  report("e_match", ie, dw(1, 64, 17, 23, 3, 2, 1));
  report("e_stride", ie, dw(1, 64, 17, 23, 3, 1, 1));
  report("e_pad", ie, dw(1, 64, 17, 23, 3, 2, 2));
  ConvProblem dilated_strided_e = dw(1, 64, 17, 23, 3, 2, 2);
  dilated_strided_e.dilation = {1, 2, 2};
  report("e_dilation_stride", ie, dilated_strided_e);
  report("f_match", iff, dw(2, 64, 20, 20, 5, 1, 2));
  report("f_filter", iff, dw(2, 64, 20, 20, 7, 1, 3));
  report("f_odd_c", iff, dw(2, 6, 20, 20, 5, 1, 2));
  std::printf("f_workspace %zu\n", iff.workspace_bytes(dw(2, 64, 20, 20, 5, 1, 2), 1));
  ConvProblem f_dilated = dw(2, 64, 20, 20, 5, 1, 4);
  f_dilated.dilation = {1, 2, 2};
  std::printf("f_workspace_dilated %zu\n", iff.workspace_bytes(f_dilated, 1));
  ConvArgs bwd;
  bwd.input = buffer, bwd.output = buffer + 2, bwd.weight = buffer;
  const Support e_misaligned = ie.check_args(dw(1, 64, 17, 23, 3, 2, 1), bwd);
  std::printf("e_misaligned %s\n", e_misaligned ? "yes" : ("no: " + e_misaligned.reason).c_str());
  bwd.output = buffer;
  const Support f_workspace = iff.check_args(dw(2, 64, 20, 20, 5, 1, 2), bwd);
  std::printf("f_no_workspace %s\n", f_workspace ? "yes" : ("no: " + f_workspace.reason).c_str());
  const g ig;
  const h ih;
  std::printf("string_g %s\n", std::string(ig.instance_string()).c_str());
  std::printf("signature_g %d\n", ig.signature().ndim_spatial);
  report("g_match", ig, dw3(2, 32, 5, 10, 10, 3, 1, 1, 1, 1));
  report("g_depth_runtime", ig, dw3(1, 32, 9, 10, 10, 3, 1, 2, 0, 3));  // any depth stride, pad, dilation
  report("g_2d", ig, dw(1, 32, 10, 10, 3, 1, 1));
  ConvProblem deep_filter = dw3(1, 32, 6, 10, 10, 3, 1, 1, 2, 1);
  deep_filter.filter[0] = 5;
  report("g_filter_z5", ig, deep_filter);
  ConvProblem many_images = dw3(1, 8, 1, 4, 4, 3, 1, 1, 1, 1);
  many_images.N = 1 << 20, many_images.input[0] = 1 << 12;  // N x D = 2^32 image indices
  report("g_images", ig, many_images);
  std::printf("h_workspace %zu\n", ih.workspace_bytes(dw3(2, 64, 4, 20, 20, 3, 1, 1, 1, 1), 1));
  return 0;
}
