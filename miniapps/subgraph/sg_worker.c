/* The workers' loop (find work, run it, spin then sleep when idle) and the
 * host thread: its waits on events (sg_event_wait), and with host_runs its
 * part as worker 0, running what is queued for it while it waits. */
#include <stdlib.h>

#include "mapp_error.h"
#include "sg_runtime_internal.h"

/* ------------------------------------------------------------ the host's waits */

/* A host thread waiting for an event: 0 pending, 1 fired, 2 the host sleeps. */
typedef struct {
  sg_waiter w;
  _Atomic uint32_t state;
} host_waiter;

/* Set on the host thread while it runs work as worker 0 (host_runs). */
static _Thread_local bool tls_hosting;

static void host_waiter_fire(sg_waiter *self, sg_runtime *rt) {
  host_waiter *h = (host_waiter *)self;
  /* The host may return, and its frame go, once state is 1: the wake's
   * address is then a dead stack word, which at worst wakes nobody. */
  if (rt->host_runs) {
    /* The host idles on the epoch, as the workers do; fired on the host
     * itself (the usual case: it ran the op), nobody needs waking. */
    atomic_store_explicit(&h->state, 1, memory_order_release);
    if (!tls_hosting) sg_wake_workers(rt);
    return;
  }
  if (atomic_exchange(&h->state, 1) == 2) sg_unpark_all(&h->state);
}

static int host_run_until(sg_runtime *rt, sg_event ev);

int sg_event_wait(sg_runtime *rt, sg_event ev) {
  if (sg_tls_running) return sg_contract_violation(rt, "sg_event_wait");
  if (sg_event_has_triggered(rt, ev)) return MAPP_OK;
  if (rt->host_runs) return host_run_until(rt, ev);
  if (rt->host_spin_ns > 0) {
    long deadline = sg_now_ns() + rt->host_spin_ns;
    for (unsigned i = 1;; ++i) {
      if (sg_event_has_triggered(rt, ev)) return MAPP_OK;
      if ((i & 63) == 0 && sg_now_ns() > deadline) break;
      cpu_relax();
    }
  }
  host_waiter h = {.w.fn = host_waiter_fire};
  atomic_init(&h.state, 0);
  sg_event_add_waiter(rt, ev, &h.w);
  uint32_t pending = 0;
  if (atomic_compare_exchange_strong(&h.state, &pending, 2))
    while (atomic_load(&h.state) != 1) sg_park_on(&h.state, 2);
  return MAPP_OK;
}

/* ------------------------------------------------------------ workers */

static sg_work *find_work(sg_runtime *rt, int id) {
  sg_work *w = sg_queue_pop(&rt->own[id]);
  return w ? w : sg_queue_pop(&rt->shared);
}

static bool has_work(sg_runtime *rt, int id) {
  return atomic_load_explicit(&rt->own[id].approx, memory_order_relaxed) ||
         atomic_load_explicit(&rt->shared.approx, memory_order_relaxed);
}

/* No work: spin (at most the worker's budget, at most spin_ns) watching the
 * epoch, then sleep until a push. */
static void idle(sg_runtime *rt, int id, unsigned epoch) {
  if (rt->spin_ns > 0) {
    long deadline = sg_now_ns() + rt->spin_budget[id].ns;
    for (unsigned i = 1;; ++i) {
      if (atomic_load_explicit(&rt->epoch, memory_order_acquire) != epoch || has_work(rt, id)) {
        sg_spin_feedback(rt, id, true);
        return;
      }
      if ((i & 63) == 0 && sg_now_ns() > deadline) break; /* pure spin, as the seed's knob */
      cpu_relax();
    }
    sg_spin_feedback(rt, id, false);
  }
  atomic_fetch_add(&rt->sleepers, 1);
  while (atomic_load(&rt->epoch) == epoch && !atomic_load(&rt->shutdown)) sg_park_on(&rt->epoch, epoch);
  atomic_fetch_sub(&rt->sleepers, 1);
}

static void run_work(sg_runtime *rt, sg_work *w, int id) {
  if (w->kind == SG_WORK_OP) sg_eager_run(rt, w, id);
  else sg_item_run(rt, w, id);
}

void *sg_worker_main(void *p) {
  sg_worker_arg *a = p;
  sg_runtime *rt = a->rt;
  int id = a->id;
  free(a);
  for (;;) {
    unsigned epoch = atomic_load(&rt->epoch);
    sg_work *w = find_work(rt, id);
    if (w) {
      run_work(rt, w, id);
      continue;
    }
    if (atomic_load(&rt->shutdown)) break;
    idle(rt, id, epoch);
  }
  return NULL;
}

/* ------------------------------------------------------------ the host as worker 0 */

/* The host, with nothing queued for it, spins (at most host_spin_ns)
 * until ev triggers or work arrives: reading the event's slot, with no
 * waiter to fire, is the cheapest hand-back from another worker. False
 * when the spin ran out (or is off: the threads fill the cores). */
static bool host_spin(sg_runtime *rt, sg_event ev) {
  if (rt->host_spin_ns <= 0) return false;
  long deadline = 0;
  for (unsigned i = 1;; ++i) {
    if (sg_event_has_triggered(rt, ev) || has_work(rt, 0)) return true;
    if (i == 64) deadline = sg_now_ns() + rt->host_spin_ns; /* no clock read in a short spin */
    if (i > 64 && (i & 63) == 0 && sg_now_ns() > deadline) return false;
    cpu_relax();
  }
}

/* Sleeps until ev triggers, running what is queued for worker 0 meanwhile:
 * a waiter bumps the epoch the host idles on. */
static void host_sleep_until(sg_runtime *rt, sg_event ev) {
  host_waiter h = {.w.fn = host_waiter_fire};
  atomic_init(&h.state, 0);
  sg_event_add_waiter(rt, ev, &h.w);
  for (;;) {
    unsigned epoch = atomic_load(&rt->epoch);
    if (atomic_load_explicit(&h.state, memory_order_acquire) == 1) return;
    sg_work *w = find_work(rt, 0);
    if (w) run_work(rt, w, 0);
    else idle(rt, 0, epoch);
  }
}

/* Runs what is queued for worker 0 until ev has triggered: the launch the
 * host just made is usually all there is, and it triggers ev on this
 * thread; else the host spins for ev or for more work, then sleeps. */
static int host_run_until(sg_runtime *rt, sg_event ev) {
  bool outer = !tls_hosting; /* an eager task may wait inside the host's loop */
  tls_hosting = true;
  for (;;) {
    sg_work *w;
    while (!sg_event_has_triggered(rt, ev) && (w = find_work(rt, 0))) run_work(rt, w, 0);
    if (sg_event_has_triggered(rt, ev)) break;
    if (host_spin(rt, ev)) continue;
    host_sleep_until(rt, ev);
    break;
  }
  if (outer) tls_hosting = false;
  return MAPP_OK;
}

bool sg_runtime_help(sg_runtime *rt) {
  if (!rt->host_runs || sg_tls_running) return false;
  sg_work *w = find_work(rt, 0);
  if (!w) return false;
  bool outer = !tls_hosting;
  tls_hosting = true;
  run_work(rt, w, 0);
  if (outer) tls_hosting = false;
  return true;
}

/* Runs worker 0's queue dry (at the end of a host_runs runtime). */
void sg_host_drain(sg_runtime *rt) {
  if (!rt->host_runs) return;
  tls_hosting = true;
  for (sg_work *w; (w = find_work(rt, 0));) run_work(rt, w, 0);
  tls_hosting = false;
}
