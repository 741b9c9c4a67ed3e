/* heat, task variant (the seed's itampi_ompss2_tasks, in OpenMP): one task
 * per block with `depend` on the block and its four neighbours, so the
 * wavefront emerges from the dependencies and consecutive timesteps
 * overlap; one task per boundary block and direction for the halo, with the
 * block column as the MPI tag; snapshots as tasks too.
 *
 * Every MPI operation is non-blocking and its task is created with
 * `detach`: the task's dependencies are released when the request
 * completes (mapp_tampi, TAMPI_Iwait's idea), never by a blocking wait. The
 * thread that creates the tasks then polls the outstanding requests; the
 * others run tasks. So the team is the compute threads plus that one.
 *
 * Dependence objects: dep[(i + 1) * nbc + j] stands for block (i, j) of the
 * rank; row 0 for the top halo cells above block column j, row nb + 1 for
 * the bottom halo. A halo receive writes its object, the blocks next to it
 * read it, so a receive of timestep t+1 waits for the block of timestep t
 * that reads the old halo, and a send (reading the block) holds the block's
 * next update until the send's buffer is free again. Messages of one
 * (source, tag) are therefore posted in timestep order, which is what MPI's
 * non-overtaking rule needs to match them. */
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>

#include "heat.h"
#include "heat_nam.h"
#include "mapp_tampi.h"

typedef struct {
  heat_domain *d;
  heat_nam *nam;
  mapp_tampi *poller;
  char *dep;   /* (nb + 2) x nbc dependence objects */
  char *staged; /* nb x nbc: block b's place in the NAM staging snapshot */
  char none;   /* read by blocks without a neighbour there; never written */
  char window; /* the NAM window: epoch open/close are inout, puts in */
  long nb, nbc;
} graph;

static char *dep_of(graph *g, long row, long j) { return &g->dep[row * g->nbc + j]; }

/* Before creating a task: wait (polling) while too many are live, then
 * count it (see mapp_tampi.h for why there is a window). */
static void admit(graph *g) {
  mapp_tampi_throttle(g->poller);
  mapp_tampi_created(g->poller);
}

/* The cells of grid row `row` above or below block column j. */
static double *halo_cells(graph *g, long row, long j, int *count) {
  mapp_range rows, cols;
  heat_block_cells(g->d, 0, j, &rows, &cols);
  *count = (int)cols.count;
  return g->d->grid + row * g->d->stride + cols.first;
}

/* The body of a halo task: start the message of block column j (the
 * column is the tag) and bind the task's completion to its request. */
static void start_halo(graph *g, long row, long j, int peer, bool send, omp_event_handle_t done) {
  int count;
  double *cells = halo_cells(g, row, j, &count);
  MPI_Request req = MPI_REQUEST_NULL;
  int status = send ? mapp_mpi_check(MPI_Isend(cells, count, MPI_DOUBLE, peer, (int)j, g->d->comm, &req),
                                     "MPI_Isend of a halo")
                    : mapp_mpi_check(MPI_Irecv(cells, count, MPI_DOUBLE, peer, (int)j, g->d->comm, &req),
                                     "MPI_Irecv of a halo");
  if (status != MAPP_OK) mapp_tampi_fail(g->poller, status);
  mapp_tampi_iwait(g->poller, req, done);
}

static void recv_task(graph *g, long row, int from, long j) {
  char *halo = dep_of(g, row == 0 ? 0 : g->nb + 1, j);
  omp_event_handle_t done;
  admit(g);
#pragma omp task depend(out : *halo) detach(done)
  start_halo(g, row, j, from, false, done);
}

static void send_task(graph *g, long row, int to, long j) {
  char *block = dep_of(g, row == 1 ? 1 : g->nb, j);
  omp_event_handle_t done;
  admit(g);
#pragma omp task depend(in : *block) detach(done)
  start_halo(g, row, j, to, true, done);
}

/* Block (i, j): up and down are the halo objects at the rank's edges. */
static void block_task(graph *g, long i, long j) {
  char *self = dep_of(g, i + 1, j), *up = dep_of(g, i, j), *down = dep_of(g, i + 2, j);
  char *left = j > 0 ? dep_of(g, i + 1, j - 1) : &g->none;
  char *right = j + 1 < g->nbc ? dep_of(g, i + 1, j + 1) : &g->none;
  admit(g);
#pragma omp task depend(inout : *self) depend(in : *up, *down, *left, *right)
  {
    heat_update_block(g->d, i, j);
    mapp_tampi_done(g->poller);
  }
}

/* The seed's namSaveMatrix: open the epoch, one put per block, close it.
 * The open and close depend only on the window, not on the blocks, and
 * each block is first copied out to the staging snapshot, so the block's
 * next update waits only for its copy-out, never for a put or the epoch.
 * Staged block b is reused by the next snapshot's copy-out (out) only after
 * this put's request completed (its task's `in` released). */
static void epoch_task(graph *g, int (*op)(heat_nam *)) {
  char *window = &g->window;
  admit(g);
#pragma omp task depend(inout : *window)
  {
    int status = op(g->nam);
    if (status != MAPP_OK) mapp_tampi_fail(g->poller, status);
    mapp_tampi_done(g->poller);
  }
}

static void copy_out_task(graph *g, long b) {
  char *block = dep_of(g, b / g->nbc + 1, b % g->nbc), *staged = &g->staged[b];
  admit(g);
#pragma omp task depend(in : *block) depend(out : *staged)
  {
    heat_nam_stage_block(g->nam, g->d, b);
    mapp_tampi_done(g->poller);
  }
}

static void put_task(graph *g, long slot, long b) {
  char *staged = &g->staged[b], *window = &g->window;
  omp_event_handle_t done;
  admit(g);
#pragma omp task depend(in : *staged, *window) detach(done)
  {
    MPI_Request req = MPI_REQUEST_NULL;
    int status = heat_nam_put_block(g->nam, slot, b, &req);
    if (status != MAPP_OK) mapp_tampi_fail(g->poller, status);
    mapp_tampi_iwait(g->poller, req, done);
  }
}

static void snapshot_tasks(graph *g, long t) {
  long slot = heat_nam_claim_slot(g->nam, t);
  epoch_task(g, heat_nam_lock);
  for (long b = 0; b < g->nb * g->nbc; ++b) {
    copy_out_task(g, b);
    put_task(g, slot, b);
  }
  epoch_task(g, heat_nam_unlock);
}

/* Timestep t in the MPI variant's message order (heat_mpi.c). */
static void timestep_tasks(graph *g, long t) {
  heat_domain *d = g->d;
  bool above = d->above != MPI_PROC_NULL, below = d->below != MPI_PROC_NULL;
  for (long j = 0; j < g->nbc; ++j) {
    if (above) recv_task(g, 0, d->above, j);                  /* its last row of t */
    if (below) recv_task(g, d->local_rows + 1, d->below, j);  /* its first row of t-1 */
    if (above) send_task(g, 1, d->above, j);                  /* our first row of t-1 */
  }
  for (long i = 0; i < g->nb; ++i)
    for (long j = 0; j < g->nbc; ++j) block_task(g, i, j);
  for (long j = 0; j < g->nbc && below; ++j) send_task(g, d->local_rows, d->below, j); /* our last row of t */
  if (heat_nam_due(g->nam, t)) snapshot_tasks(g, t);
}

static int check_tags(const heat_domain *d) {
  int *tag_ub, found = 0;
  MAPP_MPI(MPI_Comm_get_attr(d->comm, MPI_TAG_UB, &tag_ub, &found));
  if (found && d->blocking.nbc - 1 > *tag_ub)
    return mapp_fail(MAPP_ERR_INPUT, "%ld block columns exceed MPI's largest tag %d (the column is the tag)",
                     d->blocking.nbc, *tag_ub);
  return MAPP_OK;
}

/* The creating thread creates every timestep's tasks, then polls until all
 * requests are complete; only then is the taskwait free of detached tasks
 * that nobody would fulfil. */
static void run_graph(graph *g, int team) {
#pragma omp parallel num_threads(team)
#pragma omp single
  {
    for (long t = 1; t <= g->d->cfg.steps; ++t) timestep_tasks(g, t);
    mapp_tampi_drain(g->poller);
#pragma omp taskwait
  }
}

int heat_solve_tasks(heat_domain *d, heat_nam *nam, mapp_timers *timers) {
  MAPP_TRY(check_tags(d));
  int team = omp_get_max_threads() + 1; /* the compute threads and the poller */
  mapp_tampi poller;
  MAPP_TRY(mapp_tampi_init(&poller, team));
  graph g = {.d = d, .nam = nam, .poller = &poller, .nb = d->share.blocks.count, .nbc = d->blocking.nbc};
  int status = mapp_calloc((void **)&g.dep, (size_t)(g.nb + 2) * (size_t)g.nbc, 1, "task dependence objects");
  if (status == MAPP_OK)
    status = mapp_calloc((void **)&g.staged, (size_t)g.nb * (size_t)g.nbc, 1, "task dependence objects");
  if (status == MAPP_OK) {
    /* Communication and snapshots overlap the computation: all of it is
     * the compute phase. */
    mapp_timer_start(timers, MAPP_PHASE_COMPUTE);
    run_graph(&g, team);
    mapp_timer_stop(timers, MAPP_PHASE_COMPUTE);
    status = mapp_tampi_status(&poller);
  }
  free(g.dep);
  free(g.staged);
  mapp_tampi_destroy(&poller);
  return status;
}
