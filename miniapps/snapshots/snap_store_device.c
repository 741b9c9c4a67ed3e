/* The snapshot store's device tier: the latest snapshots, raw, in slots of
 * one device pool, reached only through snap_device_ops. */
#include "snap_store_internal.h"

bool snap_store_on_device(const snap_store *s, long i) { return !s->all && s->dev_count > 0 && i >= s->dev_first; }

double *store_device_slot(const snap_store *s, long i) {
  return (double *)((unsigned char *)s->pool + (size_t)(i - s->dev_first) * s->dev_slot);
}

/* Device-tier snapshots come last and in order, after every host-bound
 * one was committed: the device keeps the latest. */
int snap_store_put_device(snap_store *s, long i, const snap_grid *g, const double *field) {
  if (!snap_store_on_device(s, i) || i != s->dev_next || s->committed != s->dev_first)
    return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld put on the device tier out of order (expected %ld, %ld of %ld committed)",
                     i, s->dev_next, s->committed, s->dev_first);
  MAPP_TRY(s->cfg.device->put(g, field, store_device_slot(s, i)));
  entry *e = &s->e[i];
  e->layer = SNAP_LAYER_DEVICE, e->offset = (size_t)(i - s->dev_first) * s->dev_slot, e->stored = s->raw;
  e->codec = SNAP_COMP_NONE; /* compression does not apply to the device tier */
  s->dev_next = i + 1;
  pthread_mutex_lock(&s->mu); /* writers may still be adding their sizes */
  s->stored_total += s->raw;
  pthread_mutex_unlock(&s->mu);
  return MAPP_OK;
}
