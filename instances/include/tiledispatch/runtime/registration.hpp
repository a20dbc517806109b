// The generated register functions (docs/architecture.md §2b), one per direction, each defined in that
// direction's instance library. The profiler and the C API (libtiledispatch_<ruleset>.so) call all three.
#pragma once

#include "tiledispatch/runtime/registry.hpp"

namespace tiledispatch::generated {
void register_fwd_instances(Registry& registry);
void register_bwd_data_instances(Registry& registry);
void register_bwd_weight_instances(Registry& registry);
}  // namespace tiledispatch::generated
