// GPU check of transposed bwd_weight on the Hopper path (sm90/config.hpp, kTransposed: tile_m below 64, so
// wgmma computes the tile's transpose): the hand set of bench/gpu_check/hand_bwd_weight_transposed.hpp and one
// untransposed Hopper instance on grouped problems whose K/G is 16 or 32 (2D and 3D, odd sizes, stride 2,
// dilation 2, C/G != K/G), and 8 (where a transposed configuration runs its first-generation kernel, since the
// transposed one would gather the input), at k_batch 1, 3, 16 and the largest automatic split-K factor. Each
// run writes into a poisoned weight gradient (and a poisoned workspace) and is compared with the reference;
// every run at k_batch > 1 is repeated and must give the same bits. Each line says which mapping ran
// ("transposed" where the configuration's Sm90Config::kTransposed holds, which must be exactly where tile_m is
// not a multiple of 64 and tile_n is, on the Hopper path; "first generation" where such a configuration falls
// back, ImplicitGemmInstance::runs_first_generation; "direct" where a merged-group configuration runs the
// direct kernel, ImplicitGemmInstance::runs_merged_direct).
// Last line: "<n> checked, <t> transposed, <g> first generation, <d> direct, <b> bit-identical reruns, <f> failures".
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../../bench/gpu_check/battery.hpp"
#include "../../bench/gpu_check/bwd_weight_runs.cuh"
#include "../../bench/gpu_check/hand_bwd_weight_transposed.hpp"

namespace tiledispatch::hand {
// The untransposed mapping on the same problems (tile_m 64: wgmma's M is tile_m).
// clang-format off
TD_HAND(bwdw_fp16_untransposed_64x64x32,   kBwdWeight, 2, kFp16, kDefault,  64,64,32,     2,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;
using check::conv2d;
using check::conv3d;

// A hand instance with what its traits say about the mapping: the Hopper path builds it, and whether it
// computes the tile transposed (from the configuration's own constant, checked against the rule).
struct Entry {
  std::unique_ptr<GroupedConvInstance> instance;
  bool hopper, transposed, expected_transposed;
  bool (*runs_first_generation)(const ConvProblem&);  // C/G that the transposed kernel would gather
  bool (*runs_merged_direct)(const ConvProblem&);
};
template <class Instance>
Entry entry() {
  using Sm90 = typename Instance::Sm90;
  constexpr bool kExpected = Sm90::kTileM % 64 != 0 && Sm90::kTileN % 64 == 0;
  return {std::make_unique<Instance>(), Sm90::kBuildable, Sm90::kTransposed, kExpected,
          &Instance::runs_first_generation, &Instance::runs_merged_direct};
}

}  // namespace

int main() {
  using namespace tiledispatch::hand;
  std::vector<Entry> list;
  list.push_back(entry<bwdw_fp16_t_32x64x32>());
  list.push_back(entry<bwdw_bf16_t_16x64x32>());
  list.push_back(entry<bwdw_fp16_t_32x128x64_compv4>());
  list.push_back(entry<bwdw_bf16_t_16x128x64>());
  list.push_back(entry<bwdw_fp16_t_16x128x64>());
  list.push_back(entry<bwdw_fp16_t_32x128x32_ping_pong>());
  list.push_back(entry<bwdw_fp16_t_32x64x32_wg_along_n>());
  list.push_back(entry<bwdw_bf16_t_3d_32x64x32>());
  list.push_back(entry<bwdw_fp16_t_3d_16x128x32>());
  list.push_back(entry<bwdw_fp16_t_gm2_32x128x32>());
  list.push_back(entry<bwdw_fp16_untransposed_64x64x32>());
  // conv2d(G, N, C, K, H, W, filter, stride, pad, dilation); conv3d(G, N, C, K, D, H, W, ...).
  const std::vector<check::BatteryEntry> cases = {
      {"regnet-like 16/16 G=14 odd 15x13", conv2d(14, 2, 224, 224, 15, 13, 3, 1, 1, 1)},
      {"regnet-like 16/16 G=14 stride 2 odd 29x27", conv2d(14, 1, 224, 224, 29, 27, 3, 2, 1, 1)},
      {"regnet_g14_28 16/16 N=8 (folds)", conv2d(14, 8, 224, 224, 28, 28, 3, 1, 1, 1)},
      {"16/16 G=8 dilation 2 odd 11x9", conv2d(8, 3, 128, 128, 11, 9, 3, 1, 2, 2)},
      {"resnext-like 32/32 G=32 odd 9x7", conv2d(32, 2, 1024, 1024, 9, 7, 3, 1, 1, 1)},
      {"resnext_g32_7 32/32 N=4", conv2d(32, 4, 1024, 1024, 7, 7, 3, 1, 1, 1)},
      {"C/G=16 K/G=32 G=8 odd 9x9 (input gathered by 32-wide tiles)", conv2d(8, 2, 128, 256, 9, 9, 3, 1, 1, 1)},
      {"C/G=32 K/G=16 G=4 stride 2 odd 13x11", conv2d(4, 2, 128, 64, 13, 11, 3, 2, 1, 1)},
      {"C/G=K/G=24 G=4 odd 9x9 (partial tiles, gathers)", conv2d(4, 2, 96, 96, 9, 9, 3, 1, 1, 1)},
      {"1x1 32/32 G=4 odd 7x5", conv2d(4, 3, 128, 128, 7, 5, 1, 1, 0, 1)},
      {"3D video-like 32/32 G=8 odd 3x5x7", conv3d(8, 2, 256, 256, 3, 5, 7, 3, 1, 1, 1)},
      {"3D 16/16 G=6 stride 2 odd 5x7x6", conv3d(6, 1, 96, 96, 5, 7, 6, 3, 2, 1, 1)},
      {"resnext_g32_28-like 8/8 G=32 odd 15x13 (first generation)", conv2d(32, 2, 256, 256, 15, 13, 3, 1, 1, 1)},
      {"8/8 G=16 stride 2 odd 17x11 (first generation)", conv2d(16, 1, 128, 128, 17, 11, 3, 2, 1, 1)},
  };
  const int sms = check::sm_count();
  int checked = 0, transposed = 0, first_generation = 0, direct = 0, reruns = 0, failures = 0;
  uint32_t seed = 7;
  for (const Entry& e : list) {
    const GroupedConvInstance& inst = *e.instance;
    const std::string name(inst.name());
    // The mapping is a property of the configuration: every hand instance runs on the Hopper path, transposed
    // exactly where tile_m is not a multiple of 64 and tile_n is.
    if (!e.hopper || e.transposed != e.expected_transposed) {
      std::printf("FAIL %s | mapping | hopper %d transposed %d expected %d\n", name.c_str(), int(e.hopper),
                  int(e.transposed), int(e.expected_transposed));
      ++failures;
    }
    for (const check::BatteryEntry& c : cases) {
      const ConvProblem& p = c.problem;
      if (!inst.is_supported(p)) continue;
      const bool fallback = e.runs_first_generation(p), on_direct = e.runs_merged_direct(p);
      const char* mapping = on_direct      ? "direct"
                            : fallback     ? "first generation"
                            : e.transposed ? "transposed"
                                           : "untransposed";
      const auto runs = check::run_bwd_weight(inst, p, sms, seed, name + " | " + c.what);
      for (const check::BwdWeightRun& run : runs) {
        failures += run.failure.empty() ? 0 : 1;
        reruns += run.rerun ? 1 : 0;
        std::printf("%s %s | %s | %s | %s | k_batch %d | rel L2 %.2e%s%s\n", run.failure.empty() ? "PASS" : "FAIL",
                    name.c_str(), mapping, c.what, p.to_string().c_str(), run.k_batch, run.rel_l2,
                    run.failure.empty() ? "" : " | ", run.failure.c_str());
      }
      checked += int(runs.size());
      transposed += e.transposed && !fallback && !on_direct ? int(runs.size()) : 0;
      first_generation += fallback ? int(runs.size()) : 0;
      direct += on_direct ? int(runs.size()) : 0;
    }
  }
  std::printf("%d checked, %d transposed, %d first generation, %d direct, %d bit-identical reruns, %d failures\n",
              checked, transposed, first_generation, direct, reruns, failures);
  return failures == 0 ? 0 : 1;
}
