// The shared-memory ring between the producer warpgroup and the consumer warpgroups: per stage a "full"
// mbarrier and an "empty" one.
//   full   the elected producer thread's arrival, which announces the stage's TMA bytes, plus, where the
//          producer gathers, one arrival per producer thread once its cp.async gathers have landed
//   empty  one arrival per consumer warpgroup of the stage's tile, by its first thread, once the warpgroup's
//          wgmma batches that read the stage have completed (wgmma is warpgroup-collective; an arrival per
//          thread would serialise 128 shared-memory atomics per warpgroup and stage)
// Each side keeps its own (stage, phase) cursor; the producer starts on the opposite phase, so its first pass
// over the ring does not wait.
#pragma once

#include <cutlass/arch/barrier.h>

#include <cstdint>

namespace tiledispatch::kernels::sm90 {

template <int Stages>
struct RingCursor {
  int stage = 0;
  uint32_t phase = 0;
  __device__ void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1u;
    }
  }
  // Past `n` stages that another consumer warpgroup takes (ping-pong).
  __device__ void advance(int n) {
    const int to = stage + n;
    stage = to % Stages;
    phase ^= uint32_t(to / Stages) & 1u;
  }
};

template <int Stages>
struct Ring {
  uint64_t* full;   // [Stages]
  uint64_t* empty;  // [Stages]

  // One thread initialises; the caller then synchronises the block. `gathering_threads`: producer threads
  // that gather (0 where TMA moves both operands); `tile_warpgroups`: consumer warpgroups reading each stage.
  __device__ void init(int gathering_threads, int tile_warpgroups) const {
    for (int s = 0; s < Stages; ++s) {
      cutlass::arch::ClusterBarrier::init(&full[s], uint32_t(gathering_threads + 1));
      cutlass::arch::ClusterBarrier::init(&empty[s], uint32_t(tile_warpgroups));
    }
    cutlass::arch::fence_barrier_init();
  }
  __device__ void producer_acquire(const RingCursor<Stages>& c) const {
    cutlass::arch::ClusterBarrier::wait(&empty[c.stage], c.phase ^ 1u);
  }
  // Arrives on the full barrier once this thread's cp.async operations so far have completed.
  __device__ void producer_commit(const RingCursor<Stages>& c) const {
    cutlass::arch::cpasync_barrier_arrive_noinc(&full[c.stage]);
  }
  // The elected producer thread's arrival: announces `tma_bytes` (0: no TMA this stage).
  __device__ void producer_expect(const RingCursor<Stages>& c, uint32_t tma_bytes) const {
    if (tma_bytes != 0) {
      cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&full[c.stage], tma_bytes);
    } else {
      cutlass::arch::ClusterBarrier::arrive(&full[c.stage]);
    }
  }
  __device__ void consumer_wait(const RingCursor<Stages>& c) const {
    cutlass::arch::ClusterBarrier::wait(&full[c.stage], c.phase);
  }
  // Called by every consumer thread after its warpgroup_wait; `signals` is true for one thread per warpgroup.
  __device__ void consumer_release(const RingCursor<Stages>& c, bool signals) const {
    if (signals) cutlass::arch::ClusterBarrier::arrive(&empty[c.stage]);
  }
};

// Ping-pong turns between the two consumer warpgroups, each with tiles of its own: warpgroup w waits on
// turn[w] before its tile's first stage and, once its last stage is awaited and issued, passes the turn
// (all 128 threads arrive on turn[1 - w]). Besides keeping one warpgroup's MMAs clear of the other's, this
// keeps each consumer's ring cursor at most one phase ahead of the ring's barriers: a parity wait cannot
// tell a phase from the one two before it.
struct TurnOrder {
  uint64_t* turn;  // [2]
  __device__ void init(int threads_per_warpgroup) const {
    for (int w = 0; w < 2; ++w) cutlass::arch::ClusterBarrier::init(&turn[w], uint32_t(threads_per_warpgroup));
  }
  __device__ void wait(int warpgroup, uint32_t phase) const {
    cutlass::arch::ClusterBarrier::wait(&turn[warpgroup], phase);
  }
  __device__ void pass(int warpgroup) const { cutlass::arch::ClusterBarrier::arrive(&turn[warpgroup ^ 1]); }
};

}  // namespace tiledispatch::kernels::sm90
