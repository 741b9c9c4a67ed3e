/* Cross-rank dependences: a task's output that a point on another rank
 * reads becomes a message, sent when the task's event (eager) or the
 * subgraph's postcondition port triggers; its arrival triggers the event
 * the consuming task (eager) or the subgraph's precondition port waits on.
 *
 * Only the host thread calls MPI (MPI_THREAD_FUNNELED): workers hand
 * finished outputs to it through a locked queue, and it polls MPI while it
 * waits for chunks to finish. Messages carry their own (timestep, point)
 * tag, so one wildcard receive stream serves every dependence, and an
 * early message (its sender may run ahead) is parked until the host
 * expects it. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "subgraph.h"

#define TB_RECVS 64
#define TB_TAG_BASE 4242

typedef struct send_node {
  sg_waiter w;
  tb_comm *c;
  tb_tag tag;
  struct send_node *next; /* in the ready list, once triggered */
} send_node;

typedef struct early {
  tb_tag msg;
  struct early *next;
} early;

typedef struct {
  MPI_Request req;
  tb_tag msg;
} pending_send;

struct tb_comm {
  tb_state *st;
  int tag;
  /* expected arrivals: ghost events per halo slot, (t % ring_steps) * nhalo
   * + the point's halo index (only halo points ever arrive) */
  long slots;
  sg_event *ghost_ev;
  int64_t *ghost_t; /* the timestep the slot's event waits for, or -1 */
  early **early;    /* arrived before expected, per halo slot */
  /* receives */
  MPI_Request recv_req[TB_RECVS];
  tb_tag recv_buf[TB_RECVS];
  /* sends: workers push triggered nodes, the host sends them */
  pthread_mutex_t lock;
  send_node *ready;
  pending_send **sends; /* each apart: MPI reads a pending send's buffer in place */
  int nsends, cap_sends;
  long run;
};

int tb_comm_create(tb_state *st, tb_comm **out) {
  tb_comm *c;
  MAPP_TRY(mapp_calloc((void **)&c, 1, sizeof *c, "the comm state"));
  *out = c;
  c->st = st;
  c->slots = st->ring_steps * st->nhalo;
  size_t slots = (size_t)c->slots + 1; /* + 1: a rank that reads no other rank's points still allocates */
  MAPP_TRY(mapp_calloc((void **)&c->ghost_ev, slots, sizeof(sg_event), "ghost events"));
  MAPP_TRY(mapp_calloc((void **)&c->ghost_t, slots, sizeof(int64_t), "ghost steps"));
  MAPP_TRY(mapp_calloc((void **)&c->early, slots, sizeof(early *), "early arrivals"));
  pthread_mutex_init(&c->lock, NULL);
  for (int i = 0; i < TB_RECVS; ++i) c->recv_req[i] = MPI_REQUEST_NULL;
  return MAPP_OK;
}

void tb_comm_destroy(tb_comm *c) {
  if (!c) return;
  for (long i = 0; c->early && i < c->slots; ++i)
    for (early *e = c->early[i], *n; e; e = n) n = e->next, free(e);
  free(c->early);
  free(c->ghost_ev);
  free(c->ghost_t);
  free(c->sends);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

int tb_comm_begin(tb_comm *c) {
  for (long i = 0; i < c->slots; ++i) c->ghost_t[i] = -1, c->ghost_ev[i] = SG_NO_EVENT;
  c->tag = TB_TAG_BASE + (int)(c->run++ % 1000); /* a run's messages never match another's */
  for (int i = 0; i < TB_RECVS; ++i)
    MAPP_MPI(MPI_Irecv(&c->recv_buf[i], (int)sizeof(tb_tag), MPI_BYTE, MPI_ANY_SOURCE, c->tag, c->st->comm,
                       &c->recv_req[i]));
  return MAPP_OK;
}

/* (t, q)'s slot in the message tables; q must be in the halo (a message
 * for another point was not sent to this rank's readers). */
static int ghost_slot(const tb_comm *c, long t, long q, long *slot) {
  long h = tb_halo_index(c->st, q);
  if (h < 0 || t < 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "rank %d: (t=%ld, p=%ld) is not an input of any of its points", c->st->rank, t,
                     q);
  *slot = (t & (c->st->ring_steps - 1)) * c->st->nhalo + h;
  return MAPP_OK;
}

static int arrived(tb_comm *c, tb_tag msg) {
  tb_state *st = c->st;
  long slot = 0;
  MAPP_TRY(ghost_slot(c, msg.t, msg.p, &slot));
  if (c->ghost_t[slot] == msg.t) { /* expected: deliver and release its readers */
    *tb_tag_at(st, msg.t, msg.p) = msg;
    sg_event ev = c->ghost_ev[slot];
    c->ghost_ev[slot] = SG_NO_EVENT; /* delivered: later readers of (t, q) need not wait */
    sg_event_trigger(st->rt, ev);
    return MAPP_OK;
  }
  early *e = malloc(sizeof *e); /* its slot may still be read: park it */
  if (!e) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory parking an early message");
  e->msg = msg, e->next = c->early[slot], c->early[slot] = e;
  return MAPP_OK;
}

int tb_comm_expect(tb_comm *c, long t, long q, sg_event *ev) {
  tb_state *st = c->st;
  long slot = 0;
  MAPP_TRY(ghost_slot(c, t, q, &slot));
  for (early **e = &c->early[slot]; *e; e = &(*e)->next)
    if ((*e)->msg.t == t) {
      early *hit = *e;
      *e = hit->next;
      *tb_tag_at(st, t, q) = hit->msg;
      free(hit);
      c->ghost_t[slot] = t, c->ghost_ev[slot] = SG_NO_EVENT; /* delivered, for its other readers */
      *ev = SG_NO_EVENT;
      return MAPP_OK;
    }
  if (c->ghost_t[slot] == t) { /* already expected (or delivered): share the event */
    *ev = c->ghost_ev[slot];
    return MAPP_OK;
  }
  MAPP_TRY(sg_event_create(st->rt, &c->ghost_ev[slot]));
  c->ghost_t[slot] = t;
  *ev = c->ghost_ev[slot];
  return MAPP_OK;
}

static void send_fired(sg_waiter *self, sg_runtime *rt) {
  (void)rt;
  send_node *n = (send_node *)self;
  /* The output, read on the thread that just triggered it (waiters run in
   * registration order, so before the chunk's close lets the slot be reused). */
  n->tag = *tb_tag_at(n->c->st, n->tag.t, n->tag.p);
  pthread_mutex_lock(&n->c->lock);
  n->next = n->c->ready;
  n->c->ready = n;
  pthread_mutex_unlock(&n->c->lock);
}

int tb_comm_send_after(tb_comm *c, long t, long p, sg_event ev) {
  if (!tb_feeds_remote(c->st, t, p)) return MAPP_OK;
  send_node *n;
  MAPP_TRY(mapp_calloc((void **)&n, 1, sizeof *n, "a send"));
  n->c = c, n->tag = (tb_tag){t, p, 0.0}, n->w.fn = send_fired;
  sg_event_add_waiter(c->st->rt, ev, &n->w);
  return MAPP_OK;
}

static int post_send(tb_comm *c, int dest, tb_tag tag) {
  if (c->nsends == c->cap_sends) {
    int cap = c->cap_sends ? 2 * c->cap_sends : 64;
    pending_send **bigger = realloc(c->sends, sizeof *bigger * (size_t)cap);
    if (!bigger) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for %d pending sends", cap);
    c->sends = bigger, c->cap_sends = cap;
  }
  pending_send *s = malloc(sizeof *s);
  if (!s) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for a send");
  c->sends[c->nsends++] = s;
  s->msg = tag;
  return mapp_mpi_check(MPI_Isend(&s->msg, (int)sizeof(tb_tag), MPI_BYTE, dest, c->tag, c->st->comm, &s->req),
                        "MPI_Isend");
}

/* Move what can move: triggered outputs out, arrived inputs in. */
static int progress(tb_comm *c) {
  tb_state *st = c->st;
  pthread_mutex_lock(&c->lock);
  send_node *ready = c->ready;
  c->ready = NULL;
  pthread_mutex_unlock(&c->lock);
  /* Ranks whose points read (t, p) at t + 1: among p's readers (tb_halo.c). */
  long *deps = st->dep_buf + (long)st->cfg.workers * st->max_deps; /* the host's buffer */
  for (send_node *n = ready, *next; n; n = next) {
    next = n->next;
    long pl = n->tag.p - st->first;
    int last = -1;
    for (long i = st->readers_first[pl]; i < st->readers_first[pl + 1]; ++i) {
      long q = st->readers[i];
      int r = tb_owner(st, q);
      if (r == last || !tb_reads(st, n->tag.t + 1, q, n->tag.p, deps)) continue;
      int status = post_send(c, r, n->tag);
      if (status != MAPP_OK) { /* the rest of the list, still ours, goes too */
        for (send_node *m = n; m; m = next) next = m->next, free(m);
        return status;
      }
      last = r; /* readers ascend, so a rank's are together: skip the rest of this rank */
    }
    free(n);
  }
  /* completed sends leave the array (compacted) */
  int kept = 0;
  for (int i = 0; i < c->nsends; ++i) {
    int done = 0;
    MAPP_MPI(MPI_Test(&c->sends[i]->req, &done, MPI_STATUS_IGNORE));
    if (done) free(c->sends[i]);
    else c->sends[kept++] = c->sends[i];
  }
  c->nsends = kept;
  for (;;) {
    int index = MPI_UNDEFINED, flag = 0;
    MAPP_MPI(MPI_Testany(TB_RECVS, c->recv_req, &index, &flag, MPI_STATUS_IGNORE));
    if (!flag || index == MPI_UNDEFINED) break;
    MAPP_TRY(arrived(c, c->recv_buf[index]));
    MAPP_MPI(MPI_Irecv(&c->recv_buf[index], (int)sizeof(tb_tag), MPI_BYTE, MPI_ANY_SOURCE, c->tag, st->comm,
                       &c->recv_req[index]));
  }
  return MAPP_OK;
}

int tb_comm_wait(tb_comm *c, sg_event ev) {
  while (!sg_event_has_triggered(c->st->rt, ev)) {
    MAPP_TRY(progress(c));
    if (!sg_runtime_help(c->st->rt)) sched_yield(); /* the host as worker 0 runs its share here */
  }
  return progress(c);
}

int tb_comm_end(tb_comm *c) {
  /* outputs triggered by the last tasks may still be queued */
  MAPP_TRY(progress(c));
  while (c->nsends) {
    MAPP_TRY(progress(c));
    sched_yield();
  }
  for (int i = 0; i < TB_RECVS; ++i) {
    MAPP_MPI(MPI_Cancel(&c->recv_req[i]));
    MAPP_MPI(MPI_Wait(&c->recv_req[i], MPI_STATUS_IGNORE));
  }
  MAPP_MPI(MPI_Barrier(c->st->comm));
  return MAPP_OK;
}
