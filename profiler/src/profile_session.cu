#include "profile_session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "device_tensors.hpp"
#include "tiledispatch/reference/device.cuh"
#include "tiledispatch/runtime/check.hpp"

namespace tiledispatch::profiler {
namespace {

std::string error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

// Events for the timed repeats, created once per sweep.
class EventPool {
 public:
  explicit EventPool(int pairs) {
    for (int i = 0; i < 2 * pairs; ++i) {
      cudaEvent_t event = nullptr;
      TD_CHECK_CUDA(cudaEventCreate(&event));
      events_.push_back(event);
    }
  }
  ~EventPool() {
    for (auto event : events_) (void)cudaEventDestroy(event);
  }
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  cudaEvent_t start(int i) const { return events_[2 * i]; }
  cudaEvent_t stop(int i) const { return events_[2 * i + 1]; }

 private:
  std::vector<cudaEvent_t> events_;
};

class Stream {
 public:
  Stream() { TD_CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

uint64_t seed_for(uint64_t seed, size_t problem_index, int role) {
  return seed * 0x100000001b3ULL + problem_index * 16 + static_cast<uint64_t>(role);
}

// A launch or execution error after which the context cannot be trusted.
bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

struct Tensors {
  DeviceBuffer input, weight, output;
  void* written = nullptr;
  size_t written_count = 0;
};

int multiprocessor_count() {
  int device = 0, sms = 0;
  TD_CHECK_CUDA(cudaGetDevice(&device));
  TD_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

struct Job {
  size_t problem_index;
  const NamedProblem* problem;
  ConvDirection direction;
  DataType dtype;
};

class Session {
 public:
  Session(const Options& options, const Registry& registry, KernelSelection* selection,
          std::vector<Result>& results, std::ostream& out)
      : options_(options),
        registry_(registry),
        selection_(selection),
        results_(results),
        out_(out),
        events_(options.time ? options.repeat : 0),
        pattern_(options.instance_regex),
        sms_(multiprocessor_count()) {}

  // Returns false when an instance failed.
  bool run(const Job& job);

 private:
  Tensors allocate(const Job& job);
  void finish(Result& r, bool& ok);
  double time_instance(const GroupedConvInstance& instance, const ConvProblem& problem, const ConvArgs& args,
                       std::string& error);

  const Options& options_;
  const Registry& registry_;
  KernelSelection* selection_;  // null unless --select
  std::vector<Result>& results_;
  std::ostream& out_;
  Stream stream_;
  EventPool events_;
  L2Flusher flusher_;
  DeviceBuffer workspace_;
  std::regex pattern_;
  int sms_;  // of the current device: sizes the automatic split-K list
};

Tensors Session::allocate(const Job& job) {
  const ConvProblem& p = job.problem->problem;
  const auto bytes = [&](int64_t elements) { return static_cast<size_t>(elements) * element_bytes(job.dtype); };
  Tensors t{DeviceBuffer(bytes(p.input_elements())), DeviceBuffer(bytes(p.weight_elements())),
            DeviceBuffer(bytes(p.output_elements()))};
  // Fill what the direction reads with fresh values (seeded by the problem), poison what it writes.
  struct Role {
    DeviceBuffer* buffer;
    int64_t elements;
    bool written;
  };
  const Role roles[] = {{&t.input, p.input_elements(), job.direction == ConvDirection::kBwdData},
                        {&t.weight, p.weight_elements(), job.direction == ConvDirection::kBwdWeight},
                        {&t.output, p.output_elements(), job.direction == ConvDirection::kFwd}};
  for (int role = 0; role < 3; ++role) {
    if (roles[role].written) {
      t.written = roles[role].buffer->get();
      t.written_count = static_cast<size_t>(roles[role].elements);
    } else {
      fill_tensor(roles[role].buffer->get(), job.dtype, static_cast<size_t>(roles[role].elements), options_.init,
                  seed_for(options_.seed, job.problem_index, role), stream_.get());
    }
  }
  return t;
}

double Session::time_instance(const GroupedConvInstance& instance, const ConvProblem& problem, const ConvArgs& args,
                              std::string& error) {
  for (int i = 0; i < options_.warmup; ++i) {
    if (const cudaError_t e = instance.run(problem, args); e != cudaSuccess) {
      error = "warm-up run returned " + error_text(e);
      return NAN;
    }
  }
  for (int i = 0; i < options_.repeat; ++i) {
    flusher_.flush(args.stream);
    TD_CHECK_CUDA(cudaEventRecord(events_.start(i), args.stream));
    if (const cudaError_t e = instance.run(problem, args); e != cudaSuccess) {
      error = "timed run returned " + error_text(e);
      return NAN;
    }
    TD_CHECK_CUDA(cudaEventRecord(events_.stop(i), args.stream));
  }
  if (const cudaError_t e = cudaStreamSynchronize(args.stream); e != cudaSuccess) {
    error = "timed runs failed: " + error_text(e);
    if (is_sticky(e)) throw ContextLostError(std::string(instance.name()) + ": " + error);
    return NAN;
  }
  std::vector<float> ms(static_cast<size_t>(options_.repeat));
  for (int i = 0; i < options_.repeat; ++i) {
    TD_CHECK_CUDA(cudaEventElapsedTime(&ms[i], events_.start(i), events_.stop(i)));
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

void Session::finish(Result& r, bool& ok) {
  if (r.status == Status::kFailed) ok = false;
  out_ << format_result_line(r) << '\n';
  results_.push_back(r);
}

bool Session::run(const Job& job) {
  const ConvProblem& p = job.problem->problem;
  const std::string label = job.problem->name.empty() ? "#" + std::to_string(job.problem_index) : job.problem->name;
  out_ << "problem " << label << ": " << tiledispatch::to_token(job.direction) << ' '
       << tiledispatch::to_token(job.dtype) << ' ' << p.to_string() << '\n';
  const auto candidates = registry_.filter([&](const GroupedConvInstance& instance) {
    const Signature s = instance.signature();
    return s.direction == job.direction && s.dtype == job.dtype && s.ndim_spatial == p.ndim_spatial &&
           (options_.instance_regex.empty() || std::regex_search(std::string(instance.name()), pattern_));
  });
  if (candidates.empty()) {
    out_ << "no registered instance matches " << tiledispatch::to_token(job.direction) << ' '
         << tiledispatch::to_token(job.dtype) << ' ' << p.ndim_spatial << "D"
         << (options_.instance_regex.empty() ? "" : " and --instances " + options_.instance_regex) << '\n';
    print_best({}, out_);
    return true;
  }

  std::map<const GroupedConvInstance*, std::vector<int>> chosen;  // --select: what runs, with which split-K
  if (selection_ != nullptr) {
    std::vector<const GroupedConvInstance*> supported;
    for (const auto* instance : candidates) {
      if (instance->is_supported(p)) supported.push_back(instance);
    }
    const auto pairs = selection_pairs(options_, job.direction, p, supported, sms_);
    const auto ranked = selection_->choose(p, job.direction, job.dtype, pairs);
    out_ << "selected " << ranked.size() << " of " << pairs.size()
         << " supported (instance, split-K) pairs by --select\n";
    for (const auto& [instance, k] : ranked) chosen[instance].push_back(k);
  }

  Tensors t = allocate(job);
  const size_t written_bytes = t.written_count * element_bytes(job.dtype);
  DeviceBuffer reference;
  if (options_.verify) {
    reference = DeviceBuffer(t.written_count * sizeof(float));
    poison_tensor(reference.get(), reference.bytes(), stream_.get());
    const ConvArgs in{t.input.get(), t.weight.get(), t.output.get(), nullptr, 0, 1, stream_.get()};
    TD_CHECK_CUDA(reference::run(job.direction, job.dtype, p, in, static_cast<float*>(reference.get())));
    const CompareStats check =
        compare_tensor(reference.get(), DataType::kFp32, nullptr, t.written_count, stream_.get());
    if (check.unwritten != 0 || check.non_finite != 0) {
      throw std::runtime_error("the reference left " + std::to_string(check.unwritten) + " elements unwritten and " +
                               std::to_string(check.non_finite) + " non-finite");
    }
  }

  bool ok = true;
  std::vector<Result> job_results;
  const double tol = relative_l2_tolerance(job.dtype);
  for (const GroupedConvInstance* instance : candidates) {
    if (selection_ != nullptr && chosen.count(instance) == 0) continue;
    Result base;
    base.problem_index = job.problem_index;
    base.problem_name = job.problem->name;
    base.problem = p;
    base.direction = job.direction;
    base.dtype = job.dtype;
    base.kernel = std::string(instance->name());
    base.instance_string = std::string(instance->instance_string());
    if (const Support support = instance->is_supported(p); !support) {
      base.status = Status::kNotSupported;
      base.reason = support.reason;
      finish(base, ok);
      job_results.push_back(base);
      continue;
    }
    const std::vector<int> split_ks =
        selection_ != nullptr ? chosen.at(instance) : split_ks_for(options_, job.direction, p, *instance, sms_);
    for (const int k : split_ks) {
      Result r = base;
      r.split_k = k;
      r.status = Status::kFailed;
      const size_t ws = instance->workspace_bytes(p, k);
      if (ws > workspace_.bytes()) workspace_ = DeviceBuffer(ws);
      const ConvArgs args{t.input.get(), t.weight.get(), t.output.get(), ws ? workspace_.get() : nullptr, ws, k,
                          stream_.get()};
      if (const Support accepted = instance->check_args(p, args); !accepted) {
        r.status = Status::kNotSupported;
        r.reason = "SplitK " + std::to_string(k) + ": " + accepted.reason;
        finish(r, ok);
        job_results.push_back(r);
        continue;
      }
      poison_tensor(t.written, written_bytes, stream_.get());
      if (const cudaError_t e = instance->run(p, args); e != cudaSuccess) {
        (void)cudaGetLastError();  // clear a non-sticky launch error so the next instance starts clean
        r.reason = "run returned " + error_text(e);
        finish(r, ok);
        job_results.push_back(r);
        continue;
      }
      if (const cudaError_t e = cudaStreamSynchronize(stream_.get()); e != cudaSuccess) {
        r.reason = "kernel failed: " + error_text(e);
        finish(r, ok);
        if (is_sticky(e)) throw ContextLostError(r.kernel + ": " + r.reason);
        (void)cudaGetLastError();
        job_results.push_back(r);
        continue;
      }
      const CompareStats stats = compare_tensor(t.written, job.dtype, options_.verify ? static_cast<const float*>(reference.get()) : nullptr,
                                                t.written_count, stream_.get());
      r.non_zero = stats.non_zero != 0;
      if (options_.log) print_head(t.written, job.dtype, options_.verify ? static_cast<const float*>(reference.get()) : nullptr,
                                   std::min<size_t>(8, t.written_count));
      if (stats.unwritten != 0) {
        r.reason = std::to_string(stats.unwritten) + " of " + std::to_string(t.written_count) +
                   " output elements not written";
      } else if (stats.non_finite != 0) {
        r.reason = std::to_string(stats.non_finite) + " of " + std::to_string(t.written_count) +
                   " output elements are NaN or Inf";
      } else if (options_.verify) {
        r.rel_l2_error = stats.rel_l2();
        r.verified = r.rel_l2_error <= tol;
        if (!*r.verified) {
          char figure[96];
          std::snprintf(figure, sizeof(figure), "relative L2 error %.3e > %.0e", r.rel_l2_error, tol);
          r.reason = figure;
        }
      }
      if (!r.reason.empty()) {
        finish(r, ok);
        job_results.push_back(r);
        continue;
      }
      if (options_.time) {
        std::string error;
        r.latency_ms = time_instance(*instance, p, args, error);
        if (!error.empty()) {
          r.reason = error;
          finish(r, ok);
          job_results.push_back(r);
          continue;
        }
        r.tflops = p.flops() / (r.latency_ms * 1e-3) / 1e12;
        r.gb_per_s = p.bytes(job.dtype) / (r.latency_ms * 1e-3) / 1e9;
      }
      r.status = Status::kValid;
      finish(r, ok);
      job_results.push_back(r);
    }
  }
  print_best(job_results, out_);
  return ok;
}

}  // namespace

std::string require_gpu() {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    const char* hint = e == cudaErrorInsufficientDriver ? ": no NVIDIA driver is loaded, or it is older than the runtime"
                       : e == cudaErrorNoDevice        ? ": no CUDA-capable device is present"
                                                       : "";
    throw NoGpuError(std::string("no usable CUDA GPU (cudaGetDeviceCount returned ") + cudaGetErrorName(e) + hint +
                     ")");
  }
  if (count == 0) throw NoGpuError("no CUDA GPU found");
  int device = 0;
  TD_CHECK_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  TD_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::ostringstream s;
  s << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount << " SMs, L2 "
    << prop.l2CacheSize / (1 << 20) << " MiB)";
  return s.str();
}


bool run_sweep(const Options& options, const Registry& registry, const std::vector<NamedProblem>& problems,
               KernelSelection* selection, std::vector<Result>& results, std::ostream& out,
               std::ostream& progress) {
  std::vector<Job> jobs;
  for (size_t i = 0; i < problems.size(); ++i) {
    for (const auto direction : options.directions) {
      for (const auto dtype : options.dtypes) jobs.push_back({i, &problems[i], direction, dtype});
    }
  }
  Session session(options, registry, selection, results, out);
  const auto started = std::chrono::steady_clock::now();
  bool ok = true;
  size_t failed_jobs = 0;
  for (size_t n = 0; n < jobs.size(); ++n) {
    if (!session.run(jobs[n])) {
      ok = false;
      ++failed_jobs;
    }
    out.flush();
    if (jobs.size() > 1) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const auto& job = jobs[n];
      char line[256];
      std::snprintf(line, sizeof(line), "[progress] %zu/%zu %s %s %s, %zu with failures, %.1f s\n", n + 1,
                    jobs.size(),
                    job.problem->name.empty() ? ("#" + std::to_string(job.problem_index)).c_str()
                                              : job.problem->name.c_str(),
                    std::string(tiledispatch::to_token(job.direction)).c_str(),
                    std::string(tiledispatch::to_token(job.dtype)).c_str(), failed_jobs, seconds);
      progress << line << std::flush;
    }
  }
  return ok;
}

}  // namespace tiledispatch::profiler
