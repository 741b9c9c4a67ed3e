/* The snapshot store's host layer: a FIFO ring of variable-sized blocks
 * whose oldest snapshot goes down to disk when a new one needs room, or,
 * in place, one slot per raw snapshot that the forward writes itself. */
#include <string.h>

#include "snap_store_internal.h"

static bool ring_reserve(snap_store *s, size_t bytes, size_t *off) {
  if (bytes > s->ring_cap) return false;
  if (s->res_count == 0) {
    s->ring_head = s->ring_tail = 0;
    *off = 0;
    return true;
  }
  if (s->ring_head < s->ring_tail) { /* used: [head, tail) */
    if (s->ring_cap - s->ring_tail >= bytes) return *off = s->ring_tail, true;
    if (s->ring_head >= bytes) return *off = 0, true;
    return false;
  }
  if (s->ring_head - s->ring_tail >= bytes) return *off = s->ring_tail, true; /* wrapped: free is [tail, head) */
  return false;
}

static int ring_full(snap_store *s, long incoming) {
  return store_thread_fail(s, MAPP_ERR_INPUT,
                           "snapshot layers are full at snapshot %ld of %ld: the host budget holds %zu bytes of "
                           "snapshots and no slower layer is left; use --recompute or larger budgets",
                           incoming + 1, s->nsnap, s->ring_cap);
}

/* The oldest host snapshot down to disk. */
static int ring_evict(snap_store *s, worker *w, long incoming) {
  if (s->res_count == 0 || !(s->cfg.layers & (1u << SNAP_LAYER_DISK))) return ring_full(s, incoming);
  long i = s->resident[s->res_first];
  entry *e = &s->e[i];
  MAPP_TRY(store_disk_put(s, w, i, s->ring + e->offset, e->stored, e->codec));
  s->host_used -= store_ring_bytes(e->stored);
  s->res_first = (s->res_first + 1) % s->nsnap, s->res_count--;
  if (s->res_count) s->ring_head = s->e[s->resident[s->res_first]].offset;
  return MAPP_OK;
}

int store_place(snap_store *s, worker *w, long i, const void *data, size_t stored, uint32_t codec) {
  entry *e = &s->e[i];
  size_t need = store_ring_bytes(stored);
  if (s->ring_cap >= need && (s->cfg.layers & (1u << SNAP_LAYER_HOST))) {
    size_t off;
    while (!ring_reserve(s, need, &off)) MAPP_TRY(ring_evict(s, w, i));
    memcpy(s->ring + off, data, stored);
    e->layer = SNAP_LAYER_HOST, e->offset = off, e->stored = stored, e->codec = codec;
    s->ring_tail = off + need;
    s->resident[(s->res_first + s->res_count) % s->nsnap] = i, s->res_count++;
    if (s->res_count == 1) s->ring_head = off;
    s->host_used += need;
    if (s->host_used > s->host_peak) s->host_peak = s->host_used;
    return MAPP_OK;
  }
  return store_disk_put(s, w, i, data, stored, codec);
}

/* In place, snapshot i's ring slot (its offset in the ring). */
size_t store_ring_slot_offset(const snap_store *s, long i) {
  return (size_t)(i % s->ring_slots) * store_ring_bytes(s->raw);
}

/* Written in place and kept in the ring to the end: the ring's last
 * ring_slots host-bound snapshots (every earlier one goes to disk). */
bool store_stays_in_ring(const snap_store *s, long i) {
  return s->ring_in_place && i + s->ring_slots >= s->dev_first;
}

/* Snapshot i, written in place into its ring slot by the forward. The
 * ring then holds the latest ring_slots host-bound snapshots, as placing
 * them one by one would leave it; a snapshot whose slot a later host-bound
 * one will take goes down to disk now, while the next steps compute, and
 * acquire hands that slot out only after (snapshot i + ring_slots waits
 * for snapshot i to be placed). */
int store_place_in_ring(snap_store *s, worker *w, long i) {
  entry *e = &s->e[i];
  *e = (entry){
      .layer = SNAP_LAYER_HOST, .offset = store_ring_slot_offset(s, i), .stored = s->raw, .codec = SNAP_COMP_NONE};
  if (i < s->ring_slots) { /* a slot taken for the first time */
    s->host_used += store_ring_bytes(s->raw);
    if (s->host_used > s->host_peak) s->host_peak = s->host_used;
  }
  if (store_stays_in_ring(s, i)) return MAPP_OK;
  if (!(s->cfg.layers & (1u << SNAP_LAYER_DISK))) return ring_full(s, i + s->ring_slots);
  return store_disk_put(s, w, i, s->ring + e->offset, s->raw, SNAP_COMP_NONE);
}
