// GPU check of channels padded to the vector width (kernels/channel_padding.cuh) and of width unfolding
// (kernels/width_unfolding.hpp): layers whose C/G no vector of the configuration divides (an RGB stem,
// grayscale, C/G = 3 grouped, C = 20) run as the padded or the width-unfolded problem on default-like
// configurations of both kernel generations, in every direction, 2D and 3D.
// Per (instance, problem): the padded C/G must be the one expected (16-bit vectors 4/8/8: C/G rounded up to 8;
// fp32 vectors 2/4/4: to 4; none where C/G is a multiple already, and no kernel where K/G still fails a
// vector), except that 16-bit fwd and bwd_weight configurations of tile_k 32 unfold the width of the layers
// of one group where X*C rounded up to 32 is no more than X taps of 8 padded channels (the case's `unfolded`),
// and pad nothing there; the workspace must be used exactly where padding or unfolding is, the result (written
// into poison) must match the reference, and the tensors the run reads must come back unchanged. bwd_weight
// runs at k_batch 1, 3, 16 and its largest automatic factor, each split run twice for the same bits
// (bwd_weight_runs.cuh). Last line: "<n> checked, <p> padded, <u> unfolded, <f> failures".
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../../bench/gpu_check/battery.hpp"
#include "../../bench/gpu_check/bwd_weight_runs.cuh"
#include "../../bench/gpu_check/check_tensors.cuh"
#include "../../bench/gpu_check/hand_traits.hpp"
#include "tiledispatch/reference/device.cuh"

namespace tiledispatch::hand {
// clang-format off
//      name                      dir          nd dtype  spec      tile         waves  warp tile  vec     pipeline  scheduler   epilogue   dsb    gm 2st   expl   split  sk     wg
TD_HAND(pad_fwd_fp16_128x128x64,  kFwd,      2, kFp16, kDefault, 128,128,64,  2,2,1, 32,32,16,  4,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(pad_fwd_fp16_128x64x32,   kFwd,      2, kFp16, kDefault, 128,64,32,   2,2,1, 32,32,16,  4,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(pad_fwd_bf16_3d_128x64x32, kFwd,     3, kBf16, kDefault, 128,64,32,   2,2,1, 32,32,16,  4,8,8,  kCompV3,    kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(pad_fwd_fp32_128x64x32,   kFwd,      2, kFp32, kDefault, 128,64,32,   2,2,1, 32,32,8,   2,4,4,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(pad_bwdd_fp16_128x128x64, kBwdData,  2, kFp16, kDefault, 128,128,64,  2,2,1, 32,32,16,  4,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(pad_bwdd_bf16_3d_128x64x32, kBwdData, 3, kBf16, kDefault, 128,64,32,  2,2,1, 32,32,16,  4,8,8,  kMem,     kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(pad_bwdw_fp16_128x128x64, kBwdWeight, 2, kFp16, kDefault, 128,128,64, 2,2,1, 32,32,16,  4,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(pad_bwdw_fp16_64x64x32,   kBwdWeight, 2, kFp16, kDefault, 64,64,32,   2,2,1, 32,32,16,  4,8,8,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
TD_HAND(pad_bwdw_fp16_64x64x32_2st, kBwdWeight, 3, kFp16, kDefault, 64,64,32, 2,2,1, 32,32,16,  4,8,8,  kMem,     kIntrawave, kCShuffle, false, 1, true,  false, false, false, 1)
TD_HAND(pad_bwdw_fp32_64x64x32,   kBwdWeight, 2, kFp32, kDefault, 64,64,32,   2,2,1, 32,32,8,   2,4,4,  kCompV3,  kIntrawave, kCShuffle, false, 1, false, false, false, false, 1)
// clang-format on
}  // namespace tiledispatch::hand

namespace {
using namespace tiledispatch;

struct Case {
  const char* label;
  ConvProblem problem;
  int64_t padded_16bit, padded_fp32;  // the padded C/G expected: 0 none, -1 no kernel
  int64_t unfolded;  // C' of 16-bit fwd / bwd_weight configurations of tile_k 32, which then pad nothing; 0 none
};

// The padded C/G an instance of this dtype must choose (the expectation of the case).
int64_t expected_padding(const Case& c, DataType dt) {
  return dt == DataType::kFp32 ? c.padded_fp32 : c.padded_16bit;
}

// The bytes of a device tensor, for checking that a run left it as it was.
std::vector<unsigned char> bytes_of(const void* ptr, size_t n) {
  std::vector<unsigned char> host(n);
  TD_CHECK_CUDA(cudaMemcpy(host.data(), ptr, n, cudaMemcpyDeviceToHost));
  return host;
}

// One fwd or bwd_data run into a poisoned result; the failure text, empty when it passed.
std::string check_forward_or_data(const GroupedConvInstance& inst, const ConvProblem& p, uint32_t seed,
                                  bool rewritten, double& err) {
  const ConvDirection dir = inst.signature().direction;
  const DataType dt = inst.signature().dtype;
  const int e_bytes = element_bytes(dt);
  const int64_t in_n = p.input_elements(), wei_n = p.weight_elements(), out_n = p.output_elements();
  const int64_t res_n = reference::result_elements(dir, p);
  check::RunBuffers b;
  const ConvArgs args = b.allocate(p, dt, res_n, inst.workspace_bytes(p, 1));
  std::string failure;
  const bool phases = dir == ConvDirection::kBwdData && (p.stride[0] > 1 || p.stride[1] > 1 || p.stride[2] > 1);
  if ((rewritten || phases) != (args.workspace_bytes > 0)) {
    failure = "workspace only where padded, unfolded or by phases";
  }
  const bool fwd = dir == ConvDirection::kFwd;
  void* result = fwd ? b.out : b.in;
  void* read = fwd ? b.in : b.out;
  const int64_t read_n = fwd ? in_n : out_n;
  check::fill(dt, b.wei, wei_n, seed);
  check::fill(dt, read, read_n, seed + 1);
  TD_CHECK_CUDA(cudaMemset(result, 0xFF, size_t(res_n) * e_bytes));  // poison: NaN in every dtype
  TD_CHECK_CUDA(reference::run(dir, dt, p, args, b.ref));
  TD_CHECK_CUDA(cudaMemset(result, 0xFF, size_t(res_n) * e_bytes));
  if (args.workspace != nullptr) TD_CHECK_CUDA(cudaMemset(args.workspace, 0xFF, args.workspace_bytes));
  const auto weight_before = bytes_of(b.wei, size_t(wei_n) * e_bytes);
  const auto read_before = bytes_of(read, size_t(read_n) * e_bytes);
  if (!inst.check_args(p, args)) failure = "check_args refused";
  if (inst.run(p, args) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) failure = "run failed";
  if (bytes_of(b.wei, weight_before.size()) != weight_before || bytes_of(read, read_before.size()) != read_before) {
    failure += (failure.empty() ? "" : "; ") + std::string("a tensor the run reads was changed");
  }
  check::widen(dt, result, b.got, res_n);
  std::vector<float> ref(static_cast<size_t>(res_n)), got(static_cast<size_t>(res_n));
  TD_CHECK_CUDA(cudaMemcpy(ref.data(), b.ref, ref.size() * 4, cudaMemcpyDeviceToHost));
  TD_CHECK_CUDA(cudaMemcpy(got.data(), b.got, got.size() * 4, cudaMemcpyDeviceToHost));
  err = check::relative_l2(got, ref);
  const double tolerance = dt == DataType::kFp32 ? 2e-3 : 1e-2;
  if (!(err <= tolerance)) failure += (failure.empty() ? "" : "; ") + std::string("relative L2 ") + std::to_string(err);
  return failure;
}

template <class Instance>
struct Entry {
  static int64_t padding(const ConvProblem& p) { return Instance::channel_padding(p); }
  static int64_t unfolding(const ConvProblem& p) { return Instance::width_unfolding(p); }
  static constexpr bool kUnfolds = Instance::Sm90::kTileK == 32 && Instance::Sm90::kElemBytes == 2 &&
                                   Instance::Sm90::kDirection != ConvDirection::kBwdData;
};
}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // every case's line printed before a fault stops the program
  using namespace tiledispatch::hand;
  struct Listed {
    std::unique_ptr<GroupedConvInstance> instance;
    int64_t (*padding)(const ConvProblem&);
    int64_t (*unfolding)(const ConvProblem&);
    bool unfolds;  // the case's `unfolded` applies
  };
  std::vector<Listed> list;
  auto add = [&list](auto instance) {
    using Instance = decltype(instance);
    list.push_back({std::make_unique<Instance>(), &Entry<Instance>::padding, &Entry<Instance>::unfolding,
                    Entry<Instance>::kUnfolds});
  };
  add(pad_fwd_fp16_128x128x64{});
  add(pad_fwd_fp16_128x64x32{});
  add(pad_fwd_bf16_3d_128x64x32{});
  add(pad_fwd_fp32_128x64x32{});
  add(pad_bwdd_fp16_128x128x64{});
  add(pad_bwdd_bf16_3d_128x64x32{});
  add(pad_bwdw_fp16_128x128x64{});
  add(pad_bwdw_fp16_64x64x32{});
  add(pad_bwdw_fp16_64x64x32_2st{});
  add(pad_bwdw_fp32_64x64x32{});
  ConvProblem stem_asymmetric = check::conv2d(1, 1, 3, 64, 17, 21, 7, 2, 3, 1);
  stem_asymmetric.right_pad[2] = 2;
  const std::vector<Case> cases = {
      {"stem C=3 7x7 stride 2 odd", check::conv2d(1, 2, 3, 64, 37, 29, 7, 2, 3, 1), 8, 4, 32},
      {"stem C=3 7x7 stride 2, W padded 3/2", stem_asymmetric, 8, 4, 32},
      {"grayscale C=1 5x5 odd", check::conv2d(1, 2, 1, 32, 13, 11, 5, 1, 2, 1), 8, 4, 32},
      {"C=3 5x5 dilation 2", check::conv2d(1, 2, 3, 32, 19, 23, 5, 1, 4, 2), 8, 4, 32},
      {"C/G=3 K/G=16 G=2 3x3", check::conv2d(2, 3, 6, 32, 9, 10, 3, 1, 1, 1), 8, 4, 0},
      {"C=20 1x1", check::conv2d(1, 3, 20, 32, 9, 9, 1, 1, 0, 1), 24, 0, 0},
      {"C=12 3x3 stride 2 odd", check::conv2d(1, 2, 12, 16, 11, 13, 3, 2, 1, 1), 16, 0, 0},
      {"3D C=3 3x3x3 stride 2", check::conv3d(1, 1, 3, 16, 5, 7, 6, 3, 2, 1, 1), 8, 4, 0},
      {"3D C=1 5x5x5 stride 2", check::conv3d(1, 1, 1, 16, 7, 9, 11, 5, 2, 2, 1), 8, 4, 32},
      {"3D C=5 1x1x1", check::conv3d(1, 2, 5, 32, 3, 4, 5, 1, 1, 0, 1), 8, 8, 0},
      {"C=16: no padding", check::conv2d(1, 2, 16, 32, 9, 9, 3, 1, 1, 1), 0, 0, 0},
      {"C=3 K=5: no kernel (K/G)", check::conv2d(1, 2, 3, 5, 9, 9, 3, 1, 1, 1), -1, -1, 0},
  };
  const int sms = check::sm_count();
  int checked = 0, padded_count = 0, unfolded_count = 0, failures = 0;
  uint32_t seed = 23;
  for (const Case& c : cases) {
    const ConvProblem& p = c.problem;
    for (const Listed& e : list) {
      const GroupedConvInstance& inst = *e.instance;
      const std::string name(inst.name());
      if (inst.signature().ndim_spatial != p.ndim_spatial) continue;
      const DataType dt = inst.signature().dtype;
      const int64_t expected_unfolded = e.unfolds ? c.unfolded : 0;
      const int64_t expected = expected_unfolded > 0 ? 0 : expected_padding(c, dt);
      const int64_t padded = e.padding(p);
      const int64_t unfolded = e.unfolding(p);
      const bool supported = bool(inst.is_supported(p));
      std::string failure;
      if (supported != (expected >= 0)) {
        failure = supported ? "supported, expected no kernel" : "not supported: " + inst.is_supported(p).reason;
      } else if (padded != std::max<int64_t>(expected, 0)) {
        failure = "padded C/G " + std::to_string(padded) + ", expected " + std::to_string(expected);
      } else if (unfolded != expected_unfolded) {
        failure = "unfolded C' " + std::to_string(unfolded) + ", expected " + std::to_string(expected_unfolded);
      }
      if (!supported) {
        if (!failure.empty()) ++failures;
        std::printf("%s %s | no kernel: %s | %s%s%s\n", failure.empty() ? "PASS" : "FAIL", name.c_str(),
                    inst.is_supported(p).reason.c_str(), c.label, failure.empty() ? "" : " | ", failure.c_str());
        ++checked;
        continue;
      }
      std::string detail;
      if (inst.signature().direction == ConvDirection::kBwdWeight) {
        for (const auto& run : check::run_bwd_weight(inst, p, sms, seed, name + " " + c.label)) {
          if (!run.failure.empty()) failure += (failure.empty() ? "" : "; ") + run.failure;
          if ((padded > 0 || unfolded > 0) && inst.workspace_bytes(p, run.k_batch) == 0) {
            failure += (failure.empty() ? "" : "; ") + std::string("padded or unfolded without workspace");
          }
          char part[64];
          std::snprintf(part, sizeof(part), " k%d %.1e%s", run.k_batch, run.rel_l2, run.rerun ? " same bits" : "");
          detail += part;
        }
      } else {
        double err = 0;
        failure += check_forward_or_data(inst, p, seed, padded > 0 || unfolded > 0, err);
        seed += 2;
        char part[32];
        std::snprintf(part, sizeof(part), " rel L2 %.2e", err);
        detail = part;
      }
      ++checked;
      padded_count += padded > 0 ? 1 : 0;
      unfolded_count += unfolded > 0 ? 1 : 0;
      if (!failure.empty()) ++failures;
      std::printf("%s %s | padded C/G %lld | unfolded C' %lld | %s |%s%s%s\n", failure.empty() ? "PASS" : "FAIL",
                  name.c_str(), static_cast<long long>(padded), static_cast<long long>(unfolded), c.label,
                  detail.c_str(), failure.empty() ? "" : " | ", failure.c_str());
    }
  }
  std::printf("%d checked, %d padded, %d unfolded, %d failures\n", checked, padded_count, unfolded_count, failures);
  return failures == 0 ? 0 : 1;
}
