#pragma once
#include "tiledispatch/generated/arch_traits.hpp"
template <int N> struct Alpha {};
