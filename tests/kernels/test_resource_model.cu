// Prints, for each configuration rendered by tests/kernels/test_resource_model.py, the shared memory its kernel
// allocates and (implicit GEMM) its fp32 accumulators per thread, its Hopper-path shared memory (0 when it
// runs on the first generation), its first-generation stages and whether the Hopper path computes its tile
// transposed (Sm90Config::kTransposed, bwd_weight with tile_m below 64), read from the kernels' own constexpr
// quantities: ImplicitGemmConfig<Traits>::kSmemBytes / kAccumulatorsPerThread / kStages
// (implicit_gemm_config.hpp, sized by ArchTraits<Traits::kArch>) and the depthwise kernel shape's kSmemBytes
// (depthwise::ShapeOf<Traits>: Shape, BwdDataShape or BwdWeightShape by direction, depthwise_bwd_kernel.cuh).
// Host only: nothing is launched.
//
// resource_headers.inc (generated) includes the rendered kernels/<name>.hpp; the test puts stub instance
// headers first on the include path, so only the traits and the config headers are compiled.
// resource_list.inc (generated) holds one GEMM(name) or DEPTHWISE(name) line per configuration.
#include <cstdio>

#include "resource_headers.inc"
#include "tiledispatch/kernels/depthwise_bwd_kernel.cuh"

namespace {

template <class Traits>
void print_gemm(const char* name) {
  using Config = tiledispatch::kernels::ImplicitGemmConfig<Traits>;
  using Hopper = tiledispatch::kernels::sm90::Sm90Config<Traits>;
  std::printf("%s %zu %d %zu %d %d\n", name, size_t(Config::kSmemBytes), Config::kAccumulatorsPerThread,
              Hopper::kBuildable ? size_t(Hopper::kSmemBytes) : size_t(0), Config::kStages,
              Hopper::kBuildable && Hopper::kTransposed ? 1 : 0);
}

template <class Traits>
void print_depthwise(const char* name) {
  using Shape = typename tiledispatch::kernels::depthwise::ShapeOf<Traits>::type;
  std::printf("%s %d - 0 0 0\n", name, Shape::kSmemBytes);
}

}  // namespace

int main() {
#define GEMM(NAME) print_gemm<tiledispatch::generated::NAME##_traits>(#NAME);
#define DEPTHWISE(NAME) print_depthwise<tiledispatch::generated::NAME##_traits>(#NAME);
#include "resource_list.inc"
#undef GEMM
#undef DEPTHWISE
  return 0;
}
