/* Binomial checkpointing (Griewank and Walther's revolve, as pyrevolve
 * runs it): reversing l steps with c free slots, the state is kept at a
 * split m chosen so that the part after m can be reversed with c - 1
 * slots and the part before with c, within r and r - 1 repetitions, where r
 * is the least with beta(c, r) = C(c + r, c) >= l.
 * The split takes the largest step forward the front part allows, as
 * revolve does. The schedule is a list of actions the engine executes; forward states are
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
} builder;

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
  long r = 0;
  while (beta(c, r) < l) r++;
  /* The largest first step the front part allows (revolve's choice):
   * l = front + back with front <= beta(c, r - 1), back <= beta(c - 1, r). */
  long front = beta(c, r - 1);
  if (front > l - 1) front = l - 1;
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
  reverse(&b, 0, nt, -1, slots);
  s->slots_used = slots;
  free(b.free_slots);
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
