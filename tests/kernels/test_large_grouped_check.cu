// Tensors of more than 2^31 elements on issue 10's kernels (issue 10, "Correctness"): the direct merged-group
// kernels (fwd at C/G 8 and 16 and in 3D, bwd_data at stride 1 and by stride phases at stride 2, bwd_weight at
// C/G 8 and 16; fp32 fwd, bwd_data by stride phases and bwd_weight), merged groups by diagonal blocks (fwd) and paired groups (bwd_data) on split_image implicit
// GEMMs, the depthwise kernels of the three directions in 2D and 3D (fp32 forward too), and stride-2 bwd_data by
// stride phases on a split_image implicit GEMM. Each case's largest tensor holds more than 2^31 elements; the instance
// must support the problem, write every element of its poisoned result (0xFF: NaN in every dtype) and match the
// reference over the whole result (relative L2, reduced on the device). fwd and bwd_data take the GPU reference
// (reference/device.cuh, 64-bit indexing) and float64 host values at result elements whose reads lie beyond
// 2^31; bwd_weight, whose naive reference is a warp per weight over every pixel (hours at this size), takes a
// blocked fp32 reference of this file, checked first against the naive one on small problems. bwd_weight runs
// at its largest automatic split-K factor, twice: the two results must be bit-identical.
// Last line: "<n> checked, <f> failures".
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../bench/gpu_check/battery.hpp"
#include "../../bench/gpu_check/bwd_weight_runs.cuh"
#include "../../bench/gpu_check/check_tensors.cuh"
#include "../../bench/gpu_check/hand_depthwise_traits.hpp"
#include "../../bench/gpu_check/hand_merged_groups.hpp"
#include "tiledispatch/reference/device.cuh"

namespace tiledispatch::hand {
// clang-format off
//      name                            dir        nd dtype  spec      tile          waves   warp tile   vec     pipeline  scheduler   epilogue   dsb    gm 2st   expl   split  sk     wg
TD_HAND(lg_bwdd_fp16_split_image,       kBwdData,   2, kFp16, kDefault, 128,64,32,    2,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, true,  false, 1)
TD_HAND(lg_fwd_fp16_gm2_diag_split_image, kFwd,       2, kFp16, kDefault, 128,64,64,    2,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kDefault,  false, 2, false, false, true,  false, 1)
TD_HAND(lg_bwdd_fp16_gm2_diag_split_image, kBwdData,  2, kFp16, kDefault, 128,32,32,    2,1,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kDefault,  false, 2, false, false, true,  false, 1)
TD_HAND(lg_bwdw_fp16_gm2_16x64x64,      kBwdWeight, 2, kFp16, kDefault, 16,64,64,     1,2,1,  16,16,32,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 2, false, false, false, false, 1)
TD_HAND(lg_bwdw_fp16_gm4_64x64x64,      kBwdWeight, 2, kFp16, kDefault, 64,64,64,     1,2,1,  64,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 4, false, false, false, false, 1)
TD_HAND(lg_bwdw_fp32_gm8_64x64x64,      kBwdWeight, 2, kFp32, kDefault, 64,64,64,     2,2,1,  32,32,8,    4,4,4,  kMem,     kIntrawave, kCShuffle, false, 8, false, false, false, false, 1)
//                   name                                 class                        dir        dtype  tile    f  stride pad   nb sub   in out
TD_HAND_DW_INSTANCE(lg_dw_fp16_16x16_f3s1_nb8_sub1x4_v8,  DepthwiseInstance,           kFwd,      kFp16, 16, 16, 3, 1, 1, 1, 1, 8, 1, 4, 8, 8)
TD_HAND_DW_INSTANCE(lg_dw_fp32_16x16_f3s1_nb2_sub2x4_v8,  DepthwiseInstance,           kFwd,      kFp32, 16, 16, 3, 1, 1, 1, 1, 2, 2, 4, 8, 8)
TD_HAND_DW_INSTANCE(lg_dwd_fp16_16x32_f3s2_nb4_sub2x4_v8, DepthwiseBwdDataInstance,    kBwdData,  kFp16, 16, 32, 3, 2, 2, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DW_INSTANCE(lg_dww_fp16_16x16_f3s1_nb4_sub1x4_v8, DepthwiseBwdWeightInstance,  kBwdWeight, kFp16, 16, 16, 3, 1, 1, 1, 1, 4, 1, 4, 8, 8)
//                      name                                  class                       dir         nd dtype  tile   f  stride pad   nb sub   in out
TD_HAND_DW_INSTANCE_ND(lg_dw3_fp16_8x16_f3s1_nb4_sub1x4_v8,  DepthwiseInstance,          kFwd,       3, kFp16, 8, 16, 3, 1, 1, 1, 1, 4, 1, 4, 8, 8)
TD_HAND_DW_INSTANCE_ND(lg_dwd3_fp16_8x16_f3s1_nb4_sub2x4_v8, DepthwiseBwdDataInstance,   kBwdData,   3, kFp16, 8, 16, 3, 1, 1, 1, 1, 4, 2, 4, 8, 8)
TD_HAND_DW_INSTANCE_ND(lg_dww3_fp16_16x16_f3s1_nb4_sub2x4_v4, DepthwiseBwdWeightInstance, kBwdWeight, 3, kFp16, 16, 16, 3, 1, 1, 1, 1, 4, 2, 4, 4, 4)
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;

constexpr int64_t kTwoPow31 = int64_t(1) << 31;

// Weight gradient in fp32, blocked: a block takes one group and one run of output pixels, each thread some of
// the group's weights (k, tap, c); the block's partial sums go to partial[run][g][weight]. The host adds the
// runs in float64.
template <class T>
__global__ void bwd_weight_blocked(reference::Geometry s, const T* in, const T* dout, float* partial,
                                   int64_t pixels_per_run) {
  const int64_t g = blockIdx.y, run = blockIdx.x;
  const int64_t taps = s.filter[0] * s.filter[1] * s.filter[2], per_group = s.Kg * taps * s.Cg;
  const int64_t pixels = s.N * s.out[0] * s.out[1] * s.out[2];
  const int64_t first = run * pixels_per_run, last = min(pixels, first + pixels_per_run);
  for (int64_t w = threadIdx.x; w < per_group; w += blockDim.x) {
    int64_t t = w;
    const int64_t c = t % s.Cg; t /= s.Cg;
    const int64_t x = t % s.filter[2]; t /= s.filter[2];
    const int64_t y = t % s.filter[1]; t /= s.filter[1];
    const int64_t z = t % s.filter[0];
    const int64_t k = t / s.filter[0];
    float acc = 0.f;
    for (int64_t q = first; q < last; ++q) {
      int64_t r = q;
      const int64_t ow = r % s.out[2]; r /= s.out[2];
      const int64_t oh = r % s.out[1]; r /= s.out[1];
      const int64_t od = r % s.out[0];
      const int64_t n = r / s.out[0];
      const int64_t di = od * s.stride[0] - s.pad[0] + z * s.dilation[0];
      const int64_t hi = oh * s.stride[1] - s.pad[1] + y * s.dilation[1];
      const int64_t wi = ow * s.stride[2] - s.pad[2] + x * s.dilation[2];
      if (di < 0 || di >= s.in[0] || hi < 0 || hi >= s.in[1] || wi < 0 || wi >= s.in[2]) continue;
      acc += reference::to_float(dout[(q * s.G + g) * s.Kg + k]) *
             reference::to_float(in[((((n * s.in[0] + di) * s.in[1] + hi) * s.in[2] + wi) * s.G + g) * s.Cg + c]);
    }
    partial[(run * s.G + g) * per_group + w] = acc;
  }
}

// The blocked weight gradient of `p` (reads args.input and args.output), in GKZYXC order.
std::vector<double> blocked_bwd_weight(DataType dt, const ConvProblem& p, const ConvArgs& args) {
  const reference::Geometry s = reference::make_geometry(p);
  const int64_t per_group = p.weight_elements() / p.G;
  const int64_t pixels = p.N * p.output()[0] * p.output()[1] * p.output()[2];
  const int64_t runs = std::min<int64_t>(pixels, std::max<int64_t>(1, 16384 / p.G));
  const int64_t pixels_per_run = (pixels + runs - 1) / runs;
  check::DeviceBuffer partial(size_t(runs * p.G * per_group) * 4);
  const dim3 grid(unsigned(runs), unsigned(p.G));
  const int threads = int(std::min<int64_t>(256, (per_group + 31) / 32 * 32));
  float* out = static_cast<float*>(partial.ptr);
  switch (dt) {
    case DataType::kFp16:
      bwd_weight_blocked<<<grid, threads>>>(s, static_cast<const __half*>(args.input),
                                            static_cast<const __half*>(args.output), out, pixels_per_run);
      break;
    case DataType::kBf16:
      bwd_weight_blocked<<<grid, threads>>>(s, static_cast<const __nv_bfloat16*>(args.input),
                                            static_cast<const __nv_bfloat16*>(args.output), out, pixels_per_run);
      break;
    case DataType::kFp32:
      bwd_weight_blocked<<<grid, threads>>>(s, static_cast<const float*>(args.input),
                                            static_cast<const float*>(args.output), out, pixels_per_run);
      break;
  }
  TD_CHECK_CUDA(cudaGetLastError());
  std::vector<float> host(size_t(runs * p.G * per_group));
  TD_CHECK_CUDA(cudaMemcpy(host.data(), partial.ptr, host.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<double> sum(size_t(p.weight_elements()), 0.0);
  for (int64_t run = 0; run < runs; ++run) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += host[size_t(run) * sum.size() + i];
  }
  return sum;
}

// Sums for the relative L2 error of `got` (the kernel's dtype) against `ref` over n elements, and the count of
// non-finite results (poison left unwritten), one triple per block.
template <class T>
__global__ void compare_partials(const T* got, const float* ref, int64_t n, double* partials) {
  __shared__ double sums[3][256];
  double diff = 0, norm = 0, bad = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = reference::to_float(got[i]);
    if (!isfinite(v)) {
      bad += 1;
      continue;
    }
    const double d = double(v) - double(ref[i]);
    diff += d * d;
    norm += double(ref[i]) * double(ref[i]);
  }
  sums[0][threadIdx.x] = diff, sums[1][threadIdx.x] = norm, sums[2][threadIdx.x] = bad;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) {
      for (int j = 0; j < 3; ++j) sums[j][threadIdx.x] += sums[j][threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    for (int j = 0; j < 3; ++j) partials[blockIdx.x * 3 + j] = sums[j][0];
  }
}

struct Comparison {
  double rel_l2 = INFINITY;
  int64_t non_finite = 0;
};

Comparison compare_on_device(DataType dt, const void* got, const float* ref, int64_t n) {
  constexpr int kBlocks = 4096;
  check::DeviceBuffer partials(size_t(kBlocks) * 3 * sizeof(double));
  double* out = static_cast<double*>(partials.ptr);
  switch (dt) {
    case DataType::kFp16: compare_partials<<<kBlocks, 256>>>(static_cast<const __half*>(got), ref, n, out); break;
    case DataType::kBf16:
      compare_partials<<<kBlocks, 256>>>(static_cast<const __nv_bfloat16*>(got), ref, n, out);
      break;
    case DataType::kFp32: compare_partials<<<kBlocks, 256>>>(static_cast<const float*>(got), ref, n, out); break;
  }
  TD_CHECK_CUDA(cudaGetLastError());
  std::vector<double> host(size_t(kBlocks) * 3);
  TD_CHECK_CUDA(cudaMemcpy(host.data(), partials.ptr, host.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double diff = 0, norm = 0, bad = 0;
  for (int b = 0; b < kBlocks; ++b) diff += host[b * 3], norm += host[b * 3 + 1], bad += host[b * 3 + 2];
  Comparison c;
  c.non_finite = int64_t(bad);
  if (c.non_finite == 0 && norm > 0) c.rel_l2 = std::sqrt(diff / norm);
  return c;
}

// An element of dtype `dt` at `raw` (host memory) as a double.
double decode(DataType dt, const unsigned char* raw) {
  switch (dt) {
    case DataType::kFp16: {
      __half h;
      std::memcpy(&h, raw, 2);
      return double(__half2float(h));
    }
    case DataType::kBf16: {
      __nv_bfloat16 b;
      std::memcpy(&b, raw, 2);
      return double(__bfloat162float(b));
    }
    case DataType::kFp32: {
      float f;
      std::memcpy(&f, raw, 4);
      return double(f);
    }
  }
  return NAN;
}

// One element of a device tensor as a double.
double value_at(DataType dt, const void* tensor, int64_t index) {
  const int bytes = element_bytes(dt);
  unsigned char raw[4];
  TD_CHECK_CUDA(cudaMemcpy(raw, static_cast<const unsigned char*>(tensor) + index * bytes, size_t(bytes),
                           cudaMemcpyDeviceToHost));
  return decode(dt, raw);
}

// The float64 value of result element `index` of a fwd or bwd_data problem (NDHWGK or NDHWGC) from the device
// tensors; *max_read gets the largest offset of the read tensor it touched.
double exact_at(ConvDirection dir, DataType dt, const ConvProblem& p, const ConvArgs& a, int64_t index,
                int64_t* max_read) {
  const auto o = p.output();
  const int64_t G = p.G, Kg = p.K / p.G, Cg = p.C / p.G;
  const bool fwd = dir == ConvDirection::kFwd;
  const auto& extent = fwd ? o : p.input;
  int64_t t = index;
  const int64_t ch = t % (fwd ? Kg : Cg);
  t /= fwd ? Kg : Cg;
  const int64_t g = t % G;
  t /= G;
  const int64_t w = t % extent[2];
  t /= extent[2];
  const int64_t h = t % extent[1];
  t /= extent[1];
  const int64_t d = t % extent[0];
  const int64_t n = t / extent[0];
  double sum = 0;
  for (int64_t z = 0; z < p.filter[0]; ++z)
    for (int64_t y = 0; y < p.filter[1]; ++y)
      for (int64_t x = 0; x < p.filter[2]; ++x) {
        const int64_t tap[3] = {z, y, x}, at[3] = {d, h, w};
        int64_t other[3];
        bool inside = true;
        for (int i = 0; i < 3; ++i) {
          if (fwd) {
            other[i] = at[i] * p.stride[i] - p.left_pad[i] + tap[i] * p.dilation[i];
            inside = inside && other[i] >= 0 && other[i] < p.input[i];
          } else {
            const int64_t q = at[i] + p.left_pad[i] - tap[i] * p.dilation[i];
            other[i] = q / p.stride[i];
            inside = inside && q >= 0 && q % p.stride[i] == 0 && other[i] < o[i];
          }
        }
        if (!inside) continue;
        const auto& read_extent = fwd ? p.input : o;
        const int64_t pixel = ((n * read_extent[0] + other[0]) * read_extent[1] + other[1]) * read_extent[2] + other[2];
        for (int64_t j = 0; j < (fwd ? Cg : Kg); ++j) {
          const int64_t read = (pixel * G + g) * (fwd ? Cg : Kg) + j;
          const int64_t k = fwd ? ch : j, c = fwd ? j : ch;
          const int64_t weight = ((((g * Kg + k) * p.filter[0] + z) * p.filter[1] + y) * p.filter[2] + x) * Cg + c;
          *max_read = std::max(*max_read, read);
          sum += value_at(dt, fwd ? a.input : a.output, read) * value_at(dt, a.weight, weight);
        }
      }
  return sum;
}

struct Counts {
  int checked = 0, failures = 0;
  void verdict(bool ok, const std::string& what) {
    ++checked;
    if (!ok) ++failures;
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  }
};

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// The blocked bwd_weight reference against the naive one on small problems of each kind this file checks.
void check_blocked_reference(Counts& counts) {
  const std::vector<ConvProblem> problems = {check::conv2d(4, 2, 32, 32, 9, 11, 3, 1, 1, 1),
                                             check::conv2d(4, 3, 64, 64, 13, 10, 3, 2, 1, 1),
                                             check::conv2d(24, 2, 24, 24, 15, 9, 3, 1, 1, 1)};
  uint32_t seed = 3;
  for (const ConvProblem& p : problems) {
    check::RunBuffers b;
    const ConvArgs args = b.allocate(p, DataType::kBf16, p.weight_elements(), 0);
    check::fill(DataType::kBf16, b.in, p.input_elements(), seed++);
    check::fill(DataType::kBf16, b.out, p.output_elements(), seed++);
    TD_CHECK_CUDA(reference::run(ConvDirection::kBwdWeight, DataType::kBf16, p, args, b.ref));
    std::vector<float> naive(size_t(p.weight_elements()));
    TD_CHECK_CUDA(cudaMemcpy(naive.data(), b.ref, naive.size() * 4, cudaMemcpyDeviceToHost));
    const std::vector<double> blocked = blocked_bwd_weight(DataType::kBf16, p, args);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < naive.size(); ++i) {
      diff = std::max(diff, std::fabs(blocked[i] - naive[i]));
      norm = std::max(norm, std::fabs(double(naive[i])));
    }
    counts.verdict(diff <= 1e-4 * norm && norm > 0,
                   fmt("blocked bwd_weight reference = naive reference (G %.0f, C/G %.0f): max difference %.2e",
                       double(p.G), double(p.C / p.G), diff));
  }
}

struct Case {
  std::string what;
  std::unique_ptr<GroupedConvInstance> instance;
  ConvProblem problem;
};

template <class Instance>
Case make_case(const std::string& what, const ConvProblem& p) {
  return {what, std::make_unique<Instance>(), p};
}

void check_case(const Case& c, int sms, uint32_t& seed, Counts& counts) {
  const GroupedConvInstance& inst = *c.instance;
  const ConvProblem& p = c.problem;
  const ConvDirection dir = inst.signature().direction;
  const DataType dt = inst.signature().dtype;
  const std::string label = c.what + " | " + std::string(inst.name());
  const int64_t largest = std::max({p.input_elements(), p.output_elements()});
  counts.verdict(largest > kTwoPow31, label + ": largest tensor " + std::to_string(largest) + " elements > 2^31");
  if (Support s = inst.is_supported(p); !s) {
    counts.verdict(false, label + ": not supported: " + s.reason);
    return;
  }
  const int64_t res_n = reference::result_elements(dir, p);
  const int k_batch = dir == ConvDirection::kBwdWeight ? inst.split_k_candidates(p, sms).back() : 1;
  check::RunBuffers b;
  ConvArgs args = b.allocate(p, dt, dir == ConvDirection::kBwdWeight ? 0 : res_n, inst.workspace_bytes(p, k_batch));
  args.k_batch = k_batch;
  void* result = dir == ConvDirection::kFwd ? b.out : dir == ConvDirection::kBwdData ? b.in : b.wei;
  const size_t result_bytes = size_t(res_n) * size_t(element_bytes(dt));
  check::fill(dt, b.wei, p.weight_elements(), seed++);
  if (dir != ConvDirection::kBwdData) check::fill(dt, b.in, p.input_elements(), seed++);
  if (dir != ConvDirection::kFwd) check::fill(dt, b.out, p.output_elements(), seed++);
  std::vector<double> blocked;
  if (dir == ConvDirection::kBwdWeight) {
    blocked = blocked_bwd_weight(dt, p, args);
  } else {
    TD_CHECK_CUDA(reference::run(dir, dt, p, args, b.ref));
  }
  const auto run_once = [&]() {
    TD_CHECK_CUDA(cudaMemset(result, 0xFF, result_bytes));
    if (args.workspace_bytes > 0) TD_CHECK_CUDA(cudaMemset(args.workspace, 0xFF, args.workspace_bytes));
    const cudaError_t launch = inst.run(p, args);
    const cudaError_t sync = cudaDeviceSynchronize();
    if (sync != cudaSuccess) {
      std::printf("FAIL %s: %s (sticky error: stopping)\n", label.c_str(), cudaGetErrorString(sync));
      std::exit(1);
    }
    return launch;
  };
  if (Support s = inst.check_args(p, args); !s) {
    counts.verdict(false, label + ": check_args: " + s.reason);
    return;
  }
  if (const cudaError_t launch = run_once(); launch != cudaSuccess) {
    counts.verdict(false, label + ": run: " + cudaGetErrorString(launch));
    return;
  }
  if (dir == ConvDirection::kBwdWeight) {
    const int bytes = element_bytes(dt);
    std::vector<unsigned char> first(result_bytes), again(result_bytes);
    TD_CHECK_CUDA(cudaMemcpy(first.data(), result, result_bytes, cudaMemcpyDeviceToHost));
    double diff = 0, norm = 0;
    int64_t unwritten = 0;
    for (int64_t i = 0; i < res_n; ++i) {
      const double v = decode(dt, first.data() + i * bytes);
      if (!std::isfinite(v)) ++unwritten;
      diff += (v - blocked[size_t(i)]) * (v - blocked[size_t(i)]);
      norm += blocked[size_t(i)] * blocked[size_t(i)];
    }
    const double rel = unwritten == 0 && norm > 0 ? std::sqrt(diff / norm) : INFINITY;
    counts.verdict(rel <= 1e-2, label + fmt(": k_batch %.0f, whole result vs blocked reference: relative L2 %.3e, "
                                            "%.0f unwritten", double(k_batch), rel, double(unwritten)));
    const cudaError_t rerun = run_once();
    if (rerun == cudaSuccess) TD_CHECK_CUDA(cudaMemcpy(again.data(), result, result_bytes, cudaMemcpyDeviceToHost));
    counts.verdict(rerun == cudaSuccess && first == again, label + ": a second run gives the same bits");
    return;
  }
  const Comparison cmp = compare_on_device(dt, result, b.ref, res_n);
  counts.verdict(cmp.non_finite == 0 && cmp.rel_l2 <= 1e-2,
                 label + fmt(": whole result vs reference: relative L2 %.3e, %.0f unwritten", cmp.rel_l2,
                             double(cmp.non_finite)));
  // float64 values at the result's last elements (the last pixel's channels, and a pixel half a row before),
  // whose reads lie at the far end of the read tensor
  int64_t max_read = 0;
  int spot_failures = 0;
  const int64_t channels = dir == ConvDirection::kFwd ? p.K : p.C;
  const int64_t row = channels * (dir == ConvDirection::kFwd ? p.output()[2] : p.input[2]);
  for (const int64_t back : {int64_t(1), int64_t(2), channels / 2 + 1, channels, row / 2 + channels / 3}) {
    const int64_t at = res_n - back;
    const double exact = exact_at(dir, dt, p, args, at, &max_read);
    float ref = 0;
    TD_CHECK_CUDA(cudaMemcpy(&ref, b.ref + at, 4, cudaMemcpyDeviceToHost));
    const double got = value_at(dt, result, at);
    const double tolerance = dt == DataType::kFp32 ? 1e-3 : 3e-2;
    if (!(std::fabs(got - exact) <= tolerance * std::max(1.0, std::fabs(exact))) || !(std::fabs(ref - exact) <= 1e-3)) {
      ++spot_failures;
      std::printf("  element %lld: float64 %.5f kernel %.5f reference %.5f\n", (long long)at, exact, got, double(ref));
    }
  }
  const int64_t read_n = dir == ConvDirection::kFwd ? p.input_elements() : p.output_elements();
  counts.verdict(spot_failures == 0 && (read_n <= kTwoPow31 || max_read >= kTwoPow31),
                 label + fmt(": 5 float64 values agree with kernel and reference (reads up to offset %.0f)",
                             double(max_read)));
}

// The cases: N = 1 images of 2900 x 2900 pixels (2901 where stride 2 meets an odd size) hold 2,152,960,000
// elements at 256 channels; the 3D case 20 x 650 x 650 x 256 = 2,163,200,000; the dense one 2 x 8193^2 x 16.
std::vector<Case> large_cases() {
  using namespace tiledispatch::hand;
  using check::conv2d;
  const ConvProblem cg8 = conv2d(32, 1, 256, 256, 2900, 2900, 3, 1, 1, 1);
  const ConvProblem cg8_s2 = conv2d(32, 1, 256, 256, 2901, 2901, 3, 2, 1, 1);
  const ConvProblem cg16 = conv2d(16, 1, 256, 256, 2900, 2900, 3, 1, 1, 1);
  const ConvProblem cg16_s2 = conv2d(16, 1, 256, 256, 2901, 2901, 3, 2, 1, 1);
  const ConvProblem dw = conv2d(256, 1, 256, 256, 2900, 2900, 3, 1, 1, 1);
  const ConvProblem dw_s2 = conv2d(256, 1, 256, 256, 2901, 2901, 3, 2, 1, 1);
  std::vector<Case> cases;
  cases.push_back(make_case<fwd_fp16_gm8_direct_256x64x64>("direct fwd C/G 8", cg8));
  cases.push_back(make_case<fwd_bf16_gm4_diag_128x64x64>("direct fwd C/G 16", cg16));
  cases.push_back(make_case<fwd_fp16_gm8_direct_3d_256x64x64>(
      "direct fwd 3D C/G 8", check::conv3d(32, 1, 256, 256, 20, 650, 650, 3, 1, 1, 1)));
  cases.push_back(make_case<bwdd_bf16_gm8_direct_256x64x64>("direct bwd_data C/G 8", cg8));
  cases.push_back(make_case<bwdd_bf16_gm8_direct_256x64x64>("direct bwd_data C/G 8 stride 2, odd", cg8_s2));
  cases.push_back(make_case<lg_bwdw_fp16_gm2_16x64x64>("direct bwd_weight C/G 8", cg8));
  cases.push_back(make_case<lg_bwdw_fp16_gm4_64x64x64>("direct bwd_weight C/G 16 stride 2, odd", cg16_s2));
  cases.push_back(make_case<fwd_fp32_gm8_direct_256x64x64>("direct fwd fp32 C/G 8", cg8));
  cases.push_back(make_case<bwdd_fp32_gm4_direct_256x64x64>("direct bwd_data fp32 C/G 16 stride 2, odd", cg16_s2));
  cases.push_back(make_case<lg_bwdw_fp32_gm8_64x64x64>("direct bwd_weight fp32 C/G 8", cg8));
  cases.push_back(make_case<lg_dw_fp16_16x16_f3s1_nb8_sub1x4_v8>("depthwise fwd", dw));
  cases.push_back(make_case<lg_dw_fp32_16x16_f3s1_nb2_sub2x4_v8>("depthwise fwd fp32", dw));
  cases.push_back(make_case<lg_dwd_fp16_16x32_f3s2_nb4_sub2x4_v8>("depthwise bwd_data stride 2, odd", dw_s2));
  cases.push_back(make_case<lg_dww_fp16_16x16_f3s1_nb4_sub1x4_v8>("depthwise bwd_weight", dw));
  cases.push_back(make_case<lg_fwd_fp16_gm2_diag_split_image>("diagonal fwd C/G 32, split_image",
                                                              conv2d(8, 1, 256, 256, 2900, 2900, 3, 1, 1, 1)));
  cases.push_back(make_case<lg_bwdd_fp16_gm2_diag_split_image>("paired bwd_data C/G 8, split_image", cg8));
  const ConvProblem dw3 = check::conv3d(256, 1, 256, 256, 20, 650, 650, 3, 1, 1, 1);
  cases.push_back(make_case<lg_dw3_fp16_8x16_f3s1_nb4_sub1x4_v8>("depthwise 3D fwd", dw3));
  cases.push_back(make_case<lg_dwd3_fp16_8x16_f3s1_nb4_sub2x4_v8>("depthwise 3D bwd_data", dw3));
  cases.push_back(make_case<lg_dww3_fp16_16x16_f3s1_nb4_sub2x4_v4>("depthwise 3D bwd_weight", dw3));
  cases.push_back(make_case<lg_bwdd_fp16_split_image>("dense bwd_data stride 2 by phases, split_image",
                                                      conv2d(1, 2, 16, 8, 8193, 8193, 3, 2, 1, 1)));
  return cases;
}

}  // namespace

int main() {
  Counts counts;
  check_blocked_reference(counts);
  const int sms = check::sm_count();
  uint32_t seed = 101;
  for (const Case& c : large_cases()) check_case(c, sms, seed, counts);
  std::printf("%d checked, %d failures\n", counts.checked, counts.failures);
  return counts.failures == 0 ? 0 : 1;
}
