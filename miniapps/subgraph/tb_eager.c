/* The eager variant: every task of every timestep through the runtime's
 * dynamic path (event, precondition registration, ready queue, successor
 * triggering), as a Realm program launches without subgraphs. Timesteps go
 * in chunks of graph_steps; run_ahead chunks may be in flight, each closed
 * by a merge of its sink tasks' events. */
#include <stdlib.h>
#include <string.h>

#include "subgraph.h"

typedef struct {
  tb_state *st;
  int64_t t, p;
} eager_args;

static void eager_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)size;
  const eager_args *a = args;
  tb_run_task(a->st, a->t, a->p, ctx->worker);
}

typedef struct {
  tb_state *st;
  long W, R, S;
  sg_event *ev;            /* task events per ring slot */
  unsigned char *consumed; /* within the chunk: read by a later task of it */
  sg_event *pre, *sinks;
  long nsinks;
  /* --break-dependence: (0, q0) is launched after (1, pc), which skips it */
  long pc, q0;
  int deferred;
} eager_run;

static int launch_one(eager_run *e, long k, long t, long p, bool skip_q0) {
  tb_state *st = e->st;
  long *deps = st->dep_buf + (long)st->cfg.workers * tb_max_deps(&st->cfg);
  int n = tb_deps(&st->cfg, t, p, deps), npre = 0;
  for (int i = 0; i < n; ++i) {
    long q = deps[i];
    if (skip_q0 && q == e->q0) continue;
    if (q >= st->first && q < st->first + st->count) {
      e->pre[npre++] = e->ev[((t - 1) % e->R) * e->W + q];
      if (t - 1 >= k * e->S) e->consumed[(t - 1 - k * e->S) * e->W + q] = 1;
    } else {
      MAPP_TRY(tb_comm_expect(st->comm_state, t - 1, q, &e->pre[npre++]));
    }
  }
  eager_args a = {st, t, p};
  sg_event *done = &e->ev[(t % e->R) * e->W + p];
  MAPP_TRY(sg_launch_task(st->rt, "task", eager_task, &a, sizeof a, e->pre, npre, done));
  if (st->comm_state) MAPP_TRY(tb_comm_send_after(st->comm_state, t, p, *done));
  return MAPP_OK;
}

/* The reversed edge: (0, q0) waits for (1, pc), which reads it. */
static int launch_deferred(eager_run *e) {
  eager_args a = {e->st, 0, e->q0};
  sg_event after = e->ev[(1 % e->R) * e->W + e->pc], *done = &e->ev[e->q0];
  MAPP_TRY(sg_launch_task(e->st->rt, "task", eager_task, &a, sizeof a, &after, 1, done));
  e->sinks[e->nsinks++] = *done;
  e->deferred = 0;
  return MAPP_OK;
}

static int launch_chunk(eager_run *e, long k, sg_event *finish) {
  tb_state *st = e->st;
  memset(e->consumed, 0, (size_t)(e->S * e->W));
  e->nsinks = 0;
  for (long s = 0; s < e->S; ++s) {
    long t = k * e->S + s;
    for (long p = st->first; p < st->first + st->count; ++p) {
      if (e->deferred && t == 0 && p == e->q0) continue;
      MAPP_TRY(launch_one(e, k, t, p, e->deferred && t == 1 && p == e->pc));
      if (e->deferred && t == 1 && p == e->pc) MAPP_TRY(launch_deferred(e));
    }
  }
  /* The chunk is done when the tasks nothing in it reads are. */
  for (long s = 0; s < e->S; ++s)
    for (long p = st->first; p < st->first + st->count; ++p)
      if (!e->consumed[s * e->W + p]) e->sinks[e->nsinks++] = e->ev[((k * e->S + s) % e->R) * e->W + p];
  return sg_event_merge(st->rt, e->sinks, (int)e->nsinks, finish);
}

static int eager_setup(tb_state *st, eager_run *e) {
  e->st = st, e->W = st->cfg.width, e->R = st->ring_steps, e->S = st->cfg.graph_steps;
  MAPP_TRY(mapp_calloc((void **)&e->ev, (size_t)(e->R * e->W), sizeof(sg_event), "task events"));
  MAPP_TRY(mapp_calloc((void **)&e->consumed, (size_t)(e->S * e->W), 1, "consumed flags"));
  MAPP_TRY(mapp_calloc((void **)&e->pre, (size_t)tb_max_deps(&st->cfg) + 1, sizeof(sg_event), "preconditions"));
  MAPP_TRY(mapp_calloc((void **)&e->sinks, (size_t)(e->S * e->W + 1), sizeof(sg_event), "sinks"));
  if (st->cfg.break_dependence && st->cfg.steps >= 2) {
    long *deps = st->dep_buf + (long)st->cfg.workers * tb_max_deps(&st->cfg);
    e->pc = st->first;
    int n = tb_deps(&st->cfg, 1, e->pc, deps);
    for (int i = 0; i < n && !e->deferred; ++i)
      if (deps[i] >= st->first && deps[i] < st->first + st->count) e->q0 = deps[i], e->deferred = 1;
  }
  return MAPP_OK;
}

int tb_run_eager(tb_state *st) {
  eager_run e = {0};
  long D = st->cfg.run_ahead, nchunks = st->cfg.steps / st->cfg.graph_steps;
  sg_event *finish = NULL;
  int status = eager_setup(st, &e);
  if (status == MAPP_OK) status = mapp_calloc((void **)&finish, (size_t)D, sizeof(sg_event), "chunk events");
  if (status == MAPP_OK && st->comm_state) status = tb_comm_begin(st->comm_state);
  for (long k = 0; status == MAPP_OK && k < nchunks; ++k) {
    if (k >= D) status = tb_host_wait(st, finish[k % D]); /* its ring slots are reused now */
    if (status == MAPP_OK) status = launch_chunk(&e, k, &finish[k % D]);
  }
  for (long k = 0; k < D && finish; ++k) { /* even after a failure: nothing may run on freed state */
    int s = tb_host_wait(st, finish[k]);
    if (status == MAPP_OK) status = s;
  }
  if (status == MAPP_OK && st->comm_state) status = tb_comm_end(st->comm_state);
  free(e.ev), free(e.consumed), free(e.pre), free(e.sinks), free(finish);
  MAPP_TRY(status);
  return tb_state_status(st);
}
