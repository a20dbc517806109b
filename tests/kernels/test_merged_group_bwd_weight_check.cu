// GPU check of merged-group bwd_weight by the direct kernel (kernels/merged_group_bwd_weight.cuh): hand
// configurations with num_groups_to_merge 2 to 8 on grouped problems with C/G and K/G of 4 to 32 (2D and 3D, odd
// sizes, stride 2, dilation 2, padding past the filter radius, rows wider than the pixel tile, C/G != K/G), at
// k_batch 1, 3, 16 and the largest automatic split-K factor. Each run writes into a poisoned weight gradient
// (and a poisoned workspace) and is compared with the reference; every run at k_batch > 1 is repeated and must
// give the same bits, and no run may scale the result (|<got, ref> / <ref, ref> - 1| <= 1e-3: a bias of the
// tensor cores' round-toward-zero accumulation would, on the long reduction). Each line says which kernel ran ("direct" or "implicit gemm"): direct must be taken
// exactly where the test's own rule says (gm x K/G = tile_m, the merged channel runs multiples of 8).
// Last line: "<n> checked, <d> direct, <b> bit-identical reruns, <f> failures".
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
#include "../../bench/gpu_check/hand_traits.hpp"
#include "tiledispatch/reference/device.cuh"

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
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;
using check::conv2d;
using check::conv3d;
using check::DeviceBuffer;

struct Entry {
  std::unique_ptr<GroupedConvInstance> instance;
  bool (*runs_merged_direct)(const ConvProblem&);
  int tile_m, gm;
};
template <class Instance>
Entry entry() {
  static_assert(Instance::kRuns, "a hand configuration that no kernel generation builds");
  return {std::make_unique<Instance>(), &Instance::runs_merged_direct, Instance::Config::kTileM,
          Instance::Config::kGroupsToMerge};
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
  list.push_back(entry<bwdw_fp16_mg_16x64x64_gm2>());
  list.push_back(entry<bwdw_bf16_mg_32x64x64_gm8>());
  list.push_back(entry<bwdw_fp16_mg_16x64x64_gm4>());
  list.push_back(entry<bwdw_fp16_mg_32x64x64_gm2>());
  list.push_back(entry<bwdw_bf16_mg_64x64x64_gm2>());
  list.push_back(entry<bwdw_fp16_mg_64x64x64_gm4>());
  list.push_back(entry<bwdw_fp16_mg_3d_32x64x64_gm2>());
  list.push_back(entry<bwdw_bf16_mg_3d_64x64x64_gm2>());
  // conv2d(G, N, C, K, H, W, filter, stride, pad, dilation); conv3d(G, N, C, K, D, H, W, ...).
  const std::vector<Case> cases = {
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
      {"32/32 G=4 7x7 N=4", conv2d(4, 4, 128, 128, 7, 7, 3, 1, 1, 1)},
      {"32/32 G=4 stride 2 odd 15x13", conv2d(4, 2, 128, 128, 15, 13, 3, 2, 1, 1)},
      {"3D 16/16 G=8 odd 3x5x7", conv3d(8, 2, 128, 128, 3, 5, 7, 3, 1, 1, 1)},
      {"3D 32/32 G=4 stride 2 odd 5x7x6", conv3d(4, 1, 128, 128, 5, 7, 6, 3, 2, 1, 1)},
      {"3D 8/8 G=8 odd 3x5x5", conv3d(8, 2, 64, 64, 3, 5, 5, 3, 1, 1, 1)},
      {"long reduction 16/16 G=4 GEMM K 2^20", conv2d(4, 64, 64, 64, 128, 128, 3, 1, 1, 1)},
  };
  const int sms = sm_count();
  int checked = 0, direct = 0, reruns = 0, failures = 0;
  uint32_t seed = 11;
  for (const Entry& e : list) {
    const GroupedConvInstance& inst = *e.instance;
    const std::string name(inst.name());
    const DataType dt = inst.signature().dtype;
    for (const Case& c : cases) {
      const ConvProblem& p = c.problem;
      if (!inst.is_supported(p)) continue;
      const int64_t cg = p.C / p.G, kg = p.K / p.G;
      const bool expected = p.G % e.gm == 0 && kg * e.gm == e.tile_m && (cg * e.gm) % 8 == 0 && (kg * e.gm) % 8 == 0;
      const bool runs_direct = e.runs_merged_direct(p);
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
      DeviceBuffer work(std::max<size_t>(workspace_bytes, 16)), ref(size_t(wei_n) * 4), got(size_t(wei_n) * 4);
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
        std::string failure = runs_direct == expected ? "" : "direct path taken against the rule";
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
        double err = INFINITY, scale = NAN;
        if (Support s = inst.check_args(p, args); !s) {
          failure += "check_args: " + s.reason;
        } else if (const cudaError_t status = run_once(first); status != cudaSuccess) {
          failure += std::string("run: ") + cudaGetErrorString(status);
        } else {
          check::widen(dt, wei.ptr, static_cast<float*>(got.ptr), wei_n);
          TD_CHECK_CUDA(cudaMemcpy(got_host.data(), got.ptr, got.bytes, cudaMemcpyDeviceToHost));
          double ref_norm = 0;
          err = check::relative_l2(got_host, ref_host, &ref_norm);
          if (!(err <= 1e-2) || ref_norm == 0) failure += (failure.empty() ? "" : "; ") + std::string("relative L2");
          double dot = 0;
          for (size_t i = 0; i < got_host.size(); ++i) dot += double(got_host[i]) * ref_host[i];
          scale = dot / (ref_norm * ref_norm) - 1.0;
          if (!(std::fabs(scale) <= 1e-3)) failure += (failure.empty() ? "" : "; ") + std::string("scaled result");
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
        std::printf("%s %s | %s | %s | %s | k_batch %d | rel L2 %.2e | scale-1 %+.1e%s%s\n",
                    failure.empty() ? "PASS" : "FAIL", name.c_str(), runs_direct ? "direct" : "implicit gemm", c.what,
                    p.to_string().c_str(), k_batch, err, scale, failure.empty() ? "" : " | ", failure.c_str());
      }
      checked += int(k_batches.size());
      direct += runs_direct ? int(k_batches.size()) : 0;
    }
  }
  std::printf("%d checked, %d direct, %d bit-identical reruns, %d failures\n", checked, direct, reruns, failures);
  return failures == 0 ? 0 : 1;
}
