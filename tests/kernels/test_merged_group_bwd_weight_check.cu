// GPU check of merged-group bwd_weight by the direct kernel (kernels/merged_group_bwd_weight.cuh): hand
// configurations with num_groups_to_merge 2 to 32 (fp32 on TF32 MMAs too) on grouped problems with C/G and K/G
// of 2 to 32 (2D and 3D, odd sizes, stride 2, dilation 2, padding past the filter radius, rows wider than the
// pixel tile, C/G != K/G, a long reduction), each run as bench/gpu_check/bwd_weight_runs.cuh does it (k_batch
// 1, 3, 16 and the largest automatic factor, poisoned outputs, bit-identical reruns). No run may scale the result
// (|<got, ref> / <ref, ref> - 1| <= 1e-3: a bias of the tensor cores' round-toward-zero accumulation would, on
// the long reduction). Each line says which kernel ran ("direct" or "implicit gemm"): direct must be taken
// exactly where the test's own rule says (gm x K/G = tile_m, the merged channel runs multiples of 8), except on
// the 64x128x64 gm 2 configurations (128-byte input boxes), whose Hopper GEMM takes both operands by TMA where
// the two groups' input run (2 x C/G) is a multiple of 64 channels.
// Last line: "<n> checked, <d> direct, <b> bit-identical reruns, <f> failures".
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../../bench/gpu_check/battery.hpp"
#include "../../bench/gpu_check/bwd_weight_runs.cuh"
#include "../../bench/gpu_check/hand_traits.hpp"

namespace tiledispatch::hand {
// clang-format off
//      name                         dir          nd dtype  spec       tile          waves   warp tile   vec     pipeline  scheduler   epilogue   dsb    gm 2st   expl   split  sk     wg
TD_HAND(bwdw_fp16_mg_16x64x64_gm2,  kBwdWeight, 2, kFp16, kDefault,  16,64,64,     1,2,1,  16,16,32,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(bwdw_bf16_mg_32x64x64_gm8,  kBwdWeight, 2, kBf16, kDefault,  32,64,64,     1,2,1,  32,32,16,   8,8,4,  kMem,     kIntrawave, kCShuffle, false, 8, true,  false, false, false, 1)
TD_HAND(bwdw_fp16_mg_16x64x64_gm4,  kBwdWeight, 2, kFp16, kDefault,  16,64,64,     1,2,1,  16,16,32,   8,8,4,  kCompV3,  kIntrawave, kCShuffle, false, 4, false, false, false, false, 1)
TD_HAND(bwdw_fp16_mg_32x64x64_gm2,  kBwdWeight, 2, kFp16, kDefault,  32,64,64,     1,2,1,  32,32,16,   8,8,8,  kMem,     kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(bwdw_bf16_mg_64x64x64_gm2,  kBwdWeight, 2, kBf16, kDefault,  64,64,64,     2,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(bwdw_fp16_mg_64x64x64_gm4,  kBwdWeight, 2, kFp16, kDefault,  64,64,64,     1,2,1,  64,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 4, false, false, false, false, 1)
TD_HAND(bwdw_fp16_mg_3d_32x64x64_gm2, kBwdWeight, 3, kFp16, kDefault, 32,64,64,    1,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(bwdw_bf16_mg_3d_64x64x64_gm2, kBwdWeight, 3, kBf16, kDefault, 64,64,64,    2,2,1,  32,32,16,   8,8,8,  kMem,     kIntrawave, kCShuffle, false, 2, true,  false, false, false, 1)
TD_HAND(bwdw_fp16_mg_64x128x64_gm2, kBwdWeight, 2, kFp16, kDefault,  64,128,64,    2,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(bwdw_bf16_mg_3d_64x128x64_gm2, kBwdWeight, 3, kBf16, kDefault, 64,128,64, 2,2,1,  32,32,16,   8,8,8,  kMem,     kIntrawave, kCShuffle, false, 2, true,  false, false, false, 1)
TD_HAND(bwdw_fp32_mg_64x64x64_gm8,  kBwdWeight, 2, kFp32, kDefault,  64,64,64,     2,2,1,  32,32,8,    4,4,4,  kMem,     kIntrawave, kCShuffle, false, 8, false, false, false, false, 1)
TD_HAND(bwdw_fp32_mg_64x64x64_gm16, kBwdWeight, 2, kFp32, kDefault,  64,64,64,     2,2,1,  32,32,8,    4,4,4,  kMem,     kIntrawave, kCShuffle, false, 16, false, false, false, false, 1)
TD_HAND(bwdw_fp32_mg_32x64x64_gm2,  kBwdWeight, 2, kFp32, kDefault,  32,64,64,     2,2,1,  16,16,8,    4,4,4,  kMem,     kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(bwdw_fp32_mg_128x64x64_gm16, kBwdWeight, 2, kFp32, kDefault, 128,64,64,    2,2,1,  32,32,8,    4,4,4,  kCompV3,  kIntrawave, kCShuffle, false, 16, false, false, false, false, 1)
TD_HAND(bwdw_fp32_mg_3d_64x64x64_gm8, kBwdWeight, 3, kFp32, kDefault, 64,64,64,    2,2,1,  32,32,8,    4,4,4,  kMem,     kIntrawave, kCShuffle, false, 8, true,  false, false, false, 1)
TD_HAND(bwdw_fp32_mg_64x64x64_gm2,  kBwdWeight, 2, kFp32, kDefault,  64,64,64,     2,2,1,  32,32,8,    4,4,4,  kMem,     kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(bwdw_fp16_mg_64x64x128_gm32, kBwdWeight, 2, kFp16, kDefault, 64,64,128,    2,2,1,  32,32,16,   8,8,8,  kMem,     kIntrawave, kCShuffle, false, 32, false, false, false, false, 1)
TD_HAND(bwdw_bf16_mg_3d_64x64x128_gm32, kBwdWeight, 3, kBf16, kDefault, 64,64,128, 2,2,1,  32,32,16,   8,8,8,  kMem,     kIntrawave, kCShuffle, false, 32, true,  false, false, false, 1)
TD_HAND(bwdw_fp32_mg_64x64x64_gm32, kBwdWeight, 2, kFp32, kDefault,  64,64,64,     2,2,1,  32,32,8,    4,4,4,  kMem,     kIntrawave, kCShuffle, false, 32, false, false, false, false, 1)
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;
using check::conv2d;
using check::conv3d;

struct Entry {
  std::unique_ptr<GroupedConvInstance> instance;
  bool (*runs_merged_direct)(const ConvProblem&);
  int64_t (*channel_padding)(const ConvProblem&);  // a run of the padded problem is not the direct kernel's
  int tile_m, gm;
  bool tma_boxes;  // 64x128x64 gm 2: 128-byte input boxes
};
template <class Instance>
Entry entry() {
  static_assert(Instance::kRuns, "a hand configuration that no kernel generation builds");
  constexpr bool kTmaBoxes = Instance::Config::kGroupsToMerge == 2 && Instance::Config::kTileM == 64 &&
                             Instance::Config::kTileN == 128;
  return {std::make_unique<Instance>(), &Instance::runs_merged_direct, &Instance::channel_padding,
          Instance::Config::kTileM,
          Instance::Config::kGroupsToMerge, kTmaBoxes};
}

}  // namespace

int main() {
  using namespace tiledispatch::hand;
  std::vector<Entry> list;
  list.push_back(entry<bwdw_fp16_mg_16x64x64_gm2>());
  list.push_back(entry<bwdw_bf16_mg_32x64x64_gm8>());
  list.push_back(entry<bwdw_fp16_mg_16x64x64_gm4>());
  list.push_back(entry<bwdw_fp16_mg_32x64x64_gm2>());
  list.push_back(entry<bwdw_bf16_mg_64x64x64_gm2>());
  list.push_back(entry<bwdw_fp16_mg_64x64x64_gm4>());
  list.push_back(entry<bwdw_fp16_mg_3d_32x64x64_gm2>());
  list.push_back(entry<bwdw_bf16_mg_3d_64x64x64_gm2>());
  list.push_back(entry<bwdw_fp16_mg_64x128x64_gm2>());
  list.push_back(entry<bwdw_bf16_mg_3d_64x128x64_gm2>());
  list.push_back(entry<bwdw_fp32_mg_64x64x64_gm8>());
  list.push_back(entry<bwdw_fp32_mg_64x64x64_gm16>());
  list.push_back(entry<bwdw_fp32_mg_32x64x64_gm2>());
  list.push_back(entry<bwdw_fp32_mg_128x64x64_gm16>());
  list.push_back(entry<bwdw_fp32_mg_3d_64x64x64_gm8>());
  list.push_back(entry<bwdw_fp32_mg_64x64x64_gm2>());
  list.push_back(entry<bwdw_fp16_mg_64x64x128_gm32>());
  list.push_back(entry<bwdw_bf16_mg_3d_64x64x128_gm32>());
  list.push_back(entry<bwdw_fp32_mg_64x64x64_gm32>());
  // conv2d(G, N, C, K, H, W, filter, stride, pad, dilation); conv3d(G, N, C, K, D, H, W, ...).
  const std::vector<check::BatteryEntry> cases = {
      {"8/8 G=32 odd 15x13", conv2d(32, 2, 256, 256, 15, 13, 3, 1, 1, 1)},
      {"8/8 G=16 stride 2 odd 17x11", conv2d(16, 1, 128, 128, 17, 11, 3, 2, 1, 1)},
      {"8/8 G=8 1x1 stride 2", conv2d(8, 2, 64, 64, 14, 14, 1, 2, 0, 1)},
      {"4/4 G=32 odd 9x11", conv2d(32, 2, 128, 128, 9, 11, 3, 1, 1, 1)},
      {"4/4 G=16 5x5 pad 2 odd 13x9", conv2d(16, 2, 64, 64, 13, 9, 5, 1, 2, 1)},
      {"16/16 G=14 odd 15x13", conv2d(14, 2, 224, 224, 15, 13, 3, 1, 1, 1)},
      {"16/16 G=8 dilation 2 odd 11x9", conv2d(8, 3, 128, 128, 11, 9, 3, 1, 2, 2)},
      {"16/16 G=4 rows wider than the tile 5x150", conv2d(4, 1, 64, 64, 5, 150, 3, 1, 1, 1)},
      {"16/16 G=4 pad 3 past the radius 9x9", conv2d(4, 1, 64, 64, 9, 9, 3, 1, 3, 1)},
      {"C/G=8 K/G=16 G=8 odd 9x9", conv2d(8, 2, 64, 128, 9, 9, 3, 1, 1, 1)},
      {"32/32 G=8 odd 9x7", conv2d(8, 2, 256, 256, 9, 7, 3, 1, 1, 1)},
      {"C/G=16 K/G=32 G=8 odd 9x9", conv2d(8, 2, 128, 256, 9, 9, 3, 1, 1, 1)},
      {"32/32 G=4 7x7 N=4", conv2d(4, 4, 128, 128, 7, 7, 3, 1, 1, 1)},
      {"32/32 G=4 stride 2 odd 15x13", conv2d(4, 2, 128, 128, 15, 13, 3, 2, 1, 1)},
      {"3D 16/16 G=8 odd 3x5x7", conv3d(8, 2, 128, 128, 3, 5, 7, 3, 1, 1, 1)},
      {"3D 32/32 G=4 stride 2 odd 5x7x6", conv3d(4, 1, 128, 128, 5, 7, 6, 3, 2, 1, 1)},
      {"3D C/G=16 K/G=32 G=4 odd 3x5x7", conv3d(4, 2, 64, 128, 3, 5, 7, 3, 1, 1, 1)},
      {"3D 8/8 G=8 odd 3x5x5", conv3d(8, 2, 64, 64, 3, 5, 5, 3, 1, 1, 1)},
      {"2/2 G=64 odd 15x13", conv2d(64, 2, 128, 128, 15, 13, 3, 1, 1, 1)},
      {"2/2 G=32 stride 2 odd 17x11 N=1", conv2d(32, 1, 64, 64, 17, 11, 3, 2, 1, 1)},
      {"2/2 G=32 5x5 pad 3 past the radius 9x9", conv2d(32, 2, 64, 64, 9, 9, 5, 1, 3, 1)},
      {"3D 2/2 G=32 odd 3x5x7", conv3d(32, 2, 64, 64, 3, 5, 7, 3, 1, 1, 1)},
      // gm not dividing G (RegNet's odd group counts): a last block of fewer groups on the direct kernel
      {"8/8 G=13 odd 15x13", conv2d(13, 2, 104, 104, 15, 13, 3, 1, 1, 1)},
      {"16/16 G=25 stride 2 odd 15x13", conv2d(25, 1, 400, 400, 15, 13, 3, 2, 1, 1)},
      {"2/2 G=12 odd 9x11", conv2d(12, 2, 24, 24, 9, 11, 3, 1, 1, 1)},
      {"32/32 G=5 odd 9x7", conv2d(5, 2, 160, 160, 9, 7, 3, 1, 1, 1)},
      {"3D 8/8 G=13 odd 3x5x5", conv3d(13, 1, 104, 104, 3, 5, 5, 3, 1, 1, 1)},
      {"long reduction 16/16 G=4 GEMM K 2^20", conv2d(4, 64, 64, 64, 128, 128, 3, 1, 1, 1)},
  };
  const int sms = check::sm_count();
  int checked = 0, direct = 0, reruns = 0, failures = 0;
  uint32_t seed = 11;
  for (const Entry& e : list) {
    const GroupedConvInstance& inst = *e.instance;
    const std::string name(inst.name());
    for (const check::BatteryEntry& c : cases) {
      const ConvProblem& p = c.problem;
      if (!inst.is_supported(p)) continue;
      const int64_t cg = p.C / p.G, kg = p.K / p.G;
      // gm need not divide G: the direct kernel's last block then holds fewer groups (the GEMM by TMA boxes
      // cannot), where C and K are whole 16-byte vectors a pixel
      const bool tail = p.G % e.gm != 0;
      const bool by_tma = e.tma_boxes && (cg * e.gm) % 64 == 0 && !tail;
      const int bytes = element_bytes(inst.signature().dtype);
      const bool expected = kg * e.gm == e.tile_m && (cg * e.gm) % 8 == 0 && (kg * e.gm) % 8 == 0 &&
                            (p.C * bytes) % 16 == 0 && (p.K * bytes) % 16 == 0 && !by_tma;
      const bool runs_direct = e.runs_merged_direct(p) && e.channel_padding(p) == 0;
      const auto runs = check::run_bwd_weight(inst, p, sms, seed, name + " | " + c.what);
      for (check::BwdWeightRun run : runs) {
        const auto fail = [&run](const char* why) {
          run.failure += (run.failure.empty() ? "" : "; ") + std::string(why);
        };
        if (runs_direct != expected) fail("direct path taken against the rule");
        if (!(std::fabs(run.scale) <= 1e-3)) fail("scaled result");
        failures += run.failure.empty() ? 0 : 1;
        reruns += run.rerun ? 1 : 0;
        std::printf("%s %s | %s | %s | %s | k_batch %d | rel L2 %.2e | scale-1 %+.1e%s%s\n",
                    run.failure.empty() ? "PASS" : "FAIL", name.c_str(), runs_direct ? "direct" : "implicit gemm",
                    c.what, p.to_string().c_str(), run.k_batch, run.rel_l2, run.scale,
                    run.failure.empty() ? "" : " | ", run.failure.c_str());
      }
      checked += int(runs.size());
      direct += runs_direct ? int(runs.size()) : 0;
    }
  }
  std::printf("%d checked, %d direct, %d bit-identical reruns, %d failures\n", checked, direct, reruns, failures);
  return failures == 0 ? 0 : 1;
}
