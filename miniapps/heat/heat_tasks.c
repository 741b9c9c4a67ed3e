/* heat, task variant (the seed's itampi_ompss2_tasks, in OpenMP): one task
 * per block with `depend` on the block and its four neighbours, so the
 * wavefront emerges from the dependencies and consecutive timesteps
 * overlap; one task per boundary block and direction for the halo, with the
 * block column as the MPI tag; snapshots as tasks too.
 *
 * Every MPI operation is non-blocking. In TAMPI's non-blocking mode (the
 * seed's) its task is created with `detach`: the task's dependencies are
 * released when the request completes, which a polling task on the workers
 * (or, with --poller thread, the creating thread) finds out; in blocking
 * mode the task waits for its request inside (mapp_tampi.h). The thread
 * that creates the tasks is one more in the team; with the polling task it
 * sleeps while the window of live tasks is full.
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
  char none;   /* read by tasks without a neighbour there; never written */
  char window; /* the NAM window: epoch open/close are inout, puts in */
  bool blocking; /* TAMPI's blocking mode: tasks wait for their requests */
  long nb, nbc;
} graph;

static char *dep_of(graph *g, long row, long j) { return &g->dep[row * g->nbc + j]; }

/* Before creating a task: wait while too many are live, then count it (see
 * mapp_tampi.h for why there is a window). */
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

/* One MPI operation of a communication task: a halo message of block
 * column j (the column is the tag), or the put of staged block b into a
 * snapshot's slot. */
typedef struct {
  enum { HALO_SEND, HALO_RECV, NAM_PUT } kind;
  long row, j;  /* halo: grid row and block column */
  int peer;     /* halo: the neighbour */
  long slot, b; /* put: snapshot slot and block */
} mpi_op;

static MPI_Request start_op(graph *g, const mpi_op *op) {
  MPI_Request req = MPI_REQUEST_NULL;
  int status = MAPP_OK;
  if (op->kind == NAM_PUT) {
    status = heat_nam_put_block(g->nam, op->slot, op->b, &req);
  } else {
    int count;
    double *cells = halo_cells(g, op->row, op->j, &count);
    status = op->kind == HALO_SEND
                 ? mapp_mpi_check(MPI_Isend(cells, count, MPI_DOUBLE, op->peer, (int)op->j, g->d->comm, &req),
                                  "MPI_Isend of a halo")
                 : mapp_mpi_check(MPI_Irecv(cells, count, MPI_DOUBLE, op->peer, (int)op->j, g->d->comm, &req),
                                  "MPI_Irecv of a halo");
  }
  if (status != MAPP_OK) mapp_tampi_fail(g->poller, status);
  return req;
}

/* Non-blocking mode (TAMPI_Iwait): start, bind the detached task's
 * completion to the request, return. */
static void iwait_body(graph *g, mpi_op op, omp_event_handle_t done) {
  mapp_tampi_iwait(g->poller, start_op(g, &op), done);
}

/* Blocking mode (TAMPI's MPI_Wait in a task): start and wait inside. */
static void wait_body(graph *g, mpi_op op) {
  mapp_tampi_begin(g->poller);
  MPI_Request req = start_op(g, &op);
  mapp_tampi_wait(g->poller, &req);
  mapp_tampi_done(g->poller);
}

/* A communication task that writes *out (a halo receive). */
static void mpi_task_out(graph *g, mpi_op op, char *out) {
  admit(g);
  if (g->blocking) {
#pragma omp task depend(out : *out)
    wait_body(g, op);
  } else {
    omp_event_handle_t done;
#pragma omp task depend(out : *out) detach(done)
    iwait_body(g, op, done);
  }
}

/* A communication task that reads *a and *b (a send, a put). */
static void mpi_task_in(graph *g, mpi_op op, char *a, char *b) {
  admit(g);
  if (g->blocking) {
#pragma omp task depend(in : *a, *b)
    wait_body(g, op);
  } else {
    omp_event_handle_t done;
#pragma omp task depend(in : *a, *b) detach(done)
    iwait_body(g, op, done);
  }
}

static void recv_task(graph *g, long row, int from, long j) {
  char *halo = dep_of(g, row == 0 ? 0 : g->nb + 1, j);
  mpi_task_out(g, (mpi_op){.kind = HALO_RECV, .row = row, .j = j, .peer = from}, halo);
}

static void send_task(graph *g, long row, int to, long j) {
  char *block = dep_of(g, row == 1 ? 1 : g->nb, j);
  mpi_task_in(g, (mpi_op){.kind = HALO_SEND, .row = row, .j = j, .peer = to}, block, &g->none);
}

/* Block (i, j): up and down are the halo objects at the rank's edges. */
static void block_task(graph *g, long i, long j) {
  char *self = dep_of(g, i + 1, j), *up = dep_of(g, i, j), *down = dep_of(g, i + 2, j);
  char *left = j > 0 ? dep_of(g, i + 1, j - 1) : &g->none;
  char *right = j + 1 < g->nbc ? dep_of(g, i + 1, j + 1) : &g->none;
  admit(g);
#pragma omp task depend(inout : *self) depend(in : *up, *down, *left, *right)
  {
    mapp_tampi_begin(g->poller);
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
    mapp_tampi_begin(g->poller);
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
    mapp_tampi_begin(g->poller);
    heat_nam_stage_block(g->nam, g->d, b);
    mapp_tampi_done(g->poller);
  }
}

static void put_task(graph *g, long slot, long b) {
  mpi_task_in(g, (mpi_op){.kind = NAM_PUT, .slot = slot, .b = b}, &g->staged[b], &g->window);
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

/* Timestep t in the MPI variant's message order (heat_mpi.c): the send up
 * is created first, so where it and the receive of the row above become
 * ready together (both wait for the block row's last update), the runtime's
 * first-in first-out queue starts the send first. In blocking mode that
 * order keeps a lone worker from waiting in a receive whose message needs
 * the send still queued behind it. */
static void timestep_tasks(graph *g, long t) {
  heat_domain *d = g->d;
  bool above = d->above != MPI_PROC_NULL, below = d->below != MPI_PROC_NULL;
  for (long j = 0; j < g->nbc; ++j) {
    if (above) send_task(g, 1, d->above, j);                  /* our first row of t-1 */
    if (above) recv_task(g, 0, d->above, j);                  /* its last row of t */
    if (below) recv_task(g, d->local_rows + 1, d->below, j);  /* its first row of t-1 */
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

/* The creating thread creates every timestep's tasks (waiting while the
 * window is full), then waits until all are complete; only then is the
 * taskwait free of detached tasks that nobody would fulfil. The workers
 * run the tasks, the polling task among them, from the single's barrier. */
static void run_graph(graph *g, int team) {
#pragma omp parallel num_threads(team)
#pragma omp single
  {
    mapp_tampi_start(g->poller);
    for (long t = 1; t <= g->d->cfg.steps; ++t) timestep_tasks(g, t);
    mapp_tampi_drain(g->poller);
#pragma omp taskwait
  }
}

int heat_solve_tasks(heat_domain *d, heat_nam *nam, heat_solve_context *ctx) {
  MAPP_TRY(check_tags(d));
  const heat_tasks_options *o = &ctx->tasks;
  int workers = omp_get_max_threads();
  mapp_tampi_config cfg = {.poller = o->poller, .mode = o->mode, .poll_s = o->poll_us * 1e-6,
                           .watchdog_s = o->watchdog_s, .report = d->rank == 0, .prog = "mapp-heat"};
  /* Blocking mode's most tasks waiting on another rank at once: per block
   * column, one halo receive and one send each way (the next of each waits
   * for the block it reads or writes). A put completes locally, without
   * any other task, so it needs no spare thread. */
  long max_waiting = 4 * d->blocking.nbc;
  mapp_tampi poller;
  MAPP_TRY(mapp_tampi_init(&poller, workers, (int)max_waiting, &cfg));
  graph g = {.d = d, .nam = nam, .poller = &poller, .nb = d->share.blocks.count, .nbc = d->blocking.nbc,
             .blocking = o->mode == MAPP_TAMPI_BLOCKING};
  int status = mapp_calloc((void **)&g.dep, (size_t)(g.nb + 2) * (size_t)g.nbc, 1, "task dependence objects");
  if (status == MAPP_OK)
    status = mapp_calloc((void **)&g.staged, (size_t)g.nb * (size_t)g.nbc, 1, "task dependence objects");
  if (status == MAPP_OK) {
    /* Communication and snapshots overlap the computation: all of it is
     * the compute phase. */
    mapp_timer_start(ctx->timers, MAPP_PHASE_COMPUTE);
    ctx->stats.team_threads = mapp_tampi_team(&poller);
    run_graph(&g, ctx->stats.team_threads);
    mapp_timer_stop(ctx->timers, MAPP_PHASE_COMPUTE);
    status = mapp_tampi_status(&poller);
  }
  ctx->stats.request_tests = atomic_load(&poller.polls);
  ctx->stats.polling_task_runs = atomic_load(&poller.poll_tasks);
  free(g.dep);
  free(g.staged);
  mapp_tampi_destroy(&poller);
  return status;
}
