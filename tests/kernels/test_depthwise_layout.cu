// The depthwise kernels' thread and shared-memory layouts on the host (depthwise_kernel.cuh): thread_place, which
// lays warps over bands of half a row of sub-tiles, and PixelLayout, where staged pixels go (TMA's residue blocks
// or a row's residues side by side). Checked against what the kernels rely on, for the block shapes of the rule
// sets and a few edge shapes: every (group, column, row) of a block once; the channel group the lane's residue
// modulo nbatch (bwd_weight's butterfly); in a banded block every warp within one half of the sub-tile columns,
// and the lanes of each 128-byte access on one row's consecutive positions; in a layout every staged element at
// its own offset, a TMA layout's residue r the dense (rows, QW, CB) box at a 128-byte aligned offset, the other
// layout a row's residues side by side. Prints "checked N failures M".
#include <cstdio>
#include <set>
#include <tuple>
#include <vector>

#include "tiledispatch/kernels/depthwise_kernel.cuh"

namespace dw = tiledispatch::kernels::depthwise;

namespace {

long long g_checked = 0, g_failures = 0;

void expect(bool ok, const char* what, const char* shape) {
  ++g_checked;
  if (!ok && ++g_failures <= 20) std::printf("FAILED %s: %s\n", shape, what);
}

// The fields thread_place reads, as a depthwise shape has them.
template <int NBatch, int ThreadsW, int ThreadsH, int OutVec, class Element>
struct BlockShape {
  using T = Element;
  static constexpr int kNBatch = NBatch, kThreadsW = ThreadsW, kThreadsH = ThreadsH, kOutVec = OutVec;
};

template <class S>
void check_thread_place(const char* name) {
  constexpr int kThreads = S::kNBatch * S::kThreadsW * S::kThreadsH;
  using B = dw::WarpBand<S>;
  std::set<std::tuple<int, int, int>> seen;
  std::vector<dw::ThreadPlace> places;
  bool in_range = true, group_is_residue = true;
  for (int tid = 0; tid < kThreads; ++tid) {
    const dw::ThreadPlace t = dw::thread_place<S>(tid);
    places.push_back(t);
    seen.insert({t.group, t.sx, t.sy});
    in_range = in_range && t.sx >= 0 && t.sx < S::kThreadsW && t.sy >= 0 && t.sy < S::kThreadsH;
    group_is_residue = group_is_residue && t.group == tid % S::kNBatch;
  }
  expect(in_range, "a place outside the block", name);
  expect(int(seen.size()) == kThreads, "a (group, sx, sy) taken twice or left out", name);
  expect(group_is_residue, "the channel group is not tid % nbatch", name);
  if (!B::kBanded) return;
  const int half = S::kThreadsW / 2;
  for (int warp = 0; warp * 32 < kThreads; ++warp) {
    bool left = true, right = true;
    for (int lane = 0; lane < 32 && warp * 32 + lane < kThreads; ++lane) {
      const int sx = places[size_t(warp * 32 + lane)].sx;
      left = left && sx < half;
      right = right && sx >= half;
    }
    expect(left || right, "a banded warp spans both halves of the sub-tile columns", name);
  }
  // One 128-byte shared-memory access: 128 / access bytes consecutive lanes.
  const int lanes = 128 / B::kAccessBytes;
  for (int first = 0; first + lanes <= kThreads; first += lanes) {
    bool one_row = true, consecutive = true;
    for (int lane = first; lane < first + lanes; ++lane) {
      one_row = one_row && places[size_t(lane)].sy == places[size_t(first)].sy;
      const int step = (lane - first) / S::kNBatch;
      consecutive = consecutive && places[size_t(lane)].sx == places[size_t(first)].sx + step;
    }
    expect(one_row && consecutive, "an access's lanes leave one row's consecutive positions", name);
  }
}

template <class L>
void check_layout(const char* name, bool tma) {
  using T = float;  // the layouts count elements; the element size only scales the alignment check below
  expect(L::kTma == tma, "TMA layout where not expected, or not where expected", name);
  std::set<int> offsets;
  bool in_bytes = true, as_specified = true;
  for (int y = 0; y < L::kRows; ++y) {
    for (int r = 0; r < L::kColStep; ++r) {
      for (int q = 0; q < L::kQW; ++q) {
        const int at = L::at(y, r, q);
        offsets.insert(at);
        in_bytes = in_bytes && at >= 0 && (at + L::kChannels) * int(sizeof(T)) <= L::kBytes;
        const int want = tma ? r * L::kResiduePitch + (y * L::kQW + q) * L::kChannels
                             : ((y * L::kColStep + r) * L::kQW + q) * L::kChannels;
        as_specified = as_specified && at == want;
      }
    }
  }
  expect(int(offsets.size()) == L::kRows * L::kColStep * L::kQW, "two positions share an offset", name);
  expect(in_bytes, "a position past the layout's bytes", name);
  expect(as_specified, "a position not where the layout puts it", name);
  if (tma) {
    expect(L::kResiduePitch * int(sizeof(T)) % 128 == 0, "a residue block not 128-byte aligned", name);
    expect(L::kBoxBytes == uint32_t(L::kRows * L::kQW * L::kChannels * int(sizeof(T))), "box bytes", name);
  }
}

}  // namespace

int main() {
  // fwd 16-bit: 8x16 nb4 sub1x4 and sub2x4 vec 8, 16x32 nb4 sub2x8 vec 8, 8x32 / 16x32 nb4 sub1x8 vec 4
  check_thread_place<BlockShape<4, 4, 8, 8, __half>>("8x16 nb4 sub1x4 vec8");
  check_thread_place<BlockShape<4, 4, 4, 8, __half>>("8x16 nb4 sub2x4 vec8");
  check_thread_place<BlockShape<4, 4, 8, 8, __half>>("16x32 nb4 sub2x8 vec8");
  check_thread_place<BlockShape<4, 4, 8, 4, __half>>("8x32 nb4 sub1x8 vec4");
  check_thread_place<BlockShape<4, 4, 16, 4, __half>>("16x32 nb4 sub1x8 vec4");
  // fp32: 16x16 nb4 sub2x4 vec 4, 8x32 nb8 sub1x8 vec 2
  check_thread_place<BlockShape<4, 4, 8, 4, float>>("fp32 16x16 nb4 sub2x4 vec4");
  check_thread_place<BlockShape<8, 4, 8, 2, float>>("fp32 8x32 nb8 sub1x8 vec2");
  // bwd_data 16-bit: 16x32 nb4 sub2x4, 16x16 nb8 sub2x2, 16x16 nb8 sub2x4, 8x32 nb4 sub2x4 (vec 8)
  check_thread_place<BlockShape<4, 8, 8, 8, __half>>("16x32 nb4 sub2x4 vec8");
  check_thread_place<BlockShape<8, 8, 8, 8, __half>>("16x16 nb8 sub2x2 vec8");
  check_thread_place<BlockShape<8, 4, 8, 8, __half>>("16x16 nb8 sub2x4 vec8");
  check_thread_place<BlockShape<4, 8, 4, 8, __half>>("8x32 nb4 sub2x4 vec8");
  // 3D: 8x32 nb2 sub1x4 vec 8, 8x16 nb2 sub1x4 vec 8; edge shapes: one channel group, an odd width, 32 groups
  check_thread_place<BlockShape<2, 8, 8, 8, __half>>("8x32 nb2 sub1x4 vec8");
  check_thread_place<BlockShape<2, 4, 8, 8, __half>>("8x16 nb2 sub1x4 vec8");
  check_thread_place<BlockShape<1, 8, 16, 2, __half>>("16x16 nb1 sub1x2 vec2");
  check_thread_place<BlockShape<8, 7, 7, 2, __half>>("7x7 nb8 sub1x1 vec2");
  check_thread_place<BlockShape<32, 2, 2, 1, float>>("2x2 nb32 sub1x1 vec1");

  // The 16-bit 3x3 forward halo (8x16 tile, sub1x4: 10 rows, ColStep 4, QW 5, 32 channels) in 2D and 3D, the
  // stride-2 7x7 one (ColStep 8), bwd_weight's dY tile (16 rows, SubW 4 residues of 4 positions), and a
  // ColStep of 16, past TMA's traversal stride.
  check_layout<dw::PixelLayout<float, 10, 32, 4, 5, true>>("fwd 3x3 halo 2D", true);
  check_layout<dw::PixelLayout<float, 10, 32, 4, 5, false>>("fwd 3x3 halo 3D", false);
  check_layout<dw::PixelLayout<float, 21, 32, 8, 5, true>>("fwd 7x7 s2 halo", true);
  check_layout<dw::PixelLayout<float, 16, 32, 4, 4, true>>("bwd_weight dY tile", true);
  check_layout<dw::PixelLayout<float, 13, 16, 16, 3, true>>("ColStep 16", false);
  std::printf("checked %lld failures %lld\n", g_checked, g_failures);
  return 0;
}
