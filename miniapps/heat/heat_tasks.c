/* heat, task variant (the seed's itampi_ompss2_tasks): one task per block
 * that accesses the block and its four neighbours, so the wavefront emerges
 * from the dependences and consecutive timesteps overlap; one task per
 * boundary block and direction for the halo, with the block column as the
 * MPI tag; snapshots as tasks too. The tasks are nodes of a dataflow graph
 * run on OpenMP tasks (mapp_dataflow.h: the dependence tracking Nanos6
 * does for OmpSs-2), submitted a timestep at a time by a submitter that is
 * itself a task, so every thread of the team is a worker.
 *
 * Every MPI operation is non-blocking. In TAMPI's non-blocking mode (the
 * seed's) a communication node binds its request to its completion: its
 * successors are released when the request completes, which a polling
 * task on the workers (or, with --poller thread, a polling thread) finds
 * out; in blocking mode the node waits for its request inside
 * (mapp_tampi.h).
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

/* The submitter pauses once this many timesteps' nodes are live: enough
 * that a rank has posted the next timestep's messages while its neighbour
 * still waits for the last one's. Deeper windows measured no faster
 * (medium, 2 ranks x 1 thread: 64 to 1,800 live nodes within 3 %). */
enum { WINDOW_TIMESTEPS = 2 };
/* Nodes a team thread may run as OpenMP tasks at once: half of libgomp's
 * 64 x nthreads undeferred threshold. */
enum { TASKS_PER_THREAD = 32 };

typedef struct {
  heat_domain *d;
  heat_nam *nam;
  mapp_tampi *poller;
  mapp_df *df;
  mapp_df_object *dep;    /* (nb + 2) x nbc dependence objects */
  mapp_df_object *staged; /* nb x nbc: block b's place in the NAM staging snapshot */
  mapp_df_object window;  /* the NAM window: epoch open/close write it, puts read it */
  bool blocking; /* TAMPI's blocking mode: nodes wait for their requests */
  long nb, nbc;
  long next_step; /* the submitter's next timestep */
} graph;

static mapp_df_object *dep_of(graph *g, long row, long j) { return &g->dep[row * g->nbc + j]; }

/* The cells of grid row `row` above or below block column j. */
static double *halo_cells(graph *g, long row, long j, int *count) {
  mapp_range rows, cols;
  heat_block_cells(g->d, 0, j, &rows, &cols);
  *count = (int)cols.count;
  return g->d->grid + row * g->d->stride + cols.first;
}

/* One MPI operation of a communication node: a halo message of block
 * column j (the column is the tag), or the put of staged block b into a
 * snapshot's slot. */
typedef struct {
  enum { HALO_SEND, HALO_RECV, NAM_PUT } kind;
  long row, j;  /* halo: grid row and block column */
  int peer;     /* halo: the neighbour */
  long slot, b; /* put: snapshot slot and block */
} mpi_op;

/* What a node does, its payload. */
typedef struct {
  graph *g;
  enum { BLOCK, COMM, EPOCH, COPY_OUT } kind;
  long i, j, b;                /* block: its place; copy-out: the block */
  mpi_op op;                   /* communication */
  int (*epoch)(heat_nam *nam); /* epoch: open or close */
} heat_node;

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

/* A communication node: in non-blocking mode (TAMPI_Iwait) start and bind
 * the node's completion to the request; in blocking mode (TAMPI's MPI_Wait
 * in a task) start and wait inside. */
static void run_comm(graph *g, const mpi_op *op, mapp_df_node *node) {
  MPI_Request req = start_op(g, op);
  if (g->blocking) mapp_tampi_wait(g->poller, &req);
  else mapp_tampi_iwait(g->poller, req, node);
}

static void run_node(mapp_df *df, mapp_df_node *node, void *payload) {
  (void)df;
  heat_node *h = payload;
  graph *g = h->g;
  mapp_tampi_begin(g->poller);
  int status = MAPP_OK;
  switch (h->kind) {
  case BLOCK: heat_update_block(g->d, h->i, h->j); break;
  case COMM: run_comm(g, &h->op, node); break;
  case EPOCH: status = h->epoch(g->nam); break;
  case COPY_OUT: heat_nam_stage_block(g->nam, g->d, h->b); break;
  }
  if (status != MAPP_OK) mapp_tampi_fail(g->poller, status);
  mapp_tampi_done(g->poller);
}

/* Submit a node of payload h with its accesses (NULL objects skipped). */
static void submit(graph *g, heat_node h, const mapp_df_access *access, int count) {
  mapp_df_node *node = mapp_df_node_new(g->df, run_node);
  if (!node) return; /* recorded: the graph drains and the solve reports it */
  h.g = g;
  *(heat_node *)mapp_df_payload(node) = h;
  mapp_df_submit(g->df, node, access, count);
}

static void recv_node(graph *g, long row, int from, long j) {
  mapp_df_object *halo = dep_of(g, row == 0 ? 0 : g->nb + 1, j);
  mapp_df_access access[] = {{halo, MAPP_DF_OUT}};
  submit(g, (heat_node){.kind = COMM, .op = {.kind = HALO_RECV, .row = row, .j = j, .peer = from}}, access, 1);
}

static void send_node(graph *g, long row, int to, long j) {
  mapp_df_object *block = dep_of(g, row == 1 ? 1 : g->nb, j);
  mapp_df_access access[] = {{block, MAPP_DF_IN}};
  submit(g, (heat_node){.kind = COMM, .op = {.kind = HALO_SEND, .row = row, .j = j, .peer = to}}, access, 1);
}

/* Block (i, j): up and down are the halo objects at the rank's edges. */
static void block_node(graph *g, long i, long j) {
  mapp_df_access access[] = {
      {dep_of(g, i + 1, j), MAPP_DF_OUT},
      {dep_of(g, i, j), MAPP_DF_IN},
      {dep_of(g, i + 2, j), MAPP_DF_IN},
      {j > 0 ? dep_of(g, i + 1, j - 1) : NULL, MAPP_DF_IN},
      {j + 1 < g->nbc ? dep_of(g, i + 1, j + 1) : NULL, MAPP_DF_IN},
  };
  submit(g, (heat_node){.kind = BLOCK, .i = i, .j = j}, access, 5);
}

/* The seed's namSaveMatrix: open the epoch, one put per block, close it.
 * The open and close access only the window, not the blocks, and each
 * block is first copied out to the staging snapshot, so the block's next
 * update waits only for its copy-out, never for a put or the epoch. Staged
 * block b is reused by the next snapshot's copy-out (out) only after this
 * put's request completed (its node released). */
static void epoch_node(graph *g, int (*op)(heat_nam *)) {
  mapp_df_access access[] = {{&g->window, MAPP_DF_OUT}};
  submit(g, (heat_node){.kind = EPOCH, .epoch = op}, access, 1);
}

static void copy_out_node(graph *g, long b) {
  mapp_df_access access[] = {{dep_of(g, b / g->nbc + 1, b % g->nbc), MAPP_DF_IN}, {&g->staged[b], MAPP_DF_OUT}};
  submit(g, (heat_node){.kind = COPY_OUT, .b = b}, access, 2);
}

static void put_node(graph *g, long slot, long b) {
  mapp_df_access access[] = {{&g->staged[b], MAPP_DF_IN}, {&g->window, MAPP_DF_IN}};
  submit(g, (heat_node){.kind = COMM, .op = {.kind = NAM_PUT, .slot = slot, .b = b}}, access, 2);
}

static void snapshot_nodes(graph *g, long t) {
  long slot = heat_nam_claim_slot(g->nam, t);
  epoch_node(g, heat_nam_lock);
  for (long b = 0; b < g->nb * g->nbc; ++b) {
    copy_out_node(g, b);
    put_node(g, slot, b);
  }
  epoch_node(g, heat_nam_unlock);
}

/* Timestep t in the MPI variant's message order (heat_mpi.c): the send up
 * is submitted first, so where it and the receive of the row above become
 * ready together (both wait for the block row's last update), the ready
 * queue's first-in first-out order starts the send first. In blocking mode
 * that order keeps a lone worker from waiting in a receive whose message
 * needs the send still queued behind it. */
static void timestep_nodes(graph *g, long t) {
  heat_domain *d = g->d;
  bool above = d->above != MPI_PROC_NULL, below = d->below != MPI_PROC_NULL;
  for (long j = 0; j < g->nbc; ++j) {
    if (above) send_node(g, 1, d->above, j);                  /* our first row of t-1 */
    if (above) recv_node(g, 0, d->above, j);                  /* its last row of t */
    if (below) recv_node(g, d->local_rows + 1, d->below, j);  /* its first row of t-1 */
  }
  for (long i = 0; i < g->nb; ++i)
    for (long j = 0; j < g->nbc; ++j) block_node(g, i, j);
  for (long j = 0; j < g->nbc && below; ++j) send_node(g, d->local_rows, d->below, j); /* our last row of t */
  if (heat_nam_due(g->nam, t)) snapshot_nodes(g, t);
}

/* The submitter's batch: one timestep. In blocking mode it holds a core
 * token like any node, so at most `workers` threads compute at once. */
static bool submit_timestep(mapp_df *df, void *arg) {
  graph *g = arg;
  mapp_tampi_begin(g->poller);
  timestep_nodes(g, g->next_step++);
  mapp_tampi_done(g->poller);
  (void)df;
  return g->next_step <= g->d->cfg.steps;
}
static int check_tags(const heat_domain *d) {
  int *tag_ub, found = 0;
  MAPP_MPI(MPI_Comm_get_attr(d->comm, MPI_TAG_UB, &tag_ub, &found));
  if (found && d->blocking.nbc - 1 > *tag_ub)
    return mapp_fail(MAPP_ERR_INPUT, "%ld block columns exceed MPI's largest tag %d (the column is the tag)",
                     d->blocking.nbc, *tag_ub);
  return MAPP_OK;
}

/* The team runs the graph from its single construct's barrier: one thread
 * creates the submitter's first task (and, with the thread poller, polls
 * until the graph is done), every other thread and then that one run the
 * nodes. */
static void run_graph(graph *g, int team) {
#pragma omp parallel num_threads(team)
#pragma omp single
  {
    mapp_df_start(g->df, submit_timestep, g);
    mapp_tampi_run(g->poller);
  }
}

/* After the team: a graph that is not done had every task end with nodes
 * still waiting (the polling task stopped, say). The watchdog names what
 * waits and ends the run; without it, say so here. */
static int check_finished(graph *g, const mapp_tampi_config *cfg) {
  if (mapp_df_finished(g->df)) return MAPP_OK;
  if (cfg->watchdog_s > 0)
    for (;;) mapp_sleep(1.0);
  return mapp_fail(MAPP_ERR_SYSTEM, "the task graph stopped with %ld nodes live and %d MPI requests outstanding",
                   atomic_load(&g->df->live), atomic_load(&g->poller->outstanding));
}

static int alloc_objects(graph *g) {
  MAPP_TRY(mapp_calloc((void **)&g->dep, (size_t)(g->nb + 2) * (size_t)g->nbc, sizeof *g->dep,
                       "task dependence objects"));
  return mapp_calloc((void **)&g->staged, (size_t)g->nb * (size_t)g->nbc, sizeof *g->staged,
                     "task dependence objects");
}

static void free_objects(graph *g) {
  for (long k = 0; g->dep && k < (g->nb + 2) * g->nbc; ++k) mapp_df_object_free(&g->dep[k]);
  for (long k = 0; g->staged && k < g->nb * g->nbc; ++k) mapp_df_object_free(&g->staged[k]);
  mapp_df_object_free(&g->window);
  free(g->dep);
  free(g->staged);
}

static int solve(graph *g, int team, heat_solve_context *ctx, const mapp_tampi_config *cfg) {
  MAPP_TRY(alloc_objects(g));
  /* Communication and snapshots overlap the computation: all of it is
   * the compute phase. */
  mapp_timer_start(ctx->timers, MAPP_PHASE_COMPUTE);
  ctx->stats.team_threads = team;
  run_graph(g, team);
  mapp_timer_stop(ctx->timers, MAPP_PHASE_COMPUTE);
  MAPP_TRY(check_finished(g, cfg));
  MAPP_TRY(mapp_df_status(g->df));
  return mapp_tampi_status(g->poller);
}

int heat_solve_tasks(heat_domain *d, heat_nam *nam, heat_solve_context *ctx) {
  MAPP_TRY(check_tags(d));
  const heat_tasks_options *o = &ctx->tasks;
  int workers = omp_get_max_threads();
  mapp_tampi_config cfg = {.poller = o->poller, .mode = o->mode, .poll_s = o->poll_us * 1e-6,
                           .watchdog_s = o->watchdog_s, .report = d->rank == 0, .prog = "mapp-heat"};
  graph g = {.d = d, .nam = nam, .nb = d->share.blocks.count, .nbc = d->blocking.nbc, .next_step = 1,
             .blocking = o->mode == MAPP_TAMPI_BLOCKING};
  /* Blocking mode's most nodes waiting on another rank at once: per block
   * column, one halo receive and one send each way (the next of each waits
   * for the block it reads or writes). A put completes locally, without
   * any other node, so it needs no spare thread. */
  long max_waiting = 4 * d->blocking.nbc;
  long per_step = 3 * g.nb * g.nbc + 4 * g.nbc + 2;
  int team = mapp_tampi_team(&cfg, workers, (int)max_waiting);
  int max_tasks = TASKS_PER_THREAD * team < MAPP_DF_MAX_TASKS ? TASKS_PER_THREAD * team : MAPP_DF_MAX_TASKS;
  mapp_df df;
  mapp_tampi poller;
  MAPP_TRY(mapp_df_init(&df, sizeof(heat_node), WINDOW_TIMESTEPS * per_step, max_tasks));
  g.df = &df;
  int status = mapp_tampi_init(&poller, &df, workers, (int)max_waiting, &cfg);
  if (status == MAPP_OK) {
    g.poller = &poller;
    status = solve(&g, team, ctx, &cfg);
    ctx->stats.request_tests = atomic_load(&poller.polls);
    ctx->stats.polling_task_runs = atomic_load(&poller.poll_tasks);
    ctx->stats.submitter_runs = atomic_load(&df.submitter_runs);
    mapp_tampi_destroy(&poller);
  }
  free_objects(&g);
  mapp_df_destroy(&df);
  return status;
}
