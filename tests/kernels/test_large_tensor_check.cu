// Large tensors (issue 6 point 4): a forward problem whose input holds 2*8193*8193*16 = 2,148,007,968 elements,
// just over 2^31. The split_image instance (64-bit offsets) must match the GPU reference (64-bit indexing) over
// the whole output, and both must match a float64 host computation at output pixels whose taps read input
// offsets beyond 2^31; an instance without split_image must report the problem as not supported.
// Last line: "<n> checked, <f> failures".
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../../bench/gpu_check/hand_traits.hpp"
#include "tiledispatch/reference/device.cuh"

namespace tiledispatch::hand {
// clang-format off
//      name                            dir   nd dtype  spec      tile         waves   warp tile  vec     pipeline  scheduler   epilogue   dsb    gm 2st   expl   split  sk     wg
TD_HAND(lt_fwd_fp16_split_image,        kFwd, 2, kFp16, kDefault, 128,64,32,   2,2,1,  32,32,16,  8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, true,  false, 1)
TD_HAND(lt_fwd_fp16_no_split_image,     kFwd, 2, kFp16, kDefault, 128,64,32,   2,2,1,  32,32,16,  8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;

__global__ void fill_random(__half* data, int64_t count, uint32_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ (seed * 2246822519u) ^ uint32_t(i >> 32) * 3266489917u;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
    data[i] = __float2half(float(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}
__global__ void to_float(const __half* in, float* out, int64_t count) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = __half2float(in[i]);
  }
}
double value_at(const __half* device, int64_t index) {
  __half h;
  TD_CHECK_CUDA(cudaMemcpy(&h, device + index, sizeof h, cudaMemcpyDeviceToHost));
  return double(__half2float(h));
}
}  // namespace

int main() {
  ConvProblem p;
  p.ndim_spatial = 2;
  p.G = 1, p.N = 2, p.C = 16, p.K = 8;
  p.input = {1, 8193, 8193};
  p.filter = {1, 3, 3};
  p.stride = {1, 2, 2};
  p.dilation = {1, 1, 1};
  p.left_pad = {0, 1, 1};
  p.right_pad = {0, 1, 1};
  int checked = 0, failures = 0;
  auto verdict = [&](bool ok, const std::string& what) {
    ++checked;
    if (!ok) ++failures;
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  };
  const int64_t in_n = p.input_elements(), out_n = p.output_elements(), wei_n = p.weight_elements();
  std::printf("input elements %lld (2^31 = 2147483648)\n", (long long)in_n);
  verdict(in_n > (int64_t(1) << 31), "input holds more than 2^31 elements");

  const hand::lt_fwd_fp16_no_split_image plain;
  const Support no = plain.is_supported(p);
  verdict(!no && no.reason.find("split_image") != std::string::npos, "without split_image: not supported (" + no.reason + ")");

  const hand::lt_fwd_fp16_split_image split;
  const Support yes = split.is_supported(p);
  verdict(bool(yes), "split_image instance supports the problem " + yes.reason);
  if (!yes) {
    std::printf("%d checked, %d failures\n", checked, failures);
    return 1;
  }
  __half *in, *wei, *out;
  float *ref, *got;
  TD_CHECK_CUDA(cudaMalloc(&in, size_t(in_n) * 2));
  TD_CHECK_CUDA(cudaMalloc(&wei, size_t(wei_n) * 2));
  TD_CHECK_CUDA(cudaMalloc(&out, size_t(out_n) * 2));
  TD_CHECK_CUDA(cudaMalloc(&ref, size_t(out_n) * 4));
  TD_CHECK_CUDA(cudaMalloc(&got, size_t(out_n) * 4));
  fill_random<<<8192, 256>>>(in, in_n, 11);
  fill_random<<<64, 256>>>(wei, wei_n, 12);
  TD_CHECK_CUDA(cudaGetLastError());
  TD_CHECK_CUDA(cudaMemset(out, 0xFF, size_t(out_n) * 2));  // poison: NaN
  ConvArgs args;
  args.input = in, args.weight = wei, args.output = out, args.k_batch = 1;
  TD_CHECK_CUDA(reference::run(ConvDirection::kFwd, DataType::kFp16, p, args, ref));
  verdict(split.run(p, args) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "split_image run");
  to_float<<<8192, 256>>>(out, got, out_n);
  TD_CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> ref_h(static_cast<size_t>(out_n)), got_h(static_cast<size_t>(out_n));
  TD_CHECK_CUDA(cudaMemcpy(ref_h.data(), ref, ref_h.size() * 4, cudaMemcpyDeviceToHost));
  TD_CHECK_CUDA(cudaMemcpy(got_h.data(), got, got_h.size() * 4, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  int64_t non_finite = 0;
  for (size_t i = 0; i < ref_h.size(); ++i) {
    if (!std::isfinite(got_h[i])) ++non_finite;
    num += (double(got_h[i]) - ref_h[i]) * (double(got_h[i]) - ref_h[i]);
    den += double(ref_h[i]) * ref_h[i];
  }
  const double err = non_finite == 0 && den > 0 ? std::sqrt(num / den) : INFINITY;
  char buf[200];
  std::snprintf(buf, sizeof buf, "whole output vs reference: rel L2 %.3e, %lld unwritten", err, (long long)non_finite);
  verdict(err <= 1e-2, buf);

  // float64 host values at the last output rows of image 1, whose taps read input offsets beyond 2^31.
  const auto o = p.output();
  const int64_t Ho = o[1], Wo = o[2], Hi = p.input[1], Wi = p.input[2], C = p.C, K = p.K;
  int spot_fail = 0, spots = 0;
  int64_t max_offset = 0;
  for (int64_t oh : {Ho - 2, Ho - 1}) {
    for (int64_t ow : {int64_t(0), Wo / 2, Wo - 1}) {
      for (int64_t k = 0; k < K; k += 3) {
        double exact = 0;
        for (int64_t y = 0; y < 3; ++y) {
          for (int64_t x = 0; x < 3; ++x) {
            const int64_t hi = oh * 2 - 1 + y, wi = ow * 2 - 1 + x;
            if (hi < 0 || hi >= Hi || wi < 0 || wi >= Wi) continue;
            for (int64_t c = 0; c < C; ++c) {
              const int64_t at = ((1 * Hi + hi) * Wi + wi) * C + c;
              max_offset = at > max_offset ? at : max_offset;
              exact += value_at(in, at) * value_at(wei, ((k * 3 + y) * 3 + x) * C + c);
            }
          }
        }
        const size_t idx = size_t(((1 * Ho + oh) * Wo + ow) * K + k);
        ++spots;
        if (std::fabs(got_h[idx] - exact) > 2e-2 || std::fabs(ref_h[idx] - exact) > 1e-3) {
          ++spot_fail;
          std::printf("  spot (oh %lld, ow %lld, k %lld): exact %.5f kernel %.5f reference %.5f\n", (long long)oh,
                      (long long)ow, (long long)k, exact, got_h[idx], ref_h[idx]);
        }
      }
    }
  }
  std::snprintf(buf, sizeof buf, "%d float64 spots (input offsets up to %lld) agree with kernel and reference", spots,
                (long long)max_offset);
  verdict(spot_fail == 0 && max_offset > INT32_MAX, buf);
  for (void* ptr : {static_cast<void*>(in), static_cast<void*>(wei), static_cast<void*>(out),
                    static_cast<void*>(ref), static_cast<void*>(got)}) {
    TD_CHECK_CUDA(cudaFree(ptr));
  }
  std::printf("%d checked, %d failures\n", checked, failures);
  return failures == 0 ? 0 : 1;
}
