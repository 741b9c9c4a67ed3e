/* The eager variant: every task of every timestep through the runtime's
 * dynamic path (event, precondition registration, ready queue, successor
 * triggering), as a Realm program launches without subgraphs. Timesteps go
 * in chunks of graph_steps; in_flight chunks may be in flight. A chunk is
 * done when its sink tasks are (those no later task of it reads): the host
 * waits on their events directly, without a merge op per chunk, and for
 * short chunks in batches (wait_batch), so it sleeps and is woken once per
 * batch rather than once per chunk.
 *
 * With --copy-bytes, a dependence of (t, p) on another point q of this rank
 * is also a copy launched with sg_launch_copy: q's output buffer of t - 1 to
 * p's input slot for q, after (t - 1, q) wrote it and after (t - 1, p)
 * (which comes after (t - 2, p), the last reader of that slot of parity t);
 * (t, p) runs after its copies, after (t - 1, p), and after the copies of
 * step t - 1 that read its output buffer of t - 2, which it overwrites. */
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
  tb_task_body(a->st, a->t, a->p, ctx);
}

/* A task through the eager path: on the device (its event triggers after
 * the device has run it) or on the host. */
static int launch_task(tb_state *st, long t, const eager_args *a, const sg_event *pre, int npre, sg_event *done) {
  if (tb_on_device(&st->cfg, t % st->cfg.graph_steps))
    return sg_launch_device_task(st->rt, "task", eager_task, a, sizeof *a, pre, npre, done);
  return sg_launch_task(st->rt, "task", eager_task, a, sizeof *a, pre, npre, done);
}

/* Every table is sized by this rank's points (C of them from first), not
 * by the width: a rank launches only its own points' tasks and copies. */
typedef struct {
  tb_state *st;
  long first, C, R, S;
  sg_event *ev;            /* task events per ring step and own point */
  unsigned char *consumed; /* within the chunk, per step and own point: read by a later task of it */
  sg_event *pre;
  sg_event *sinks; /* per chunk in flight (chunk % in_flight), sink_cap each */
  long *nsinks, sink_cap;
  sg_event *cur_sinks; /* the launching chunk's */
  long *cur_nsinks;
  /* --copy-bytes: the copies launched in this step by source point, and
   * per own point the event of the copies of the previous step that read it */
  sg_event *step_copies, *readers_prev;
  long *step_sources, nstep_copies;
  /* --break-dependence: (0, q0) is launched after (1, pc), which skips it */
  long pc, q0;
  int deferred;
} eager_run;

/* The event of own point p's task at t. */
static inline sg_event *task_ev(const eager_run *e, long t, long p) {
  return &e->ev[(t % e->R) * e->C + (p - e->first)];
}

/* (t, p)'s copy from q (--copy-bytes): after (t - 1, q) wrote the source
 * and (t - 1, p) (after the slot's last reader, (t - 2, p)). */
static int launch_copy(eager_run *e, long t, long p, long q, sg_event *done) {
  tb_state *st = e->st;
  sg_copy_desc c = {.dst = tb_copy_in(st, t, p, q), .src = tb_copy_out(st, t - 1, q),
                    .row_bytes = (size_t)st->cfg.copy_bytes, .rows = 1};
  sg_event pre[2] = {*task_ev(e, t - 1, q), *task_ev(e, t - 1, p)};
  MAPP_TRY(sg_launch_copy(st->rt, &c, pre, 2, done));
  e->step_sources[e->nstep_copies] = q;
  e->step_copies[e->nstep_copies++] = *done;
  return MAPP_OK;
}

/* (t, p)'s preconditions under --copy-bytes, besides its dependences: its
 * copies, (t - 1, p) and the readers of the output buffer it overwrites. */
static int copy_preconditions(eager_run *e, long t, long p, const long *deps, int n, int *npre) {
  if (t == 0) return MAPP_OK;
  for (int i = 0; i < n; ++i)
    if (tb_copies_from(e->st, p, deps[i])) MAPP_TRY(launch_copy(e, t, p, deps[i], &e->pre[(*npre)++]));
  e->pre[(*npre)++] = *task_ev(e, t - 1, p);
  e->pre[(*npre)++] = e->readers_prev[p - e->first];
  return MAPP_OK;
}

/* After a step's launches: per source point, one event for the copies of
 * this step that read it (the next step's task of that point waits on it). */
static int close_step_copies(eager_run *e) {
  tb_state *st = e->st;
  sg_event *group = e->pre; /* free between launches */
  for (long q = st->first; q < st->first + st->count; ++q) {
    int n = 0;
    for (long i = 0; i < e->nstep_copies; ++i)
      if (e->step_sources[i] == q) group[n++] = e->step_copies[i];
    sg_event *readers = &e->readers_prev[q - e->first];
    if (n <= 1) *readers = n ? group[0] : SG_NO_EVENT;
    else MAPP_TRY(sg_event_merge(st->rt, group, n, readers));
  }
  e->nstep_copies = 0;
  return MAPP_OK;
}

static int launch_one(eager_run *e, long k, long t, long p, bool skip_q0) {
  tb_state *st = e->st;
  long *deps = st->dep_buf + (long)st->cfg.workers * tb_max_deps(&st->cfg);
  int n = tb_deps(&st->cfg, t, p, deps), npre = 0;
  for (int i = 0; i < n; ++i) {
    long q = deps[i];
    if (skip_q0 && q == e->q0) continue;
    if (q >= st->first && q < st->first + st->count) {
      e->pre[npre++] = *task_ev(e, t - 1, q);
      if (t - 1 >= k * e->S) e->consumed[(t - 1 - k * e->S) * e->C + (q - e->first)] = 1;
    } else {
      MAPP_TRY(tb_comm_expect(st->comm_state, t - 1, q, &e->pre[npre++]));
    }
  }
  if (st->cfg.copy_bytes) MAPP_TRY(copy_preconditions(e, t, p, deps, n, &npre));
  eager_args a = {st, t, p};
  sg_event *done = task_ev(e, t, p);
  MAPP_TRY(launch_task(st, t, &a, e->pre, npre, done));
  if (st->comm_state) MAPP_TRY(tb_comm_send_after(st->comm_state, t, p, *done));
  return MAPP_OK;
}

/* The reversed edge: (0, q0) waits for (1, pc), which reads it. */
static int launch_deferred(eager_run *e) {
  eager_args a = {e->st, 0, e->q0};
  sg_event after = *task_ev(e, 1, e->pc), *done = task_ev(e, 0, e->q0);
  MAPP_TRY(launch_task(e->st, 0, &a, &after, 1, done));
  e->cur_sinks[(*e->cur_nsinks)++] = *done;
  e->deferred = 0;
  return MAPP_OK;
}

static int launch_chunk(eager_run *e, long k) {
  tb_state *st = e->st;
  memset(e->consumed, 0, (size_t)(e->S * e->C));
  long slot = k % st->cfg.in_flight;
  e->cur_sinks = e->sinks + slot * e->sink_cap, e->cur_nsinks = &e->nsinks[slot];
  *e->cur_nsinks = 0;
  for (long s = 0; s < e->S; ++s) {
    long t = k * e->S + s;
    for (long p = st->first; p < st->first + st->count; ++p) {
      if (e->deferred && t == 0 && p == e->q0) continue;
      MAPP_TRY(launch_one(e, k, t, p, e->deferred && t == 1 && p == e->pc));
      if (e->deferred && t == 1 && p == e->pc) MAPP_TRY(launch_deferred(e));
    }
    if (st->cfg.copy_bytes) MAPP_TRY(close_step_copies(e));
  }
  /* The chunk is done when the tasks nothing in it reads are. */
  for (long s = 0; s < e->S; ++s)
    for (long p = st->first; p < st->first + st->count; ++p)
      if (!e->consumed[s * e->C + (p - e->first)])
        e->cur_sinks[(*e->cur_nsinks)++] = *task_ev(e, k * e->S + s, p);
  return MAPP_OK;
}

/* The host waits for chunk k: its sinks, the last launched first (it is
 * the likeliest to finish last, so the others are then done). */
static int wait_chunk(eager_run *e, long k) {
  long slot = k % e->st->cfg.in_flight;
  const sg_event *sinks = e->sinks + slot * e->sink_cap;
  for (long i = e->nsinks[slot] - 1; i >= 0; --i) MAPP_TRY(tb_host_wait(e->st, sinks[i]));
  return MAPP_OK;
}

static int eager_setup(tb_state *st, eager_run *e) {
  e->st = st, e->first = st->first, e->C = st->count, e->R = st->ring_steps, e->S = st->cfg.graph_steps;
  MAPP_TRY(mapp_calloc((void **)&e->ev, (size_t)(e->R * e->C), sizeof(sg_event), "task events"));
  MAPP_TRY(mapp_calloc((void **)&e->consumed, (size_t)(e->S * e->C), 1, "consumed flags"));
  /* its dependences, its copies, (t - 1, p), its output's readers; or a
   * step's copies (each own point's from the other own points it reads) */
  long copies_each = st->max_deps < e->C ? st->max_deps : e->C;
  size_t npre = (size_t)(2 * st->max_deps + 2), per_step = (size_t)(e->C * copies_each);
  MAPP_TRY(mapp_calloc((void **)&e->pre, npre > per_step ? npre : per_step, sizeof(sg_event), "preconditions"));
  if (st->cfg.copy_bytes) {
    MAPP_TRY(mapp_calloc((void **)&e->step_copies, per_step, sizeof(sg_event), "a step's copies"));
    MAPP_TRY(mapp_calloc((void **)&e->step_sources, per_step, sizeof(long), "a step's copies"));
    MAPP_TRY(mapp_calloc((void **)&e->readers_prev, (size_t)e->C, sizeof(sg_event), "copy readers"));
  }
  long D = st->cfg.in_flight;
  e->sink_cap = e->S * e->C + 1;
  MAPP_TRY(mapp_calloc((void **)&e->sinks, (size_t)(D * e->sink_cap), sizeof(sg_event), "sinks"));
  MAPP_TRY(mapp_calloc((void **)&e->nsinks, (size_t)D, sizeof(long), "sink counts"));
  if (st->cfg.break_dependence && st->cfg.steps >= 2) {
    long *deps = st->dep_buf + (long)st->cfg.workers * tb_max_deps(&st->cfg);
    e->pc = st->first;
    int n = tb_deps(&st->cfg, 1, e->pc, deps);
    for (int i = 0; i < n && !e->deferred; ++i)
      if (deps[i] >= st->first && deps[i] < st->first + st->count) e->q0 = deps[i], e->deferred = 1;
  }
  return MAPP_OK;
}

/* Chunks the host waits for at a time: half of those in flight, but no
 * more than make 32 timesteps (a batch of long chunks leaves fewer in
 * flight on average, and the host launching them is then the bottleneck:
 * measured 15-25 % slower at graph-steps 64, docs/subgraph-performance.md). */
static long wait_batch(const tb_config *cfg) {
  long half = cfg->in_flight / 2, by_steps = (32 + cfg->graph_steps - 1) / cfg->graph_steps;
  long batch = half < by_steps ? half : by_steps;
  return batch > 1 ? batch : 1;
}

int tb_run_eager(tb_state *st) {
  eager_run e = {0};
  long D = st->cfg.in_flight, nchunks = st->cfg.steps / st->cfg.graph_steps;
  long batch = tb_wait_batch(st, wait_batch(&st->cfg));
  int status = eager_setup(st, &e);
  if (status == MAPP_OK && st->comm_state) status = tb_comm_begin(st->comm_state);
  for (long k = 0; status == MAPP_OK && k < nchunks; ++k) {
    /* chunk k reuses the ring slots of chunk k - D: wait for it, and for the
     * rest of its batch while the host is at it (the newest first) */
    if (k >= D && (k - D) % batch == 0)
      for (long j = k - D + batch - 1; status == MAPP_OK && j >= k - D; --j)
        if (j < nchunks) status = wait_chunk(&e, j);
    if (status == MAPP_OK) status = launch_chunk(&e, k);
  }
  /* even after a failure: nothing may run on freed state */
  for (long k = nchunks - 1; e.nsinks && k >= 0 && k >= nchunks - D; --k) {
    int s = wait_chunk(&e, k);
    if (status == MAPP_OK) status = s;
  }
  if (status == MAPP_OK && st->comm_state) status = tb_comm_end(st->comm_state);
  free(e.ev), free(e.consumed), free(e.pre), free(e.sinks), free(e.nsinks);
  free(e.step_copies), free(e.step_sources), free(e.readers_prev);
  MAPP_TRY(status);
  return tb_state_status(st);
}
