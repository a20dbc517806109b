// GPU check of bwd_data by stride phases (kernels/stride_phases.hpp) on the hand bwd_data instances of both
// kernel generations (bench/gpu_check/hand_bwd_data.cu: fp16, bf16, fp32, 2D and 3D, Filter1x1Pad0, merged
// groups by diagonal blocks): strided problems with odd sizes, N = 1, channel tails, padding past the filter's
// radius, strides 2 and 3, dilation sharing a factor with the stride, filters smaller than the stride (phases
// without taps store zeros), C/G = 8 (phases paired) and 32 (phases diagonal), 3D; a stride of 5 keeps the
// gathers. Each run starts from a poisoned input gradient and workspace and is compared with the reference.
// Each line says "direct" where the direct merged-group kernel runs the problem (runs_merged_direct_activations:
// C/G = K/G of 2 to 16 on tiles of gm x C/G, its stride phases inside one launch, no workspace), "phases" where
// the instance's stride_phases(p) holds, which must be exactly where the stride is 2 to 4, "phases, one launch"
// where run() launches them all at once (phases_in_one_launch), and "gathers" otherwise. Each run must also
// keep every element within a tenth of the reference's RMS (a store that wrote a neighbour's pixel would not
// move the relative L2 enough). Last line: "<n> checked, <p> phases, <o> in one launch, <d> direct, <b> beside,
// <f> failures" (beside: launches of phase 0 alone whose epilogue stores the tap-less phases' zeros beside its
// pixels).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../../bench/gpu_check/battery.hpp"
#include "../../bench/gpu_check/check_tensors.cuh"
#include "../../bench/gpu_check/hand_bwd_data.cu"
#include "tiledispatch/reference/device.cuh"

namespace tiledispatch::hand {
// 3D with the staged epilogue (vector 8; the hand list's 3D instance stores pairs): phase 0's zeros beside it
TD_HAND(bwdd_fp16_3d_staged_128x64x64, kBwdData, 3, kFp16, kDefault, 128,64,64, 2,2,1, 32,32,16, 8,8,8, kCompV3,
        kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
// warpgroup tiles of 16384 outputs, whose staged epilogue bulk-copies the zeros (Sm90Config::kZeroRowBytes): 64
// rows of 256 columns, 128 of 128 (ping-pong) and, in 3D, 256 of 64 (rows beyond the warpgroup's threads)
TD_HAND(bwdd_fp16_staged_128x256x32, kBwdData, 2, kFp16, kDefault, 128,256,32, 2,2,1, 32,32,16, 8,8,8, kCompV3,
        kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(bwdd_fp16_staged_wg2_128x128x64, kBwdData, 2, kFp16, kDefault, 128,128,64, 2,2,1, 32,32,16, 8,8,8, kMem,
        kIntrawave, kCShuffle, false, 1, false, false, false, false, 2)
TD_HAND(bwdd_bf16_3d_staged_256x64x64, kBwdData, 3, kBf16, kDefault, 256,64,64, 2,1,1, 32,32,16, 8,8,8, kCompV3,
        kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;
using check::conv2d;

// The largest |got - ref| over the reference's RMS (infinite where an element is not finite).
double worst_over_rms(const std::vector<float>& got, const std::vector<float>& ref) {
  double worst = 0, sum = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    worst = std::max(worst, std::fabs(double(got[i]) - double(ref[i])));
    sum += double(ref[i]) * double(ref[i]);
  }
  return sum > 0 ? worst / std::sqrt(sum / double(ref.size())) : INFINITY;
}

// stride_phases(p), phases_in_one_launch(p, args), runs_merged_direct_activations(p) and zeros_beside(p) of the
// instance behind a GroupedConvInstance.
struct PhasesFns {
  bool (*phases)(const ConvProblem&);
  bool (*one_launch)(const ConvProblem&, const ConvArgs&);
  bool (*direct)(const ConvProblem&);
  bool (*beside)(const ConvProblem&);
};
template <class Instance>
PhasesFns phases_of() {
  return {[](const ConvProblem& p) {
            kernels::StridePhases phases;
            return Instance::stride_phases(p, phases);
          },
          &Instance::phases_in_one_launch, &Instance::runs_merged_direct_activations,
          [](const ConvProblem& p) {
            kernels::StridePhases phases;
            return Instance::stride_phases(p, phases) && Instance::zeros_beside(p, phases);
          }};
}
}  // namespace

int main() {
  using namespace tiledispatch::hand;
  InstanceList list;
  add_hand_bwd_data(list);
  list.push_back(std::make_unique<bwdd_fp16_3d_staged_128x64x64>());
  list.push_back(std::make_unique<bwdd_fp16_staged_128x256x32>());
  list.push_back(std::make_unique<bwdd_fp16_staged_wg2_128x128x64>());
  list.push_back(std::make_unique<bwdd_bf16_3d_staged_256x64x64>());
  const std::vector<PhasesFns> phases_fns = {
      phases_of<bwdd_fp16_compv3_128x128x32>(),   phases_of<bwdd_bf16_mem_inter_default_epi>(),
      phases_of<bwdd_fp16_compv1_vec1_64x32x32>(), phases_of<bwdd_fp32_compv4_dsb_64x64x32>(),
      phases_of<bwdd_fp16_3d_compv6_64x64x64>(),  phases_of<bwdd_bf16_compv2_wk2_1x1s1p0>(),
      phases_of<bwdd_fp32_compv3_16x64x32>(),     phases_of<bwdd_fp16_gm2_compv3_64x64x32>(),
      phases_of<bwdd_fp16_basicasync_1x1p0>(),    phases_of<bwdd_fp16_gm2_diag_128x32x32>(),
      phases_of<bwdd_bf16_gm4_diag_128x64x64>(),  phases_of<bwdd_fp16_gm2_diag_128x64x64>(),
      phases_of<bwdd_bf16_gm8_direct_256x64x64>(), phases_of<bwdd_fp16_gm16_direct_256x64x64>(),
      phases_of<bwdd_fp16_gm8_direct_3d_256x64x64>(), phases_of<bwdd_bf16_gm32_direct_256x64x64>(),
      phases_of<bwdd_fp32_gm16_direct_256x64x64>(), phases_of<bwdd_fp32_gm4_direct_256x64x64>(),
      phases_of<bwdd_fp32_gm8_direct_3d_256x64x64>(), phases_of<bwdd_fp32_gm2_direct_128x64x64>(),
      phases_of<bwdd_fp16_3d_staged_128x64x64>(), phases_of<bwdd_fp16_staged_128x256x32>(),
      phases_of<bwdd_fp16_staged_wg2_128x128x64>(), phases_of<bwdd_bf16_3d_staged_256x64x64>(),
  };
  if (phases_fns.size() != list.size()) {
    std::printf("FAIL the list has %zu instances, the check knows %zu\n", list.size(), phases_fns.size());
    return 1;
  }
  const std::vector<ConvProblem> problems = {
      conv2d(1, 2, 64, 64, 28, 28, 3, 2, 1, 1),      // ResNet-like 3x3 s2, even
      conv2d(1, 1, 32, 48, 15, 13, 3, 2, 1, 1),      // odd sizes, N = 1, C != K
      conv2d(1, 2, 64, 128, 14, 15, 1, 2, 0, 1),     // 1x1 s2 projection: three phases without taps
      conv2d(1, 2, 32, 32, 17, 17, 3, 2, 2, 2),      // dilation 2 at stride 2: odd phases without taps
      conv2d(1, 2, 32, 32, 16, 16, 3, 3, 1, 1),      // stride 3: nine phases
      conv2d(1, 2, 32, 64, 21, 19, 5, 2, 2, 1),      // 5x5 s2
      conv2d(1, 2, 32, 32, 11, 11, 3, 2, 3, 1),      // padding past the radius
      conv2d(1, 2, 24, 40, 13, 9, 3, 2, 1, 1),       // channel tails (24, 40)
      conv2d(1, 2, 16, 64, 33, 31, 7, 2, 3, 1),      // stem-like 7x7 s2
      conv2d(32, 2, 256, 256, 15, 15, 3, 2, 1, 1),   // C/G = K/G = 8 s2: phases paired
      conv2d(14, 2, 224, 224, 29, 27, 3, 2, 1, 1),   // C/G = K/G = 16 s2: direct on gm 2
      conv2d(8, 2, 128, 128, 14, 14, 3, 2, 1, 1),    // 16/16, direct on gm 2 and gm 4
      conv2d(14, 2, 448, 448, 15, 13, 3, 2, 1, 1),   // C/G = K/G = 32 s2: phases diagonal
      conv2d(1, 2, 32, 32, 21, 21, 3, 5, 1, 1),      // stride 5: gathers
      check::conv3d(1, 2, 32, 32, 9, 8, 7, 3, 2, 1, 1),  // 3D 3x3x3 s2
      conv2d(1, 3, 256, 512, 57, 55, 1, 2, 0, 1),    // 1x1 s2, odd: phase 0's last row / column has no siblings
      check::conv3d(1, 2, 64, 32, 7, 9, 10, 1, 2, 0, 1),  // 3D 1x1x1 s2: seven phases' zeros beside phase 0
      conv2d(1, 1, 64, 64, 5, 141, 3, 2, 1, 1),      // phase rows of 71 and 70 pixels, wider than a tile's 64-row block
      conv2d(2, 3, 128, 128, 9, 3, 3, 2, 1, 1),      // phase rows of 2 and 1 pixels, G = 2
      conv2d(1, 2, 64, 64, 5, 141, 1, 2, 0, 1),      // 1x1 s2: zeros beside phase rows of 71 pixels
  };
  int checked = 0, phased = 0, one_launch = 0, direct = 0, beside = 0, failures = 0;
  uint32_t seed = 29;
  for (const ConvProblem& p : problems) {
    for (size_t i = 0; i < list.size(); ++i) {
      const GroupedConvInstance& inst = *list[i];
      const std::string name(inst.name());
      if (!inst.is_supported(p)) continue;
      const DataType dt = inst.signature().dtype;
      const bool on_direct = phases_fns[i].direct(p);
      const bool phases = !on_direct && phases_fns[i].phases(p);
      std::string failure;
      const bool expected = p.stride[1] <= 4 && p.stride[2] <= 4;
      if (on_direct ? !expected : phases != expected) {
        failure = expected ? "expected stride phases" : "unexpected stride phases";
      }
      const int e_bytes = element_bytes(dt);
      const int64_t in_n = p.input_elements(), wei_n = p.weight_elements(), out_n = p.output_elements();
      check::RunBuffers b;
      // the workspace: the phases' filters (and paired weights)
      const ConvArgs args = b.allocate(p, dt, in_n, inst.workspace_bytes(p, 1));
      if (phases && args.workspace_bytes < size_t(wei_n) * e_bytes) failure = "workspace below the filters";
      if (on_direct && args.workspace_bytes != 0) failure = "a workspace for the direct kernel";
      if (args.workspace_bytes > 0) TD_CHECK_CUDA(cudaMemset(args.workspace, 0xFF, args.workspace_bytes));
      check::fill(dt, b.wei, wei_n, seed);
      check::fill(dt, b.out, out_n, seed + 1);
      TD_CHECK_CUDA(cudaMemset(b.in, 0xFF, size_t(in_n) * e_bytes));  // poison: NaN in every dtype
      TD_CHECK_CUDA(reference::run(ConvDirection::kBwdData, dt, p, args, b.ref));
      TD_CHECK_CUDA(cudaMemset(b.in, 0xFF, size_t(in_n) * e_bytes));
      const bool at_once = !on_direct && phases_fns[i].one_launch(p, args);
      if (at_once && !phases) failure = "one launch without stride phases";
      const bool zeros_beside = at_once && phases_fns[i].beside(p);
      if (!inst.check_args(p, args)) failure = "check_args refused";
      if (inst.run(p, args) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) failure = "run failed";
      check::widen(dt, b.in, b.got, in_n);
      std::vector<float> ref(static_cast<size_t>(in_n)), got(static_cast<size_t>(in_n));
      TD_CHECK_CUDA(cudaMemcpy(ref.data(), b.ref, ref.size() * 4, cudaMemcpyDeviceToHost));
      TD_CHECK_CUDA(cudaMemcpy(got.data(), b.got, got.size() * 4, cudaMemcpyDeviceToHost));
      const double err = check::relative_l2(got, ref);
      if (!(err <= 1e-2)) {
        failure += (failure.empty() ? "" : "; ") + std::string("relative L2 ") + std::to_string(err);
      }
      const double worst = worst_over_rms(got, ref);
      if (!(worst <= 0.1)) {
        failure += (failure.empty() ? "" : "; ") + std::string("an element off by ") + std::to_string(worst) +
                   " of the reference's RMS";
      }
      ++checked;
      phased += phases ? 1 : 0;
      one_launch += at_once ? 1 : 0;
      direct += on_direct ? 1 : 0;
      beside += zeros_beside ? 1 : 0;
      if (!failure.empty()) ++failures;
      std::printf("%s %s | %s | %s | rel L2 %.2e%s%s%s\n", failure.empty() ? "PASS" : "FAIL", name.c_str(),
                  on_direct ? "direct" : at_once ? "phases, one launch" : phases ? "phases" : "gathers",
                  p.to_string().c_str(), err, zeros_beside ? " | zeros beside phase 0" : "",
                  failure.empty() ? "" : " | ", failure.c_str());
    }
    seed += 2;
  }
  std::printf("%d checked, %d phases, %d in one launch, %d direct, %d beside, %d failures\n", checked, phased,
              one_launch, direct, beside, failures);
  return failures == 0 ? 0 : 1;
}
