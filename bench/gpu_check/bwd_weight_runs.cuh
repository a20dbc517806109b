// One backward-weight instance on one problem at k_batch 1, 3, 16 and its largest automatic split-K factor,
// against the reference: each run writes into a poisoned weight gradient and workspace (0xFF: NaN in every
// dtype, so an element no split writes shows), and every run at k_batch > 1 is repeated and must give the same
// bits. Shared by the bwd_weight GPU tests (tests/kernels/test_*bwd_weight*_check.cu), which add their own
// verdicts on the mapping each run took.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check_tensors.cuh"
#include "tiledispatch/reference/device.cuh"
#include "tiledispatch/runtime/instance.hpp"

namespace tiledispatch::check {

struct BwdWeightRun {
  int k_batch = 1;
  double rel_l2 = INFINITY;
  double scale = NAN;   // <got, ref> / <ref, ref> - 1: a bias of the accumulation scales the result
  std::string failure;  // empty when the run passed: relative L2 within relative_l2_tolerance and, at
                        // k_batch > 1, the same bits again
  bool rerun = false;
};

inline int sm_count() {
  int device = 0, sms = 0;
  TD_CHECK_CUDA(cudaGetDevice(&device));
  TD_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// `label` names the case in the message of a sticky CUDA error, after which the program stops (exit 1).
// Two seeds are taken from `seed` for the input and the output gradient.
inline std::vector<BwdWeightRun> run_bwd_weight(const GroupedConvInstance& inst, const ConvProblem& p, int sms,
                                                uint32_t& seed, const std::string& label) {
  const DataType dt = inst.signature().dtype;
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
  fill(dt, in.ptr, in_n, seed++);
  fill(dt, out.ptr, out_n, seed++);
  ConvArgs args;
  args.input = in.ptr, args.weight = wei.ptr, args.output = out.ptr;
  args.workspace = work.ptr, args.workspace_bytes = work.bytes;
  TD_CHECK_CUDA(reference::run(ConvDirection::kBwdWeight, dt, p, args, static_cast<float*>(ref.ptr)));
  std::vector<float> ref_host(static_cast<size_t>(wei_n)), got_host(static_cast<size_t>(wei_n));
  TD_CHECK_CUDA(cudaMemcpy(ref_host.data(), ref.ptr, ref.bytes, cudaMemcpyDeviceToHost));
  std::vector<unsigned char> first(wei.bytes), again(wei.bytes);
  std::vector<BwdWeightRun> runs;
  for (int k_batch : k_batches) {
    args.k_batch = k_batch;
    BwdWeightRun run;
    run.k_batch = k_batch;
    auto run_once = [&](std::vector<unsigned char>& bits) {
      TD_CHECK_CUDA(cudaMemset(wei.ptr, 0xFF, wei.bytes));
      TD_CHECK_CUDA(cudaMemset(work.ptr, 0xFF, work.bytes));
      const cudaError_t launch = inst.run(p, args);
      const cudaError_t sync = cudaDeviceSynchronize();
      if (sync != cudaSuccess) {  // a sticky error: nothing after it can be trusted
        std::printf("FAIL %s | k_batch %d | %s (sticky error: stopping)\n", label.c_str(), k_batch,
                    cudaGetErrorString(sync));
        std::exit(1);
      }
      if (launch == cudaSuccess) TD_CHECK_CUDA(cudaMemcpy(bits.data(), wei.ptr, wei.bytes, cudaMemcpyDeviceToHost));
      return launch;
    };
    const auto fail = [&run](const std::string& why) { run.failure += (run.failure.empty() ? "" : "; ") + why; };
    if (Support s = inst.check_args(p, args); !s) {
      fail("check_args: " + s.reason);
    } else if (const cudaError_t status = run_once(first); status != cudaSuccess) {
      fail(std::string("run: ") + cudaGetErrorString(status));
    } else {
      widen(dt, wei.ptr, static_cast<float*>(got.ptr), wei_n);
      TD_CHECK_CUDA(cudaMemcpy(got_host.data(), got.ptr, got.bytes, cudaMemcpyDeviceToHost));
      double ref_norm = 0;
      run.rel_l2 = relative_l2(got_host, ref_host, &ref_norm);
      const double tolerance = relative_l2_tolerance(dt);
      if (!(run.rel_l2 <= tolerance) || ref_norm == 0) fail("relative L2 above " + std::to_string(tolerance));
      double dot = 0;
      for (size_t i = 0; i < got_host.size(); ++i) dot += double(got_host[i]) * ref_host[i];
      run.scale = dot / (ref_norm * ref_norm) - 1.0;
      if (k_batch > 1) {
        run.rerun = true;
        if (run_once(again) != cudaSuccess) {
          fail("rerun failed");
        } else if (std::memcmp(first.data(), again.data(), first.size()) != 0) {
          fail("rerun differs (not bit-identical)");
        }
      }
    }
    runs.push_back(run);
  }
  return runs;
}

}  // namespace tiledispatch::check
