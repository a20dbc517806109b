#include "instance_catalog.hpp"

#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "input_file.hpp"
#include "options.hpp"

namespace tiledispatch::profiler {
namespace {

constexpr ConvDirection kAllDirections[] = {ConvDirection::kFwd, ConvDirection::kBwdData, ConvDirection::kBwdWeight};

std::optional<ConvDirection> direction_of_kernel_name(const std::string& name) {
  for (const auto direction : kAllDirections) {
    if (name.rfind("grouped_conv_" + std::string(tiledispatch::to_token(direction)) + "_", 0) == 0) return direction;
  }
  return std::nullopt;
}

std::optional<ConvDirection> direction_of_file_name(const std::string& path) {
  const std::string base = path.substr(path.find_last_of('/') + 1);
  for (const auto direction : kAllDirections) {
    if (base == "expected_" + std::string(tiledispatch::to_token(direction)) + ".txt") return direction;
  }
  return std::nullopt;
}

struct ExpectedFile {
  std::optional<ConvDirection> direction;
  std::map<std::string, std::string> entries;  // name -> instance string
};

ExpectedFile read_expected(const std::string& path, const std::optional<ConvDirection>& subcommand) {
  require_regular_file("--verify-instances", path);
  std::ifstream in(path);
  if (!in) throw UsageError("--verify-instances: cannot open '" + path + "'");
  ExpectedFile file;
  std::string line;
  size_t line_no = 0;
  std::set<ConvDirection> named_directions;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    const auto tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 == line.size()) {
      throw UsageError(where + ": expected \"<name>\\t<instance string>\", got '" + line + "'");
    }
    std::string name = line.substr(0, tab);
    if (const auto direction = direction_of_kernel_name(name)) named_directions.insert(*direction);
    if (!file.entries.emplace(name, line.substr(tab + 1)).second) {
      throw UsageError(where + ": kernel '" + name + "' listed twice");
    }
  }
  if (subcommand) {
    file.direction = subcommand;
  } else if (const auto by_file = direction_of_file_name(path)) {
    file.direction = by_file;
  } else if (named_directions.size() == 1) {
    file.direction = *named_directions.begin();
  } else {
    throw UsageError("--verify-instances: cannot tell the direction of '" + path +
                     "' (name it expected_<fwd|bwd_data|bwd_weight>.txt or use a grouped_conv_<dir>_tile subcommand)");
  }
  return file;
}

}  // namespace

void print_instance_list(const Registry& registry, const std::vector<ConvDirection>& directions,
                         const std::string& regex, std::ostream& out) {
  const std::regex pattern(regex);
  const std::set<ConvDirection> wanted(directions.begin(), directions.end());
  for (const GroupedConvInstance* instance : registry.list()) {
    if (!wanted.empty() && wanted.count(instance->signature().direction) == 0) continue;
    const std::string name(instance->name());
    if (!regex.empty() && !std::regex_search(name, pattern)) continue;
    out << name << '\t' << instance->instance_string() << '\n';
  }
}

bool verify_instances(const Registry& registry, const std::vector<std::string>& files,
                      const std::optional<ConvDirection>& subcommand, std::ostream& out) {
  std::map<std::string, std::string> expected;
  std::set<ConvDirection> covered;
  for (const auto& path : files) {
    const ExpectedFile file = read_expected(path, subcommand);
    covered.insert(*file.direction);
    for (const auto& [name, instance_string] : file.entries) {
      if (!expected.emplace(name, instance_string).second) {
        throw UsageError("--verify-instances: kernel '" + name + "' is listed in more than one file");
      }
    }
  }
  std::map<std::string, std::string> registered;
  for (const GroupedConvInstance* instance : registry.list()) {
    if (covered.count(instance->signature().direction) != 0) {
      registered.emplace(std::string(instance->name()), std::string(instance->instance_string()));
    }
  }

  std::vector<std::pair<std::string, std::string>> missing, extra;
  std::vector<std::string> differ;
  for (const auto& [name, instance_string] : expected) {
    const auto it = registered.find(name);
    if (it == registered.end()) {
      missing.emplace_back(name, instance_string);
    } else if (it->second != instance_string) {
      differ.push_back(name);
    }
  }
  for (const auto& [name, instance_string] : registered) {
    if (expected.count(name) == 0) extra.emplace_back(name, instance_string);
  }

  std::string scope;
  for (const auto direction : covered) scope += (scope.empty() ? "" : ", ") + std::string(tiledispatch::to_token(direction));
  out << "verify-instances (" << scope << "): " << expected.size() << " expected, " << registered.size()
      << " registered\n";
  if (!missing.empty()) {
    out << "missing (expected, not registered): " << missing.size() << '\n';
    for (const auto& [name, instance_string] : missing) out << "  " << name << '\t' << instance_string << '\n';
  }
  if (!extra.empty()) {
    out << "extra (registered, not expected): " << extra.size() << '\n';
    for (const auto& [name, instance_string] : extra) out << "  " << name << '\t' << instance_string << '\n';
  }
  if (!differ.empty()) {
    out << "different instance string: " << differ.size() << '\n';
    for (const auto& name : differ) {
      out << "  " << name << "\n    expected: " << expected.at(name) << "\n    built:    " << registered.at(name)
          << '\n';
    }
  }
  const bool same = missing.empty() && extra.empty() && differ.empty();
  out << (same ? "OK: every expected instance string is built, and nothing else\n"
               : "FAILED: the built instances differ from the expected list\n");
  return same;
}

}  // namespace tiledispatch::profiler
