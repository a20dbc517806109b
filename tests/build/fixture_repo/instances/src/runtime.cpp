#include "tiledispatch/kernels/alpha.hpp"
void runtime_entry() {}
