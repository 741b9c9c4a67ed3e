/* heat, fork-join variant: inside a rank, the blocks of each anti-diagonal
 * are updated in parallel by OpenMP threads, diagonal after diagonal.
 *
 * Why anti-diagonals: block (i, j) needs (i-1, j) and (i, j-1) of this
 * timestep and (i+1, j), (i, j+1) of the previous one. Blocks with the same
 * i + j share no cell the kernel reads (it reads no corners), so they are
 * independent, and diagonal k only needs diagonal k-1 finished: the
 * wavefront the dependencies allow. The timestep loop, halo exchange and
 * snapshots are the MPI variant's (heat_solve_pipeline), between the
 * parallel regions, so the answer is bit for bit the serial one. */
#include "heat.h"

static long min_long(long a, long b) { return a < b ? a : b; }
static long max_long(long a, long b) { return a > b ? a : b; }

/* One timestep of the rank's blocks, one parallel region; the implicit
 * barrier of each `omp for` is the wavefront's step. */
static void update_wavefront(heat_domain *d) {
  long nb = d->share.blocks.count, nbc = d->blocking.nbc;
#pragma omp parallel
  for (long k = 0; k < nb + nbc - 1; ++k) {
    /* Dynamic: the diagonal's blocks differ in size at the edges. */
#pragma omp for schedule(dynamic, 1)
    for (long i = max_long(0, k - nbc + 1); i <= min_long(k, nb - 1); ++i) heat_update_block(d, i, k - i);
  }
}

int heat_solve_forkjoin(heat_domain *d, heat_nam *nam, heat_solve_context *ctx) {
  return heat_solve_pipeline(d, nam, ctx->timers, update_wavefront);
}
