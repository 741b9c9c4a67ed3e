/* Binomial checkpointing (Griewank and Walther's revolve, as pyrevolve
 * runs it): reversing l steps with c free slots, the state is kept at a
 * split m chosen so that the part after m can be reversed with c - 1
 * slots and the part before with c, within r and r - 1 repetitions, where r
 * is the least with beta(c, r) = C(c + r, c) >= l.
 * Where the table is affordable (steps^2 x slots up to 1e8) the split is
 * the one that minimises the forward steps under this engine's exact cost
 * model, found by dynamic programming over (steps, slots); beyond, the
 * largest step forward the front part allows, as revolve does. The
 * schedule is a list of actions the engine executes; forward states are
 * recomputed from the nearest kept one, so the gradient is bit for bit the
 * one from saving every snapshot. */
#include <stdlib.h>

#include "snapshots.h"

/* C(c + r, c), saturated (only compared with step counts). */
static long beta(int c, long r) {
  double b = 1.0;
  for (int i = 1; i <= c; i++) {
    b = b * (double)(r + i) / i;
    if (b > 4e18) return (long)4e18;
  }
  return (long)(b + 0.5);
}

typedef struct {
  snap_schedule *s;
  long at;           /* forward state's step while the schedule is built */
  int status;
  int *free_slots;   /* stack of unused slot numbers */
  int nfree;
  int *best_front;   /* [l][c]: the cheapest first step (NULL: revolve's rule) */
  int ncols;         /* slots + 1: the row length of best_front */
} builder;

/* Forward steps to reverse l steps with c slots when the first checkpoint
 * is f steps ahead: f, then the back part with c - 1 slots, then the front
 * part but its last step (taken from the checkpoint) with c (reverse()). */
static double split_cost(const double *cost, int ncols, long l, int c, long f) {
  return (double)f + cost[(l - f) * ncols + c - 1] + cost[(f - 1) * ncols + c];
}

/* best_front[l][c] for every l <= nt and c <= slots, by dynamic programming
 * over the cost model of reverse(). */
static int plan_fronts(long nt, int slots, builder *b) {
  int ncols = slots + 1;
  double *cost;
  MAPP_TRY(mapp_calloc((void **)&cost, (size_t)(nt + 1) * (size_t)ncols, sizeof(double), "the checkpoint cost table"));
  int status = mapp_calloc((void **)&b->best_front, (size_t)(nt + 1) * (size_t)ncols, sizeof(int),
                           "the checkpoint split table");
  for (long l = 1; status == MAPP_OK && l <= nt; ++l)
    for (int c = 0; c < ncols; ++c) {
      if (c == 0 || l == 1) { /* reverse()'s direct case */
        cost[l * ncols + c] = c == 0 ? (double)l * (double)(l + 1) / 2.0 : 1.0;
        continue;
      }
      long best = 1;
      for (long f = 2; f < l; ++f)
        if (split_cost(cost, ncols, l, c, f) < split_cost(cost, ncols, l, c, best)) best = f;
      cost[l * ncols + c] = split_cost(cost, ncols, l, c, best);
      b->best_front[l * ncols + c] = (int)best;
    }
  b->ncols = ncols;
  free(cost);
  return status;
}

static void emit(builder *b, snap_action_kind kind, long step, int slot) {
  if (b->status) return;
  snap_schedule *s = b->s;
  if (s->n == s->cap) {
    long cap = s->cap ? 2 * s->cap : 256;
    snap_action *grown = realloc(s->a, sizeof *grown * (size_t)cap);
    if (!grown) {
      b->status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory growing the checkpoint schedule to %ld actions", cap);
      return;
    }
    s->a = grown, s->cap = cap;
  }
  s->a[s->n++] = (snap_action){kind, step, slot};
  if (kind == SNAP_ACT_ADVANCE) s->forward_steps += step - b->at, b->at = step;
  if (kind == SNAP_ACT_RESTORE) b->at = step;
}

static void goto_state(builder *b, long lo, int lo_slot) {
  if (b->at != lo) emit(b, SNAP_ACT_RESTORE, lo, lo_slot);
}

/* Adjoint steps hi, hi-1, ..., lo+1 from the state at lo (kept in lo_slot,
 * or the zero state when lo == 0) with c free slots. */
static void reverse(builder *b, long lo, long hi, int lo_slot, int c) {
  if (b->status || hi <= lo) return;
  long l = hi - lo;
  if (c == 0 || l == 1) {
    for (long j = hi; j > lo; j--) {
      goto_state(b, lo, lo_slot);
      emit(b, SNAP_ACT_ADVANCE, j, -1);
      emit(b, SNAP_ACT_ADJOINT, j, -1);
    }
    return;
  }
  long front;
  if (b->best_front) {
    front = b->best_front[l * b->ncols + c];
  } else {
    long r = 0;
    while (beta(c, r) < l) r++;
    /* The largest first step the front part allows (revolve's choice):
     * l = front + back with front <= beta(c, r - 1), back <= beta(c - 1, r). */
    front = beta(c, r - 1);
    if (front > l - 1) front = l - 1;
  }
  long m = lo + front;
  goto_state(b, lo, lo_slot);
  emit(b, SNAP_ACT_ADVANCE, m, -1);
  int slot = b->free_slots[--b->nfree];
  emit(b, SNAP_ACT_TAKESHOT, m, slot);
  reverse(b, m, hi, slot, c - 1);
  /* Step m itself straight from its checkpoint, then the part before it. */
  goto_state(b, m, slot);
  emit(b, SNAP_ACT_ADJOINT, m, -1);
  emit(b, SNAP_ACT_FREE, m, slot);
  b->free_slots[b->nfree++] = slot;
  reverse(b, lo, m - 1, lo_slot, c);
}

int snap_revolve_schedule(long nt, int slots, snap_schedule *s) {
  *s = (snap_schedule){0};
  if (slots < 1) return mapp_fail(MAPP_ERR_INPUT, "checkpointing needs at least 1 slot, got %d", slots);
  if (nt < 1) return mapp_fail(MAPP_ERR_INPUT, "checkpointing needs at least 1 step, got %ld", nt);
  builder b = {.s = s};
  MAPP_TRY(mapp_calloc((void **)&b.free_slots, (size_t)slots, sizeof(int), "checkpoint slots"));
  for (int i = slots - 1; i >= 0; i--) b.free_slots[b.nfree++] = i;
  int used = slots < nt ? slots : (int)nt; /* more slots than steps change nothing */
  if ((double)nt * (double)nt * (double)used <= 1e8) b.status = plan_fronts(nt, used, &b);
  if (!b.status) reverse(&b, 0, nt, -1, used);
  s->slots_used = slots;
  free(b.free_slots);
  free(b.best_front);
  if (b.status) snap_schedule_free(s);
  return b.status;
}

void snap_schedule_free(snap_schedule *s) {
  free(s->a);
  *s = (snap_schedule){0};
}

long snap_revolve_cost(long nt, int slots) {
  snap_schedule s;
  if (snap_revolve_schedule(nt, slots, &s)) return -1;
  long cost = s.forward_steps;
  snap_schedule_free(&s);
  return cost;
}
