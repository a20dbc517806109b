// --list and --verify-instances: what the registry holds versus what the generator expects. Pure host code:
// no CUDA call, so both run on machines without a GPU (DESIGN decision 3).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tiledispatch/runtime/registry.hpp"

namespace tiledispatch::profiler {

// One "<name>\t<instance string>" line per registered instance of `directions` (all when empty) whose name
// matches `regex` (all when empty), sorted by name: the format of the generator's expected_<dir>.txt.
void print_instance_list(const Registry& registry, const std::vector<ConvDirection>& directions,
                         const std::string& regex, std::ostream& out);

// Compares the registered (name, instance string) pairs of the directions the files cover with the files'
// lines. A file's direction is the subcommand's when one is given, else its name's (expected_<dir>.txt), else
// that of the kernel names it lists. Prints every difference; returns true when there is none.
// Throws UsageError for an unreadable or malformed file.
bool verify_instances(const Registry& registry, const std::vector<std::string>& files,
                      const std::optional<ConvDirection>& subcommand, std::ostream& out);

}  // namespace tiledispatch::profiler
