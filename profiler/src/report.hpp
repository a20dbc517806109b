// What one (problem, instance, split-K) run produced, the CK-style lines printed for it, and the sweep files
// (--csv: upstream result schema plus our columns; --json: the same records).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::profiler {

enum class Status { kValid, kFailed, kNotSupported };

struct Result {
  size_t problem_index = 0;
  std::string problem_name;
  ConvProblem problem;
  ConvDirection direction = ConvDirection::kFwd;
  DataType dtype = DataType::kFp16;
  std::string kernel;
  std::string instance_string;
  Status status = Status::kNotSupported;
  std::string reason;  // why not supported, or the failure figure
  int split_k = 1;
  double latency_ms = std::numeric_limits<double>::quiet_NaN();  // median of the timed repeats; NaN if not timed
  double tflops = std::numeric_limits<double>::quiet_NaN();
  double gb_per_s = std::numeric_limits<double>::quiet_NaN();
  std::optional<bool> verified;  // empty when verification was off or the run never completed
  double rel_l2_error = std::numeric_limits<double>::quiet_NaN();
  bool non_zero = false;  // the written tensor holds a non-zero element (upstream's sanity column)
};

std::string_view to_token(Status status);

// "[Valid] Perf: ...", "[Not supported] name: reason" or "[Failed] name: figure".
std::string format_result_line(const Result& result);

// CK's closing block for one (problem, direction, dtype): the fastest valid result, or a note that none was.
void print_best(const std::vector<Result>& results, std::ostream& out);

// Both write to a temporary file beside `path` and rename it, so a file is never left half-written.
// Throw std::runtime_error when the file cannot be written.
void write_csv(const std::string& path, const std::vector<Result>& results);
void write_json(const std::string& path, const std::vector<Result>& results);

}  // namespace tiledispatch::profiler
