// The problem battery of the GPU check (issue 4): C/G from 1 to 64 and odd, K/G odd, padding, stride 2,
// dilation 2, filters 1x1, 3x3, 5x5, 7x7, 3D, N = 1, one large layer and one tensor of more than 2^31 elements.
#pragma once

#include <vector>

#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::check {

struct BatteryEntry {
  const char* what;
  ConvProblem problem;
};

inline ConvProblem conv2d(int64_t G, int64_t N, int64_t C, int64_t K, int64_t H, int64_t W, int64_t f, int64_t s,
                          int64_t pad, int64_t dil) {
  ConvProblem p;
  p.ndim_spatial = 2;
  p.G = G, p.N = N, p.C = C, p.K = K;
  p.input = {1, H, W};
  p.filter = {1, f, f};
  p.stride = {1, s, s};
  p.dilation = {1, dil, dil};
  p.left_pad = {0, pad, pad};
  p.right_pad = {0, pad, pad};
  return p;
}

inline ConvProblem conv3d(int64_t G, int64_t N, int64_t C, int64_t K, int64_t D, int64_t H, int64_t W, int64_t f,
                          int64_t s, int64_t pad, int64_t dil) {
  ConvProblem p;
  p.ndim_spatial = 3;
  p.G = G, p.N = N, p.C = C, p.K = K;
  p.input = {D, H, W};
  p.filter = {f, f, f};
  p.stride = {s, s, s};
  p.dilation = {dil, dil, dil};
  p.left_pad = {pad, pad, pad};
  p.right_pad = {pad, pad, pad};
  return p;
}

inline std::vector<BatteryEntry> battery(bool include_large) {
  std::vector<BatteryEntry> b = {
      {"dense 3x3 C/G=64", conv2d(1, 2, 64, 64, 14, 14, 3, 1, 1, 1)},
      {"C/G=1 K/G=3 3x3 N=1", conv2d(4, 1, 4, 12, 9, 11, 3, 1, 1, 1)},
      {"C/G=3 K/G=5 5x5 stride 2", conv2d(2, 2, 6, 10, 8, 8, 5, 2, 2, 1)},
      {"C/G=8 7x7 dilation 2", conv2d(3, 1, 24, 24, 13, 13, 7, 1, 3, 2)},
      {"1x1 stride 1 pad 0", conv2d(1, 3, 32, 48, 10, 10, 1, 1, 0, 1)},
      {"1x1 stride 2 pad 0", conv2d(2, 2, 64, 64, 11, 11, 1, 2, 0, 1)},
      {"C/G=8 3x3 stride 2", conv2d(8, 2, 64, 64, 7, 7, 3, 2, 1, 1)},
      {"C/G=K/G=1 G=32 3x3", conv2d(32, 2, 32, 32, 10, 10, 3, 1, 1, 1)},
      {"C/G=64 K/G=48 3x3", conv2d(2, 2, 128, 96, 6, 6, 3, 1, 1, 1)},
      {"odd 17x17 3x3 stride 2 dilation 2 no pad", conv2d(1, 1, 16, 16, 17, 17, 3, 2, 0, 2)},
      {"C/G=4 K/G=7 3x3", conv2d(3, 2, 12, 21, 9, 9, 3, 1, 1, 1)},
      {"C/G=2 K/G=2 G=8 3x3", conv2d(8, 2, 16, 16, 12, 12, 3, 1, 1, 1)},
      {"C/G=5 K/G=9 asymmetric", conv2d(1, 2, 5, 9, 7, 12, 3, 1, 2, 1)},
      {"RGB stem C=3 7x7 stride 2 odd 23x19", conv2d(1, 1, 3, 64, 23, 19, 7, 2, 3, 1)},
      {"3D 3x3x3 C/G=8", conv3d(2, 1, 16, 16, 5, 6, 7, 3, 1, 1, 1)},
      {"3D 1x1x1", conv3d(1, 2, 8, 8, 4, 4, 4, 1, 1, 0, 1)},
      {"3D C/G=1 3x3x3 stride 2", conv3d(4, 1, 4, 4, 5, 5, 5, 3, 2, 1, 1)},
      // Shapes that the depthwise, Filter3x3 and merged-group instances of `tests` and `tiny` need, so that each
      // of them runs on at least one problem.
      {"depthwise 3x3 stride 2 C=64", conv2d(64, 2, 64, 64, 15, 15, 3, 2, 1, 1)},
      {"depthwise 5x5 C=64", conv2d(64, 2, 64, 64, 13, 13, 5, 1, 2, 1)},
      {"depthwise 5x5 stride 2 C=32", conv2d(32, 1, 32, 32, 16, 16, 5, 2, 2, 1)},
      {"depthwise 7x7 C=32 odd 15x13", conv2d(32, 1, 32, 32, 15, 13, 7, 1, 3, 1)},
      {"depthwise 7x7 stride 2 C=32 odd 17x15", conv2d(32, 1, 32, 32, 17, 15, 7, 2, 3, 1)},
      {"depthwise 3x3 dilation 2 C=32 odd 13x15", conv2d(32, 2, 32, 32, 13, 15, 3, 1, 2, 2)},
      {"3D depthwise 5x5x5 C=16 odd 6x7x9", conv3d(16, 1, 16, 16, 6, 7, 9, 5, 1, 2, 1)},
      // default's 3D depthwise instances: every filter size at both strides, C a multiple of their vectors (8).
      {"3D depthwise 3x3x3 C=32 odd 5x7x9", conv3d(32, 2, 32, 32, 5, 7, 9, 3, 1, 1, 1)},
      {"3D depthwise 3x3x3 stride 2 C=32 odd 7x9x11", conv3d(32, 1, 32, 32, 7, 9, 11, 3, 2, 1, 1)},
      {"3D depthwise 5x5x5 stride 2 C=16 odd 9x7x11", conv3d(16, 1, 16, 16, 9, 7, 11, 5, 2, 2, 1)},
      {"3D depthwise 7x7x7 C=16 odd 7x9x8", conv3d(16, 1, 16, 16, 7, 9, 8, 7, 1, 3, 1)},
      {"3D depthwise 7x7x7 stride 2 C=16 odd 9x11x13", conv3d(16, 1, 16, 16, 9, 11, 13, 7, 2, 3, 1)},
      {"C/G=1 K/G=4 G=16 3x3", conv2d(16, 2, 16, 64, 9, 9, 3, 1, 1, 1)},
      {"3D C/G=4 K/G=8 G=8 3x3x3", conv3d(8, 1, 32, 64, 4, 5, 6, 3, 1, 1, 1)},
      {"3D C/G=8 K/G=8 G=8 3x3x3", conv3d(8, 1, 64, 64, 4, 5, 6, 3, 1, 1, 1)},
      // Merged groups by diagonal blocks (C/G = K/G = 16 or 32: default's gm entries and the hand gm 2 / gm 4
      // instances), 2D and 3D, odd sizes.
      {"regnet-like C/G=K/G=16 G=14 3x3 odd 15x13", conv2d(14, 2, 224, 224, 15, 13, 3, 1, 1, 1)},
      {"regnet-like C/G=K/G=16 G=14 3x3 stride 2 odd 29x27", conv2d(14, 1, 224, 224, 29, 27, 3, 2, 1, 1)},
      {"C/G=K/G=16 G=8 3x3 dilation 2 odd 11x9", conv2d(8, 3, 128, 128, 11, 9, 3, 1, 2, 2)},
      {"resnext-like C/G=K/G=32 G=32 3x3 odd 9x7", conv2d(32, 2, 1024, 1024, 9, 7, 3, 1, 1, 1)},
      {"C/G=K/G=32 G=4 1x1 stride 1 odd 7x5", conv2d(4, 3, 128, 128, 7, 5, 1, 1, 0, 1)},
      {"3D C/G=K/G=32 G=4 3x3x3 odd 3x5x7", conv3d(4, 2, 128, 128, 3, 5, 7, 3, 1, 1, 1)},
      {"3D C/G=K/G=16 G=6 3x3x3 stride 2 odd 5x7x6", conv3d(6, 1, 96, 96, 5, 7, 6, 3, 2, 1, 1)},
      // Groups paired at the MMA's granularity (C/G = K/G = 8 and 4 on the 16-wide merged-group configurations).
      {"resnext-like C/G=K/G=8 G=32 3x3 odd 15x13", conv2d(32, 2, 256, 256, 15, 13, 3, 1, 1, 1)},
      {"C/G=K/G=4 G=16 3x3 odd 9x11", conv2d(16, 2, 64, 64, 9, 11, 3, 1, 1, 1)},
  };
  if (include_large) {
    b.push_back({"large: ResNet 3x3 256->256 56x56 N=8", conv2d(1, 8, 256, 256, 56, 56, 3, 1, 1, 1)});
    // Input of 2*8193*8193*16 = 2,148,007,968 elements, just over 2^31: split_image instances compute it,
    // the others report it as not supported.
    b.push_back({"large tensor: input > 2^31 elements", conv2d(1, 2, 16, 8, 8193, 8193, 3, 2, 1, 1)});
  }
  return b;
}

}  // namespace tiledispatch::check
