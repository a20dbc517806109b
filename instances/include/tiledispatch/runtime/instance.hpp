// The abstract kernel instance that the registry stores and the profiler runs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tiledispatch/runtime/arguments.hpp"
#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch {

// Whether an instance can compute a problem; when not, why (printed by the profiler).
struct Support {
  bool ok = true;
  std::string reason;

  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return ok; }
};

// What an instance computes (the "signature" half of the key). The "algorithm" half is the kernel name, which
// round-trips to exactly one configuration (DESIGN decision 4).
struct Signature {
  ConvDirection direction = ConvDirection::kFwd;
  DataType dtype = DataType::kFp16;
  int ndim_spatial = 2;
  KernelFamily family = KernelFamily::kImplicitGemm;

  friend bool operator==(const Signature& a, const Signature& b) {
    return a.direction == b.direction && a.dtype == b.dtype && a.ndim_spatial == b.ndim_spatial &&
           a.family == b.family;
  }
};

struct KernelKey {
  Signature signature;
  std::string name;

  friend bool operator==(const KernelKey& a, const KernelKey& b) {
    return a.signature == b.signature && a.name == b.name;
  }
};

struct KernelKeyHash {
  size_t operator()(const KernelKey& k) const noexcept {
    size_t h = std::hash<std::string>{}(k.name);
    const size_t fields[] = {static_cast<size_t>(k.signature.direction), static_cast<size_t>(k.signature.dtype),
                             static_cast<size_t>(k.signature.ndim_spatial),
                             static_cast<size_t>(k.signature.family)};
    for (size_t f : fields) h ^= f + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

class GroupedConvInstance {
 public:
  virtual ~GroupedConvInstance() = default;

  // The kernel name (generated header stem).
  virtual std::string_view name() const = 0;
  // CK's get_instance_string(), computed at compile time from the template parameters.
  virtual std::string_view instance_string() const = 0;
  virtual Signature signature() const = 0;
  // Exact: false (with a reason) for every problem this instance cannot compute correctly and in bounds.
  virtual Support is_supported(const ConvProblem& problem) const = 0;
  // Device workspace run() needs for this problem and split-K factor (0: none).
  virtual size_t workspace_bytes(const ConvProblem& /*problem*/, int /*k_batch*/) const { return 0; }
  // The split-K factors worth trying on a GPU with `sms` multiprocessors when the caller names none (the
  // default: k_batch 1 only).
  virtual std::vector<int> split_k_candidates(const ConvProblem& /*problem*/, int /*sms*/) const { return {1}; }
  // The instance's own choice among split_k_candidates (the library's plan ranks them with its models and
  // falls back to this).
  virtual int preferred_split_k(const ConvProblem& /*problem*/, int /*sms*/) const { return 1; }
  // The run-time arguments against the problem (k_batch, workspace size, pointer alignment); run() refuses
  // with cudaErrorInvalidValue what this rejects. The default accepts only k_batch == 1.
  virtual Support check_args(const ConvProblem& /*problem*/, const ConvArgs& args) const {
    if (args.k_batch != 1) return Support::no("k_batch " + std::to_string(args.k_batch) + ": only 1 is supported");
    return Support::yes();
  }
  // Launches on args.stream; returns the launch error, if any. Call only when is_supported(problem).
  virtual cudaError_t run(const ConvProblem& problem, const ConvArgs& args) const = 0;

  std::string get_instance_string() const { return std::string(instance_string()); }
  KernelKey key() const { return {signature(), std::string(name())}; }
};

using InstanceList = std::vector<std::unique_ptr<GroupedConvInstance>>;

}  // namespace tiledispatch
