// Division by a divisor fixed for a launch, as a multiply-high and a shift: the divisor's multiplier is found
// once on the host, and the device divides in two instructions. For the decompositions a persistent kernel
// repeats on every work unit, where a division by a run-time value is a subroutine (a 64-bit one a long one)
// on the unit's critical path.
//
// For a divisor d with 2^(l-1) < d <= 2^l (l >= 1), multiplier m = ceil(2^(31+l) / d) (below 2^32) and
// shift l - 1: q = (n * m) >> (31 + l) is floor(n / d) for every n below 2^31, because m - 2^(31+l)/d < 1
// adds less than n / 2^(31+l) < 1/d to n/d, too little to reach the next integer. d = 1 divides by itself.
#pragma once

#include <cstdint>

#include "tiledispatch/kernels/host_device.hpp"

namespace tiledispatch::kernels {

struct FastDivisor {
  uint32_t divisor = 1, multiplier = 0, shift = 0;

  // Divisors and dividends below 2^31 (fits() on the host).
  static FastDivisor of(uint32_t d) {
    FastDivisor f;
    f.divisor = d;
    if (d > 1) {
      uint32_t l = 0;
      while ((uint64_t(1) << l) < d) ++l;
      f.multiplier = uint32_t(((uint64_t(1) << (31 + l)) + d - 1) / d);
      f.shift = l - 1;
    }
    return f;
  }
  static constexpr bool fits(int64_t value) { return value >= 0 && value <= INT32_MAX; }

  TD_HOST_DEVICE uint32_t divide(uint32_t n) const {
    if (divisor == 1) return n;
#if defined(__CUDA_ARCH__)
    return __umulhi(n, multiplier) >> shift;
#else
    return uint32_t((uint64_t(n) * multiplier) >> 32) >> shift;
#endif
  }
  // n / divisor, and n % divisor into `remainder`
  TD_HOST_DEVICE uint32_t divide(uint32_t n, uint32_t& remainder) const {
    const uint32_t q = divide(n);
    remainder = n - q * divisor;
    return q;
  }
};

}  // namespace tiledispatch::kernels
