// The operand roles of each direction (ck_conventions §1), in one place: every direction is, per group, one
// implicit GEMM C (M x N) = A (M x K) * B (N x K)^T over the three tensors of a problem. The kernels (GEMM
// extents, operand majorness, vector runs, which argument is which operand: arguments.hpp), the reference's
// result size and the selection features read the roles from here.
#pragma once

#include <cstdint>

#include "tiledispatch/runtime/problem.hpp"
#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch {

enum class ConvTensor { kInput, kWeight, kOutput };

struct DirectionRoles {
  ConvTensor a, b, c;  // the tensors read as A and B, and the one written as C
  // Whether an operand's contiguous dimension (its channels) is GEMM K; otherwise it is M (A) or N (B).
  bool a_k_major, b_k_major;
};

constexpr DirectionRoles direction_roles(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::kFwd:  // output = input (pixels x taps*C/G) * weight (K/G x taps*C/G)^T
      return {ConvTensor::kInput, ConvTensor::kWeight, ConvTensor::kOutput, true, true};
    case ConvDirection::kBwdData:  // input = output (pixels x taps*K/G) * weight (C/G x taps*K/G)^T
      return {ConvTensor::kOutput, ConvTensor::kWeight, ConvTensor::kInput, true, false};
    case ConvDirection::kBwdWeight:  // weight = output (K/G x pixels) * input (taps*C/G x pixels)^T
      return {ConvTensor::kOutput, ConvTensor::kInput, ConvTensor::kWeight, false, false};
  }
  return {ConvTensor::kInput, ConvTensor::kWeight, ConvTensor::kOutput, true, true};
}

struct GemmExtents {
  int64_t m, n, k;
};

// The GEMM of one block of `groups_to_merge` groups (1: one group).
inline GemmExtents gemm_extents(ConvDirection direction, const ConvProblem& p, int64_t groups_to_merge = 1) {
  const int64_t cg = groups_to_merge * p.c_per_group(), kg = groups_to_merge * p.k_per_group();
  const int64_t taps = p.filter_spatial();
  switch (direction) {
    case ConvDirection::kFwd: return {p.N * p.output_spatial(), kg, taps * cg};
    case ConvDirection::kBwdData: return {p.N * p.input_spatial(), cg, taps * kg};
    case ConvDirection::kBwdWeight: return {kg, taps * cg, p.N * p.output_spatial()};
  }
  return {0, 0, 0};
}

inline int64_t tensor_elements(const ConvProblem& p, ConvTensor tensor) {
  switch (tensor) {
    case ConvTensor::kInput: return p.input_elements();
    case ConvTensor::kWeight: return p.weight_elements();
    case ConvTensor::kOutput: return p.output_elements();
  }
  return 0;
}

// The run of contiguous, equally predicated channels in `tensor` that one vector must stay inside: a block of
// merged groups' channels in the activations, one group's C/G in the weights (GKZYXC). `name` says which.
struct ChannelRun {
  int64_t length;
  const char* name;
};

inline ChannelRun channel_run(const ConvProblem& p, ConvTensor tensor, int64_t groups_to_merge) {
  switch (tensor) {
    case ConvTensor::kInput: return {groups_to_merge * p.c_per_group(), "num_groups_to_merge*C/G"};
    case ConvTensor::kOutput: return {groups_to_merge * p.k_per_group(), "num_groups_to_merge*K/G"};
    case ConvTensor::kWeight: return {p.c_per_group(), "C/G"};
  }
  return {0, ""};
}

}  // namespace tiledispatch
