#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <regex>
#include <sstream>

namespace tiledispatch::profiler {
namespace {

constexpr ConvDirection kAllDirections[] = {ConvDirection::kFwd, ConvDirection::kBwdData, ConvDirection::kBwdWeight};

// A token that looks like a flag; "-3" is a (negative) number, not a flag, so CK's positional pads can be read
// and then rejected with a message about the value.
bool is_flag(const std::string& token) {
  return token.size() >= 2 && token[0] == '-' && !std::isdigit(static_cast<unsigned char>(token[1]));
}

int64_t parse_int(const std::string& what, const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(what + ": '" + text + "' is not an integer");
  }
  return value;
}

int parse_int32(const std::string& what, const std::string& text, int64_t min_value) {
  const int64_t value = parse_int(what, text);
  if (value < min_value || value > std::numeric_limits<int>::max()) {
    throw UsageError(what + ": " + text + " is out of range (accepted: " + std::to_string(min_value) + " or more)");
  }
  return static_cast<int>(value);
}

bool parse_bool01(const std::string& what, const std::string& text) {
  if (text == "0") return false;
  if (text == "1") return true;
  throw UsageError(what + ": '" + text + "' is not accepted (accepted: 0, 1)");
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!text.empty() && text.back() == sep) parts.emplace_back();
  return parts;
}

// A comma list of distinct values: an empty list or a value given twice is a usage error (a repeated direction,
// dtype or split-K would run and report every problem twice).
template <typename T, typename Parse>
std::vector<T> parse_distinct_list(const std::string& flag, const std::string& text, Parse parse) {
  std::vector<T> values;
  for (const auto& token : split(text, ',')) {
    const T value = parse(token);
    if (std::find(values.begin(), values.end(), value) != values.end()) {
      throw UsageError(flag + ": '" + token + "' given twice");
    }
    values.push_back(value);
  }
  if (values.empty()) throw UsageError(flag + ": empty list");
  return values;
}

std::vector<int64_t> parse_int_list(const std::string& what, const std::string& text) {
  std::vector<int64_t> values;
  for (const auto& part : split(text, ',')) values.push_back(parse_int(what, part));
  if (values.empty()) throw UsageError(what + ": empty list");
  return values;
}

DataType parse_dtype_token(const std::string& text) {
  if (const auto dtype = parse_data_type(text)) return *dtype;
  throw UsageError("unknown dtype '" + text + "' (accepted: fp16, bf16, fp32)");
}

// CK's data type codes: 0 fp32, 1 fp16, 2 bf16.
DataType parse_dtype_code(const std::string& text) {
  if (text == "0") return DataType::kFp32;
  if (text == "1") return DataType::kFp16;
  if (text == "2") return DataType::kBf16;
  throw UsageError("unknown data type code '" + text + "' (accepted: 0 fp32, 1 fp16, 2 bf16)");
}

ConvDirection parse_direction_token(const std::string& text) {
  if (const auto direction = parse_direction(text)) return *direction;
  throw UsageError("unknown direction '" + text + "' (accepted: fwd, bwd_data, bwd_weight)");
}

InitMode parse_init_token(const std::string& text) {
  if (text == "float" || text == "2") return InitMode::kFloat;
  if (text == "int" || text == "1") return InitMode::kInteger;
  if (text == "constant" || text == "0") return InitMode::kConstant;
  throw UsageError("unknown init mode '" + text + "' (accepted: float or 2, int or 1, constant or 0)");
}

std::optional<ConvDirection> parse_subcommand(const std::string& token) {
  for (const auto direction : kAllDirections) {
    if (token == subcommand_name(direction)) return direction;
  }
  return std::nullopt;
}

// The problem as it is being assembled from named flags; spatial lists are checked against ndim at the end.
struct ProblemFlags {
  std::optional<int> ndim;
  std::optional<int64_t> G, N, K, C;
  std::optional<std::vector<int64_t>> filter, input, stride, dilation, left_pad, right_pad;

  bool any() const {
    return ndim || G || N || K || C || filter || input || stride || dilation || left_pad || right_pad;
  }
};

void set_spatial(std::array<int64_t, 3>& target, const std::vector<int64_t>& values, int ndim) {
  // Arrays are D, H, W: a 2D list fills H and W and leaves D at its default.
  const int offset = 3 - ndim;
  for (int i = 0; i < ndim; ++i) target[offset + i] = values[i];
}

ConvProblem assemble(const ProblemFlags& flags) {
  int ndim = 2;
  if (flags.ndim) {
    ndim = *flags.ndim;
  } else if (flags.filter) {
    ndim = static_cast<int>(flags.filter->size());
  } else if (flags.input) {
    ndim = static_cast<int>(flags.input->size());
  }
  if (ndim != 2 && ndim != 3) throw UsageError("--ndim: " + std::to_string(ndim) + " is not accepted (accepted: 2, 3)");
  if (!flags.N || !flags.K || !flags.C) throw UsageError("a problem needs -N, -K and -C");
  if (!flags.filter || !flags.input) throw UsageError("a problem needs --filter and --input");

  ConvProblem problem;
  problem.ndim_spatial = ndim;
  problem.G = flags.G.value_or(1);
  problem.N = *flags.N;
  problem.K = *flags.K;
  problem.C = *flags.C;
  const std::pair<const char*, const std::optional<std::vector<int64_t>>*> lists[] = {
      {"--filter", &flags.filter},     {"--input", &flags.input},       {"--stride", &flags.stride},
      {"--dilation", &flags.dilation}, {"--left-pad", &flags.left_pad}, {"--right-pad", &flags.right_pad}};
  std::array<int64_t, 3>* targets[] = {&problem.filter,   &problem.input,    &problem.stride,
                                       &problem.dilation, &problem.left_pad, &problem.right_pad};
  for (size_t i = 0; i < std::size(lists); ++i) {
    const auto& [flag, values] = lists[i];
    if (!*values) continue;
    if (static_cast<int>((*values)->size()) != ndim) {
      throw UsageError(std::string(flag) + ": " + std::to_string((*values)->size()) + " values given, a " +
                       std::to_string(ndim) + "D problem needs " + std::to_string(ndim));
    }
    set_spatial(*targets[i], **values, ndim);
  }
  return problem;
}

// CK's positional arguments after the subcommand:
// dtype layout index_type verify init log time ndim G N K C filter.. input.. stride.. dilation.. lpad.. rpad..
// and, for bwd_weight, an optional trailing split-K.
void parse_positional(const std::vector<std::string>& tokens, ConvDirection direction, Options& options) {
  constexpr size_t kHead = 12;
  if (tokens.size() < 8) {
    throw UsageError("expected CK's positional arguments (at least 8 before the problem), got " +
                     std::to_string(tokens.size()));
  }
  options.dtypes = {parse_dtype_code(tokens[0])};
  if (tokens[1] != "1") {
    throw UsageError("layout '" + tokens[1] + "' is not accepted (accepted: 1 = NHWGC/GKYXC/NHWGK)");
  }
  if (tokens[2] != "0" && tokens[2] != "1") {
    throw UsageError("index type '" + tokens[2] + "' is not accepted (accepted: 0 int32, 1 int64)");
  }
  options.verify = parse_bool01("verify", tokens[3]);
  if (tokens[4] != "0" && tokens[4] != "1" && tokens[4] != "2") {
    throw UsageError("init '" + tokens[4] + "' is not accepted (accepted: 0 constant, 1 integer, 2 float)");
  }
  options.init = parse_init_token(tokens[4]);
  options.log = parse_bool01("log", tokens[5]);
  options.time = parse_bool01("time", tokens[6]);
  const int64_t ndim = parse_int("ndim", tokens[7]);
  if (ndim != 2 && ndim != 3) throw UsageError("ndim: " + tokens[7] + " is not accepted (accepted: 2, 3)");
  const size_t needed = kHead + 6 * static_cast<size_t>(ndim);
  const bool trailing_split_k = direction == ConvDirection::kBwdWeight && tokens.size() == needed + 1;
  if (tokens.size() != needed && !trailing_split_k) {
    throw UsageError("a " + std::to_string(ndim) + "D problem needs " + std::to_string(needed) +
                     " positional arguments (dtype layout index verify init log time ndim G N K C, then " +
                     std::to_string(ndim) + " each of filter, input, strides, dilations, left pads, right pads)" +
                     (direction == ConvDirection::kBwdWeight ? " and an optional split-K" : "") + "; got " +
                     std::to_string(tokens.size()));
  }
  ProblemFlags flags;
  flags.ndim = static_cast<int>(ndim);
  flags.G = parse_int("G", tokens[8]);
  flags.N = parse_int("N", tokens[9]);
  flags.K = parse_int("K", tokens[10]);
  flags.C = parse_int("C", tokens[11]);
  const char* names[] = {"filter", "input", "stride", "dilation", "left pad", "right pad"};
  std::optional<std::vector<int64_t>>* lists[] = {&flags.filter,   &flags.input,    &flags.stride,
                                                  &flags.dilation, &flags.left_pad, &flags.right_pad};
  size_t at = kHead;
  for (size_t i = 0; i < std::size(lists); ++i) {
    std::vector<int64_t> values;
    for (int64_t d = 0; d < ndim; ++d) values.push_back(parse_int(names[i], tokens[at++]));
    *lists[i] = values;
  }
  options.problem = assemble(flags);
  if (trailing_split_k) options.split_k = {parse_int32("split-K", tokens[needed], 1)};
}

// Takes the value of a flag: "--flag=value" or the next token.
std::string take_value(const std::vector<std::string>& args, size_t& i, const std::string& flag,
                       const std::optional<std::string>& inline_value) {
  if (inline_value) return *inline_value;
  if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
  return args[++i];
}

void check_problem(const ConvProblem& problem) {
  const std::string reason = problem.validate();
  if (!reason.empty()) throw UsageError("invalid problem (" + problem.to_string() + "): " + reason);
}

}  // namespace

std::string subcommand_name(ConvDirection direction) {
  return "grouped_conv_" + std::string(tiledispatch::to_token(direction)) + "_tile";
}

std::string_view to_token(InitMode mode) {
  switch (mode) {
    case InitMode::kFloat: return "float";
    case InitMode::kInteger: return "int";
    case InitMode::kConstant: return "constant";
  }
  return "?";
}

std::optional<ConvDirection> leading_subcommand(const std::vector<std::string>& args) {
  return args.empty() ? std::nullopt : parse_subcommand(args[0]);
}

Options parse_command_line(const std::vector<std::string>& args) {
  Options options;
  size_t i = 0;
  if (!args.empty() && !is_flag(args[0])) {
    options.subcommand = parse_subcommand(args[0]);
    if (!options.subcommand) {
      throw UsageError("unknown subcommand '" + args[0] +
                       "' (accepted: grouped_conv_fwd_tile, grouped_conv_bwd_data_tile, grouped_conv_bwd_weight_tile)");
    }
    i = 1;
  }
  for (const auto& arg : args) {
    if (arg == "--help" || arg == "-h") {
      options.mode = Mode::kHelp;
      return options;
    }
  }
  if (options.subcommand) {
    options.directions = {*options.subcommand};
    std::vector<std::string> positional;
    while (i < args.size() && !is_flag(args[i])) positional.push_back(args[i++]);
    if (!positional.empty()) parse_positional(positional, *options.subcommand, options);
  }

  ProblemFlags flags;
  bool list = false;
  bool split_k_given = false;
  for (; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    auto value = [&]() { return take_value(args, i, flag, inline_value); };
    if (!is_flag(flag)) {
      throw UsageError("unexpected argument '" + flag + "' (positional arguments come right after the subcommand)");
    } else if (flag == "--list") {
      list = true;
    } else if (flag == "--dry-run") {
      options.dry_run = true;
    } else if (flag == "--verify-instances") {
      options.expected_files.push_back(value());
      // Several files may follow one flag: every token up to the next flag.
      while (!inline_value && i + 1 < args.size() && !is_flag(args[i + 1])) options.expected_files.push_back(args[++i]);
    } else if (flag == "--direction") {
      const std::vector<ConvDirection> directions =
          parse_distinct_list<ConvDirection>(flag, value(), parse_direction_token);
      if (options.subcommand && (directions.size() != 1 || directions[0] != *options.subcommand)) {
        throw UsageError("--direction contradicts the subcommand " + subcommand_name(*options.subcommand));
      }
      options.directions = directions;
    } else if (flag == "--dtype") {
      options.dtypes = parse_distinct_list<DataType>(flag, value(), parse_dtype_token);
    } else if (flag == "--ndim") {
      flags.ndim = parse_int32(flag, value(), std::numeric_limits<int>::min());
    } else if (flag == "-G") {
      flags.G = parse_int(flag, value());
    } else if (flag == "-N") {
      flags.N = parse_int(flag, value());
    } else if (flag == "-K") {
      flags.K = parse_int(flag, value());
    } else if (flag == "-C") {
      flags.C = parse_int(flag, value());
    } else if (flag == "--filter") {
      flags.filter = parse_int_list(flag, value());
    } else if (flag == "--input") {
      flags.input = parse_int_list(flag, value());
    } else if (flag == "--stride") {
      flags.stride = parse_int_list(flag, value());
    } else if (flag == "--dilation") {
      flags.dilation = parse_int_list(flag, value());
    } else if (flag == "--pad") {
      flags.left_pad = parse_int_list(flag, value());
      flags.right_pad = flags.left_pad;
    } else if (flag == "--left-pad") {
      flags.left_pad = parse_int_list(flag, value());
    } else if (flag == "--right-pad") {
      flags.right_pad = parse_int_list(flag, value());
    } else if (flag == "--verify") {
      options.verify = parse_bool01(flag, value());
    } else if (flag == "--init") {
      options.init = parse_init_token(value());
    } else if (flag == "--log") {
      options.log = parse_bool01(flag, value());
    } else if (flag == "--time") {
      options.time = parse_bool01(flag, value());
    } else if (flag == "--warmup") {
      options.warmup = parse_int32(flag, value(), 0);
    } else if (flag == "--repeat") {
      options.repeat = parse_int32(flag, value(), 1);
    } else if (flag == "--split-k") {
      options.split_k =
          parse_distinct_list<int>(flag, value(), [&flag](const std::string& token) { return parse_int32(flag, token, 1); });
      split_k_given = true;
    } else if (flag == "--instances") {
      options.instance_regex = value();
      try {
        (void)std::regex(options.instance_regex);
      } catch (const std::regex_error& e) {
        throw UsageError("--instances: '" + options.instance_regex + "' is not a valid regular expression (" +
                         e.what() + ")");
      }
    } else if (flag == "--problems") {
      options.problems_file = value();
    } else if (flag == "--csv") {
      options.csv_file = value();
    } else if (flag == "--json") {
      options.json_file = value();
    } else if (flag == "--select") {
      const std::string text = value();
      if (text == "all") {
        options.select_top_k = 0;
      } else if (text == "heuristic") {
        options.select_top_k = 1;
      } else if (text.rfind("topk=", 0) == 0) {
        options.select_top_k = parse_int32("--select topk", text.substr(5), 1);
      } else {
        throw UsageError("--select: '" + text + "' is not accepted (accepted: all, heuristic, topk=K)");
      }
    } else if (flag == "--models") {
      options.models_dir = value();
      if (options.models_dir.empty()) {
        throw UsageError("--models: an empty path (accepted: a folder holding fwd.trees, bwd_data.trees, "
                         "bwd_weight.trees)");
      }
    } else if (flag == "--seed") {
      options.seed = static_cast<uint64_t>(parse_int(flag, value()));
    } else {
      throw UsageError("unknown option '" + flag + "'");
    }
  }

  if (list && !options.expected_files.empty()) throw UsageError("give --list or --verify-instances, not both");
  if (list || !options.expected_files.empty()) {
    if (flags.any() || options.problem || !options.problems_file.empty()) {
      throw UsageError(std::string(list ? "--list" : "--verify-instances") + " takes no problem");
    }
    options.mode = list ? Mode::kList : Mode::kVerifyInstances;
    return options;
  }

  if (flags.any()) {
    if (options.problem) throw UsageError("the problem is given both positionally and by named flags");
    options.problem = assemble(flags);
  }
  if (options.problem && !options.problems_file.empty()) {
    throw UsageError("give either --problems FILE or one problem on the command line, not both");
  }
  if (!options.problem && options.problems_file.empty()) {
    throw UsageError("no problem given (CK's positional arguments, named flags such as -N -K -C --filter --input, "
                     "or --problems FILE)");
  }
  if (options.directions.empty()) {
    throw UsageError("no direction given (use a grouped_conv_<dir>_tile subcommand or --direction)");
  }
  const bool has_bwd_weight = [&] {
    for (const auto d : options.directions) {
      if (d == ConvDirection::kBwdWeight) return true;
    }
    return false;
  }();
  if (split_k_given && !has_bwd_weight) throw UsageError("--split-k applies to bwd_weight only");
  if (options.problem) check_problem(*options.problem);
  return options;
}

std::string usage(const std::optional<ConvDirection>& subcommand) {
  std::ostringstream s;
  const std::string named =
      "  named flags (instead of, or after, the positional arguments):\n"
      "    --dtype fp16|bf16|fp32[,..]  --ndim 2|3  -G g -N n -K k -C c\n"
      "    --filter [z,]y,x  --input [d,]h,w  --stride ..  --dilation ..  --pad ..  (--left-pad .. --right-pad ..)\n"
      "    --verify 0|1 (1)  --init float|int|constant (float)  --log 0|1  --time 0|1 (1)\n"
      "    --warmup N (5)  --repeat N (20)  --instances REGEX  --seed N\n"
      "    --problems FILE.csv  --csv FILE  --json FILE\n"
      "    --list  --verify-instances EXPECTED.txt [MORE.txt ..]\n"
      "    --dry-run  print the jobs and the matching instances without running anything\n"
      "    --select all|heuristic|topk=K  run every instance (all), or only the K best-ranked by the selection\n"
      "      models (heuristic = topk=1), reporting the best\n"
      "    --models DIR  the selection models (default: heuristics/models as this profiler was built with)\n";
  if (subcommand) {
    const bool bwd_weight = *subcommand == ConvDirection::kBwdWeight;
    s << "usage: tiledispatch_profiler " << subcommand_name(*subcommand)
      << " <dtype 0 fp32|1 fp16|2 bf16> <layout 1 NHWGC/GKYXC/NHWGK> <index_type 0|1> <verify 0|1>"
         " <init 0 constant|1 int|2 float> <log 0|1> <time 0|1> <ndim 2|3> G N K C <filter..> <input..>"
         " <strides..> <dilations..> <left pads..> <right pads..>"
      << (bwd_weight ? " [split_k]" : "") << " [named flags]\n"
      << "   or: tiledispatch_profiler " << subcommand_name(*subcommand) << " [named flags]\n"
      << named;
    if (bwd_weight) s << "    --split-k K[,K..]  split-K factors to try (default: 1 and doublings while the grid is under two waves of SMs)\n";
    s << "  example: tiledispatch_profiler " << subcommand_name(*subcommand)
      << " 1 1 0 1 2 0 1 2 1 32 256 256 3 3 56 56 1 1 1 1 1 1 1 1\n";
  } else {
    s << "usage: tiledispatch_profiler grouped_conv_{fwd|bwd_data|bwd_weight}_tile <CK positional arguments> "
         "[named flags]\n"
      << "   or: tiledispatch_profiler --direction fwd|bwd_data|bwd_weight[,..] [named flags]\n"
      << "   or: tiledispatch_profiler [subcommand] --list | --verify-instances FILE..\n"
      << named << "    --direction D[,D..]  --split-k K[,K..] (bwd_weight)\n"
      << "  tiledispatch_profiler <subcommand> --help describes one subcommand\n";
  }
  s << "  exit status: 0 ok, 1 an instance failed or the instance lists differ, 2 usage error, 3 no GPU or a CUDA "
       "or file error\n";
  return s.str();
}

}  // namespace tiledispatch::profiler
