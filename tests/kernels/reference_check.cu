// Checks the GPU reference kernels (reference/device.cuh) against the float64 CPU reference
// (reference/host.hpp) on small problems, every direction and dtype. Prints one line per case and exits
// non-zero on any mismatch. Built and run by tests/kernels/test_reference_gpu.py (marker gpu).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tiledispatch/reference/device.cuh"
#include "tiledispatch/reference/host.hpp"

#include "cube_problem.hpp"

namespace {
using namespace tiledispatch;
using tiledispatch::test::cube_problem;

// Random values rounded to `dtype`, as the bytes the device gets and as the doubles they equal.
struct Tensor {
  std::vector<unsigned char> bytes;
  std::vector<double> values;
};

Tensor random_tensor(DataType dtype, int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Tensor t;
  t.bytes.resize(size_t(count) * element_bytes(dtype));
  t.values.resize(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    const float v = dist(rng);
    if (dtype == DataType::kFp16) {
      const __half h = __float2half(v);
      reinterpret_cast<__half*>(t.bytes.data())[i] = h;
      t.values[size_t(i)] = double(__half2float(h));
    } else if (dtype == DataType::kBf16) {
      const __nv_bfloat16 h = __float2bfloat16(v);
      reinterpret_cast<__nv_bfloat16*>(t.bytes.data())[i] = h;
      t.values[size_t(i)] = double(__bfloat162float(h));
    } else {
      reinterpret_cast<float*>(t.bytes.data())[i] = v;
      t.values[size_t(i)] = double(v);
    }
  }
  return t;
}

}  // namespace

int main() {
  const std::vector<ConvProblem> problems = {
      cube_problem(2, 1, 2, 8, 8, 6, 3, 1, 1, 1),   cube_problem(2, 3, 1, 6, 9, 7, 3, 2, 1, 1),
      cube_problem(2, 2, 2, 4, 6, 9, 5, 2, 2, 2),   cube_problem(2, 4, 1, 4, 4, 5, 1, 1, 0, 1),
      cube_problem(3, 2, 1, 4, 6, 4, 3, 1, 1, 1),   cube_problem(3, 1, 2, 3, 5, 5, 3, 2, 0, 1),
  };
  std::mt19937 rng(12345);
  int failures = 0;
  for (const ConvProblem& p : problems) {
    for (auto dtype : {DataType::kFp16, DataType::kBf16, DataType::kFp32}) {
      for (auto dir : {ConvDirection::kFwd, ConvDirection::kBwdData, ConvDirection::kBwdWeight}) {
        const Tensor in = random_tensor(dtype, p.input_elements(), rng);
        const Tensor wei = random_tensor(dtype, p.weight_elements(), rng);
        const Tensor out = random_tensor(dtype, p.output_elements(), rng);
        void *d_in, *d_wei, *d_out;
        float* d_res;
        const int64_t n = reference::result_elements(dir, p);
        TD_CHECK_CUDA(cudaMalloc(&d_in, in.bytes.size()));
        TD_CHECK_CUDA(cudaMalloc(&d_wei, wei.bytes.size()));
        TD_CHECK_CUDA(cudaMalloc(&d_out, out.bytes.size()));
        TD_CHECK_CUDA(cudaMalloc(&d_res, size_t(n) * 4));
        TD_CHECK_CUDA(cudaMemcpy(d_in, in.bytes.data(), in.bytes.size(), cudaMemcpyHostToDevice));
        TD_CHECK_CUDA(cudaMemcpy(d_wei, wei.bytes.data(), wei.bytes.size(), cudaMemcpyHostToDevice));
        TD_CHECK_CUDA(cudaMemcpy(d_out, out.bytes.data(), out.bytes.size(), cudaMemcpyHostToDevice));
        TD_CHECK_CUDA(cudaMemset(d_res, 0xFF, size_t(n) * 4));  // poison: NaN where nothing is written
        ConvArgs args;
        args.input = d_in, args.weight = d_wei, args.output = d_out;
        TD_CHECK_CUDA(reference::run(dir, dtype, p, args, d_res));
        std::vector<float> got(static_cast<size_t>(n));
        TD_CHECK_CUDA(cudaMemcpy(got.data(), d_res, size_t(n) * 4, cudaMemcpyDeviceToHost));
        const auto want = reference::host_reference(dir, p, in.values, wei.values, out.values);
        double num = 0, den = 0;
        bool finite = true;
        for (int64_t i = 0; i < n; ++i) {
          finite &= std::isfinite(got[size_t(i)]);
          num += (got[size_t(i)] - want[size_t(i)]) * (got[size_t(i)] - want[size_t(i)]);
          den += want[size_t(i)] * want[size_t(i)];
        }
        const double err = finite && den > 0 ? std::sqrt(num / den) : INFINITY;
        const bool ok = err <= 1e-5;
        failures += ok ? 0 : 1;
        std::printf("%s %s %s %s rel_l2=%.3e\n", ok ? "PASS" : "FAIL", std::string(to_token(dir)).c_str(),
                    std::string(to_token(dtype)).c_str(), p.to_string().c_str(), err);
        cudaFree(d_in), cudaFree(d_wei), cudaFree(d_out), cudaFree(d_res);
      }
    }
  }
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
