// The profiler's command line: CK's positional form (`grouped_conv_fwd_tile 1 1 0 1 2 0 1 2 ...`) and the same
// operations as named flags. Parsing touches no CUDA API, so --list and --verify-instances run without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::profiler {

// A malformed or inconsistent command line: one line naming what is wrong; main adds the usage, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Mode { kRun, kList, kVerifyInstances, kHelp };

// How the tensors a direction reads are filled. CK's init code 0 ("no init") maps to kConstant: a constant is
// deterministic where uninitialised memory is not; like CK's it is for debugging only.
enum class InitMode { kFloat, kInteger, kConstant };

struct Options {
  Mode mode = Mode::kRun;
  std::optional<ConvDirection> subcommand;  // set by grouped_conv_<dir>_tile
  std::vector<ConvDirection> directions;    // what to run / list; empty means all three (list, verify)
  std::vector<DataType> dtypes{DataType::kFp16};
  std::optional<ConvProblem> problem;       // from the command line; else problems_file
  std::string problems_file;
  bool verify = true;
  InitMode init = InitMode::kFloat;
  bool log = false;
  bool time = true;
  int warmup = 5;
  int repeat = 20;
  std::vector<int> split_k;  // bwd_weight only; empty: each instance's own candidates (auto_split_k)
  std::string instance_regex;   // matched (std::regex_search) against the kernel name
  std::string csv_file;
  std::string json_file;
  std::vector<std::string> expected_files;
  uint64_t seed = 20260101;
  bool dry_run = false;  // print the jobs and matching instances, touch no GPU
  int select_top_k = 0;  // --select: 0 runs every matching instance, K the K best-ranked (heuristic: 1)
  std::string models_dir;  // --models: the exported selection models; empty: those compiled in (--select)
};

// Parses argv (without the program name). Throws UsageError.
Options parse_command_line(const std::vector<std::string>& args);

// Usage text: the general one, or that of one subcommand.
std::string usage(const std::optional<ConvDirection>& subcommand);

std::string subcommand_name(ConvDirection direction);
// The direction of a leading grouped_conv_<dir>_tile argument, if there is one (for the usage of a bad line).
std::optional<ConvDirection> leading_subcommand(const std::vector<std::string>& args);
std::string_view to_token(InitMode mode);

}  // namespace tiledispatch::profiler
