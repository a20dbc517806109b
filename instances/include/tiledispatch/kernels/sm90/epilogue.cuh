// The Hopper path's epilogue: each consumer thread stores its fp32 accumulators straight from registers,
// two adjacent columns at once (the contiguous pair of a wgmma accumulator fragment) when vector_size_c
// allows; or, for split-K and two-stage backward weight, plain fp32 stores into the split's own slice of the
// workspace (reduced afterwards in a fixed order: no atomics, bit-identical run to run).
#pragma once

#include <cute/tensor.hpp>

#include "tiledispatch/kernels/implicit_gemm_kernel.cuh"

namespace tiledispatch::kernels::sm90 {

template <class Cfg>
struct DirectEpilogue {
  using Index = typename Cfg::Index;
  using View = typename Cfg::View;
  using Element = typename Cfg::ElementGlobal;

  template <class ThrMma, class Accum>
  __device__ static void store(const ThrMma& thr_mma, const Accum& accum, const View& view, Index m0, Index n0,
                               Element* gC, float* partial) {
    using namespace cute;
    Tensor cC = make_identity_tensor(Shape<Int<Cfg::kTileM>, Int<Cfg::kTileN>>{});  // (TILE_M,TILE_N) -> (m,n)
    Tensor tCcC = thr_mma.partition_C(cC);                                         // (MMA,MMA_M,MMA_N)
    static_assert(decltype(size(tCcC))::value == decltype(size(accum))::value, "accumulator partition");
    CUTE_UNROLL
    for (int i = 0; i < size(accum); i += 2) {
      const int row = get<0>(tCcC(i));
      const int col = get<1>(tCcC(i));
      const auto info = view.c_prepare(m0 + row);
      Index offset = 0, offset_next = 0;
      const bool first = view.c_locate(info, n0 + col, offset);
      const bool second = view.c_locate(info, n0 + col + 1, offset_next);
      if (partial != nullptr) {
        if (first) partial[offset] = accum(i);
        if (second) partial[offset_next] = accum(i + 1);
      } else if (Cfg::kVectorC >= 2 && first && second && offset_next == offset + 1 && offset % 2 == 0) {
        using Vec = typename VectorBits<2 * Cfg::kElemBytes>::type;
        alignas(8) Element out[2] = {Element(accum(i)), Element(accum(i + 1))};
        *reinterpret_cast<Vec*>(gC + offset) = *reinterpret_cast<const Vec*>(out);
      } else {
        if (first) gC[offset] = Element(accum(i));
        if (second) gC[offset_next] = Element(accum(i + 1));
      }
    }
  }
};

}  // namespace tiledispatch::kernels::sm90
