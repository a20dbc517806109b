// Test driver: the C++ selection path on inputs from stdin, one per line:
//   <direction> <dtype> <kernel name> <split_k> N C K G Di Hi Wi Z Y X stride_d stride_h stride_w pad_d pad_h pad_w
//   dilation_d dilation_h dilation_w
// prints "ok <score> <feature>..." (%.17g) or "bad <reason>". argv[1] is the model folder.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "tiledispatch/selection/ranker.hpp"

namespace td = tiledispatch;
namespace sel = tiledispatch::selection;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: selection_check MODEL_DIR < inputs\n";
    return 2;
  }
  sel::Ranker ranker(argv[1]);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string direction_token, dtype_token, kernel;
    int split_k = 1;
    td::ConvProblem p;
    in >> direction_token >> dtype_token >> kernel >> split_k >> p.N >> p.C >> p.K >> p.G >> p.input[0] >>
        p.input[1] >> p.input[2] >> p.filter[0] >> p.filter[1] >> p.filter[2] >> p.stride[0] >> p.stride[1] >>
        p.stride[2] >> p.left_pad[0] >> p.left_pad[1] >> p.left_pad[2] >> p.dilation[0] >> p.dilation[1] >>
        p.dilation[2];
    p.right_pad = p.left_pad;
    const bool flat = p.input[0] == 1 && p.filter[0] == 1 && p.stride[0] == 1 && p.left_pad[0] == 0 &&
                      p.dilation[0] == 1;
    p.ndim_spatial = flat ? 2 : 3;
    const auto direction = td::parse_direction(direction_token);
    const auto dtype = td::parse_data_type(dtype_token);
    const auto traits = sel::parse_kernel_traits(kernel);
    if (!in || !direction || !dtype || !traits) {
      std::cout << "bad input or kernel name: " << kernel << '\n';
      continue;
    }
    try {
      const auto scored = ranker.rank(p, *direction, *dtype, {{kernel, split_k}});
      std::printf("ok %.17g", scored[0].score);
      for (const double f : sel::compute_features(p, *direction, *dtype, *traits, split_k)) std::printf(" %.17g", f);
      std::printf("\n");
    } catch (const sel::ModelError& e) {
      std::cout << "bad " << e.what() << '\n';
    }
  }
  return 0;
}
