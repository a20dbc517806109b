// Long-reduction accuracy of the implicit-GEMM kernels (docs/pipelines.md, "Accumulation").
//
// 1. Rounding probe: one mma.sync per operand type (TF32 m16n8k8, fp16 m16n8k16, bf16 m16n8k16) whose exact
//    result is C +- 0.75 ulp(C) with C = +-1: round to nearest gives C +- 1 ulp, round toward zero gives C.
//    The same addition as an fp32 FFMA is printed beside it.
// 2. Backward weight, k_batch 1, one instance per dtype (and one per place of the outer accumulator), on
//    3x3 problems with C = K = 8 whose GEMM K = N*Ho*Wo grows from 2^16 to 2^24, for mean-zero inputs
//    (uniform [-1, 1)) and positive inputs (uniform [0, 1/32)): relative L2 against reference::run, the
//    scale <got, ref> / <ref, ref> - 1 (a bias shows as a negative scale), and float64 host sums at 4 weights
//    for both the instance and the reference (error / sum |products|).
// 3. With --large: the hand instance of the GPU check that failed, on its problem conv2d(G1 N2 C16 K8
//    8193x8193 3x3 stride 2 pad 1), k_batch 1 and 3, against reference::run.
//
// Verdict lines start with PASS or FAIL; the last line is "<n> checked, <f> failures".
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../../bench/gpu_check/hand_traits.hpp"
#include "tiledispatch/reference/device.cuh"

namespace tiledispatch::hand {
// clang-format off
//      name                          dir         nd dtype  spec      tile          waves   warp tile   vec     pipeline  scheduler   epilogue   dsb    gm 2st   expl   split  sk     wg
// the GPU check's failing instance (16 accumulators per thread: outer accumulator in registers)
TD_HAND(acc_fp32_split_image_mem_vec1, kBwdWeight, 2, kFp32, kDefault, 64,32,32,    2,1,1,  16,16,8,    1,1,1,  kMem,     kIntrawave, kDefault,  false, 1, false, false, true,  false, 1)
// 64 accumulators per thread: the largest that folds in registers (first generation; on sm_90a the Hopper path
// builds this and the next one, with the outer accumulator in the workspace)
TD_HAND(acc_fp16_compv3_128x128x32,    kBwdWeight, 2, kFp16, kDefault, 128,128,32,  2,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
// 128 accumulators per thread, fold slots fit beside the 2 stages: outer accumulator in shared memory
TD_HAND(acc_bf16_compv3_256x128x32,    kBwdWeight, 2, kBf16, kDefault, 256,128,32,  2,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
// 128 accumulators per thread, 4 fp32 stages leave no room: outer accumulator in registers (local memory)
TD_HAND(acc_fp32_mem_128x256x32,       kBwdWeight, 2, kFp32, kDefault, 128,256,32,  2,2,1,  32,32,8,    2,4,4,  kMem,     kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
// ping-pong (num_wave_groups 2, Hopper path): each consumer warpgroup folds its own tile, two per CTA
TD_HAND(acc_fp16_compv3_128x128x64_wg2, kBwdWeight, 2, kFp16, kDefault, 128,128,64,  2,2,1,  32,32,16,   8,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 2)
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;

int g_checked = 0, g_failures = 0;
void verdict(bool ok, const std::string& what) {
  ++g_checked;
  if (!ok) ++g_failures;
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
}

// ---- 1. rounding probe -------------------------------------------------------------------------------------
// Every A element a, every B element b (both exact in the operand type), so D = C + K_atom * a * b exactly
// 0.75 ulp(1) = 1.5 * 2^-24 away from C before rounding.
__global__ void mma_probe(float c, float* out) {
  const float d_sign = c > 0 ? 1.f : -1.f;
  float d[3][4];
  {  // TF32 m16n8k8: 8 products of 1.5*2^-14 * 2^-13 = 1.5*2^-27
    const uint32_t a = __float_as_uint(1.5f * 0x1p-14f), b = __float_as_uint(d_sign * 0x1p-13f);
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=f"(d[0][0]), "=f"(d[0][1]), "=f"(d[0][2]), "=f"(d[0][3])
        : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b), "f"(c), "f"(c), "f"(c), "f"(c));
  }
  {  // fp16 m16n8k16: 16 products of 1.5*2^-14 * 2^-14 = 1.5*2^-28
    const __half2 a2 = __floats2half2_rn(1.5f * 0x1p-14f, 1.5f * 0x1p-14f);
    const __half2 b2 = __floats2half2_rn(d_sign * 0x1p-14f, d_sign * 0x1p-14f);
    const uint32_t a = *reinterpret_cast<const uint32_t*>(&a2), b = *reinterpret_cast<const uint32_t*>(&b2);
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=f"(d[1][0]), "=f"(d[1][1]), "=f"(d[1][2]), "=f"(d[1][3])
        : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b), "f"(c), "f"(c), "f"(c), "f"(c));
  }
  {  // bf16 m16n8k16: the same values (exact in bf16)
    const __nv_bfloat162 a2 = __floats2bfloat162_rn(1.5f * 0x1p-14f, 1.5f * 0x1p-14f);
    const __nv_bfloat162 b2 = __floats2bfloat162_rn(d_sign * 0x1p-14f, d_sign * 0x1p-14f);
    const uint32_t a = *reinterpret_cast<const uint32_t*>(&a2), b = *reinterpret_cast<const uint32_t*>(&b2);
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=f"(d[2][0]), "=f"(d[2][1]), "=f"(d[2][2]), "=f"(d[2][3])
        : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b), "f"(c), "f"(c), "f"(c), "f"(c));
  }
  if (threadIdx.x == 0) {
    for (int t = 0; t < 3; ++t) out[t] = d[t][0];
    volatile float addend = d_sign * 1.5f * 0x1p-24f;  // volatile: the FFMA/FADD happens at run time
    out[3] = __fadd_rn(c, addend);
  }
}

void rounding_probe() {
  float* out;
  TD_CHECK_CUDA(cudaMalloc(&out, 4 * sizeof(float)));
  for (float c : {1.f, -1.f}) {
    mma_probe<<<1, 32>>>(c, out);
    TD_CHECK_CUDA(cudaGetLastError());
    float h[4];
    TD_CHECK_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    const float nearest = c > 0 ? std::nextafter(1.f, 2.f) : std::nextafter(-1.f, -2.f);
    const char* names[4] = {"mma tf32", "mma fp16", "mma bf16", "fp32 FADD"};
    for (int t = 0; t < 4; ++t) {
      const char* mode = h[t] == nearest ? "nearest" : h[t] == c ? "toward zero" : "other";
      std::printf("probe %-9s C=%+.0f + %+.2f ulp -> C %+.3f ulp (%s)\n", names[t], c, c * 0.75,
                  (double(h[t]) - c) / 0x1p-23, mode);
    }
    verdict(h[3] == nearest,
            std::string("fp32 FADD rounds to nearest (the fold's addition), C=") + (c > 0 ? "+1" : "-1"));
  }
  TD_CHECK_CUDA(cudaFree(out));
}

// ---- 2. growing GEMM K ---------------------------------------------------------------------------------------
// Uniform values in [lo, lo + 1) * scale from a per-element hash of (seed, index).
template <class T>
__global__ void fill_uniform(T* data, int64_t count, uint32_t seed, float lo, float width) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ (seed * 2246822519u) ^ uint32_t(i >> 32) * 3266489917u;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
    data[i] = T(lo + width * (float(h >> 8) * (1.0f / 16777216.0f)));
  }
}
template <class T>
__global__ void to_float(const T* in, float* out, int64_t count) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = float(in[i]);
  }
}

template <class T> struct DeviceType;
template <> struct DeviceType<float> { using type = float; };
template <> struct DeviceType<cute::half_t> { using type = __half; };
template <> struct DeviceType<cute::bfloat16_t> { using type = __nv_bfloat16; };

ConvProblem conv2d(int64_t N, int64_t C, int64_t K, int64_t H, int64_t W, int64_t f, int64_t s, int64_t pad) {
  ConvProblem p;
  p.ndim_spatial = 2;
  p.G = 1, p.N = N, p.C = C, p.K = K;
  p.input = {1, H, W};
  p.filter = {1, f, f};
  p.stride = {1, s, s};
  p.dilation = {1, 1, 1};
  p.left_pad = {0, pad, pad};
  p.right_pad = {0, pad, pad};
  return p;
}

struct Measure {
  double rel_l2 = INFINITY, scale = NAN;
};

Measure compare(const std::vector<float>& got, const std::vector<float>& ref) {
  double num = 0, den = 0, dot = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return {};
    const double d = double(got[i]) - ref[i];
    num += d * d, den += double(ref[i]) * ref[i], dot += double(got[i]) * ref[i];
  }
  return {std::sqrt(num / den), dot / den - 1.0};
}

// `k_batch` > 1 spreads the splits over the persistent CTAs: with more splits than SMs a ping-pong CTA's
// second warpgroup takes units too, and folds into its own outer accumulator.
template <class Instance>
void growing_k(const char* label, double tol, int k_batch = 1) {
  using Cfg = typename Instance::Config;
  using Element = typename DeviceType<typename Cfg::ElementGlobal>::type;
  using Sm90 = typename Instance::Sm90;
  const char* places[3] = {"none", "registers", "shared memory"};
  if constexpr (Sm90::kBuildable) {
    std::printf("\n%s: Hopper path, %d accumulators per thread, fold every %d k-tiles (%d wgmma k16 steps per "
                "k-tile), outer accumulator in the workspace\n",
                label, Sm90::kAccumulatorsPerThread, Sm90::kFoldTiles, Sm90::kTileK / 16);
  } else {
    std::printf("\n%s: first generation, %d accumulators per thread, fold every %d k-tiles (%d MMAs per k-tile), "
                "outer accumulator in %s\n",
                label, Cfg::kAccumulatorsPerThread, Cfg::kFoldTiles, Cfg::kMmasPerTile, places[int(Cfg::kFoldPlace)]);
  }
  const Instance instance;
  for (const bool positive : {false, true}) {
    for (int e = 16; e <= 24; e += 2) {
      // 3x3, pad 1, stride 1 on 256x256 images: GEMM K = N * 2^16.
      const ConvProblem p = conv2d(int64_t(1) << (e - 16), 8, 8, 256, 256, 3, 1, 1);
      const Support support = instance.is_supported(p);
      if (!support) {
        verdict(false, std::string(label) + " supports " + p.to_string() + ": " + support.reason);
        continue;
      }
      const int64_t in_n = p.input_elements(), out_n = p.output_elements(), wei_n = p.weight_elements();
      Element *in, *out, *wei;
      float *ref, *got;
      TD_CHECK_CUDA(cudaMalloc(&in, size_t(in_n) * sizeof(Element)));
      TD_CHECK_CUDA(cudaMalloc(&out, size_t(out_n) * sizeof(Element)));
      TD_CHECK_CUDA(cudaMalloc(&wei, size_t(wei_n) * sizeof(Element)));
      TD_CHECK_CUDA(cudaMalloc(&ref, size_t(wei_n) * 4));
      TD_CHECK_CUDA(cudaMalloc(&got, size_t(wei_n) * 4));
      // Positive inputs in [0, 1/32): the sums stay far below the fp16 maximum (65504).
      const float lo = positive ? 0.f : -1.f, width = positive ? 1.f / 32 : 2.f;
      fill_uniform<<<4096, 256>>>(in, in_n, 11u + e, lo, width);
      fill_uniform<<<4096, 256>>>(out, out_n, 23u + e, lo, width);
      TD_CHECK_CUDA(cudaGetLastError());
      ConvArgs args{};
      args.input = in, args.output = out, args.weight = wei, args.k_batch = k_batch;
      // The Hopper path keeps its outer accumulators in the workspace (and the splits their partial sums).
      args.workspace_bytes = instance.workspace_bytes(p, k_batch);
      void* workspace = nullptr;
      if (args.workspace_bytes > 0) TD_CHECK_CUDA(cudaMalloc(&workspace, args.workspace_bytes));
      args.workspace = workspace;
      if (Sm90::kBuildable && !positive && e == 16) {
        ConvArgs bare = args;
        bare.workspace = nullptr, bare.workspace_bytes = 0;
        verdict(args.workspace_bytes > 0 && !instance.check_args(p, bare),
                std::string(label) + " asks for a workspace for its outer accumulators and refuses to run without");
      }
      TD_CHECK_CUDA(reference::run(ConvDirection::kBwdWeight, Cfg::kDataType, p, args, ref));
      TD_CHECK_CUDA(cudaMemset(wei, 0xFF, size_t(wei_n) * sizeof(Element)));  // poison: NaN
      TD_CHECK_CUDA(instance.run(p, args));
      TD_CHECK_CUDA(cudaDeviceSynchronize());
      to_float<<<64, 256>>>(wei, got, wei_n);
      TD_CHECK_CUDA(cudaGetLastError());
      std::vector<float> got_h(static_cast<size_t>(wei_n)), ref_h(static_cast<size_t>(wei_n));
      TD_CHECK_CUDA(cudaMemcpy(got_h.data(), got, size_t(wei_n) * 4, cudaMemcpyDeviceToHost));
      TD_CHECK_CUDA(cudaMemcpy(ref_h.data(), ref, size_t(wei_n) * 4, cudaMemcpyDeviceToHost));
      // 16-bit results are compared with the reference rounded to the output type, so that the output's own
      // rounding (2^-9 relative for bf16) does not mask or fake a bias.
      std::vector<float> ref_out(ref_h.size());
      for (size_t i = 0; i < ref_h.size(); ++i) ref_out[i] = float(Element(ref_h[i]));
      const Measure m = compare(got_h, ref_out);

      // float64 host sums at 4 weights (k, y, x, c), error relative to sum |products| (the condition).
      std::vector<Element> in_h(static_cast<size_t>(in_n)), out_h(static_cast<size_t>(out_n));
      TD_CHECK_CUDA(cudaMemcpy(in_h.data(), in, size_t(in_n) * sizeof(Element), cudaMemcpyDeviceToHost));
      TD_CHECK_CUDA(cudaMemcpy(out_h.data(), out, size_t(out_n) * sizeof(Element), cudaMemcpyDeviceToHost));
      double worst_inst = 0, worst_ref = 0;
      const int spots[4][4] = {{0, 0, 0, 0}, {3, 1, 1, 5}, {5, 2, 0, 7}, {7, 1, 2, 2}};
      for (const auto& s : spots) {
        const int k = s[0], y = s[1], x = s[2], c = s[3];
        double sum = 0, abs_sum = 0;
        for (int64_t n = 0; n < p.N; ++n)
          for (int64_t oh = 0; oh < 256; ++oh)
            for (int64_t ow = 0; ow < 256; ++ow) {
              const int64_t hi = oh - 1 + y, wi = ow - 1 + x;
              if (hi < 0 || hi >= 256 || wi < 0 || wi >= 256) continue;
              const double prod = double(float(out_h[size_t(((n * 256 + oh) * 256 + ow) * 8 + k)])) *
                                  double(float(in_h[size_t(((n * 256 + hi) * 256 + wi) * 8 + c)]));
              sum += prod, abs_sum += std::fabs(prod);
            }
        const size_t w = size_t(((k * 3 + y) * 3 + x) * 8 + c);
        worst_inst = std::max(worst_inst, std::fabs(got_h[w] - sum) / abs_sum);
        worst_ref = std::max(worst_ref, std::fabs(ref_h[w] - sum) / abs_sum);
      }
      char line[320];
      std::snprintf(line, sizeof line,
                    "%s %s GEMM K 2^%d k_batch %d: rel L2 %.2e (tol %.0e), scale-1 %+.2e (|.| <= 2e-4), float64 "
                    "spots: instance %.2e, reference %.2e (<= 1e-4)",
                    label, positive ? "positive  " : "mean-zero ", e, k_batch, m.rel_l2, tol, m.scale, worst_inst,
                    worst_ref);
      verdict(m.rel_l2 <= tol && std::fabs(m.scale) <= 2e-4 && worst_ref <= 1e-4, line);
      for (void* ptr : {static_cast<void*>(in), static_cast<void*>(out), static_cast<void*>(wei),
                        static_cast<void*>(ref), static_cast<void*>(got), workspace}) {
        TD_CHECK_CUDA(cudaFree(ptr));
      }
    }
  }
}

// ---- 3. the GPU check's failing case ------------------------------------------------------------------------
void large_case() {
  const ConvProblem p = conv2d(2, 16, 8, 8193, 8193, 3, 2, 1);
  const hand::acc_fp32_split_image_mem_vec1 instance;
  const Support support = instance.is_supported(p);
  verdict(bool(support), "large: " + p.to_string() + " supported " + support.reason);
  if (!support) return;
  const int64_t in_n = p.input_elements(), out_n = p.output_elements(), wei_n = p.weight_elements();
  float *in, *out, *wei, *ref;
  TD_CHECK_CUDA(cudaMalloc(&in, size_t(in_n) * 4));
  TD_CHECK_CUDA(cudaMalloc(&out, size_t(out_n) * 4));
  TD_CHECK_CUDA(cudaMalloc(&wei, size_t(wei_n) * 4));
  TD_CHECK_CUDA(cudaMalloc(&ref, size_t(wei_n) * 4));
  fill_uniform<<<8192, 256>>>(in, in_n, 5u, -1.f, 2.f);
  fill_uniform<<<8192, 256>>>(out, out_n, 6u, -1.f, 2.f);
  TD_CHECK_CUDA(cudaGetLastError());
  ConvArgs args{};
  args.input = in, args.output = out, args.weight = wei;
  TD_CHECK_CUDA(reference::run(ConvDirection::kBwdWeight, DataType::kFp32, p, args, ref));
  std::vector<float> ref_h(static_cast<size_t>(wei_n)), got_h(static_cast<size_t>(wei_n));
  TD_CHECK_CUDA(cudaMemcpy(ref_h.data(), ref, size_t(wei_n) * 4, cudaMemcpyDeviceToHost));
  for (int k_batch : {1, 3}) {
    args.k_batch = k_batch;
    TD_CHECK_CUDA(cudaMemset(wei, 0xFF, size_t(wei_n) * 4));
    TD_CHECK_CUDA(instance.run(p, args));
    TD_CHECK_CUDA(cudaDeviceSynchronize());
    TD_CHECK_CUDA(cudaMemcpy(got_h.data(), wei, size_t(wei_n) * 4, cudaMemcpyDeviceToHost));
    const Measure m = compare(got_h, ref_h);
    char line[200];
    std::snprintf(line, sizeof line, "large: input %lld elements, k_batch %d: rel L2 %.2e (tol 2e-3), scale-1 %+.2e",
                  (long long)in_n, k_batch, m.rel_l2, m.scale);
    verdict(m.rel_l2 <= 2e-3, line);
  }
  for (float* ptr : {in, out, wei, ref}) TD_CHECK_CUDA(cudaFree(ptr));
}

}  // namespace

int main(int argc, char** argv) {
  bool large = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--large") == 0) {
      large = true;
    } else {
      std::fprintf(stderr, "test_accumulation_check: unknown option '%s'; accepted: --large\n", argv[i]);
      return 2;
    }
  }
  rounding_probe();
  growing_k<hand::acc_fp32_split_image_mem_vec1>("fp32 64x32x32 mem vec1 split_image", 2e-3);
  growing_k<hand::acc_fp16_compv3_128x128x32>("fp16 128x128x32 compv3", 1e-2);
  growing_k<hand::acc_bf16_compv3_256x128x32>("bf16 256x128x32 compv3", 1e-2);
  growing_k<hand::acc_fp32_mem_128x256x32>("fp32 128x256x32 mem", 2e-3);
  int sms = 0;
  TD_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  growing_k<hand::acc_fp16_compv3_128x128x64_wg2>("fp16 128x128x64 compv3 ping-pong", 1e-2, 2 * sms + 1);
  if (large) large_case();
  std::printf("%d checked, %d failures\n", g_checked, g_failures);
  return g_failures == 0 ? 0 : 1;
}
