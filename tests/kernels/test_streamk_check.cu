// GPU check of stream-K backward weight (kernels/implicit_gemm_streamk.cuh) on the hand-written stream-K set
// (bench/gpu_check/hand_streamk.cu): every supported (instance, problem) is run three times on poisoned
// outputs; all three must be bit-identical (deterministic reduction) and within tolerance of the reference.
// A persistent twin of the data-parallel tree instance must give the same bits (same pieces, same order).
// check_args must refuse k_batch != 1 and a short workspace. Last line: "<n> checked, <f> failures".
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../../bench/gpu_check/hand_streamk.cu"
#include "tiledispatch/reference/device.cuh"

namespace tiledispatch::hand {
// clang-format off
TD_HAND_SK(bwdw_sk_fp16_tree_pers_twin, 2, kFp16, 64,64,64, 2,2,1, 16,16,16, 8,8,8, kBasicAsyncV1, kCShuffle, 1, false, kTree, true)
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;

template <class T>
__global__ void fill_random(T* data, int64_t count, uint32_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ (seed * 2246822519u);
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
    data[i] = T(float(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}
template <class T>
__global__ void to_float(const T* in, float* out, int64_t count) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = float(in[i]);
  }
}
template <class T>
void fill_typed(void* p, int64_t n, uint32_t seed) {
  fill_random<T><<<1024, 256>>>(static_cast<T*>(p), n, seed);
  TD_CHECK_CUDA(cudaGetLastError());
}
void fill(DataType t, void* p, int64_t n, uint32_t seed) {
  if (t == DataType::kFp16) fill_typed<__half>(p, n, seed);
  if (t == DataType::kBf16) fill_typed<__nv_bfloat16>(p, n, seed);
  if (t == DataType::kFp32) fill_typed<float>(p, n, seed);
}
void widen(DataType t, const void* p, float* out, int64_t n) {
  if (t == DataType::kFp16) to_float<__half><<<1024, 256>>>(static_cast<const __half*>(p), out, n);
  if (t == DataType::kBf16) to_float<__nv_bfloat16><<<1024, 256>>>(static_cast<const __nv_bfloat16*>(p), out, n);
  if (t == DataType::kFp32) to_float<float><<<1024, 256>>>(static_cast<const float*>(p), out, n);
  TD_CHECK_CUDA(cudaGetLastError());
}

ConvProblem conv(int ndim, int64_t G, int64_t N, int64_t C, int64_t K, int64_t H, int64_t f, int64_t s, int64_t pad) {
  ConvProblem p;
  p.ndim_spatial = ndim;
  p.G = G, p.N = N, p.C = C, p.K = K;
  const int first = ndim == 3 ? 0 : 1;
  for (int i = first; i < 3; ++i) {
    p.input[i] = H + i, p.filter[i] = f, p.stride[i] = s, p.dilation[i] = 1, p.left_pad[i] = pad, p.right_pad[i] = pad;
  }
  return p;
}

struct Buffers {
  void *in = nullptr, *wei = nullptr, *out = nullptr, *work = nullptr;
  float *ref = nullptr, *got = nullptr;
  size_t wei_bytes = 0, work_bytes = 0;
  int64_t wei_count = 0;
  ~Buffers() {
    for (void* p : {in, wei, out, work, static_cast<void*>(ref), static_cast<void*>(got)}) cudaFree(p);
  }
};

// Runs `inst` on `p` (inputs from `seed`), returns the weight gradient as raw bytes; `ok` false on any error.
std::vector<unsigned char> run_once(const GroupedConvInstance& inst, const ConvProblem& p, Buffers& b, bool& ok) {
  ConvArgs args;
  args.input = b.in, args.weight = b.wei, args.output = b.out, args.workspace = b.work;
  args.workspace_bytes = b.work_bytes, args.k_batch = 1;
  TD_CHECK_CUDA(cudaMemset(b.wei, 0xFF, b.wei_bytes));   // poison: NaN in every dtype
  TD_CHECK_CUDA(cudaMemset(b.work, 0xFF, b.work_bytes));  // stale partials must never leak into results
  ok = inst.run(p, args) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
  std::vector<unsigned char> bytes(b.wei_bytes);
  TD_CHECK_CUDA(cudaMemcpy(bytes.data(), b.wei, b.wei_bytes, cudaMemcpyDeviceToHost));
  return bytes;
}
}  // namespace

int main() {
  InstanceList list;
  hand::add_hand_streamk(list);
  list.push_back(std::make_unique<hand::bwdw_sk_fp16_tree_pers_twin>());
  const std::vector<ConvProblem> problems = {
      conv(2, 1, 16, 64, 64, 28, 3, 1, 1),  // GEMM K = 16*28*29 = 12992: tiles shared by several workers
      conv(2, 4, 2, 32, 32, 9, 3, 1, 1),    // C/G = K/G = 8, G = 4
      conv(2, 8, 2, 16, 16, 12, 3, 2, 1),   // C/G = K/G = 2 (merged groups), stride 2
      conv(2, 1, 1, 40, 24, 7, 1, 1, 0),    // 1x1: few iterations, tiles written whole
      conv(3, 2, 1, 16, 16, 5, 3, 1, 1),    // 3D
  };
  int checked = 0, failures = 0;
  uint32_t seed = 7;
  for (const ConvProblem& p : problems) {
    const GroupedConvInstance* dp_tree = nullptr;
    std::vector<unsigned char> dp_tree_bits;
    for (const auto& inst_ptr : list) {
      const GroupedConvInstance& inst = *inst_ptr;
      const std::string name(inst.name());
      if (!inst.is_supported(p)) continue;
      const DataType dt = inst.signature().dtype;
      const int e = element_bytes(dt);
      Buffers b;
      b.wei_count = p.weight_elements();
      b.wei_bytes = size_t(b.wei_count) * e;
      b.work_bytes = inst.workspace_bytes(p, 1);
      TD_CHECK_CUDA(cudaMalloc(&b.in, size_t(p.input_elements()) * e));
      TD_CHECK_CUDA(cudaMalloc(&b.out, size_t(p.output_elements()) * e));
      TD_CHECK_CUDA(cudaMalloc(&b.wei, b.wei_bytes));
      TD_CHECK_CUDA(cudaMalloc(&b.work, b.work_bytes + 16));
      TD_CHECK_CUDA(cudaMalloc(&b.ref, size_t(b.wei_count) * 4));
      TD_CHECK_CUDA(cudaMalloc(&b.got, size_t(b.wei_count) * 4));
      // Same seeds for every instance of a problem: the persistent twin sees the data-parallel one's inputs.
      fill(dt, b.in, p.input_elements(), seed);
      fill(dt, b.out, p.output_elements(), seed + 1);
      ++checked;
      ConvArgs args;
      args.input = b.in, args.weight = b.wei, args.output = b.out, args.workspace = b.work;
      args.workspace_bytes = b.work_bytes, args.k_batch = 3;
      std::string failure;
      if (b.work_bytes == 0) failure = "workspace_bytes is 0";
      if (inst.check_args(p, args)) failure = "check_args accepted k_batch 3";
      args.k_batch = 1, args.workspace_bytes = b.work_bytes - 1;
      if (inst.check_args(p, args)) failure = "check_args accepted a short workspace";
      TD_CHECK_CUDA(reference::run(ConvDirection::kBwdWeight, dt, p, args, b.ref));
      bool ok1 = false, ok2 = false, ok3 = false;
      const auto bits1 = run_once(inst, p, b, ok1);
      const auto bits2 = run_once(inst, p, b, ok2);
      const auto bits3 = run_once(inst, p, b, ok3);
      if (!(ok1 && ok2 && ok3)) failure = "run failed";
      if (bits1 != bits2 || bits1 != bits3) failure = "results differ between runs";
      widen(dt, b.wei, b.got, b.wei_count);
      std::vector<float> ref(size_t(b.wei_count)), got(size_t(b.wei_count));
      TD_CHECK_CUDA(cudaMemcpy(ref.data(), b.ref, ref.size() * 4, cudaMemcpyDeviceToHost));
      TD_CHECK_CUDA(cudaMemcpy(got.data(), b.got, got.size() * 4, cudaMemcpyDeviceToHost));
      double num = 0, den = 0;
      for (size_t i = 0; i < ref.size(); ++i) {
        num += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
        den += double(ref[i]) * ref[i];
      }
      const double err = std::isfinite(num) && den > 0 ? std::sqrt(num / den) : INFINITY;
      const double tol = dt == DataType::kFp32 ? 2e-3 : 1e-2;
      if (!(err <= tol)) failure = "relative L2 " + std::to_string(err);
      if (name == "bwdw_sk_fp16_tree_64x64x64") dp_tree = &inst, dp_tree_bits = bits1;
      if (name == "bwdw_sk_fp16_tree_pers_twin" && dp_tree != nullptr) {
        ++checked;
        if (bits1 != dp_tree_bits) {
          ++failures;
          std::printf("FAIL persistent twin differs from data-parallel | %s\n", p.to_string().c_str());
        } else {
          std::printf("IDENTICAL persistent and data-parallel tree | %s\n", p.to_string().c_str());
        }
      }
      std::printf("%s %s | %s | workspace %zu B | rel L2 %.2e%s%s\n", failure.empty() ? "PASS" : "FAIL",
                  name.c_str(), p.to_string().c_str(), b.work_bytes, err, failure.empty() ? "" : " | ",
                  failure.c_str());
      if (!failure.empty()) ++failures;
    }
    seed += 2;
  }
  std::printf("%d checked, %d failures\n", checked, failures);
  return failures == 0 ? 0 : 1;
}
