// The profiler's registration of the three generated instance libraries.
#pragma once

#include "tiledispatch/runtime/registration.hpp"
#include "tiledispatch/runtime/registry.hpp"

namespace tiledispatch::profiler {
// Registers the instances of all three libraries. Constructing an instance makes no CUDA call, so this is safe
// on a machine without a GPU.
void register_all_instances(Registry& registry);
}  // namespace tiledispatch::profiler
