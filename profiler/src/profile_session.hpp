// The run path: for every (problem, direction, dtype) the matching instances are checked for support, run on
// poisoned outputs, verified against the reference, timed with a cold L2, and reported CK-style.
#pragma once

#include <ostream>
#include <stdexcept>
#include <vector>

#include "kernel_selection.hpp"
#include "options.hpp"
#include "problem_table.hpp"
#include "report.hpp"
#include "tiledispatch/runtime/registry.hpp"

namespace tiledispatch::profiler {

// No usable GPU: the one error the run path gives on a machine without one.
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel fault that leaves the CUDA context unusable: the sweep stops (the failure is already recorded).
class ContextLostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The first CUDA call of the process: throws NoGpuError when no device answers; returns a one-line description.
std::string require_gpu();


// Runs every job, appending one Result per (instance, split-K) to `results` as it goes; with a `selection`
// (--select), only the (instance, split-K) pairs it chooses among the supported ones. Per-instance lines and
// the best block go to `out`, progress lines to `progress`. Returns false when any instance failed.
bool run_sweep(const Options& options, const Registry& registry, const std::vector<NamedProblem>& problems,
               KernelSelection* selection, std::vector<Result>& results, std::ostream& out,
               std::ostream& progress);

}  // namespace tiledispatch::profiler
