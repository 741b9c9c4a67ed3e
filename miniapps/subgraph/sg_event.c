/* Events: generational (slot, generation) handles, so a stale handle
 * reads as triggered, as Realm's do; per-slot waiter lists. The host's
 * wait on an event (sg_event_wait) is sg_worker.c's. */
#include <stdlib.h>

#include "mapp_error.h"
#include "sg_runtime_internal.h"

static inline sg_event_slot *slot_of(sg_runtime *rt, uint32_t index) {
  return &rt->chunks[index >> SG_EV_CHUNK_BITS][index & (SG_EV_CHUNK - 1)];
}

static inline void slot_lock(sg_event_slot *s) {
  while (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire)) cpu_relax();
}
static inline void slot_unlock(sg_event_slot *s) { atomic_flag_clear_explicit(&s->lock, memory_order_release); }

/* A fresh event (SG_NO_EVENT only when the table is full, 16 M events live). */
sg_event sg_event_alloc(sg_runtime *rt) {
  sg_spin_lock(&rt->ev_lock);
  uint32_t index;
  if (rt->free_head) {
    index = rt->free_head - 1;
    rt->free_head = slot_of(rt, index)->next_free;
  } else {
    if ((rt->nslots & (SG_EV_CHUNK - 1)) == 0) {
      uint32_t c = rt->nslots >> SG_EV_CHUNK_BITS;
      if (c == SG_EV_MAX_CHUNKS || !(rt->chunks[c] = calloc(SG_EV_CHUNK, sizeof(sg_event_slot)))) {
        sg_spin_unlock(&rt->ev_lock);
        return SG_NO_EVENT;
      }
      for (uint32_t i = 0; i < SG_EV_CHUNK; ++i) atomic_flag_clear(&rt->chunks[c][i].lock);
    }
    index = rt->nslots++;
  }
  sg_event_slot *s = slot_of(rt, index);
  uint32_t gen = ++s->gen;
  sg_spin_unlock(&rt->ev_lock);
  return ((sg_event)(index + 1) << 32) | gen;
}

sg_event sg_event_reserve(sg_runtime *rt) {
  sg_event ev = sg_event_alloc(rt);
  if (ev) slot_of(rt, (uint32_t)(ev >> 32) - 1)->reserved = true;
  return ev;
}

sg_event sg_event_rearm(sg_runtime *rt, sg_event triggered) {
  uint32_t index = (uint32_t)(triggered >> 32) - 1;
  return ((sg_event)(index + 1) << 32) | ++slot_of(rt, index)->gen;
}

static void slot_free(sg_runtime *rt, uint32_t index) {
  sg_spin_lock(&rt->ev_lock);
  slot_of(rt, index)->next_free = rt->free_head;
  rt->free_head = index + 1;
  sg_spin_unlock(&rt->ev_lock);
}

void sg_event_unreserve(sg_runtime *rt, sg_event triggered) {
  if (!triggered) return;
  uint32_t index = (uint32_t)(triggered >> 32) - 1;
  slot_of(rt, index)->reserved = false;
  slot_free(rt, index);
}

int sg_event_create(sg_runtime *rt, sg_event *out) {
  *out = sg_event_alloc(rt);
  return *out ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of event slots (%u live)", rt->nslots);
}

bool sg_event_has_triggered(sg_runtime *rt, sg_event ev) {
  if (!ev) return true;
  sg_event_slot *s = slot_of(rt, (uint32_t)(ev >> 32) - 1);
  return atomic_load_explicit(&s->triggered_gen, memory_order_acquire) >= (uint32_t)ev;
}

void sg_event_trigger(sg_runtime *rt, sg_event ev) {
  if (!ev) return;
  uint32_t index = (uint32_t)(ev >> 32) - 1;
  sg_event_slot *s = slot_of(rt, index);
  slot_lock(s);
  atomic_store_explicit(&s->triggered_gen, (uint32_t)ev, memory_order_release);
  sg_waiter *w = s->waiters;
  s->waiters = NULL;
  bool reserved = s->reserved;
  slot_unlock(s);
  /* The slot is reusable now: its next generation is a new event. */
  if (!reserved) slot_free(rt, index);
  sg_waiter *fifo = NULL; /* pushed newest first: run them in registration order */
  while (w) {
    sg_waiter *next = w->next;
    w->next = fifo, fifo = w, w = next;
  }
  w = fifo;
  while (w) { /* next is read before fn: fn may free the node */
    sg_waiter *next = w->next;
    w->fn(w, rt);
    w = next;
  }
}

void sg_event_add_waiter(sg_runtime *rt, sg_event ev, sg_waiter *w) {
  if (ev) {
    sg_event_slot *s = slot_of(rt, (uint32_t)(ev >> 32) - 1);
    slot_lock(s);
    if (atomic_load_explicit(&s->triggered_gen, memory_order_relaxed) < (uint32_t)ev) {
      w->next = s->waiters;
      s->waiters = w;
      slot_unlock(s);
      return;
    }
    slot_unlock(s);
  }
  w->fn(w, rt);
}
