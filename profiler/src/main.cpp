// tiledispatch_profiler: CK's `ckProfiler grouped_conv_*_tile` for the tiledispatch instance libraries.
// Exit status: 0 ok; 1 an instance failed, or --verify-instances found a difference; 2 usage error;
// 3 no GPU, a CUDA error outside an instance, a registry error or an unwritable output file.
#include <exception>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "instance_catalog.hpp"
#include "kernel_selection.hpp"
#include "options.hpp"
#include "problem_table.hpp"
#include "profile_session.hpp"
#include "registration.hpp"
#include "report.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/registry.hpp"

namespace td = tiledispatch;
namespace tp = tiledispatch::profiler;

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitEnvironment = 3;

int usage_error(const std::string& what, const std::optional<td::ConvDirection>& subcommand) {
  std::cerr << "error: " << what << '\n' << tp::usage(subcommand);
  return kExitUsage;
}

void write_reports(const tp::Options& options, const std::vector<tp::Result>& results) {
  if (!options.csv_file.empty()) tp::write_csv(options.csv_file, results);
  if (!options.json_file.empty()) tp::write_json(options.json_file, results);
}

// --dry-run --select: the (instance, split-K) pairs a run would keep among the supported ones.
void print_selection(tp::KernelSelection& selection, const td::ConvProblem& p, td::ConvDirection direction,
                     td::DataType dtype, const std::vector<const td::GroupedConvInstance*>& matching,
                     const tp::Options& options) {
  std::vector<const td::GroupedConvInstance*> supported;
  for (const auto* instance : matching) {
    if (instance->is_supported(p)) supported.push_back(instance);
  }
  // Automatic split-K lists sized for an H100's 132 SMs: a dry run asks no GPU for its multiprocessor count.
  constexpr int kDryRunSms = 132;
  const auto pairs = tp::selection_pairs(options, direction, p, supported, kDryRunSms);
  const auto chosen = selection.choose(p, direction, dtype, pairs);
  std::cout << "  --select keeps " << chosen.size() << " of " << pairs.size()
            << " supported (instance, split-K) pairs:\n";
  for (const auto& [instance, k] : chosen) std::cout << "    " << instance->name() << " split-K " << k << '\n';
}

// --dry-run: what a run would do, from host data only.
void print_plan(const tp::Options& options, const td::Registry& registry,
                const std::vector<tp::NamedProblem>& problems, tp::KernelSelection* selection) {
  const std::regex pattern(options.instance_regex);
  for (size_t i = 0; i < problems.size(); ++i) {
    const td::ConvProblem& p = problems[i].problem;
    for (const auto direction : options.directions) {
      for (const auto dtype : options.dtypes) {
        const auto matching = registry.filter([&](const td::GroupedConvInstance& instance) {
          const td::Signature s = instance.signature();
          return s.direction == direction && s.dtype == dtype && s.ndim_spatial == p.ndim_spatial &&
                 (options.instance_regex.empty() || std::regex_search(std::string(instance.name()), pattern));
        });
        std::cout << "problem " << (problems[i].name.empty() ? "#" + std::to_string(i) : problems[i].name) << ": "
                  << td::to_token(direction) << ' ' << td::to_token(dtype) << ' ' << p.to_string();
        if (direction == td::ConvDirection::kBwdWeight) {
          std::cout << " split-K";
          if (options.split_k.empty()) std::cout << " auto";
          for (size_t k = 0; k < options.split_k.size(); ++k) std::cout << (k ? "," : " ") << options.split_k[k];
        }
        std::cout << ", " << matching.size() << " matching instances\n";
        for (const auto* instance : matching) std::cout << "  " << instance->name() << '\n';
        if (selection != nullptr) print_selection(*selection, p, direction, dtype, matching, options);
      }
    }
  }
  std::cout << "verify " << options.verify << ", init " << tp::to_token(options.init) << ", time " << options.time
            << ", warmup " << options.warmup << ", repeat " << options.repeat << '\n';
}

// The run path. The registry is filled before the first CUDA call, so a registry error is reported as such.
int run_problems(const tp::Options& options, const td::Registry& registry) {
  const std::vector<tp::NamedProblem> problems =
      options.problem ? std::vector<tp::NamedProblem>{{"", *options.problem}} : tp::read_problem_table(options.problems_file);
  std::optional<tp::KernelSelection> selection;
  if (options.select_top_k > 0) selection.emplace(options);
  tp::KernelSelection* selected = selection ? &*selection : nullptr;
  if (options.dry_run) {
    print_plan(options, registry, problems, selected);
    return 0;
  }
  const std::string device = tp::require_gpu();
  std::cout << "device: " << device << '\n';
  std::vector<tp::Result> results;
  bool ok = false;
  try {
    ok = tp::run_sweep(options, registry, problems, selected, results, std::cout, std::cerr);
  } catch (const tp::ContextLostError& e) {
    std::cout.flush();
    std::cerr << "error: the CUDA context is lost after " << e.what() << "; stopping the sweep\n";
    write_reports(options, results);
    return kExitFailed;
  }
  write_reports(options, results);
  return ok ? 0 : kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  tp::Options options;
  try {
    options = tp::parse_command_line(args);
  } catch (const tp::UsageError& e) {
    return usage_error(e.what(), tp::leading_subcommand(args));
  }
  if (options.mode == tp::Mode::kHelp) {
    std::cout << tp::usage(options.subcommand);
    return 0;
  }
  try {
    td::Registry registry;
    tp::register_all_instances(registry);
    switch (options.mode) {
      case tp::Mode::kList:
        tp::print_instance_list(registry, options.directions, options.instance_regex, std::cout);
        return 0;
      case tp::Mode::kVerifyInstances:
        return tp::verify_instances(registry, options.expected_files, options.subcommand, std::cout) ? 0
                                                                                                      : kExitFailed;
      case tp::Mode::kRun:
        return run_problems(options, registry);
      case tp::Mode::kHelp:
        break;
    }
  } catch (const tp::UsageError& e) {
    return usage_error(e.what(), options.subcommand);
  } catch (const tp::NoGpuError& e) {
    std::cerr << "error: " << e.what() << " (--list and --verify-instances work without one)\n";
    return kExitEnvironment;
  } catch (const td::RegistryError& e) {
    std::cerr << "error: instance registration failed: " << e.what() << '\n';
    return kExitEnvironment;
  } catch (const td::CudaError& e) {
    std::cerr << "error: CUDA: " << e.what() << '\n';
    return kExitEnvironment;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitEnvironment;
  }
  return 0;
}
