// DepthwiseInstance<Traits>: the depthwise forward family (ck_conventions §3, 20-field instance string) on the
// runtime's channels-last tensors with G = C = K (input N(D)HWGC with C/G = 1, weight GK(Z)YXC = (C, 1, (Z,) Y,
// X, 1), output N(D)HWGK with K/G = 1), 2D or 3D (Traits::kNDim): a direct convolution (depthwise_kernel.cuh,
// docs/depthwise.md).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include "tiledispatch/kernels/depthwise_kernel.cuh"
#include "tiledispatch/kernels/fixed_string.hpp"
#include "tiledispatch/kernels/instance_string.hpp"
#include "tiledispatch/runtime/check.hpp"
#include "tiledispatch/runtime/device.hpp"
#include "tiledispatch/runtime/instance.hpp"

namespace tiledispatch {

namespace kernels {

// GroupedConvolution{Forward,BackwardData,BackwardWeight}Kernel<NDim,Spec,Depthwise,InVec,WeiVec,OutVec,BlockSize,
// TileH,TileW,FilterH,FilterW,StrideH,StrideW,NBatch,SubTileH,SubTileW,InType,WeiType,AccType,OutType>; WeiVec =
// InVec and BlockSize 64, as upstream (generators/instance_string.py decides the same). The backward directions
// keep the forward's 20 fields under their own kernel token (docs/depthwise.md, "Configuration").
template <class Traits, ConvDirection Direction = ConvDirection::kFwd>
constexpr FixedString<256> build_depthwise_instance_string() {
  FieldList<200> f;
  const std::string_view type = to_token(Traits::kDataType);
  f.field(Traits::kNDim).field(std::string_view("Default")).field(std::string_view("Depthwise"));
  f.field(Traits::kInVec).field(Traits::kInVec).field(Traits::kOutVec).field(64);
  f.field(Traits::kTileH).field(Traits::kTileW).field(Traits::kFilter).field(Traits::kFilter);
  f.field(Traits::kStrideH).field(Traits::kStrideW).field(Traits::kNBatch).field(Traits::kSubH).field(Traits::kSubW);
  f.field(type).field(type).field(std::string_view("fp32")).field(type);
  FixedString<256> out;
  out.append(kernel_token(Direction)).append(std::string_view("<")).append(f.text().view());
  out.append(std::string_view(">"));
  return out;
}

// Launches whose blocks, with two halo stages, fit at most this many to an SM prefetch (depthwise_kernel.cuh,
// pipelined_walk): fwd and bwd_data blocks then walk several tiles each (persistent), bwd_weight blocks stage
// their next item early (docs/depthwise.md, "Launch and pipelining"). Measured on the H100, 2; on the H200, 2D
// fwd and bwd_data blocks gain from it up to 16 an SM (their set-up, once per block instead of once per tile),
// while 3D blocks (a stage holds FilterD slices) and bwd_weight's 8-byte, L1-cached halo copies lose up to a
// third there, so those keep 2.
constexpr int kPrefetchMaxBlocksPerSm = 2;
constexpr int kPrefetchMaxBlocksPerSm2dTiles = 16;

// Resident blocks per SM of a depthwise kernel with one and with two halo stages.
struct Residency {
  int single = 0, ring = 0;
  bool prefetch(int stages, int max_blocks_per_sm) const {
    return stages == 2 && ring >= 1 && ring <= max_blocks_per_sm;
  }
};

// Once per instance type: the kernel's shared-memory opt-in (the two-stage size) and its residency.
template <class Kernel>
cudaError_t query_residency(Kernel kernel, int threads, int single_smem, int ring_smem, Residency* r) {
  TD_RETURN_IF_CUDA_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ring_smem));
  TD_RETURN_IF_CUDA_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->single, kernel, threads, single_smem));
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->ring, kernel, threads, ring_smem);
}

// The tensor map through which a kernel stages `Layout`'s pixels by TMA (depthwise_kernel.cuh,
// tma_load_pixels): the tensor at `base` as (C, W, H, images, 1), a box of the slice's channels, QW columns at
// a traversal stride of ColStep and kRows rows. Only for layouts made for it (Layout::kTma, ColStep <= 8)
// on whole tensors (a dilated residue's grid is strided) whose pixel pitch and base keep TMA's 16-byte
// alignment; false (cp.async staging) otherwise or where the driver refuses the map.
template <class Layout>
bool encode_pixel_map(CUtensorMap& map, DataType dtype, const void* base, const depthwise::PixelGrid& grid,
                      int64_t channels, int64_t images) {
  const uint64_t pixel_bytes = uint64_t(channels) * uint64_t(element_bytes(dtype));
  if (!Layout::kTma || grid.dh != 1 || grid.dw != 1 || pixel_bytes % 16 != 0 ||
      reinterpret_cast<uintptr_t>(base) % 16 != 0) {
    return false;
  }
  const uint64_t extents[5] = {uint64_t(channels), uint64_t(grid.tensor_w), uint64_t(grid.tensor_h),
                               uint64_t(images), 1};
  const uint64_t pitches[4] = {pixel_bytes, pixel_bytes * extents[1], pixel_bytes * extents[1] * extents[2],
                               pixel_bytes * extents[1] * extents[2] * extents[3]};
  const uint32_t box[5] = {uint32_t(Layout::kChannels), uint32_t(Layout::kQW * Layout::kColStep),
                           uint32_t(Layout::kRows), 1, 1};
  const uint32_t traversal[5] = {1, uint32_t(Layout::kColStep), 1, 1, 1};
  return sm90::encode_tma_tiled(map, dtype, base, 5, extents, pitches, box, 0, traversal);
}

// Launches a fwd / bwd_data kernel (depthwise_kernel.cuh, walk_tiles) on `params`, whose slices and tiles are
// set; its residency is queried once per instance type. Persistent launches fill the GPU once (the blocks of a
// slice walk its tiles `per_slice` apart); otherwise, and whenever a block gets a single tile, the second stage
// is neither used nor allocated. Outputs do not depend on the launch (each is computed by one thread). The kernel
// stages its halo from `staged` (grid `grid` of `channels` channels, `images` images: N x depth in 3D) by TMA
// where encode_pixel_map gives it a map (P::halo_tma), by cp.async otherwise.
template <class S, class P>
cudaError_t launch_tiles(void (*kernel)(P, CUtensorMap), P params, DataType dtype, const void* staged,
                         const depthwise::PixelGrid& grid, int64_t channels, int64_t images, cudaStream_t stream) {
  static Residency residency;
  static const cudaError_t queried =
      query_residency(kernel, S::kThreads, S::kSmemBytes, S::kRingSmemBytes, &residency);
  TD_RETURN_IF_CUDA_ERROR(queried);
  int64_t per_slice = params.tiles;
  const int max_blocks = S::kNDim == 2 ? kPrefetchMaxBlocksPerSm2dTiles : kPrefetchMaxBlocksPerSm;
  if (residency.prefetch(S::kStages, max_blocks)) {
    int sms = 0;
    TD_RETURN_IF_CUDA_ERROR(sm_count(&sms));
    per_slice = std::clamp<int64_t>(int64_t(residency.ring) * sms / params.slices, 1, params.tiles);
  }
  CUtensorMap halo_map{};
  params.halo_tma =
      encode_pixel_map<typename S::Halo>(halo_map, dtype, staged, grid, channels, images) ? 1 : 0;
  const int smem_bytes = per_slice < params.tiles ? S::kRingSmemBytes : S::kSmemBytes;
  kernel<<<unsigned(params.slices * per_slice), S::kThreads, smem_bytes, stream>>>(params, halo_map);
  return cudaGetLastError();
}

// Dilation (docs/depthwise.md, "Dilation"). Along an axis of dilation d, stride s dividing d and left pad d x the
// instance's pad p, output o = e*j + a (e = d / s, residue a < e) reads input s*o + d*f - d*p = s*a + d*(j + f - p):
// for each residue a, the output indices a, a + e, a + 2e, ... and the input indices s*a, s*a + d, ... form an
// undilated stride-1 convolution with the instance's pad. A dilated problem thus runs as residue sub-problems on
// strided views of the same tensors (the space-to-batch form of an atrous convolution), each on a stride-1
// instance's kernel; dilation 1 is one residue, the whole tensor, at the instance's own stride. Where s > 1, the
// input indices that are not s*a + d*m for some a (those not a multiple of s modulo d) are read by no output:
// their input gradient is zero.
struct AxisResidues {
  int64_t count;         // e: output residues (and output pitch)
  int64_t input_origin;  // input index of residue a = input_origin * a
  int64_t input_pitch;   // d
  int64_t stride;        // the stride the instance computes: 1 along a dilated axis, else the problem's
  bool unread_inputs() const { return input_origin > 1; }  // inputs of no residue (dilated, stride > 1)
};
inline AxisResidues axis_residues(const ConvProblem& p, int axis) {
  const int64_t d = p.dilation[axis], s = p.stride[axis];
  if (d == 1) return {1, 0, 1, s};
  return {d / s, s, d, 1};
}
// Whether some input pixel is read by no output (bwd_data writes it zero).
inline bool has_unread_inputs(const ConvProblem& p) {
  return axis_residues(p, 1).unread_inputs() || axis_residues(p, 2).unread_inputs();
}

// Residue `a` of a channels-last tensor of height x width pixels: its first element and its pixel grid.
struct ResidueGrid {
  int64_t origin;
  depthwise::PixelGrid grid;
  bool empty() const { return grid.height == 0 || grid.width == 0; }
};
// The pixels first + pitch * i (i >= 0) of a height x width channels-last tensor.
inline ResidueGrid residue_grid(int64_t height, int64_t width, int64_t channels, std::array<int64_t, 2> first,
                                std::array<int64_t, 2> pitch) {
  const auto count = [](int64_t extent, int64_t r, int64_t d) { return extent > r ? (extent - r + d - 1) / d : 0; };
  ResidueGrid g{};
  g.origin = (first[0] * width + first[1]) * channels;
  g.grid.height = int(count(height, first[0], pitch[0])), g.grid.width = int(count(width, first[1], pitch[1]));
  g.grid.tensor_h = int(height), g.grid.tensor_w = int(width);
  g.grid.dh = int(pitch[0]), g.grid.dw = int(pitch[1]);
  return g;
}

// Which tensor a launch walks: fwd and bwd_weight the output's tiles, bwd_data the input's.
enum class Walked { kOutput, kInput };

// The residues of `p`: calls launch(input grid, output grid) for every residue whose walked grid is not empty, in
// order; stops at the first error.
template <class Launch>
cudaError_t for_each_residue(const ConvProblem& p, Walked walked, Launch&& launch) {
  const auto o = p.output();
  const AxisResidues rh = axis_residues(p, 1), rw = axis_residues(p, 2);
  for (int64_t h = 0; h < rh.count; ++h) {
    for (int64_t w = 0; w < rw.count; ++w) {
      const ResidueGrid out = residue_grid(o[1], o[2], p.C, {h, w}, {rh.count, rw.count});
      const ResidueGrid in = residue_grid(p.input[1], p.input[2], p.C, {rh.input_origin * h, rw.input_origin * w},
                                          {rh.input_pitch, rw.input_pitch});
      if ((walked == Walked::kOutput ? out : in).empty()) continue;
      TD_RETURN_IF_CUDA_ERROR(launch(in, out));
    }
  }
  return cudaSuccess;
}

// The depth axis of a launch (depthwise::DepthMap): fwd and bwd_weight walk the output's slices and read the
// input's; bwd_data walks dX's (the input) and reads dY's, the inverse map. 2D: one slice each, tap 0 reads it.
inline depthwise::DepthMap depth_map(const ConvProblem& p, bool walks_input) {
  const auto o = p.output();
  depthwise::DepthMap m{};
  m.walked = int(walks_input ? p.input[0] : o[0]), m.read = int(walks_input ? o[0] : p.input[0]);
  m.stride = int(p.stride[0]), m.pad = int(p.left_pad[0]), m.dilation = int(p.dilation[0]);
  m.transposed = walks_input ? 1 : 0;
  return m;
}

// Tiles of S over `images` images (N x depth) of height x width pixels: what a fwd / bwd_data launch walks per
// channel slice and a bwd_weight launch splits into chunks.
template <class S>
int64_t tile_count(int64_t images, int64_t height, int64_t width) {
  return images * ((height + S::kTileH - 1) / S::kTileH) * ((width + S::kTileW - 1) / S::kTileW);
}
template <class S>
int64_t channel_slices(int64_t channels) {
  return (channels + S::kChannels - 1) / S::kChannels;
}

// A fwd / bwd_data launch's walk over the `walked` grid of each of its `images` images (launch_tiles).
template <class S, class P>
void set_tile_walk(P& params, const depthwise::PixelGrid& walked, int64_t images, int64_t channels) {
  params.tiles_h = depthwise::ceil_div(walked.height, S::kTileH);
  params.tiles_w = depthwise::ceil_div(walked.width, S::kTileW);
  params.slices = int(channel_slices<S>(channels));
  params.tiles = int(tile_count<S>(images, walked.height, walked.width));
  params.by_tiles_w = FastDivisor::of(uint32_t(params.tiles_w));
  params.by_tiles_h = FastDivisor::of(uint32_t(params.tiles_h));
}

template <class T>
const T* element_at(const void* base, int64_t offset) {
  return static_cast<const T*>(base) + offset;
}
template <class T>
T* element_at(void* base, int64_t offset) {
  return static_cast<T*>(base) + offset;
}

// The problem checks every depthwise instance makes, in this order; the reason names the first mismatch.
// S is the instance's kernel shape (its shared memory and vector fit).
template <class Traits, class S>
Support depthwise_problem_support(const ConvProblem& p) {
  if (std::string why = p.validate(); !why.empty()) return Support::no("invalid problem: " + why);
  if (p.ndim_spatial != Traits::kNDim) {
    return Support::no(std::to_string(p.ndim_spatial) + "D problem, instance is " + std::to_string(Traits::kNDim) +
                       "D");
  }
  if (p.c_per_group() != 1 || p.k_per_group() != 1) {
    return Support::no("depthwise needs C/G == 1 and K/G == 1, got C/G=" + std::to_string(p.c_per_group()) +
                       " K/G=" + std::to_string(p.k_per_group()));
  }
  // 3D filters are cubic: the depth taps are the instance's filter too (depthwise_kernel.cuh, depth_taps).
  const int64_t filter_d = depthwise::depth_taps(Traits::kNDim, Traits::kFilter);
  if (p.filter[0] != filter_d || p.filter[1] != Traits::kFilter || p.filter[2] != Traits::kFilter) {
    const auto filter = [&](int64_t z, int64_t y, int64_t x) {
      return (Traits::kNDim == 3 ? std::to_string(z) + "x" : std::string()) + std::to_string(y) + "x" +
             std::to_string(x);
    };
    return Support::no("filter " + filter(p.filter[0], p.filter[1], p.filter[2]) + ", instance computes " +
                       filter(filter_d, Traits::kFilter, Traits::kFilter));
  }
  const auto pair = [](int64_t h, int64_t w) { return std::to_string(h) + "x" + std::to_string(w); };
  const bool dilated = p.dilation[1] != 1 || p.dilation[2] != 1;
  // Dilation runs as residue sub-problems (axis_residues) of stride 1, which need the stride to divide it.
  const auto divides = [&](int axis) { return p.dilation[axis] == 1 || p.dilation[axis] % p.stride[axis] == 0; };
  if (!divides(1) || !divides(2)) {
    return Support::no("dilation " + pair(p.dilation[1], p.dilation[2]) + " with stride " +
                       pair(p.stride[1], p.stride[2]) + ": along each axis the dilation must be 1 or a multiple " +
                       "of the stride");
  }
  const int64_t stride_h = axis_residues(p, 1).stride, stride_w = axis_residues(p, 2).stride;
  if (stride_h != Traits::kStrideH || stride_w != Traits::kStrideW) {
    const bool residues = stride_h != p.stride[1] || stride_w != p.stride[2];
    return Support::no("stride " + pair(p.stride[1], p.stride[2]) +
                       (residues ? " with dilation " + pair(p.dilation[1], p.dilation[2]) + " runs at stride " +
                                       pair(stride_h, stride_w) + " (residue sub-problems)"
                                 : std::string()) +
                       ", instance computes " + pair(Traits::kStrideH, Traits::kStrideW));
  }
  // Right padding only extends the zero border (it sets Ho/Wo), so any right pad is computed exactly.
  const int64_t pad_h = Traits::kPadH * p.dilation[1], pad_w = Traits::kPadW * p.dilation[2];
  if (p.left_pad[1] != pad_h || p.left_pad[2] != pad_w) {
    return Support::no("left pad " + pair(p.left_pad[1], p.left_pad[2]) + ", instance computes " + pair(pad_h, pad_w) +
                       (dilated ? " (its pad " + pair(Traits::kPadH, Traits::kPadW) + " times dilation " +
                                      pair(p.dilation[1], p.dilation[2]) + ")"
                                : std::string()));
  }
  if (p.C % Traits::kInVec != 0 || p.C % Traits::kOutVec != 0) {
    return Support::no("C=" + std::to_string(p.C) + " is not a multiple of in_vec " + std::to_string(Traits::kInVec) +
                       " and out_vec " + std::to_string(Traits::kOutVec) + " (vectors run along the channels)");
  }
  if (!S::kVectorsFitSlice) {
    return Support::no("in_vec " + std::to_string(Traits::kInVec) + " does not divide the block's nbatch x out_vec = " +
                       std::to_string(S::kChannels) + " channels");
  }
  if (S::kSmemBytes > S::Target::kSmemPerBlockBytes) {
    return Support::no("needs " + std::to_string(S::kSmemBytes) + " bytes of shared memory, " +
                       std::string(S::Target::kName) + " allows " + std::to_string(S::Target::kSmemPerBlockBytes));
  }
  // Image indices (n x depth + slice) and the depth map are ints.
  const auto o = p.output();
  for (int64_t extent : {p.N * p.input[0], p.N * o[0], p.C, p.input[1], p.input[2], o[1], o[2], p.stride[0],
                         p.left_pad[0], p.dilation[0] * p.filter[0]}) {
    if (extent > INT_MAX) return Support::no("an extent exceeds 2^31-1: " + std::to_string(extent));
  }
  return Support::yes();
}

// k_batch 1, the staged tensor aligned to in_vec and the stored one to out_vec (weights are read element by
// element); `staged_what`/`stored_what` name them in the reason.
template <class S>
Support depthwise_args_support(const ConvArgs& args, const void* staged, const char* staged_what, const void* stored,
                               const char* stored_what) {
  if (args.k_batch != 1) return Support::no("k_batch " + std::to_string(args.k_batch) + ": only 1 is supported");
  const auto misaligned = [](const void* ptr, int bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes != 0; };
  if (misaligned(staged, S::kInVec * int(sizeof(typename S::T)))) {
    return Support::no(std::string(staged_what) + " pointer not aligned to in_vec x element size");
  }
  if (misaligned(stored, S::kOutVec * int(sizeof(typename S::T)))) {
    return Support::no(std::string(stored_what) + " pointer not aligned to out_vec x element size");
  }
  return Support::yes();
}

}  // namespace kernels

template <class Traits>
class DepthwiseInstance : public GroupedConvInstance {
 public:
  static constexpr auto kInstanceString = kernels::build_depthwise_instance_string<Traits>();
  static_assert(!kInstanceString.overflowed(), "instance string longer than its buffer");

  std::string_view instance_string() const override { return kInstanceString.view(); }
  Signature signature() const override {
    return {ConvDirection::kFwd, Traits::kDataType, Traits::kNDim, KernelFamily::kDepthwise};
  }
  // Exact: every problem this accepts is computed in bounds; the reason names the first mismatch.
  Support is_supported(const ConvProblem& p) const override {
    using S = kernels::depthwise::Shape<Traits>;
    if (Support s = kernels::depthwise_problem_support<Traits, S>(p); !s) return s;
    if (blocks(p) > INT_MAX) return Support::no("grid of " + std::to_string(blocks(p)) + " blocks exceeds 2^31-1");
    return Support::yes();
  }

  // k_batch 1; input and output aligned to their vectors (weights are read element by element).
  Support check_args(const ConvProblem& /*problem*/, const ConvArgs& args) const override {
    using S = kernels::depthwise::Shape<Traits>;
    return kernels::depthwise_args_support<S>(args, args.input, "input", args.output, "output");
  }

  cudaError_t run(const ConvProblem& p, const ConvArgs& args) const override {
    using S = kernels::depthwise::Shape<Traits>;
    if (!is_supported(p) || !check_args(p, args)) return cudaErrorInvalidValue;
    using T = typename S::T;
    const auto o = p.output();
    const auto launch = [&](const kernels::ResidueGrid& in, const kernels::ResidueGrid& out) {
      kernels::depthwise::Params params{};
      params.input = kernels::element_at<T>(args.input, in.origin), params.weight = args.weight;
      params.output = kernels::element_at<T>(args.output, out.origin);
      params.C = int(p.C), params.in = in.grid, params.out = out.grid;
      params.depth = kernels::depth_map(p, false);
      kernels::set_tile_walk<S>(params, out.grid, p.N * o[0], p.C);
      return kernels::launch_tiles<S>(kernels::depthwise::depthwise_fwd_kernel<Traits>, params, Traits::kDataType,
                                      params.input, in.grid, p.C, p.N * p.input[0], args.stream);
    };
    return kernels::for_each_residue(p, kernels::Walked::kOutput, launch);
  }

 private:
  static int64_t blocks(const ConvProblem& p) {
    using S = kernels::depthwise::Shape<Traits>;
    const auto o = p.output();
    return kernels::tile_count<S>(p.N * o[0], o[1], o[2]) * kernels::channel_slices<S>(p.C);
  }
};

}  // namespace tiledispatch
