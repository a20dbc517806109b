// GPU check: every instance of a set against the reference kernels on the problem battery; prints
// checked / passed / not supported / failed per direction and exits non-zero on any failure.
//
//   gpu_check [--no-large] [--verbose]
//
// The instance set is the hand-written one (hand_*.cu) unless built with -DTD_GENERATED_SET, which links the
// generated register_<dir>_instances() functions instead.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "battery.hpp"
#include "check_tensors.cuh"
#include "tiledispatch/reference/device.cuh"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/registry.hpp"

#ifdef TD_GENERATED_SET
namespace tiledispatch::generated {
void register_fwd_instances(Registry&);
void register_bwd_data_instances(Registry&);
void register_bwd_weight_instances(Registry&);
}  // namespace tiledispatch::generated
#else
namespace tiledispatch::hand {
void add_hand_fwd(InstanceList&);
void add_hand_bwd_data(InstanceList&);
void add_hand_bwd_weight(InstanceList&);
void add_hand_streamk(InstanceList&);
void add_hand_depthwise(InstanceList&);
}  // namespace tiledispatch::hand
#endif

namespace {

using namespace tiledispatch;
using check::DeviceBuffer;
using check::fill;
using check::relative_l2;
using check::widen;

struct Counts {
  int checked = 0, passed = 0, not_supported = 0, failed = 0;
};

const char* direction_name(ConvDirection d) { return to_token(d).data(); }

}  // namespace

int main(int argc, char** argv) {
  bool include_large = true, verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-large") == 0) {
      include_large = false;
    } else if (std::strcmp(argv[i], "--verbose") == 0) {
      verbose = true;
    } else {
      std::fprintf(stderr, "gpu_check: unknown option '%s'; accepted: --no-large, --verbose\n", argv[i]);
      return 2;
    }
  }
  Registry registry;
#ifdef TD_GENERATED_SET
  generated::register_fwd_instances(registry);
  generated::register_bwd_data_instances(registry);
  generated::register_bwd_weight_instances(registry);
#else
  {
    InstanceList list;
    hand::add_hand_fwd(list);
    hand::add_hand_bwd_data(list);
    hand::add_hand_bwd_weight(list);
    hand::add_hand_depthwise(list);
    hand::add_hand_streamk(list);
    registry.register_set(std::move(list));
  }
#endif
  const auto problems = check::battery(include_large);
  std::map<ConvDirection, Counts> counts;
  std::map<std::string, int> reasons;
  uint32_t seed = 1;
  for (const GroupedConvInstance* instance : registry.list()) {
    const Signature sig = instance->signature();
    for (const auto& entry : problems) {
      const ConvProblem& p = entry.problem;
      Counts& c = counts[sig.direction];
      const Support support = instance->is_supported(p);
      if (!support) {
        ++c.not_supported;
        ++reasons[std::string(to_token(sig.direction)) + ": " + support.reason];
        if (verbose) std::printf("[Not supported] %s | %s | %s\n", std::string(instance->name()).c_str(), entry.what, support.reason.c_str());
        continue;
      }
      const int elem = element_bytes(sig.dtype);
      DeviceBuffer in(size_t(p.input_elements()) * elem), wei(size_t(p.weight_elements()) * elem),
          out(size_t(p.output_elements()) * elem), work(instance->workspace_bytes(p, 3));  // enough for k_batch 1 and 3
      const int64_t result_count = reference::result_elements(sig.direction, p);
      DeviceBuffer ref(size_t(result_count) * 4), got(size_t(result_count) * 4);
      // Fresh random inputs; the tensor the direction writes is poisoned (0xFF bytes: NaN in every dtype).
      fill(sig.dtype, in.ptr, p.input_elements(), seed++);
      fill(sig.dtype, wei.ptr, p.weight_elements(), seed++);
      fill(sig.dtype, out.ptr, p.output_elements(), seed++);
      ConvArgs args;
      args.input = in.ptr, args.weight = wei.ptr, args.output = out.ptr;
      args.workspace = work.ptr, args.workspace_bytes = work.bytes;
      void* written = sig.direction == ConvDirection::kFwd       ? out.ptr
                      : sig.direction == ConvDirection::kBwdData ? in.ptr
                                                                 : wei.ptr;
      TD_CHECK_CUDA(reference::run(sig.direction, sig.dtype, p, args, static_cast<float*>(ref.ptr)));
      std::vector<float> ref_host(static_cast<size_t>(result_count)), got_host(static_cast<size_t>(result_count));
      TD_CHECK_CUDA(cudaMemcpy(ref_host.data(), ref.ptr, ref.bytes, cudaMemcpyDeviceToHost));
      // Implicit-GEMM bwd_weight is also checked with split-K (k_batch 3) on every supported problem; stream-K
      // splits GEMM K itself and depthwise its reduction into chunks, and both accept only k_batch 1.
      const bool split_k = sig.direction == ConvDirection::kBwdWeight && sig.family == KernelFamily::kImplicitGemm;
      const std::vector<int> k_batches = split_k ? std::vector<int>{1, 3} : std::vector<int>{1};
      for (int k_batch : k_batches) {
        args.k_batch = k_batch;
        args.workspace_bytes = instance->workspace_bytes(p, k_batch);
        ++c.checked;
        std::string failure;
        if (Support a = instance->check_args(p, args); !a) {
          failure = "check_args: " + a.reason;
        } else {
          TD_CHECK_CUDA(cudaMemset(written, 0xFF, sig.direction == ConvDirection::kFwd ? out.bytes
                                                  : sig.direction == ConvDirection::kBwdData ? in.bytes : wei.bytes));
          const cudaError_t launch = instance->run(p, args);
          const cudaError_t sync = cudaDeviceSynchronize();
          if (launch != cudaSuccess || sync != cudaSuccess) {
            failure = std::string("run: ") + cudaGetErrorString(launch != cudaSuccess ? launch : sync);
            if (sync != cudaSuccess) {
              std::printf("FAILED %s | %s | %s (sticky error: stopping)\n", std::string(instance->name()).c_str(), entry.what, failure.c_str());
              return 1;
            }
          } else {
            widen(sig.dtype, written, static_cast<float*>(got.ptr), result_count);
            TD_CHECK_CUDA(cudaMemcpy(got_host.data(), got.ptr, got.bytes, cudaMemcpyDeviceToHost));
            double ref_norm = 0;
            const double err = relative_l2(got_host, ref_host, &ref_norm);
            const double tol = relative_l2_tolerance(sig.dtype);
            if (!(err <= tol) || ref_norm == 0) {
              char buf[160];
              std::snprintf(buf, sizeof buf, "relative L2 %.3e > %.0e (|ref| %.3e)", err, tol, ref_norm);
              failure = buf;
            } else if (verbose) {
              std::printf("[Passed] %s | %s | k_batch %d | rel L2 %.2e\n", std::string(instance->name()).c_str(), entry.what, k_batch, err);
            }
          }
        }
        if (failure.empty()) {
          ++c.passed;
        } else {
          ++c.failed;
          std::printf("FAILED %s | %s | %s | k_batch %d | %s\n", std::string(instance->name()).c_str(), entry.what,
                      p.to_string().c_str(), k_batch, failure.c_str());
        }
      }
    }
  }
  std::printf("\nnot-supported reasons (count):\n");
  for (const auto& [reason, n] : reasons) std::printf("  %4d  %s\n", n, reason.c_str());
  std::printf("\n%-11s %8s %8s %14s %8s\n", "direction", "checked", "passed", "not supported", "failed");
  int total_failed = 0;
  for (auto d : {ConvDirection::kFwd, ConvDirection::kBwdData, ConvDirection::kBwdWeight}) {
    const Counts& c = counts[d];
    std::printf("%-11s %8d %8d %14d %8d\n", direction_name(d), c.checked, c.passed, c.not_supported, c.failed);
    total_failed += c.failed;
  }
  std::printf("instances: %zu, problems: %zu\n", registry.size(), problems.size());
  return total_failed == 0 ? 0 : 1;
}
