#include "registration.hpp"

namespace tiledispatch::profiler {

void register_all_instances(Registry& registry) {
  generated::register_fwd_instances(registry);
  generated::register_bwd_data_instances(registry);
  generated::register_bwd_weight_instances(registry);
}

}  // namespace tiledispatch::profiler
