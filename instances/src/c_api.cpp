// The C API over the runtime registry (tiledispatch/c_api.h). Every entry point catches everything: no
// exception crosses the C boundary and nothing aborts; failures become a td_status plus a per-thread message.
#include "tiledispatch/c_api.h"

#include <cuda_runtime_api.h>

#include <exception>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tiledispatch/runtime/registration.hpp"
#include "tiledispatch/runtime/registry.hpp"
#include "tiledispatch/runtime/selection.hpp"

namespace tiledispatch::c_api {
namespace {

// A failure on its way to the boundary: the status and the message td_conv_last_error() will return.
struct Failure {
  td_status status;
  std::string message;
};

thread_local std::string t_last_error;
thread_local std::string t_last_reason;

// The registry and every string handed out through the API; lives from td_conv_init to td_conv_cleanup.
struct State {
  Registry registry;
  std::vector<const GroupedConvInstance*> instances;  // ordered by name
  // NUL-terminated copies of what the instances report, parallel to `instances`: the pointers handed out.
  std::vector<std::string> names, instance_strings, families;
  std::unique_ptr<KernelSelector> selector = std::make_unique<LearnedSelector>();
  // Launch plans already ranked, by problem, kernel (or none) and SM count: a plan ranks every supported
  // (kernel, split-K) pair with the models, milliseconds that a loop of runs should not pay each call.
  std::unordered_map<std::string, LaunchChoice> plans;
  std::string json;
};

constexpr size_t kPlanCacheSize = 4096;  // plans kept before the cache starts over

std::mutex g_state_mutex;
std::unique_ptr<State> g_state;

State& state() {
  if (!g_state) throw Failure{TD_ERROR_NOT_INITIALIZED, "td_conv_init() has not been called"};
  return *g_state;
}

template <typename Body>
td_status guarded(Body&& body) {
  try {
    std::lock_guard<std::mutex> lock(g_state_mutex);
    body();
    t_last_error.clear();
    return TD_OK;
  } catch (const Failure& failure) {
    t_last_error = failure.message;
    return failure.status;
  } catch (const std::exception& error) {
    t_last_error = std::string("internal error: ") + error.what();
    return TD_ERROR_INTERNAL;
  } catch (...) {
    t_last_error = "internal error: unknown exception";
    return TD_ERROR_INTERNAL;
  }
}

void require(bool condition, const std::string& message) {
  if (!condition) throw Failure{TD_ERROR_INVALID_ARGUMENT, message};
}

struct ProblemView {
  ConvProblem problem;
  ConvDirection direction;
  DataType dtype;
};

ProblemView convert(const td_conv_problem* in) {
  require(in != nullptr, "problem is NULL");
  require(in->direction >= TD_FWD && in->direction <= TD_BWD_WEIGHT,
          "problem.direction " + std::to_string(int(in->direction)) + " is not 0 (fwd), 1 (bwd_data) or 2 "
          "(bwd_weight)");
  require(in->dtype >= TD_FP16 && in->dtype <= TD_FP32,
          "problem.dtype " + std::to_string(int(in->dtype)) + " is not 0 (fp16), 1 (bf16) or 2 (fp32)");
  ProblemView view{{}, static_cast<ConvDirection>(in->direction), static_cast<DataType>(in->dtype)};
  ConvProblem& p = view.problem;
  p.ndim_spatial = in->ndim_spatial;
  p.G = in->G, p.N = in->N, p.K = in->K, p.C = in->C;
  for (int i = 0; i < 3; ++i) {
    p.input[i] = in->input[i], p.filter[i] = in->filter[i], p.stride[i] = in->stride[i];
    p.dilation[i] = in->dilation[i], p.left_pad[i] = in->left_pad[i], p.right_pad[i] = in->right_pad[i];
  }
  if (std::string why = p.validate(); !why.empty()) throw Failure{TD_ERROR_INVALID_PROBLEM, "problem: " + why};
  return view;
}

const GroupedConvInstance& find(State& s, const char* name) {
  require(name != nullptr, "kernel name is NULL");
  const GroupedConvInstance* instance = s.registry.find(name);
  if (instance == nullptr) throw Failure{TD_ERROR_UNKNOWN_KERNEL, std::string("no kernel named '") + name + "'"};
  return *instance;
}

// is_supported plus the signature check the instances leave to their caller.
Support supports(const GroupedConvInstance& instance, const ProblemView& view) {
  const Signature sig = instance.signature();
  if (sig.direction != view.direction) {
    return Support::no("kernel direction " + std::string(to_token(sig.direction)) + ", problem direction " +
                       std::string(to_token(view.direction)));
  }
  if (sig.dtype != view.dtype) {
    return Support::no("kernel dtype " + std::string(to_token(sig.dtype)) + ", problem dtype " +
                       std::string(to_token(view.dtype)));
  }
  if (sig.ndim_spatial != view.problem.ndim_spatial) {
    return Support::no("kernel is " + std::to_string(sig.ndim_spatial) + "D, problem is " +
                       std::to_string(view.problem.ndim_spatial) + "D");
  }
  return instance.is_supported(view.problem);
}

size_t index_of(const State& s, const GroupedConvInstance& instance) {
  for (size_t i = 0; i < s.instances.size(); ++i) {
    if (s.instances[i] == &instance) return i;
  }
  throw Failure{TD_ERROR_INTERNAL, "instance not in the registry listing"};
}

const GroupedConvInstance& require_supported(const GroupedConvInstance& instance, const ProblemView& view) {
  if (Support ok = supports(instance, view); !ok) {
    throw Failure{TD_ERROR_NOT_SUPPORTED, std::string(instance.name()) + " does not support the problem: " +
                                              ok.reason};
  }
  return instance;
}

// The launch for `view` on `sms` multiprocessors: instance `only` (nullptr: any supported one) and its split-K
// factor, as the selector ranks them (memoised).
LaunchChoice plan(State& s, const GroupedConvInstance* only, const ProblemView& view, int sms) {
  const std::string key = std::string(to_token(view.direction)) + ' ' + std::string(to_token(view.dtype)) + ' ' +
                          view.problem.to_string() + ' ' + (only != nullptr ? std::string(only->name()) : "*") +
                          ' ' + std::to_string(sms);
  if (const auto found = s.plans.find(key); found != s.plans.end()) return found->second;
  std::vector<const GroupedConvInstance*> candidates;
  if (only != nullptr) {
    candidates.push_back(&require_supported(*only, view));
  } else {
    for (const GroupedConvInstance* instance : s.instances) {
      if (supports(*instance, view)) candidates.push_back(instance);
    }
  }
  const LaunchChoice choice = s.selector->plan(view.problem, view.direction, candidates, sms);
  if (choice.instance == nullptr) {
    throw Failure{TD_ERROR_NO_KERNEL, "no kernel supports " + std::string(to_token(view.direction)) + " " +
                                          std::string(to_token(view.dtype)) + " " + view.problem.to_string()};
  }
  if (s.plans.size() >= kPlanCacheSize) s.plans.clear();
  return s.plans.emplace(key, choice).first->second;
}

const GroupedConvInstance& select(State& s, const ProblemView& view) {
  return *plan(s, nullptr, view, int(TileHeuristicSelector::kSmCount)).instance;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\', out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00", out += kHex[(c >> 4) & 0xf], out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string cuda_message(const char* what, cudaError_t error) {
  return std::string(what) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")";
}

void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    (void)cudaGetLastError();  // clear a non-sticky error so the caller's next CUDA call does not see it
    throw Failure{TD_ERROR_CUDA, cuda_message(what, error)};
  }
}

// Makes `device` current for the run and restores the caller's device afterwards (-1: leave it alone).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (device < 0) return;
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) {
      check_cuda(cudaSetDevice(device), "cudaSetDevice");
      restore_ = true;
    }
  }
  ~DeviceGuard() {
    if (restore_) (void)cudaSetDevice(previous_);  // best effort in a destructor; the run's status stands
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

int sm_count_of(int device) {
  if (device < 0) check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute (multiprocessor count)");
  return sms;
}

std::string k_batch_refusal(int32_t k_batch) {
  return "k_batch " + std::to_string(k_batch) + " is negative and not TD_K_BATCH_AUTO (" +
         std::to_string(TD_K_BATCH_AUTO) + ")";
}

// A supported instance's k_batch for a run or a workspace query: TD_K_BATCH_AUTO resolved on the current
// device, 0 read as 1, anything else below 1 refused.
int resolve_k_batch(State& s, const GroupedConvInstance& instance, const ProblemView& view, int32_t k_batch) {
  if (k_batch == TD_K_BATCH_AUTO) {
    require_supported(instance, view);  // before the device is asked: a problem it cannot run needs no CUDA
    return plan(s, &instance, view, sm_count_of(-1)).k_batch;
  }
  require(k_batch >= 0, k_batch_refusal(k_batch));
  return k_batch == 0 ? 1 : k_batch;
}

void run(State& s, const char* name, const td_conv_problem* problem, const td_conv_args* in) {
  const ProblemView view = convert(problem);
  require(in != nullptr, "args is NULL");
  const GroupedConvInstance* instance = &require_supported(name != nullptr ? find(s, name) : select(s, view), view);
  require(in->k_batch >= TD_K_BATCH_AUTO, "args." + k_batch_refusal(in->k_batch));
  ConvArgs args;
  args.input = in->input, args.weight = in->weight, args.output = in->output;
  args.stream = static_cast<cudaStream_t>(in->stream);
  for (const auto& [label, ptr] : {std::pair<const char*, void*>{"input", in->input}, {"weight", in->weight},
                                   {"output", in->output}}) {
    if (ptr == nullptr) throw Failure{TD_ERROR_BAD_ARGUMENTS, std::string("args.") + label + " is NULL"};
    if (reinterpret_cast<uintptr_t>(ptr) % TD_ALIGNMENT != 0) {
      throw Failure{TD_ERROR_BAD_ARGUMENTS, std::string("args.") + label + " is not " +
                                                std::to_string(TD_ALIGNMENT) + "-byte aligned"};
    }
  }
  DeviceGuard device(in->device);
  if (name == nullptr && in->k_batch == TD_K_BATCH_AUTO) {
    // Kernel and factor ranked together for this device (select() above ranked for kSmCount SMs).
    const LaunchChoice choice = plan(s, nullptr, view, sm_count_of(-1));
    instance = choice.instance, args.k_batch = choice.k_batch;
  } else {
    args.k_batch = resolve_k_batch(s, *instance, view, in->k_batch);
  }
  const size_t need = instance->workspace_bytes(view.problem, args.k_batch);
  void* owned_workspace = nullptr;
  if (need > 0 && in->workspace == nullptr) {
    check_cuda(cudaMallocAsync(&owned_workspace, need, args.stream), "cudaMallocAsync (workspace)");
    args.workspace = owned_workspace, args.workspace_bytes = need;
  } else {
    args.workspace = in->workspace, args.workspace_bytes = in->workspace_bytes;
  }
  const auto release = [&] {
    if (owned_workspace != nullptr) return cudaFreeAsync(owned_workspace, args.stream);
    return cudaSuccess;
  };
  if (Support ok = instance->check_args(view.problem, args); !ok) {
    (void)release();
    throw Failure{TD_ERROR_BAD_ARGUMENTS, std::string(instance->name()) + ": " + ok.reason};
  }
  const cudaError_t launched = instance->run(view.problem, args);
  const cudaError_t freed = release();
  check_cuda(launched, (std::string(instance->name()) + " launch").c_str());
  check_cuda(freed, "cudaFreeAsync (workspace)");
}

}  // namespace
}  // namespace tiledispatch::c_api

using tiledispatch::c_api::Failure;
using tiledispatch::c_api::guarded;
using tiledispatch::c_api::require;
using tiledispatch::c_api::state;
namespace td = tiledispatch;

extern "C" {

int td_conv_api_version(void) { return TD_C_API_VERSION; }

const char* td_conv_last_error(void) { return td::c_api::t_last_error.c_str(); }

const char* td_conv_status_name(td_status status) {
  switch (status) {
    case TD_OK: return "TD_OK";
    case TD_ERROR_INVALID_ARGUMENT: return "TD_ERROR_INVALID_ARGUMENT";
    case TD_ERROR_INVALID_PROBLEM: return "TD_ERROR_INVALID_PROBLEM";
    case TD_ERROR_NOT_INITIALIZED: return "TD_ERROR_NOT_INITIALIZED";
    case TD_ERROR_UNKNOWN_KERNEL: return "TD_ERROR_UNKNOWN_KERNEL";
    case TD_ERROR_NOT_SUPPORTED: return "TD_ERROR_NOT_SUPPORTED";
    case TD_ERROR_NO_KERNEL: return "TD_ERROR_NO_KERNEL";
    case TD_ERROR_BAD_ARGUMENTS: return "TD_ERROR_BAD_ARGUMENTS";
    case TD_ERROR_CUDA: return "TD_ERROR_CUDA";
    case TD_ERROR_INTERNAL: return "TD_ERROR_INTERNAL";
  }
  return "TD_UNKNOWN_STATUS";
}

td_status td_conv_init(void) {
  return guarded([] {
    if (td::c_api::g_state) return;
    auto fresh = std::make_unique<td::c_api::State>();
    try {
      td::generated::register_fwd_instances(fresh->registry);
      td::generated::register_bwd_data_instances(fresh->registry);
      td::generated::register_bwd_weight_instances(fresh->registry);
    } catch (const td::RegistryError& error) {
      throw Failure{TD_ERROR_INTERNAL, std::string("registration failed: ") + error.what()};
    }
    fresh->instances = fresh->registry.list();
    for (const auto* instance : fresh->instances) {
      fresh->names.emplace_back(instance->name());
      fresh->instance_strings.emplace_back(instance->instance_string());
      fresh->families.emplace_back(td::to_token(instance->signature().family));
    }
    td::c_api::g_state = std::move(fresh);
  });
}

td_status td_conv_cleanup(void) {
  return guarded([] { td::c_api::g_state.reset(); });
}

td_status td_conv_get_kernel_count(size_t* count) {
  return guarded([&] {
    require(count != nullptr, "count is NULL");
    *count = state().instances.size();
  });
}

td_status td_conv_kernel_info(size_t index, td_kernel_info* info) {
  return guarded([&] {
    require(info != nullptr, "info is NULL");
    auto& s = state();
    require(index < s.instances.size(),
            "index " + std::to_string(index) + " out of range (" + std::to_string(s.instances.size()) + " kernels)");
    const auto* instance = s.instances[index];
    const td::Signature sig = instance->signature();
    info->name = s.names[index].c_str();
    info->instance_string = s.instance_strings[index].c_str();
    info->direction = static_cast<td_direction>(sig.direction);
    info->dtype = static_cast<td_dtype>(sig.dtype);
    info->ndim_spatial = sig.ndim_spatial;
    info->family = s.families[index].c_str();
  });
}

td_status td_conv_find_kernel(const char* name, size_t* index) {
  return guarded([&] {
    require(index != nullptr, "index is NULL");
    auto& s = state();
    *index = td::c_api::index_of(s, td::c_api::find(s, name));
  });
}

td_status td_conv_problem_validate(const td_conv_problem* problem) {
  return guarded([&] { (void)td::c_api::convert(problem); });
}

td_status td_conv_is_supported(const char* name, const td_conv_problem* problem, int* supported,
                               const char** reason) {
  return guarded([&] {
    require(supported != nullptr, "supported is NULL");
    const auto view = td::c_api::convert(problem);
    const td::Support result = td::c_api::supports(td::c_api::find(state(), name), view);
    *supported = result.ok ? 1 : 0;
    td::c_api::t_last_reason = result.reason;
    if (reason != nullptr) *reason = td::c_api::t_last_reason.c_str();
  });
}

td_status td_conv_select_kernel(const td_conv_problem* problem, const char** name) {
  return guarded([&] {
    require(name != nullptr, "name is NULL");
    const auto view = td::c_api::convert(problem);
    auto& s = state();
    *name = s.names[td::c_api::index_of(s, td::c_api::select(s, view))].c_str();
  });
}

td_status td_conv_workspace_size(const char* name, const td_conv_problem* problem, int32_t k_batch,
                                 size_t* bytes) {
  return guarded([&] {
    require(bytes != nullptr, "bytes is NULL");
    const auto view = td::c_api::convert(problem);
    auto& s = state();
    const td::GroupedConvInstance& instance = td::c_api::find(s, name);
    *bytes = instance.workspace_bytes(view.problem, td::c_api::resolve_k_batch(s, instance, view, k_batch));
  });
}

td_status td_conv_split_k(const char* name, const td_conv_problem* problem, int32_t sms, int32_t* preferred,
                          int32_t* factors, size_t capacity, size_t* count) {
  return guarded([&] {
    require(preferred != nullptr, "preferred is NULL");
    require(count != nullptr, "count is NULL");
    require(factors != nullptr || capacity == 0, "factors is NULL with capacity " + std::to_string(capacity));
    require(sms >= 0, "sms " + std::to_string(sms) + " is negative (0: the current device's count)");
    const auto view = td::c_api::convert(problem);
    const td::GroupedConvInstance& instance = td::c_api::require_supported(td::c_api::find(state(), name), view);
    const int count_sms = sms > 0 ? sms : td::c_api::sm_count_of(-1);
    const std::vector<int> candidates = instance.split_k_candidates(view.problem, count_sms);
    *preferred = instance.preferred_split_k(view.problem, count_sms);
    *count = candidates.size();
    for (size_t i = 0; i < candidates.size() && i < capacity; ++i) factors[i] = candidates[i];
  });
}

td_status td_conv_plan(const char* name, const td_conv_problem* problem, int32_t sms, const char** chosen,
                       int32_t* k_batch) {
  return guarded([&] {
    require(chosen != nullptr, "chosen is NULL");
    require(k_batch != nullptr, "k_batch is NULL");
    require(sms >= 0, "sms " + std::to_string(sms) + " is negative (0: the current device's count)");
    const auto view = td::c_api::convert(problem);
    auto& s = state();
    const td::GroupedConvInstance* only = name != nullptr ? &td::c_api::find(s, name) : nullptr;
    const td::LaunchChoice choice = td::c_api::plan(s, only, view, sms > 0 ? sms : td::c_api::sm_count_of(-1));
    *chosen = s.names[td::c_api::index_of(s, *choice.instance)].c_str();
    *k_batch = choice.k_batch;
  });
}

td_status td_conv_device_sm_count(int32_t device, int32_t* sms) {
  return guarded([&] {
    require(sms != nullptr, "sms is NULL");
    require(device >= -1, "device " + std::to_string(device) + " is not an ordinal or -1 (the current one)");
    *sms = td::c_api::sm_count_of(device);
  });
}

td_status td_conv_run(const char* name, const td_conv_problem* problem, const td_conv_args* args) {
  return guarded([&] { td::c_api::run(state(), name, problem, args); });
}

td_status td_conv_export_registry_json(const char** json) {
  return guarded([&] {
    require(json != nullptr, "json is NULL");
    auto& s = state();
    std::ostringstream out;
    out << "{\"api_version\":" << TD_C_API_VERSION << ",\"kernel_count\":" << s.instances.size()
        << ",\"kernels\":[";
    for (size_t i = 0; i < s.instances.size(); ++i) {
      const auto* instance = s.instances[i];
      const td::Signature sig = instance->signature();
      out << (i ? "," : "") << "{\"name\":" << td::c_api::json_string(instance->name())
          << ",\"instance_string\":" << td::c_api::json_string(instance->instance_string())
          << ",\"direction\":\"" << td::to_token(sig.direction) << "\",\"dtype\":\"" << td::to_token(sig.dtype)
          << "\",\"ndim_spatial\":" << sig.ndim_spatial << ",\"family\":\"" << s.families[i] << "\"}";
    }
    out << "]}";
    s.json = out.str();
    *json = s.json.c_str();
  });
}

td_status conv_dispatcher_init(void) { return td_conv_init(); }
td_status conv_dispatcher_cleanup(void) { return td_conv_cleanup(); }
td_status conv_dispatcher_get_kernel_count(size_t* count) { return td_conv_get_kernel_count(count); }
td_status conv_dispatcher_is_supported(const char* name, const td_conv_problem* problem, int* supported,
                                       const char** reason) {
  return td_conv_is_supported(name, problem, supported, reason);
}
td_status conv_dispatcher_select_kernel(const td_conv_problem* problem, const char** name) {
  return td_conv_select_kernel(problem, name);
}
td_status conv_dispatcher_run(const char* name, const td_conv_problem* problem, const td_conv_args* args) {
  return td_conv_run(name, problem, args);
}
td_status conv_dispatcher_export_registry_json(const char** json) { return td_conv_export_registry_json(json); }

}  // extern "C"
