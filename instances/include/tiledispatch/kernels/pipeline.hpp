// Pipeline names and schedulers mapped to NVIDIA strategies (docs/architecture.md §4, docs/pipelines.md).
// The Python validity module uses the same table; this header is the C++ half.
#pragma once

#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::kernels {

struct PipelineStrategy {
  int stages;            // shared-memory stages of the main loop
  bool async_copy;       // cp.async global -> shared (else ld.global -> registers -> st.shared)
  bool register_prefetch;  // next tile loaded into registers during the MMAs (basic_v2)
  bool prefetch;         // the next tile's copy overlaps the current tile's MMAs
  bool fragment_double_buffer;  // ldmatrix of k-step s+1 issued before the MMAs of k-step s
};

constexpr PipelineStrategy pipeline_strategy(Pipeline p, bool double_smem_buffer) {
  const int one = double_smem_buffer ? 2 : 1;
  switch (p) {
    case Pipeline::kBasicV1: return {one, false, false, false, false};
    case Pipeline::kBasicV2: return {one, false, true, true, false};
    case Pipeline::kMem: return {4, true, false, true, false};
    case Pipeline::kCompV3: return {2, true, false, true, false};
    case Pipeline::kCompV4: return {2, true, false, true, true};
    case Pipeline::kCompV5: return {3, true, false, true, false};
    case Pipeline::kCompV6: return {3, true, false, true, true};
    case Pipeline::kBasicAsyncV1: return {2, true, false, false, false};
    case Pipeline::kCompAsync: return {4, true, false, true, true};
    case Pipeline::kWavelet: return {3, true, false, true, true};
  }
  return {1, false, false, false, false};
}

}  // namespace tiledispatch::kernels
