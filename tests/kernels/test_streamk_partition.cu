// CPU check of the stream-K partition (kernels/implicit_gemm_streamk.cuh) over many shapes: every MAC-loop
// iteration belongs to exactly one piece; the persistent walk (pieces 0.. of a worker) and the data-parallel
// grid (max_pieces_per_worker CTAs per worker) see the same pieces; a piece covering a whole tile is the only
// piece of that tile; the partial pieces of a tile are those of workers w0 .. w0+n-1 (what the reduction reads),
// each in its own slot; the bounds the host sizes grids and workspace with hold. Prints "<cases> cases,
// <failures> failures".
#include <cstdio>
#include <set>
#include <vector>

#include "tiledispatch/kernels/implicit_gemm_streamk.cuh"

using tiledispatch::kernels::make_streamk_plan;
using tiledispatch::kernels::streamk_piece;
using tiledispatch::kernels::StreamKPlan;

namespace {
int failures = 0;
void expect(bool ok, const char* what, int tiles_m, int64_t iters, int64_t ctas) {
  if (!ok && failures++ < 20) std::printf("FAIL %s (tiles %d, iters %lld, ctas %lld)\n", what, tiles_m, (long long)iters, (long long)ctas);
}
}  // namespace

int main() {
  int cases = 0;
  for (int tiles_m : {1, 2, 3, 7, 40}) {
    for (int64_t iters : {1, 2, 3, 5, 64, 391, 1000}) {
      for (int64_t ctas : {1, 2, 5, 132, 264, 1000}) {
        ++cases;
        const StreamKPlan plan = make_streamk_plan(tiles_m, 3, 2, iters, ctas);
        std::vector<int> covered(size_t(plan.total), 0);
        std::vector<std::vector<int64_t>> workers_of_tile(size_t(plan.tiles));
        std::vector<int> whole(size_t(plan.tiles), 0);
        std::set<int64_t> slots;
        int max_worker_pieces = 0;
        for (int64_t w = 0; w < plan.workers; ++w) {
          int j = 0;
          int64_t tile, kb, ke;
          for (; streamk_piece(plan, w, j, tile, kb, ke); ++j) {
            expect(kb < ke && ke <= plan.iters_per_tile, "piece range", tiles_m, iters, ctas);
            for (int64_t k = kb; k < ke; ++k) ++covered[size_t(tile * plan.iters_per_tile + k)];
            workers_of_tile[size_t(tile)].push_back(w);
            if (kb == 0 && ke == plan.iters_per_tile) {
              ++whole[size_t(tile)];
            } else {
              expect(slots.insert(plan.slot(w, tile)).second, "slot used twice", tiles_m, iters, ctas);
              expect(plan.slot(w, tile) < 2 * plan.workers, "slot in workspace", tiles_m, iters, ctas);
            }
          }
          // The data-parallel grid launches max_pieces_per_worker CTAs per worker: none may be missed.
          expect(j <= plan.max_pieces_per_worker, "pieces per worker bound", tiles_m, iters, ctas);
          expect(!streamk_piece(plan, w, plan.max_pieces_per_worker, tile, kb, ke), "piece past the bound", tiles_m, iters, ctas);
          max_worker_pieces = j > max_worker_pieces ? j : max_worker_pieces;
        }
        for (int c : covered) expect(c == 1, "iteration covered exactly once", tiles_m, iters, ctas);
        for (int64_t t = 0; t < plan.tiles; ++t) {
          const auto& ws = workers_of_tile[size_t(t)];
          const int64_t w0 = plan.worker_of(t * plan.iters_per_tile);
          const int64_t n = plan.worker_of((t + 1) * plan.iters_per_tile - 1) - w0 + 1;
          expect(int64_t(ws.size()) == n, "pieces of a tile = workers w0..w0+n-1", tiles_m, iters, ctas);
          for (size_t i = 0; i < ws.size(); ++i) expect(ws[i] == w0 + int64_t(i), "workers in order", tiles_m, iters, ctas);
          expect((n == 1) == (whole[size_t(t)] == 1), "whole tile iff one piece", tiles_m, iters, ctas);
          expect(n <= plan.max_pieces_per_tile, "pieces per tile bound", tiles_m, iters, ctas);
        }
        expect(plan.workers == (plan.total < ctas ? plan.total : ctas), "workers", tiles_m, iters, ctas);
      }
    }
  }
  std::printf("%d cases, %d failures\n", cases, failures);
  return failures == 0 ? 0 : 1;
}
