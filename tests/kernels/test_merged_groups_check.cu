// GPU check of merged groups by diagonal blocks on the Hopper path (sm90/config.hpp, kDiagonal; fwd and
// bwd_data) and by the direct kernel (merged_group_direct.cuh): the hand set of
// bench/gpu_check/hand_merged_groups.hpp on regnet-like (C/G = K/G = 16, G = 14), resnext-like (32/32, 8/8, 4/4)
// problems of odd spatial sizes, N = 1, padding past the filter radius, dilation, stride 2 and 3D, each run on a
// poisoned result tensor and compared with the reference. Each (instance, problem) line says which mode ran:
// "direct" where runs_merged_direct_activations(p) holds, which must be exactly where tile_k = tile_n = gm x C/G with
// C/G = K/G one of 2, 4, 8, 16 (strided bwd_data by its stride phases; not 16-bit C/G = 16 fwd at stride 2; fp32
// instances on TF32 MMAs, tolerance 2e-3, and C/G = 32 too); else
// "diagonal" where the instance's diagonal_groups(p) holds, which must be exactly where its per-group extents
// are the problem's (bwd_data: and unit stride), "paired xP" where P groups of C/G = K/G = 8 or 4 run as one
// block-diagonal group of the diagonal mode's extents (group_pairing.cuh; pairing(p) must be exactly that P),
// "gathers" otherwise (K/G != C/G, G not divisible by P x gm check the fallback; stride-2 bwd_data, labelled by
// the strided problem, runs by stride phases whose unit-stride problems take the diagonal or paired mode:
// test_stride_phases_check.cu).
// Last line: "<n> checked, <d> diagonal, <q> paired, <r> direct, <f> failures".
#include <cstdio>
#include <string>
#include <vector>

#include "../../bench/gpu_check/check_tensors.cuh"
#include "../../bench/gpu_check/hand_merged_groups.hpp"
#include "tiledispatch/reference/device.cuh"

namespace {
using namespace tiledispatch;

using check::fill;
using check::widen;

ConvProblem conv2d(int64_t G, int64_t N, int64_t C, int64_t K, int64_t H, int64_t W, int64_t s, int64_t pad,
                   int64_t dil) {
  ConvProblem p;
  p.ndim_spatial = 2;
  p.G = G, p.N = N, p.C = C, p.K = K;
  p.input = {1, H, W};
  p.filter = {1, 3, 3};
  p.stride = {1, s, s};
  p.dilation = {1, dil, dil};
  p.left_pad = {0, pad, pad};
  p.right_pad = {0, pad, pad};
  return p;
}

ConvProblem conv3d(int64_t G, int64_t N, int64_t C, int64_t K, int64_t D, int64_t H, int64_t W) {
  ConvProblem p = conv2d(G, N, C, K, H, W, 1, 1, 1);
  p.ndim_spatial = 3;
  p.input[0] = D;
  p.filter[0] = 3;
  p.left_pad[0] = p.right_pad[0] = 1;
  return p;
}

// A hand instance with its static diagonal_groups (the mode it will choose for a problem) and its per-group
// GEMM extents (K: C/G fwd, K/G bwd_data; N: the other).
struct Entry {
  std::unique_ptr<GroupedConvInstance> instance;
  bool (*diagonal_groups)(const ConvProblem&);
  int (*pairing)(const ConvProblem&);
  int64_t (*channel_padding)(const ConvProblem&);
  bool (*runs_direct)(const ConvProblem&);
  int64_t group_k, group_n, groups_to_merge;
  bool direct_tile;    // tile_k = tile_n: gm x C/G for the direct kernel
  bool diagonal_tile;  // Sm90::kDiagonal: per-group extents the diagonal mode takes
};
template <class Instance>
Entry entry() {
  using Config = typename Instance::Config;
  return {std::make_unique<Instance>(),
          &Instance::diagonal_groups,
          &Instance::pairing,
          &Instance::channel_padding,
          &Instance::runs_merged_direct_activations,
          Instance::Sm90::kGroupTileK,
          Instance::Sm90::kGroupTileN,
          Instance::Sm90::kGroupsToMerge,
          Config::kTileK == Config::kTileN,
          Instance::Sm90::kDiagonal};
}
}  // namespace

int main() {
  using namespace tiledispatch::hand;
  std::vector<Entry> list;
  list.push_back(entry<fwd_fp16_gm2_diag_128x32x32>());
  list.push_back(entry<fwd_bf16_gm4_diag_128x64x64>());
  list.push_back(entry<fwd_fp16_gm2_diag_128x64x64>());
  list.push_back(entry<fwd_fp16_gm2_diag_ping_pong>());
  list.push_back(entry<bwdd_fp16_gm2_diag_128x32x32>());
  list.push_back(entry<bwdd_bf16_gm4_diag_128x64x64>());
  list.push_back(entry<bwdd_fp16_gm2_diag_128x64x64>());
  list.push_back(entry<fwd_fp16_gm8_direct_256x64x64>());
  list.push_back(entry<fwd_bf16_gm16_direct_256x64x64>());
  list.push_back(entry<fwd_fp16_gm8_direct_3d_256x64x64>());
  list.push_back(entry<bwdd_bf16_gm8_direct_256x64x64>());
  list.push_back(entry<bwdd_fp16_gm16_direct_256x64x64>());
  list.push_back(entry<bwdd_fp16_gm8_direct_3d_256x64x64>());
  list.push_back(entry<bwdd_bf16_gm32_direct_256x64x64>());
  list.push_back(entry<fwd_fp32_gm8_direct_256x64x64>());
  list.push_back(entry<fwd_fp32_gm4_direct_256x64x64>());
  list.push_back(entry<fwd_fp32_gm32_direct_256x64x64>());
  list.push_back(entry<bwdd_fp32_gm16_direct_256x64x64>());
  list.push_back(entry<bwdd_fp32_gm4_direct_256x64x64>());
  list.push_back(entry<bwdd_fp32_gm8_direct_3d_256x64x64>());
  list.push_back(entry<fwd_fp32_gm2_direct_128x64x64>());
  list.push_back(entry<bwdd_fp32_gm2_direct_128x64x64>());
  const std::vector<ConvProblem> problems = {
      conv2d(14, 2, 224, 224, 15, 13, 1, 1, 1),   // regnet-like, odd: direct on gm 2 (G = 14)
      conv2d(14, 1, 224, 224, 28, 28, 1, 1, 1),   // regnet_g14_28's shape, N = 1
      conv2d(8, 3, 128, 128, 11, 9, 1, 2, 2),     // 16/16, direct on gm 2 and gm 4, dilation 2, odd
      conv2d(8, 2, 128, 128, 15, 13, 2, 1, 1),    // 16/16 stride 2, odd: fwd diagonal, bwd_data direct
      conv2d(32, 2, 1024, 1024, 9, 7, 1, 1, 1),   // resnext-like 32/32, odd
      conv2d(32, 1, 1024, 1024, 7, 7, 1, 1, 1),   // resnext_g32_7's shape
      conv2d(14, 2, 224, 224, 29, 27, 2, 1, 1),   // 16/16 stride 2: fwd diagonal, bwd_data direct (its phases)
      conv2d(8, 2, 128, 256, 9, 9, 1, 1, 1),      // K/G = 32 against C/G = 16: gathers
      conv2d(32, 2, 256, 256, 15, 13, 1, 1, 1),   // 8/8, odd: paired x2 (x4 at 32/32), direct on gm 8
      conv2d(32, 1, 256, 256, 28, 28, 1, 1, 1),   // resnext_g32_28's shape, N = 1 (direct on gm 8)
      conv2d(32, 2, 256, 256, 15, 15, 2, 1, 1),   // 8/8 stride 2: paired or direct (bwd_data: phases)
      conv2d(16, 2, 64, 64, 9, 11, 1, 1, 1),      // C/G = K/G = 4: paired x4 on the 16-wide configurations, C/G padded to 8 on gm 2 x 64
      conv2d(6, 2, 48, 48, 9, 9, 1, 1, 1),        // 8/8 with G = 6: direct on gm 8 (one block of 6), else gathers
      // gm not dividing G (RegNet): the direct kernel's last block holds fewer groups
      conv2d(13, 2, 104, 104, 15, 13, 1, 1, 1),   // 8/8 G = 13: direct on gm 8, a last block of 5
      conv2d(13, 2, 104, 104, 29, 27, 2, 1, 1),   // 8/8 G = 13 stride 2 (bwd_data: phases)
      conv2d(25, 2, 400, 400, 9, 7, 1, 1, 1),     // 16/16 G = 25: direct on gm 2 and gm 4
      conv2d(25, 1, 400, 400, 15, 13, 2, 1, 1),   // 16/16 G = 25 stride 2: direct, fwd too (no diagonal mode)
      conv2d(12, 2, 24, 24, 9, 11, 1, 1, 1),      // 2/2 G = 12: direct on gm 32, one block of 12
      conv2d(6, 1, 12, 12, 9, 11, 1, 1, 1),       // 2/2 G = 6: 24-byte pixels, fp32 only (48 bytes)
      conv3d(13, 1, 104, 104, 3, 5, 7),           // 3D 8/8 G = 13: direct on the 3D gm 8
      conv2d(32, 2, 128, 128, 15, 13, 1, 1, 1),   // 4/4 G = 32, odd: direct on gm 16
      conv2d(16, 1, 128, 128, 9, 9, 1, 3, 1),     // 8/8 N = 1, padding 3 past the radius: direct on gm 8
      conv2d(16, 2, 128, 128, 11, 9, 1, 2, 2),    // 8/8 dilation 2: direct on gm 8
      conv2d(32, 1, 128, 128, 5, 150, 1, 1, 1),   // 4/4 rows wider than a tile: direct on gm 16
      conv3d(16, 2, 128, 128, 3, 5, 7),           // 3D 8/8, odd: direct on the 3D gm 8
      conv3d(8, 1, 128, 128, 4, 6, 5),            // 3D 16/16: gathers on the 3D gm 8 (gm x C/G above 64)
      conv2d(32, 2, 64, 64, 9, 11, 1, 1, 1),      // 2/2 G = 32: direct on gm 32
      conv2d(64, 1, 128, 128, 10, 12, 1, 2, 2),   // 2/2 G = 64 dilation 2: direct on gm 32
      // rows of 700: no one-row tile of 254 pixels fits the direct kernel's stages on gm 8 (3 x 256 halo
      // pixels of 72 channels, 110 KB a stage) or gm 32 (bwd_data): the plan narrows it
      conv2d(32, 1, 256, 256, 3, 700, 1, 1, 1),   // 8/8
      conv2d(32, 1, 256, 256, 4, 701, 2, 1, 1),   // 8/8 stride 2 (bwd_data: phases of 351 columns)
      conv2d(64, 1, 128, 128, 3, 700, 1, 1, 1),   // 2/2 G = 64
  };
  int checked = 0, diagonal = 0, paired = 0, direct = 0, failures = 0;
  uint32_t seed = 11;
  for (const ConvProblem& p : problems) {
    for (const Entry& e : list) {
      const GroupedConvInstance& inst = *e.instance;
      const std::string name(inst.name());
      if (!inst.is_supported(p)) continue;
      const ConvDirection dir = inst.signature().direction;
      const DataType dt = inst.signature().dtype;
      const bool diag = e.diagonal_groups(p);
      const int pairs = e.pairing(p);
      const bool on_direct = e.runs_direct(p);
      // The mode each problem must get: diagonal exactly where the instance's per-group extents are the
      // problem's (and, for bwd_data, the stride is 1: im2col of the output gradient); paired by P where P
      // groups have them and P x gm divides G.
      const int64_t cg = p.C / p.G, kg = p.K / p.G;
      const bool fwd = dir == ConvDirection::kFwd;
      const bool unit_or_fwd = fwd || (p.stride[1] == 1 && p.stride[2] == 1);
      // 16-bit C/G = 16 fwd at stride 2 keeps the diagonal mode (kernels::merged_group_direct_preferred)
      const bool direct_at_16 = !fwd || (p.stride[1] == 1 && p.stride[2] == 1) || dt == DataType::kFp32;
      // gm need not divide G for the direct kernel: its last block then holds fewer groups (where the diagonal
      // mode, which cannot, would be preferred too), whole 16-byte vectors a pixel
      const bool tail = p.G % e.groups_to_merge != 0;
      const bool expected = e.diagonal_tile && (fwd ? cg : kg) == e.group_k && (fwd ? kg : cg) == e.group_n &&
                            unit_or_fwd && !tail;
      int expected_pairs = 1;
      for (const int factor : {2, 4}) {
        if (e.diagonal_tile && (fwd ? cg : kg) * factor == e.group_k && (fwd ? kg : cg) * factor == e.group_n &&
            p.G % (factor * e.groups_to_merge) == 0 && unit_or_fwd) {
          expected_pairs = factor;
        }
      }
      const bool expected_direct = e.direct_tile && cg == kg && cg == e.group_k &&
                                   (cg == 2 || cg == 4 || cg == 8 || (cg == 16 && (direct_at_16 || tail)) ||
                                    (cg == 32 && dt == DataType::kFp32)) &&
                                   (p.C * element_bytes(dt)) % 16 == 0;
      std::string failure;
      if (on_direct != expected_direct) {
        failure = expected_direct ? "expected the direct kernel" : "unexpected direct kernel";
      }
      if (diag != expected) failure = expected ? "expected the diagonal mode" : "unexpected diagonal mode";
      if (pairs != expected_pairs) {
        failure = "pairing " + std::to_string(pairs) + ", expected " + std::to_string(expected_pairs);
      }
      const int e_bytes = element_bytes(dt);
      const int64_t in_n = p.input_elements(), wei_n = p.weight_elements(), out_n = p.output_elements();
      const int64_t res_n = reference::result_elements(dir, p);
      check::RunBuffers b;
      // the workspace: the expanded weights where groups are paired
      const ConvArgs args = b.allocate(p, dt, res_n, inst.workspace_bytes(p, 1));
      // stride-2 bwd_data runs by stride phases (stride_phases.hpp), whose filters live in the workspace
      const bool phases = !fwd && !unit_or_fwd && !on_direct;
      // channels padded to the vectors (C/G = 4 on 8-wide vectors) copy the padded tensors there too
      const int64_t padded = e.channel_padding(p);
      if ((pairs > 1 || phases || padded > 0) != (args.workspace_bytes > 0)) {
        failure = "workspace only where groups are paired, channels padded or bwd_data runs by phases";
      }
      void* result = dir == ConvDirection::kFwd ? b.out : b.in;
      fill(dt, b.wei, wei_n, seed);
      if (dir == ConvDirection::kFwd) {
        fill(dt, b.in, in_n, seed + 1);
      } else {
        fill(dt, b.out, out_n, seed + 1);
      }
      TD_CHECK_CUDA(cudaMemset(result, 0xFF, size_t(res_n) * e_bytes));  // poison: NaN in every dtype
      TD_CHECK_CUDA(reference::run(dir, dt, p, args, b.ref));
      TD_CHECK_CUDA(cudaMemset(result, 0xFF, size_t(res_n) * e_bytes));
      if (!inst.check_args(p, args)) failure = "check_args refused";
      if (inst.run(p, args) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) failure = "run failed";
      widen(dt, result, b.got, res_n);
      std::vector<float> ref(static_cast<size_t>(res_n)), got(static_cast<size_t>(res_n));
      TD_CHECK_CUDA(cudaMemcpy(ref.data(), b.ref, ref.size() * 4, cudaMemcpyDeviceToHost));
      TD_CHECK_CUDA(cudaMemcpy(got.data(), b.got, got.size() * 4, cudaMemcpyDeviceToHost));
      const double err = check::relative_l2(got, ref);
      if (!(err <= relative_l2_tolerance(dt))) {
        failure += (failure.empty() ? "" : "; ") + std::string("relative L2 ") + std::to_string(err);
      }
      ++checked;
      diagonal += diag && !on_direct ? 1 : 0;
      paired += pairs > 1 && !on_direct ? 1 : 0;
      direct += on_direct ? 1 : 0;
      if (!failure.empty()) ++failures;
      const std::string mode = on_direct   ? "direct"
                               : diag        ? "diagonal"
                               : pairs > 1   ? "paired x" + std::to_string(pairs)
                               : padded > 0 ? "gathers, padded C/G " + std::to_string(padded)
                                             : "gathers";
      std::printf("%s %s | %s | %s | rel L2 %.2e%s%s\n", failure.empty() ? "PASS" : "FAIL", name.c_str(),
                  mode.c_str(), p.to_string().c_str(), err, failure.empty() ? "" : " | ", failure.c_str());
    }
    seed += 2;
  }
  std::printf("%d checked, %d diagonal, %d paired, %d direct, %d failures\n", checked, diagonal, paired, direct,
              failures);
  return failures == 0 ? 0 : 1;
}
