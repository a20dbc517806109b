// FastDivisor (fast_division.hpp) against the division operator, and the Hopper tile schedule's unit
// decomposition by it against the 64-bit one (a schedule too large for 31 bits). Host only; prints
// "checked N mismatches M" and the first mismatches.
#include <cstdint>
#include <cstdio>
#include <random>

#include "tiledispatch/kernels/fast_division.hpp"
#include "tiledispatch/kernels/sm90/tile_scheduler.hpp"

namespace {

using tiledispatch::kernels::FastDivisor;
using tiledispatch::kernels::sm90::TileSchedule;

long long g_checked = 0, g_mismatches = 0;

void check_divide(const FastDivisor& f, uint32_t d, uint32_t n) {
  ++g_checked;
  uint32_t r = 0;
  const uint32_t q = f.divide(n, r);
  if (q != n / d || r != n % d) {
    if (++g_mismatches <= 10) std::printf("mismatch %u / %u: %u rem %u\n", n, d, q, r);
  }
}

// Dividends where a floor changes (multiples of d and their neighbours), the ends of the range, and random ones.
void check_divisor(uint32_t d, std::mt19937& rng) {
  const FastDivisor f = FastDivisor::of(d);
  const uint32_t top = uint32_t(INT32_MAX);
  for (uint32_t n : {0u, 1u, d - 1, d, d + 1, top, top - 1, top - d + 1}) check_divide(f, d, n);
  for (uint64_t q = top / d; q + 3 > top / d && q > 0; --q) {  // the last multiples below 2^31
    for (int64_t e = -1; e <= 1; ++e) {
      const int64_t n = int64_t(q) * d + e;
      if (n >= 0 && n <= int64_t(top)) check_divide(f, d, uint32_t(n));
    }
  }
  std::uniform_int_distribution<uint32_t> any(0, top);
  for (int i = 0; i < 2000; ++i) check_divide(f, d, any(rng));
}

void check_schedule(int tiles_m, int tiles_n, int64_t blocks, int k_batch, std::mt19937& rng) {
  const TileSchedule fast = TileSchedule::of(tiles_m, tiles_n, blocks, k_batch);
  TileSchedule slow = fast;
  slow.fast = false;
  std::uniform_int_distribution<int64_t> any(0, fast.units - 1);
  for (int i = 0; i < 4000; ++i) {
    const int64_t u = i < 2000 ? i % fast.units : any(rng);
    const TileSchedule::Unit a = fast.unit(u), b = slow.unit(u);
    ++g_checked;
    if (a.tile_m != b.tile_m || a.tile_n != b.tile_n || a.split != b.split || a.group_block != b.group_block) {
      if (++g_mismatches <= 10) {
        std::printf("mismatch unit %lld of %dx%dx%lldx%d\n", static_cast<long long>(u), tiles_m, tiles_n,
                    static_cast<long long>(blocks), k_batch);
      }
    }
  }
}

}  // namespace

int main() {
  std::mt19937 rng(29);
  for (uint32_t d = 1; d <= 4096; ++d) check_divisor(d, rng);
  for (int shift = 12; shift <= 30; ++shift) {  // around every power of two, up to 2^31 - 1
    const uint32_t p = 1u << shift;
    for (uint32_t d : {p - 1, p, p + 1, p + p / 2}) check_divisor(d, rng);
  }
  check_divisor(uint32_t(INT32_MAX), rng);
  std::uniform_int_distribution<uint32_t> any(2, uint32_t(INT32_MAX));
  for (int i = 0; i < 2000; ++i) check_divisor(any(rng), rng);
  for (int m : {1, 7, 196, 1000})
    for (int n : {1, 3, 16})
      for (int k : {1, 2, 5}) check_schedule(m, n, 32, k, rng);
  // units past 31 bits take the 64-bit path
  const TileSchedule large = TileSchedule::of(70000, 3, 20000, 1);
  std::printf("large schedule fast %d\n", int(large.fast));
  std::printf("checked %lld mismatches %lld\n", g_checked, g_mismatches);
  return g_mismatches == 0 && !large.fast ? 0 : 1;
}
