// Depthwise GPU check and bandwidth, all three directions: every hand depthwise instance (hand_depthwise.cu,
// hand_depthwise_bwd.cu) against the reference (reference/device.cuh) on a depthwise battery (3x3/5x5/7x7,
// strides 1 and 2, dilations 2 to 4 (run as residue sub-problems, at stride 1 or 2), odd sizes, N = 1, channel
// tails, padding beyond the filter radius, asymmetric right padding, large layers). The tensor a direction
// writes is poisoned (NaN) before every run, and so is a bwd_weight instance's workspace; bwd_weight runs twice
// and the two results must be bit-identical. Then each supported instance is timed on the large layers: median
// of 10 runs, each after an L2 flush, GB/s = ConvProblem::bytes (input + weight + output once) / time.
//
//   hand_depthwise_check [--no-timing] [--no-large]   (--no-large: skip the large layers, e.g. under memcheck)
//
// Exit status: 0 when every check passes, 1 on any failure, 2 for a bad option.
#include <cuda_runtime_api.h>

#include <algorithm>
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

namespace tiledispatch::hand {
void add_hand_depthwise(InstanceList&);
void add_hand_depthwise_bwd(InstanceList&);
}  // namespace tiledispatch::hand

namespace {

using namespace tiledispatch;
using check::DeviceBuffer;
using check::fill;
using check::relative_l2;
using check::widen;

struct Entry {
  const char* what;
  ConvProblem problem;
  bool timed;
};

ConvProblem depthwise(int64_t N, int64_t C, int64_t H, int64_t W, int64_t f, int64_t s, int64_t pad) {
  return check::conv2d(C, N, C, C, H, W, f, s, pad, 1);
}

struct Counts {
  int checked = 0, passed = 0, not_supported = 0, failed = 0;
};

// The tensor a direction writes (runtime/arguments.hpp).
DeviceBuffer& written(ConvDirection d, DeviceBuffer& in, DeviceBuffer& wei, DeviceBuffer& out) {
  return d == ConvDirection::kFwd ? out : d == ConvDirection::kBwdData ? in : wei;
}

// Dilation d along both axes with the "same" padding d x (f - 1) / 2: runs as d x d residue sub-problems.
ConvProblem dilated(int64_t N, int64_t C, int64_t H, int64_t W, int64_t f, int64_t d) {
  return check::conv2d(C, N, C, C, H, W, f, 1, d * (f / 2), d);
}

// 3D with a cubic filter; depth stride sd, pad pd and dilation dd may differ from the plane's (run time).
ConvProblem depthwise3d(int64_t N, int64_t C, int64_t D, int64_t H, int64_t W, int64_t f, int64_t s, int64_t pad,
                        int64_t sd, int64_t pd, int64_t dd = 1) {
  ConvProblem p = check::conv3d(C, N, C, C, D, H, W, f, s, pad, 1);
  p.stride[0] = sd, p.left_pad[0] = p.right_pad[0] = pd, p.dilation[0] = dd;
  return p;
}

std::vector<Entry> depthwise_battery() {
  ConvProblem same_s2 = depthwise(2, 32, 16, 16, 3, 2, 1);
  same_s2.right_pad = {0, 0, 0};  // TensorFlow "SAME" for an even input: pad only on the left/top
  ConvProblem dilated_w = depthwise(2, 16, 12, 14, 3, 1, 1);  // dilation along W only
  dilated_w.dilation = {1, 1, 2};
  dilated_w.left_pad = dilated_w.right_pad = {0, 1, 2};
  ConvProblem dilated_right = dilated(2, 24, 15, 18, 3, 2);  // no right pad: Ho = H - 2, Wo = W - 2
  dilated_right.right_pad = {0, 0, 0};
  ConvProblem dilated3d = depthwise3d(1, 16, 7, 9, 11, 3, 1, 2, 1, 2);  // dilation 2 on every axis
  dilated3d.dilation = {2, 2, 2};
  ConvProblem s2_dilated3d = depthwise3d(2, 24, 9, 12, 13, 3, 2, 2, 2, 2, 2);  // stride 2, dilation 2, every axis
  s2_dilated3d.dilation = {2, 2, 2};
  ConvProblem s2_dilated_h = depthwise(2, 16, 15, 13, 3, 1, 1);  // stride 2 x 1, dilation 2 x 1
  s2_dilated_h.stride = {1, 2, 1};
  s2_dilated_h.dilation = {1, 2, 1};
  s2_dilated_h.left_pad = s2_dilated_h.right_pad = {0, 2, 1};
  ConvProblem asymmetric3d = depthwise3d(2, 24, 6, 9, 8, 3, 2, 1, 2, 1);  // depth pad 1 left, 0 right
  asymmetric3d.right_pad[0] = 0;
  return {
      {"3x3 s1 N=2 C=32 10x10", depthwise(2, 32, 10, 10, 3, 1, 1), false},
      {"3x3 s1 N=1 C=40 odd 17x23 (channel tail)", depthwise(1, 40, 17, 23, 3, 1, 1), false},
      {"3x3 s1 N=3 C=6 odd 9x7", depthwise(3, 6, 9, 7, 3, 1, 1), false},
      {"3x3 s1 N=1 C=3 5x5 (C odd)", depthwise(1, 3, 5, 5, 3, 1, 1), false},
      {"3x3 s2 N=2 C=48 odd 15x15", depthwise(2, 48, 15, 15, 3, 2, 1), false},
      {"3x3 s2 N=1 C=16 9x33", depthwise(1, 16, 9, 33, 3, 2, 1), false},
      {"3x3 s2 pad 1/0 N=2 C=32 16x16", same_s2, false},
      {"5x5 s1 N=1 C=40 19x19", depthwise(1, 40, 19, 19, 5, 1, 2), false},
      {"5x5 s1 N=2 C=5 odd 11x13", depthwise(2, 5, 11, 13, 5, 1, 2), false},
      {"5x5 s2 N=2 C=24 13x13", depthwise(2, 24, 13, 13, 5, 2, 2), false},
      {"5x5 s2 N=1 C=72 odd 21x17", depthwise(1, 72, 21, 17, 5, 2, 2), false},
      {"7x7 s1 N=1 C=64 15x15", depthwise(1, 64, 15, 15, 7, 1, 3), false},
      {"7x7 s2 N=2 C=24 odd 19x21", depthwise(2, 24, 19, 21, 7, 2, 3), false},
      {"3x3 s1 pad 2 (> radius) N=2 C=24 11x13", depthwise(2, 24, 11, 13, 3, 1, 2), false},
      {"3x3 s2 pad 2 (> radius) N=1 C=40 odd 15x17", depthwise(1, 40, 15, 17, 3, 2, 2), false},
      {"3x3 s2 N=1 C=64 odd 7x9 (one tile)", depthwise(1, 64, 7, 9, 3, 2, 1), false},
      {"not depthwise: C/G=2", check::conv2d(8, 2, 16, 16, 12, 12, 3, 1, 1, 1), false},
      {"3x3 s1 dilation 2", check::conv2d(16, 1, 16, 16, 12, 12, 3, 1, 2, 2), false},
      {"3x3 dilation 2 N=2 C=32 odd 17x19", dilated(2, 32, 17, 19, 3, 2), false},
      {"3x3 dilation 3 N=1 C=40 odd 13x20 (channel tail)", dilated(1, 40, 13, 20, 3, 3), false},
      {"3x3 dilation 4 N=1 C=16 3x9 (empty residues)", dilated(1, 16, 3, 9, 3, 4), false},
      {"3x3 dilation 1x2 N=2 C=16 12x14", dilated_w, false},
      {"3x3 dilation 2 pad 2/0 N=2 C=24 15x18", dilated_right, false},
      {"5x5 dilation 2 N=2 C=40 23x21", dilated(2, 40, 23, 21, 5, 2), false},
      {"7x7 dilation 2 N=1 C=64 odd 29x27", dilated(1, 64, 29, 27, 7, 2), false},
      {"3x3 s2 dilation 2 N=1 C=32 odd 17x17", check::conv2d(32, 1, 32, 32, 17, 17, 3, 2, 2, 2), false},
      {"3x3 s2 dilation 2 N=2 C=48 28x30", check::conv2d(48, 2, 48, 48, 28, 30, 3, 2, 2, 2), false},
      {"3x3 s2 dilation 4 N=1 C=24 odd 21x19 (two residues an axis)", check::conv2d(24, 1, 24, 24, 21, 19, 3, 2, 4, 4),
       false},
      {"5x5 s2 dilation 2 N=2 C=40 23x26", check::conv2d(40, 2, 40, 40, 23, 26, 5, 2, 4, 2), false},
      {"3x3 stride 2x1 dilation 2x1 N=2 C=16 15x13", s2_dilated_h, false},
      {"3x3 s2 dilation 3 (not depthwise-supported: 2 does not divide 3)",
       check::conv2d(16, 1, 16, 16, 13, 13, 3, 2, 3, 3), false},
      {"3D 3x3x3 s1 N=2 C=32 5x10x10", depthwise3d(2, 32, 5, 10, 10, 3, 1, 1, 1, 1), false},
      {"3D 3x3x3 s1 N=1 C=40 odd 3x17x23 (channel tail)", depthwise3d(1, 40, 3, 17, 23, 3, 1, 1, 1, 1), false},
      {"3D 3x3x3 s1 N=3 C=6 D=1 9x7 (depth pad only)", depthwise3d(3, 6, 1, 9, 7, 3, 1, 1, 1, 1), false},
      {"3D 3x3x3 s2 N=2 C=48 odd 7x15x15", depthwise3d(2, 48, 7, 15, 15, 3, 2, 1, 2, 1), false},
      {"3D 3x3x3 s1x2x2 N=2 C=32 8x16x17", depthwise3d(2, 32, 8, 16, 17, 3, 2, 1, 1, 1), false},
      {"3D 3x3x3 s2x1x1 depth pad 0 N=1 C=16 9x11x12", depthwise3d(1, 16, 9, 11, 12, 3, 1, 1, 2, 0), false},
      {"3D 3x3x3 s2 depth pad 1/0 N=2 C=24 6x9x8", asymmetric3d, false},
      {"3D 3x3x3 depth pad 2 (> radius) N=1 C=32 4x9x9", depthwise3d(1, 32, 4, 9, 9, 3, 1, 1, 1, 2), false},
      {"3D 3x3x3 dilation 2 N=1 C=16 7x9x11", dilated3d, false},
      {"3D 3x3x3 s2 dilation 2 N=2 C=24 9x12x13", s2_dilated3d, false},
      {"3D 3x3x3 depth dilation 3 N=2 C=32 9x8x8", depthwise3d(2, 32, 9, 8, 8, 3, 1, 1, 1, 3, 3), false},
      {"3D 5x5x5 s1 N=2 C=40 odd 6x13x11", depthwise3d(2, 40, 6, 13, 11, 5, 1, 2, 1, 2), false},
      {"3D 5x5x5 s2 N=1 C=32 7x14x13", depthwise3d(1, 32, 7, 14, 13, 5, 2, 2, 2, 2), false},
      {"3D 7x7x7 s1 N=1 C=32 8x15x13", depthwise3d(1, 32, 8, 15, 13, 7, 1, 3, 1, 3), false},
      {"3D 7x7x7 s2 N=2 C=24 odd 9x17x19", depthwise3d(2, 24, 9, 17, 19, 7, 2, 3, 2, 3), false},
      {"3D not depthwise: C/G=2", check::conv3d(8, 1, 16, 16, 4, 6, 6, 3, 1, 1, 1), false},
      {"large 3x3 s1 N=32 C=32 112x112", depthwise(32, 32, 112, 112, 3, 1, 1), true},
      {"MobileNetV2 3x3 s1 N=32 C=144 56x56", depthwise(32, 144, 56, 56, 3, 1, 1), true},
      {"MobileNetV2 3x3 s2 N=32 C=144 56x56", depthwise(32, 144, 56, 56, 3, 2, 1), true},
      {"dev_suite depthwise_3x3_56 N=32 C=192", depthwise(32, 192, 56, 56, 3, 1, 1), true},
      {"dev_suite depthwise_5x5_s2 N=32 C=240", depthwise(32, 240, 56, 56, 5, 2, 2), true},
      {"5x5 s1 N=32 C=240 28x28", depthwise(32, 240, 28, 28, 5, 1, 2), true},
      {"7x7 s1 N=32 C=128 56x56", depthwise(32, 128, 56, 56, 7, 1, 3), true},
      {"DeepLab 3x3 dilation 2 N=32 C=144 56x56", dilated(32, 144, 56, 56, 3, 2), true},
      {"DeepLab 3x3 dilation 2 N=32 C=576 33x33", dilated(32, 576, 33, 33, 3, 2), true},
      {"DeepLab 3x3 dilation 4 N=32 C=960 33x33", dilated(32, 960, 33, 33, 3, 4), true},
      {"3x3 s2 dilation 2 N=32 C=144 112x112", check::conv2d(144, 32, 144, 144, 112, 112, 3, 2, 2, 2), true},
      {"X3D 3x3x3 s1 N=8 C=216 16x28x28", depthwise3d(8, 216, 16, 28, 28, 3, 1, 1, 1, 1), true},
      {"X3D 3x3x3 s1x2x2 N=8 C=96 16x56x56", depthwise3d(8, 96, 16, 56, 56, 3, 2, 1, 1, 1), true},
      {"5x5x5 s1 N=4 C=192 8x28x28", depthwise3d(4, 192, 8, 28, 28, 5, 1, 2, 1, 2), true},
      {"7x7x7 s1 N=4 C=128 8x28x28", depthwise3d(4, 128, 8, 28, 28, 7, 1, 3, 1, 3), true},
  };
}

// Median kernel time in ms of `runs` launches, each after a flush of L2 (a 256 MiB memset).
float time_ms(const GroupedConvInstance& instance, const ConvProblem& p, const ConvArgs& args, DeviceBuffer& flush) {
  constexpr int kRuns = 10;
  cudaEvent_t start, stop;
  TD_CHECK_CUDA(cudaEventCreate(&start));
  TD_CHECK_CUDA(cudaEventCreate(&stop));
  TD_CHECK_CUDA(instance.run(p, args));  // warm-up
  std::vector<float> times;
  for (int i = 0; i < kRuns; ++i) {
    TD_CHECK_CUDA(cudaMemsetAsync(flush.ptr, i, flush.bytes));
    TD_CHECK_CUDA(cudaEventRecord(start));
    TD_CHECK_CUDA(instance.run(p, args));
    TD_CHECK_CUDA(cudaEventRecord(stop));
    TD_CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    TD_CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  TD_CHECK_CUDA(cudaEventDestroy(start));
  TD_CHECK_CUDA(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[kRuns / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool timing = true, include_large = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-timing") == 0) {
      timing = false;
    } else if (std::strcmp(argv[i], "--no-large") == 0) {
      include_large = false;
    } else {
      std::fprintf(stderr, "hand_depthwise_check: unknown option '%s'; accepted: --no-timing, --no-large\n",
                   argv[i]);
      return 2;
    }
  }
  Registry registry;
  {
    InstanceList list;
    hand::add_hand_depthwise(list);
    hand::add_hand_depthwise_bwd(list);
    registry.register_set(std::move(list));
  }
  int device = 0;
  cudaDeviceProp prop{};
  TD_CHECK_CUDA(cudaGetDevice(&device));
  TD_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s\n", prop.name);
  std::vector<Entry> battery = depthwise_battery();
  if (!include_large) battery.erase(std::remove_if(battery.begin(), battery.end(), [](const Entry& e) { return e.timed; }),
                                    battery.end());
  std::map<ConvDirection, Counts> counts;
  std::map<std::string, int> reasons;
  // Best GB/s per (direction, problem, dtype) and the instance that reached it.
  std::map<std::string, std::pair<double, std::string>> best;
  DeviceBuffer flush(size_t(256) << 20);
  uint32_t seed = 1;
  for (const GroupedConvInstance* instance : registry.list()) {
    const Signature sig = instance->signature();
    const DataType dtype = sig.dtype;
    const std::string name(instance->name());
    const std::string direction(to_token(sig.direction));
    int instance_passed = 0;
    for (const Entry& e : battery) {
      const ConvProblem& p = e.problem;
      Counts& count = counts[sig.direction];
      if (Support s = instance->is_supported(p); !s) {
        ++count.not_supported;
        ++reasons[direction + ": " + s.reason];
        continue;
      }
      ++count.checked;
      const int elem = element_bytes(dtype);
      DeviceBuffer in(size_t(p.input_elements()) * elem), wei(size_t(p.weight_elements()) * elem),
          out(size_t(p.output_elements()) * elem), work(instance->workspace_bytes(p, 1));
      const int64_t result_count = reference::result_elements(sig.direction, p);
      DeviceBuffer ref(size_t(result_count) * 4), got(size_t(result_count) * 4);
      // Fresh random values in all three tensors: the one the direction writes is poisoned before each run.
      fill(dtype, in.ptr, p.input_elements(), seed++);
      fill(dtype, wei.ptr, p.weight_elements(), seed++);
      fill(dtype, out.ptr, p.output_elements(), seed++);
      DeviceBuffer& result = written(sig.direction, in, wei, out);
      ConvArgs args;
      args.input = in.ptr, args.weight = wei.ptr, args.output = out.ptr;
      args.workspace = work.ptr, args.workspace_bytes = work.bytes;
      TD_CHECK_CUDA(reference::run(sig.direction, dtype, p, args, static_cast<float*>(ref.ptr)));
      std::string failure;
      // bwd_weight twice: the deterministic reduction must give the same bits (runs[0] vs runs[1]).
      const int runs = sig.direction == ConvDirection::kBwdWeight ? 2 : 1;
      std::vector<std::vector<unsigned char>> bits(runs, std::vector<unsigned char>(result.bytes));
      if (Support a = instance->check_args(p, args); !a) {
        failure = "check_args: " + a.reason;
      } else {
        for (int run = 0; run < runs && failure.empty(); ++run) {
          TD_CHECK_CUDA(cudaMemset(result.ptr, 0xFF, result.bytes));  // NaN in every dtype: unwritten outputs fail
          TD_CHECK_CUDA(cudaMemset(work.ptr, 0xFF, work.bytes));      // so do unwritten partials
          const cudaError_t launch = instance->run(p, args);
          const cudaError_t sync = cudaDeviceSynchronize();
          if (launch != cudaSuccess || sync != cudaSuccess) {
            std::printf("FAILED %s | %s | run: %s\n", name.c_str(), e.what,
                        cudaGetErrorString(launch != cudaSuccess ? launch : sync));
            if (sync != cudaSuccess) return 1;  // sticky error
            failure = "launch failed";
            break;
          }
          TD_CHECK_CUDA(cudaMemcpy(bits[run].data(), result.ptr, result.bytes, cudaMemcpyDeviceToHost));
        }
        if (failure.empty()) {
          std::vector<float> ref_host(static_cast<size_t>(result_count)), got_host(static_cast<size_t>(result_count));
          widen(dtype, result.ptr, static_cast<float*>(got.ptr), result_count);
          TD_CHECK_CUDA(cudaMemcpy(ref_host.data(), ref.ptr, ref.bytes, cudaMemcpyDeviceToHost));
          TD_CHECK_CUDA(cudaMemcpy(got_host.data(), got.ptr, got.bytes, cudaMemcpyDeviceToHost));
          const double err = relative_l2(got_host, ref_host);
          // fp32 depthwise is plain FMA, no TF32; bwd_weight sums up to N*Ho*Wo terms per weight, in another
          // order than the reference's fp32 loop.
          const double tol = dtype != DataType::kFp32 ? 1e-2 : sig.direction == ConvDirection::kBwdWeight ? 1e-4 : 1e-5;
          if (!(err <= tol)) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "relative L2 %.3e > %.0e", err, tol);
            failure = buf;
          } else if (runs == 2 && bits[0] != bits[1]) {
            failure = "two runs differ bitwise (the reduction is not deterministic)";
          }
        }
      }
      if (!failure.empty()) {
        ++count.failed;
        std::printf("FAILED %s | %s | %s | %s\n", name.c_str(), e.what, p.to_string().c_str(), failure.c_str());
        continue;
      }
      ++count.passed;
      ++instance_passed;
      if (timing && e.timed) {
        const float ms = time_ms(*instance, p, args, flush);
        const double gbs = p.bytes(dtype) / (double(ms) * 1e6);
        std::printf("TIME %-10s %-40s | %-40s | %8.1f us | %7.1f GB/s\n", direction.c_str(), name.c_str(), e.what,
                    ms * 1e3, gbs);
        auto& slot = best[direction + " " + std::string(e.what) + " " + std::string(to_token(dtype))];
        if (gbs > slot.first) slot = {gbs, name};
      }
    }
    std::printf("PASSED %s on %d problems\n", name.c_str(), instance_passed);
  }
  std::printf("\nnot-supported reasons (count):\n");
  for (const auto& [reason, n] : reasons) std::printf("  %4d  %s\n", n, reason.c_str());
  if (!best.empty()) {
    std::printf("\nbest per direction, problem and dtype (GB/s, device peak ~3350 H100 SXM / ~4800 H200):\n");
    for (const auto& [what, b] : best) std::printf("  %-64s %7.1f  %s\n", what.c_str(), b.first, b.second.c_str());
  }
  std::printf("\n%-11s %8s %8s %14s %8s\n", "direction", "checked", "passed", "not supported", "failed");
  Counts total;
  for (auto d : {ConvDirection::kFwd, ConvDirection::kBwdData, ConvDirection::kBwdWeight}) {
    const Counts& c = counts[d];
    std::printf("%-11s %8d %8d %14d %8d\n", to_token(d).data(), c.checked, c.passed, c.not_supported, c.failed);
    total.checked += c.checked, total.passed += c.passed, total.not_supported += c.not_supported;
    total.failed += c.failed;
  }
  std::printf("\ndepthwise: instances %zu, problems %zu, checked %d, passed %d, not supported %d, failed %d\n",
              registry.size(), battery.size(), total.checked, total.passed, total.not_supported, total.failed);
  return total.failed == 0 ? 0 : 1;
}
