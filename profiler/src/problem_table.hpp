// Problem tables in the CK sweep schema:
// N,C,K,G,Di,Hi,Wi,Z,Y,X,stride_d,stride_h,stride_w,pad_d,pad_h,pad_w,dilation_d,dilation_h,dilation_w
// with an optional `name` column (and an optional `ndim` column; otherwise a row is 3D when any D entry
// differs from the 2D defaults). Pads are symmetric (left = right), as upstream.
#pragma once

#include <string>
#include <vector>

#include "tiledispatch/runtime/problem.hpp"

namespace tiledispatch::profiler {

struct NamedProblem {
  std::string name;  // empty when the table has no name column
  ConvProblem problem;
};

// Reads and validates every row; throws UsageError naming the file, line and column of the first bad value.
std::vector<NamedProblem> read_problem_table(const std::string& path);

}  // namespace tiledispatch::profiler
