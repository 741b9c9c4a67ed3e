/* The snapshot store's threads: in the forward, writers that compress each
 * queued snapshot and place it in snapshot order; in the adjoint,
 * prefetchers that load snapshots `depth` ahead into ready buffers. */
#include <pthread.h>

#include "snap_store_internal.h"

/* ------------------------------------------------------------ forward */

static void *writer_main(void *arg) {
  worker *w = arg;
  snap_store *s = w->s;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->q_count && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
    if (!s->q_count) break;
    long i = s->queue_idx[s->q_head];
    int slot = s->queue_slot[s->q_head];
    s->q_head = (s->q_head + 1) % s->nqueue, s->q_count--;
    pthread_mutex_unlock(&s->mu);
    const void *data = slot >= 0 ? s->stage[slot] : NULL; /* -1: in its ring slot already */
    size_t stored = s->raw;
    uint32_t codec = SNAP_COMP_NONE;
    int status = MAPP_OK;
    if (data && s->cfg.compression != SNAP_COMP_NONE) {
      double t0 = mapp_now();
      status = snap_codec_compress(w->codec, s->stage[slot], w->cbuf, &stored, &codec);
      w->compress_s += mapp_now() - t0;
      if (status) store_thread_fail(s, status, "%s", mapp_error_message());
      data = w->cbuf;
    }
    pthread_mutex_lock(&s->mu);
    while (s->place_next != i && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
    bool failed = s->err_code != 0;
    pthread_mutex_unlock(&s->mu);
    /* This thread's turn: the ring and the file are its own until place_next moves. */
    if (!failed && !status) status = data ? store_place(s, w, i, data, stored, codec) : store_place_in_ring(s, w, i);
    pthread_mutex_lock(&s->mu);
    s->stored_total += stored;
    s->place_next = i + 1;
    if (slot >= 0) s->free_stage[s->nfree++] = slot;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

int store_start_writers(snap_store *s) {
  s->stop = false;
  for (int t = 0; t < s->nworkers; t++) {
    if (pthread_create(&s->workers[t].thread, NULL, writer_main, &s->workers[t]))
      return mapp_fail(MAPP_ERR_SYSTEM, "cannot start snapshot writer thread %d", t);
  }
  s->threads_started = true;
  return MAPP_OK;
}

void store_stop_writers(snap_store *s) {
  if (!s->threads_started) return;
  pthread_mutex_lock(&s->mu);
  s->stop = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  for (int t = 0; t < s->nworkers; t++) pthread_join(s->workers[t].thread, NULL);
  s->threads_started = false;
}

/* ------------------------------------------------------------ adjoint */

/* A raw snapshot in the host ring is read where it is, by the adjoint
 * itself: no prefetcher touches it (none is woken for it either). */
bool store_read_in_place(const snap_store *s, long i) {
  return s->e[i].layer == SNAP_LAYER_HOST && s->e[i].codec == SNAP_COMP_NONE;
}

/* Snapshot i (compressed in the ring, or on disk) into ready buffer `buf`. */
static int fetch(snap_store *s, worker *w, long i, double *buf, const double **out) {
  const entry *e = &s->e[i];
  const unsigned char *src;
  if (e->layer == SNAP_LAYER_HOST) {
    src = s->ring + e->offset;
  } else {
    double t0 = mapp_now();
    MAPP_TRY(store_disk_read(s, w, w->io, store_round_up(e->stored), e->offset));
    w->read_s += mapp_now() - t0;
    if (snap_checksum(w->io, e->stored) != e->checksum) {
      pthread_mutex_lock(&s->mu);
      s->checksum_failures++;
      pthread_mutex_unlock(&s->mu);
      return store_thread_fail(s, MAPP_ERR_VERIFY, "disk layer: snapshot %ld in %s fails its checksum", i, s->path);
    }
    src = w->io;
  }
  double t0 = mapp_now();
  int status = snap_codec_decompress(w->codec, e->codec, src, e->stored, buf);
  w->decompress_s += mapp_now() - t0;
  if (status) return store_thread_fail(s, status, "%s", mapp_error_message());
  *out = buf;
  return MAPP_OK;
}

/* Prefetcher `id` of n loads positions id, id + n, ... after the device
 * tier's (positions 0 .. dev_count-1 are read in place on the device),
 * skipping the raw ones in the ring (read in place too); a slot is reused
 * only after the position `depth` before it was released, so the first
 * snapshot to load is fetched while the adjoint is still on the ones before. */
static void *prefetch_main(void *arg) {
  worker *w = arg;
  snap_store *s = w->s;
  for (long p = s->dev_count + w->id; p < s->nsnap; p += s->nworkers) {
    if (store_read_in_place(s, s->nsnap - 1 - p)) continue;
    pthread_mutex_lock(&s->mu);
    while (p >= s->released + s->depth && !s->fetch_stop && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
    bool stop = s->fetch_stop || s->err_code;
    pthread_mutex_unlock(&s->mu);
    if (stop) break;
    const double *ptr = NULL;
    if (fetch(s, w, s->nsnap - 1 - p, s->ready[p % s->depth], &ptr)) break;
    pthread_mutex_lock(&s->mu);
    s->ready_ptr[p % s->depth] = ptr;
    s->ready_pos[p % s->depth] = p;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
  }
  return NULL;
}

/* The prefetchers from position 0, every ready slot empty. */
int store_start_fetchers(snap_store *s) {
  s->released = 0, s->fetch_stop = false;
  for (int b = 0; b < s->depth; b++) s->ready_pos[b] = -1;
  s->fetch_running = 0;
  for (int t = 0; t < s->nworkers; t++) {
    if (pthread_create(&s->fetchers[t].thread, NULL, prefetch_main, &s->fetchers[t]))
      return mapp_fail(MAPP_ERR_SYSTEM, "cannot start snapshot prefetcher thread %d", t);
    s->fetch_started = true, s->fetch_running = t + 1;
  }
  return MAPP_OK;
}

void store_stop_fetcher(snap_store *s) {
  if (!s->fetch_started) return;
  pthread_mutex_lock(&s->mu);
  s->fetch_stop = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  for (int t = 0; t < s->fetch_running; t++) pthread_join(s->fetchers[t].thread, NULL);
  s->fetch_started = false, s->fetch_running = 0;
}
