/* heat, MPI-only variant: the rank's blocks in sequence, blocking halo
 * exchange, in the seed's dependency order. Ranks form a pipeline: rank r
 * needs the last row of rank r-1 of this timestep (its top neighbours) and
 * the first row of rank r+1 of the previous timestep (its bottom ones), so
 * the answer equals the serial Gauss-Seidel sweep for any rank count. */
#include "heat.h"
#include "heat_nam.h"

enum { TAG_UP = 1, TAG_DOWN = 2 };

/* Before computing timestep t: send our first row (t-1) up, receive the
 * row above (t) and the row below (t-1). */
static int halo_before(heat_domain *d) {
  double *g = d->grid;
  long n = d->cfg.cols, s = d->stride, L = d->local_rows;
  MPI_Request up;
  MAPP_MPI(MPI_Isend(g + s + 1, (int)n, MPI_DOUBLE, d->above, TAG_UP, d->comm, &up));
  MAPP_MPI(MPI_Recv(g + 1, (int)n, MPI_DOUBLE, d->above, TAG_DOWN, d->comm, MPI_STATUS_IGNORE));
  MAPP_MPI(MPI_Recv(g + (L + 1) * s + 1, (int)n, MPI_DOUBLE, d->below, TAG_UP, d->comm, MPI_STATUS_IGNORE));
  MAPP_MPI(MPI_Wait(&up, MPI_STATUS_IGNORE));
  return MAPP_OK;
}

/* After computing timestep t: our last row (t) is the next rank's top halo. */
static int halo_after(heat_domain *d) {
  long n = d->cfg.cols, s = d->stride, L = d->local_rows;
  MAPP_MPI(MPI_Send(d->grid + L * s + 1, (int)n, MPI_DOUBLE, d->below, TAG_DOWN, d->comm));
  return MAPP_OK;
}

int heat_solve_pipeline(heat_domain *d, heat_nam *nam, mapp_timers *timers, void (*sweep)(heat_domain *)) {
  for (long t = 1; t <= d->cfg.steps; ++t) {
    mapp_timer_start(timers, MAPP_PHASE_COMM);
    MAPP_TRY(halo_before(d));
    mapp_timer_stop(timers, MAPP_PHASE_COMM);
    mapp_timer_start(timers, MAPP_PHASE_COMPUTE);
    sweep(d);
    mapp_timer_stop(timers, MAPP_PHASE_COMPUTE);
    mapp_timer_start(timers, MAPP_PHASE_COMM);
    MAPP_TRY(halo_after(d));
    mapp_timer_stop(timers, MAPP_PHASE_COMM);
    MAPP_TRY(heat_nam_save_if_due(nam, d, t, timers));
  }
  return MAPP_OK;
}

int heat_solve_mpi(heat_domain *d, heat_nam *nam, heat_solve_context *ctx) {
  return heat_solve_pipeline(d, nam, ctx->timers, heat_update_blocks);
}
