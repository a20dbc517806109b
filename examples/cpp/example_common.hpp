// Shared by the C++ examples: one grouped-convolution problem run through the C API (tiledispatch/c_api.h)
// on device buffers, timed with CUDA events and checked at sampled points against a float64 host reference.
// Layouts: input NDHWGC, weight GKZYXC, output NDHWGK (a 2D problem has D = Z = 1).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tiledispatch/c_api.h"

namespace example {

// Every CUDA call is checked; a failure prints the call and ends the example with status 1.
#define EXAMPLE_CUDA(expr)                                                                               \
  do {                                                                                                   \
    const cudaError_t example_status_ = (expr);                                                          \
    if (example_status_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "error: %s: %s\n", #expr, cudaGetErrorString(example_status_));               \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)

inline void check(td_status status, const char* what) {
  if (status != TD_OK) {
    std::fprintf(stderr, "error: %s: %s (%s)\n", what, td_conv_last_error(), td_conv_status_name(status));
    std::exit(1);
  }
}

inline size_t element_bytes(td_dtype t) { return t == TD_FP32 ? 4 : 2; }

inline float to_float(td_dtype t, const void* p, size_t i) {
  if (t == TD_FP32) return static_cast<const float*>(p)[i];
  if (t == TD_FP16) return __half2float(static_cast<const __half*>(p)[i]);
  return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
}

inline void from_float(td_dtype t, void* p, size_t i, float v) {
  if (t == TD_FP32) static_cast<float*>(p)[i] = v;
  else if (t == TD_FP16) static_cast<__half*>(p)[i] = __float2half_rn(v);
  else static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
}

// The dtype named by argv[1] (default fp16); anything else prints the usage and exits with status 2.
inline td_dtype parse_dtype(int argc, char** argv, const char* program) {
  if (argc <= 1) return TD_FP16;
  const std::string arg = argv[1];
  if (argc == 2 && arg == "fp16") return TD_FP16;
  if (argc == 2 && arg == "bf16") return TD_BF16;
  if (argc == 2 && arg == "fp32") return TD_FP32;
  std::fprintf(stderr, "usage: %s [fp16|bf16|fp32]\n", program);
  std::exit(2);
}

struct Sizes {
  int64_t out[3];
  int64_t cg, kg;
};

inline Sizes sizes(const td_conv_problem& p) {
  Sizes s{};
  for (int i = 0; i < 3; ++i) {
    const int64_t span = p.dilation[i] * (p.filter[i] - 1) + 1;
    s.out[i] = (p.input[i] + p.left_pad[i] + p.right_pad[i] - span) / p.stride[i] + 1;
  }
  s.cg = p.C / p.G, s.kg = p.K / p.G;
  return s;
}

// Host copies of the three tensors, in the layouts above.
struct HostTensors {
  td_dtype dtype;
  std::vector<unsigned char> input, weight, output;
  size_t n_in, n_wei, n_out;

  HostTensors(const td_conv_problem& p) : dtype(p.dtype) {
    const Sizes s = sizes(p);
    n_in = size_t(p.N * p.input[0] * p.input[1] * p.input[2] * p.C);
    n_wei = size_t(p.K * p.filter[0] * p.filter[1] * p.filter[2] * s.cg);
    n_out = size_t(p.N * s.out[0] * s.out[1] * s.out[2] * p.K);
    input.resize(n_in * element_bytes(dtype));
    weight.resize(n_wei * element_bytes(dtype));
    output.resize(n_out * element_bytes(dtype));
  }
  void randomize(std::vector<unsigned char>& t, size_t n, uint32_t seed) const {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.f, 1.f);
    for (size_t i = 0; i < n; ++i) from_float(dtype, t.data(), i, normal(rng));
  }
};

// The value the direction writes at flat index `at` of its output tensor, in float64 from the host tensors.
inline double reference_at(const td_conv_problem& p, const HostTensors& h, size_t at) {
  const Sizes s = sizes(p);
  const int64_t Di = p.input[0], Hi = p.input[1], Wi = p.input[2];
  const int64_t Z = p.filter[0], Y = p.filter[1], X = p.filter[2];
  const int64_t Do = s.out[0], Ho = s.out[1], Wo = s.out[2];
  auto in = [&](int64_t n, int64_t d, int64_t y, int64_t x, int64_t g, int64_t c) {
    return double(to_float(h.dtype, h.input.data(), size_t(((((n * Di + d) * Hi + y) * Wi + x) * p.G + g) * s.cg + c)));
  };
  auto wei = [&](int64_t g, int64_t k, int64_t z, int64_t y, int64_t x, int64_t c) {
    return double(to_float(h.dtype, h.weight.data(), size_t(((((g * s.kg + k) * Z + z) * Y + y) * X + x) * s.cg + c)));
  };
  auto out = [&](int64_t n, int64_t d, int64_t y, int64_t x, int64_t g, int64_t k) {
    return double(to_float(h.dtype, h.output.data(), size_t(((((n * Do + d) * Ho + y) * Wo + x) * p.G + g) * s.kg + k)));
  };
  // Input coordinate of output coordinate o and filter tap f along axis a (-1 when it falls into padding).
  auto tap = [&](int a, int64_t o, int64_t f, int64_t extent) {
    const int64_t i = o * p.stride[a] - p.left_pad[a] + f * p.dilation[a];
    return (i < 0 || i >= extent) ? int64_t(-1) : i;
  };
  double sum = 0;
  int64_t r = int64_t(at);
  if (p.direction == TD_FWD) {  // output (n, do, ho, wo, g, k)
    const int64_t k = r % s.kg; r /= s.kg; const int64_t g = r % p.G; r /= p.G;
    const int64_t wo = r % Wo; r /= Wo; const int64_t ho = r % Ho; r /= Ho; const int64_t od = r % Do; const int64_t n = r / Do;
    for (int64_t z = 0; z < Z; ++z) for (int64_t y = 0; y < Y; ++y) for (int64_t x = 0; x < X; ++x) {
      const int64_t d = tap(0, od, z, Di), hh = tap(1, ho, y, Hi), ww = tap(2, wo, x, Wi);
      if (d < 0 || hh < 0 || ww < 0) continue;
      for (int64_t c = 0; c < s.cg; ++c) sum += in(n, d, hh, ww, g, c) * wei(g, k, z, y, x, c);
    }
  } else if (p.direction == TD_BWD_DATA) {  // input gradient (n, d, h, w, g, c)
    const int64_t c = r % s.cg; r /= s.cg; const int64_t g = r % p.G; r /= p.G;
    const int64_t wi = r % Wi; r /= Wi; const int64_t hi = r % Hi; r /= Hi; const int64_t di = r % Di; const int64_t n = r / Di;
    for (int64_t od = 0; od < Do; ++od) for (int64_t ho = 0; ho < Ho; ++ho) for (int64_t wo = 0; wo < Wo; ++wo)
      for (int64_t z = 0; z < Z; ++z) for (int64_t y = 0; y < Y; ++y) for (int64_t x = 0; x < X; ++x) {
        if (tap(0, od, z, Di) != di || tap(1, ho, y, Hi) != hi || tap(2, wo, x, Wi) != wi) continue;
        for (int64_t k = 0; k < s.kg; ++k) sum += out(n, od, ho, wo, g, k) * wei(g, k, z, y, x, c);
      }
  } else {  // weight gradient (g, k, z, y, x, c)
    const int64_t c = r % s.cg; r /= s.cg; const int64_t x = r % X; r /= X; const int64_t y = r % Y; r /= Y;
    const int64_t z = r % Z; r /= Z; const int64_t k = r % s.kg; const int64_t g = r / s.kg;
    for (int64_t n = 0; n < p.N; ++n) for (int64_t od = 0; od < Do; ++od) for (int64_t ho = 0; ho < Ho; ++ho)
      for (int64_t wo = 0; wo < Wo; ++wo) {
        const int64_t d = tap(0, od, z, Di), hh = tap(1, ho, y, Hi), ww = tap(2, wo, x, Wi);
        if (d < 0 || hh < 0 || ww < 0) continue;
        sum += out(n, od, ho, wo, g, k) * in(n, d, hh, ww, g, c);
      }
  }
  return sum;
}

// Runs `problem` with the selected kernel: prints the kernel, its instance string, the time and TFLOP/s,
// and the relative L2 error over sampled points of the written tensor. Returns the process status.
inline int run_example(td_conv_problem problem) {
  check(td_conv_init(), "td_conv_init");
  size_t count = 0;
  check(td_conv_get_kernel_count(&count), "td_conv_get_kernel_count");
  const char* name = nullptr;
  const td_status selected = td_conv_select_kernel(&problem, &name);
  if (selected == TD_ERROR_NO_KERNEL) {
    std::printf("none of the %zu kernels supports this problem: %s\n", count, td_conv_last_error());
    return 0;
  }
  check(selected, "td_conv_select_kernel");
  size_t index = 0;
  td_kernel_info info{};
  check(td_conv_find_kernel(name, &index), "td_conv_find_kernel");
  check(td_conv_kernel_info(index, &info), "td_conv_kernel_info");
  std::printf("%zu kernels; selected %s\n  %s\n", count, info.name, info.instance_string);

  HostTensors host(problem);
  host.randomize(host.input, host.n_in, 1);
  host.randomize(host.weight, host.n_wei, 2);
  host.randomize(host.output, host.n_out, 3);
  std::vector<unsigned char>* written = problem.direction == TD_FWD        ? &host.output
                                        : problem.direction == TD_BWD_DATA ? &host.input
                                                                           : &host.weight;
  const size_t n_written = problem.direction == TD_FWD ? host.n_out
                           : problem.direction == TD_BWD_DATA ? host.n_in : host.n_wei;
  void *d_in = nullptr, *d_wei = nullptr, *d_out = nullptr, *d_ws = nullptr;
  EXAMPLE_CUDA(cudaMalloc(&d_in, host.input.size()));
  EXAMPLE_CUDA(cudaMalloc(&d_wei, host.weight.size()));
  EXAMPLE_CUDA(cudaMalloc(&d_out, host.output.size()));
  EXAMPLE_CUDA(cudaMemcpy(d_in, host.input.data(), host.input.size(), cudaMemcpyHostToDevice));
  EXAMPLE_CUDA(cudaMemcpy(d_wei, host.weight.data(), host.weight.size(), cudaMemcpyHostToDevice));
  EXAMPLE_CUDA(cudaMemcpy(d_out, host.output.data(), host.output.size(), cudaMemcpyHostToDevice));
  void* d_written = problem.direction == TD_FWD ? d_out : problem.direction == TD_BWD_DATA ? d_in : d_wei;
  EXAMPLE_CUDA(cudaMemset(d_written, 0xff, written->size()));  // poison: NaN in every dtype
  // The library's split-K factor for this kernel on this GPU (bwd_weight splits its long reduction; other
  // directions: 1).
  const char* planned = nullptr;
  int32_t k_batch = 1;
  check(td_conv_plan(name, &problem, 0, &planned, &k_batch), "td_conv_plan");
  std::printf("split-K %d\n", k_batch);
  size_t ws_bytes = 0;
  check(td_conv_workspace_size(name, &problem, k_batch, &ws_bytes), "td_conv_workspace_size");
  if (ws_bytes > 0) EXAMPLE_CUDA(cudaMalloc(&d_ws, ws_bytes));
  cudaStream_t stream = nullptr;
  EXAMPLE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const td_conv_args args{d_in, d_wei, d_out, d_ws, ws_bytes, k_batch, -1, stream};
  check(td_conv_run(name, &problem, &args), "td_conv_run");
  EXAMPLE_CUDA(cudaStreamSynchronize(stream));
  EXAMPLE_CUDA(cudaMemcpy(written->data(), d_written, written->size(), cudaMemcpyDeviceToHost));

  std::mt19937_64 rng(7);
  double err2 = 0, ref2 = 0;
  const int samples = 256;
  for (int i = 0; i < samples; ++i) {
    const size_t at = size_t(rng() % n_written);
    const double ref = reference_at(problem, host, at);
    const double got = to_float(host.dtype, written->data(), at);
    err2 += (got - ref) * (got - ref), ref2 += ref * ref;
  }
  const double rel_l2 = std::sqrt(err2 / std::max(ref2, 1e-300));

  cudaEvent_t start, stop;
  EXAMPLE_CUDA(cudaEventCreate(&start));
  EXAMPLE_CUDA(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int i = 0; i < 20; ++i) {
    EXAMPLE_CUDA(cudaEventRecord(start, stream));
    check(td_conv_run(name, &problem, &args), "td_conv_run");
    EXAMPLE_CUDA(cudaEventRecord(stop, stream));
    EXAMPLE_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    EXAMPLE_CUDA(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  const Sizes s = sizes(problem);
  const double flops = 2.0 * double(problem.N) * double(problem.K) * double(s.out[0] * s.out[1] * s.out[2]) *
                       double(s.cg) * double(problem.filter[0] * problem.filter[1] * problem.filter[2]);
  const double ms = times[times.size() / 2];
  const double tolerance = problem.dtype == TD_FP32 ? 2e-3 : 1e-2;
  std::printf("median %.4f ms, %.1f TFLOP/s, relative L2 error %.2e over %d sampled points (%s)\n", ms,
              flops / (ms * 1e-3) / 1e12, rel_l2, samples, rel_l2 <= tolerance ? "ok" : "TOO LARGE");
  EXAMPLE_CUDA(cudaEventDestroy(start));
  EXAMPLE_CUDA(cudaEventDestroy(stop));
  EXAMPLE_CUDA(cudaStreamDestroy(stream));
  for (void* p : {d_in, d_wei, d_out, d_ws}) EXAMPLE_CUDA(cudaFree(p));
  check(td_conv_cleanup(), "td_conv_cleanup");
  return rel_l2 <= tolerance ? 0 : 1;
}

// A 2D problem: G groups, N images of H x W, C -> K channels, a square filter with "same" padding.
inline td_conv_problem problem_2d(td_direction direction, td_dtype dtype, int64_t G, int64_t N, int64_t K, int64_t C,
                                  int64_t H, int64_t W, int64_t filter, int64_t stride) {
  td_conv_problem p{};
  p.ndim_spatial = 2, p.direction = direction, p.dtype = dtype;
  p.G = G, p.N = N, p.K = K, p.C = C;
  const int64_t pad = (filter - 1) / 2;
  const int64_t in[3] = {1, H, W}, f[3] = {1, filter, filter}, st[3] = {1, stride, stride}, pd[3] = {0, pad, pad};
  for (int i = 0; i < 3; ++i) {
    p.input[i] = in[i], p.filter[i] = f[i], p.stride[i] = st[i], p.dilation[i] = 1;
    p.left_pad[i] = pd[i], p.right_pad[i] = pd[i];
  }
  return p;
}

}  // namespace example
