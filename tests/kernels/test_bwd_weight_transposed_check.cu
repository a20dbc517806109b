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
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../bench/gpu_check/battery.hpp"
#include "../../bench/gpu_check/check_tensors.cuh"
#include "../../bench/gpu_check/hand_bwd_weight_transposed.hpp"
#include "tiledispatch/reference/device.cuh"

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
using check::DeviceBuffer;

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

struct Case {
  const char* what;
  ConvProblem problem;
};

int sm_count() {
  int device = 0, sms = 0;
  TD_CHECK_CUDA(cudaGetDevice(&device));
  TD_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
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
  const std::vector<Case> cases = {
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
  const int sms = sm_count();
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
    const DataType dt = inst.signature().dtype;
    for (const Case& c : cases) {
      const ConvProblem& p = c.problem;
      if (!inst.is_supported(p)) continue;
      const bool fallback = e.runs_first_generation(p), on_direct = e.runs_merged_direct(p);
      const char* mapping = on_direct      ? "direct"
                            : fallback     ? "first generation"
                            : e.transposed ? "transposed"
                                           : "untransposed";
      const int e_bytes = element_bytes(dt);
      const int64_t in_n = p.input_elements(), wei_n = p.weight_elements(), out_n = p.output_elements();
      std::vector<int> k_batches = {1, 3, 16};
      const std::vector<int> automatic = inst.split_k_candidates(p, sms);
      if (automatic.back() > 1) k_batches.push_back(automatic.back());
      std::sort(k_batches.begin(), k_batches.end());
      k_batches.erase(std::unique(k_batches.begin(), k_batches.end()), k_batches.end());
      size_t workspace_bytes = 0;
      for (int k : k_batches) workspace_bytes = std::max(workspace_bytes, inst.workspace_bytes(p, k));
      DeviceBuffer in(size_t(in_n) * e_bytes), wei(size_t(wei_n) * e_bytes), out(size_t(out_n) * e_bytes);
      DeviceBuffer work(workspace_bytes), ref(size_t(wei_n) * 4), got(size_t(wei_n) * 4);
      check::fill(dt, in.ptr, in_n, seed++);
      check::fill(dt, out.ptr, out_n, seed++);
      ConvArgs args;
      args.input = in.ptr, args.weight = wei.ptr, args.output = out.ptr;
      args.workspace = work.ptr, args.workspace_bytes = work.bytes;
      TD_CHECK_CUDA(reference::run(ConvDirection::kBwdWeight, dt, p, args, static_cast<float*>(ref.ptr)));
      std::vector<float> ref_host(static_cast<size_t>(wei_n)), got_host(static_cast<size_t>(wei_n));
      TD_CHECK_CUDA(cudaMemcpy(ref_host.data(), ref.ptr, ref.bytes, cudaMemcpyDeviceToHost));
      std::vector<unsigned char> first(wei.bytes), again(wei.bytes);
      for (int k_batch : k_batches) {
        args.k_batch = k_batch;
        std::string failure;
        // Poisoned result and workspace (0xFF: NaN in every dtype): an element no split writes shows.
        auto run_once = [&](std::vector<unsigned char>& bits) {
          TD_CHECK_CUDA(cudaMemset(wei.ptr, 0xFF, wei.bytes));
          TD_CHECK_CUDA(cudaMemset(work.ptr, 0xFF, work.bytes));
          const cudaError_t launch = inst.run(p, args);
          const cudaError_t sync = cudaDeviceSynchronize();
          if (sync != cudaSuccess) {  // a sticky error: nothing after it can be trusted
            std::printf("FAIL %s | %s | k_batch %d | %s (sticky error: stopping)\n", name.c_str(), c.what, k_batch,
                        cudaGetErrorString(sync));
            std::exit(1);
          }
          if (launch == cudaSuccess) TD_CHECK_CUDA(cudaMemcpy(bits.data(), wei.ptr, wei.bytes, cudaMemcpyDeviceToHost));
          return launch;
        };
        double err = INFINITY;
        if (Support s = inst.check_args(p, args); !s) {
          failure = "check_args: " + s.reason;
        } else if (const cudaError_t status = run_once(first); status != cudaSuccess) {
          failure = std::string("run: ") + cudaGetErrorString(status);
        } else {
          check::widen(dt, wei.ptr, static_cast<float*>(got.ptr), wei_n);
          TD_CHECK_CUDA(cudaMemcpy(got_host.data(), got.ptr, got.bytes, cudaMemcpyDeviceToHost));
          double ref_norm = 0;
          err = check::relative_l2(got_host, ref_host, &ref_norm);
          if (!(err <= 1e-2) || ref_norm == 0) failure = "relative L2 above 1e-2";
          if (k_batch > 1) {
            ++reruns;
            if (run_once(again) != cudaSuccess) {
              failure += (failure.empty() ? "" : "; ") + std::string("rerun failed");
            } else if (std::memcmp(first.data(), again.data(), first.size()) != 0) {
              failure += (failure.empty() ? "" : "; ") + std::string("rerun differs (not bit-identical)");
            }
          }
        }
        failures += failure.empty() ? 0 : 1;
        std::printf("%s %s | %s | %s | %s | k_batch %d | rel L2 %.2e%s%s\n", failure.empty() ? "PASS" : "FAIL",
                    name.c_str(), mapping, c.what, p.to_string().c_str(),
                    k_batch, err, failure.empty() ? "" : " | ", failure.c_str());
      }
      checked += int(k_batches.size());
      transposed += e.transposed && !fallback && !on_direct ? int(k_batches.size()) : 0;
      direct += on_direct ? int(k_batches.size()) : 0;
      first_generation += fallback ? int(k_batches.size()) : 0;
    }
  }
  std::printf("%d checked, %d transposed, %d first generation, %d direct, %d bit-identical reruns, %d failures\n",
              checked, transposed, first_generation, direct, reruns, failures);
  return failures == 0 ? 0 : 1;
}
