#include "problem_table.hpp"

#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "input_file.hpp"
#include "options.hpp"

namespace tiledispatch::profiler {
namespace {

constexpr const char* kRequired[] = {"N",        "C",        "K",        "G",          "Di",         "Hi",
                                     "Wi",       "Z",        "Y",        "X",          "stride_d",   "stride_h",
                                     "stride_w", "pad_d",    "pad_h",    "pad_w",      "dilation_d", "dilation_h",
                                     "dilation_w"};

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::vector<std::string> split_row(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

}  // namespace

std::vector<NamedProblem> read_problem_table(const std::string& path) {
  require_regular_file("--problems", path);
  std::ifstream in(path);
  if (!in) throw UsageError("--problems: cannot open '" + path + "'");
  std::string line;
  size_t line_no = 0;
  std::map<std::string, size_t> column;
  std::vector<NamedProblem> problems;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string stripped = trim(line);
    if (stripped.empty() || stripped[0] == '#') continue;
    const auto cells = split_row(stripped);
    const std::string where = path + ":" + std::to_string(line_no);
    if (column.empty()) {
      for (size_t i = 0; i < cells.size(); ++i) {
        if (!column.emplace(cells[i], i).second) throw UsageError(where + ": column '" + cells[i] + "' repeated");
      }
      for (const char* name : kRequired) {
        if (column.count(name) == 0) {
          throw UsageError(where + ": header lacks column '" + name +
                           "' (CK schema: N,C,K,G,Di,Hi,Wi,Z,Y,X,stride_d..w,pad_d..w,dilation_d..w; optional name)");
        }
      }
      continue;
    }
    if (cells.size() != column.size()) {
      throw UsageError(where + ": " + std::to_string(cells.size()) + " cells, the header has " +
                       std::to_string(column.size()));
    }
    auto get = [&](const std::string& name) {
      const std::string& text = cells[column.at(name)];
      int64_t value = 0;
      const char* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data(), end, value);
      if (text.empty() || ec != std::errc() || ptr != end) {
        throw UsageError(where + ": column '" + name + "': '" + text + "' is not an integer");
      }
      return value;
    };
    NamedProblem row;
    if (const auto it = column.find("name"); it != column.end()) row.name = cells[it->second];
    ConvProblem& p = row.problem;
    p.N = get("N");
    p.C = get("C");
    p.K = get("K");
    p.G = get("G");
    p.input = {get("Di"), get("Hi"), get("Wi")};
    p.filter = {get("Z"), get("Y"), get("X")};
    p.stride = {get("stride_d"), get("stride_h"), get("stride_w")};
    p.left_pad = {get("pad_d"), get("pad_h"), get("pad_w")};
    p.right_pad = p.left_pad;
    p.dilation = {get("dilation_d"), get("dilation_h"), get("dilation_w")};
    if (column.count("ndim") != 0) {
      p.ndim_spatial = static_cast<int>(get("ndim"));
    } else {
      const bool flat = p.input[0] == 1 && p.filter[0] == 1 && p.stride[0] == 1 && p.left_pad[0] == 0 &&
                        p.dilation[0] == 1;
      p.ndim_spatial = flat ? 2 : 3;
    }
    if (const std::string reason = p.validate(); !reason.empty()) {
      throw UsageError(where + ": invalid problem" + (row.name.empty() ? "" : " '" + row.name + "'") + ": " + reason);
    }
    problems.push_back(std::move(row));
  }
  if (column.empty()) throw UsageError("--problems: '" + path + "' has no header line");
  if (problems.empty()) throw UsageError("--problems: '" + path + "' has no problem rows");
  return problems;
}

}  // namespace tiledispatch::profiler
