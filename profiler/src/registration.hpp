// The generated register functions (docs/architecture.md §2b), one per direction, each defined in that
// direction's instance library.
#pragma once

#include "tiledispatch/runtime/registry.hpp"

namespace tiledispatch::generated {
void register_fwd_instances(Registry& registry);
void register_bwd_data_instances(Registry& registry);
void register_bwd_weight_instances(Registry& registry);
}  // namespace tiledispatch::generated

namespace tiledispatch::profiler {
// Registers the instances of all three libraries. Constructing an instance makes no CUDA call, so this is safe
// on a machine without a GPU.
void register_all_instances(Registry& registry);
}  // namespace tiledispatch::profiler
