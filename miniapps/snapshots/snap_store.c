/* The snapshot store: the seed's layers (device, host, disk) under
 * budgets, fed by writer threads during the forward and drained by a
 * prefetcher during the adjoint.
 *
 * Placement for reverse reading: at the end of the forward the earliest
 * snapshots sit on the slowest layer and the latest stay in the fastest,
 * which the adjoint reads first. The device tier stores raw snapshots of a
 * known size, so its share is known once the budgets are: the latest
 * snap_placement_plan(...).count[device] snapshots stay on the device (one
 * pool, allocated at setup), the earlier ones leave it as they are made.
 * Those go to the host ring; when it is full its OLDEST snapshot moves down
 * to disk (the ring is a FIFO of variable-sized blocks, so compressed sizes
 * need no advance knowledge): the host/disk split is wherever the host
 * budget ran out at run time, and for raw snapshots it is the plan's.
 * The store calls the device only through snap_device_ops (no CUDA here).
 *
 * Threads: the compute thread packs a snapshot into a free staging buffer
 * (waiting only when all are in flight: the forward stall) and queues it;
 * writer threads compress it and place it in snapshot order. A forward
 * that writes host memory itself (cfg.in_place) gets a raw snapshot's own
 * ring slot instead: it is never copied, and its writer only records it
 * (and sends it to disk when a later snapshot needs the slot). In the
 * adjoint prefetchers (as many as writers) load snapshots `depth` ahead
 * (disk read, checksum, decompression) into ready buffers; a host snapshot
 * stored raw is handed out in place by the adjoint's own thread. Disk
 * files (one per rank) carry a header and an index with a checksum per
 * snapshot; the header is marked complete only after the forward finished
 * and the index is on disk, and without --keep the file is unlinked as soon
 * as it is opened, so a killed run leaves nothing behind.
 *
 * Here: the plan that places snapshots, the store's life cycle and the
 * entry points the engine calls, which tie the layers together. Each layer
 * is a file of its own (snap_store_ring.c, snap_store_disk.c,
 * snap_store_device.c), and so are the threads (snap_store_threads.c); what
 * they share is in snap_store_internal.h. */

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snap_store_internal.h"

size_t snap_layer_block_bytes(snap_layer l, size_t snapshot_bytes) {
  if (l == SNAP_LAYER_HOST) return store_ring_bytes(snapshot_bytes);
  if (l == SNAP_LAYER_DISK) return store_round_up(snapshot_bytes);
  return (snapshot_bytes + 255) / 256 * 256; /* a device pool slot */
}

/* Fastest layer first, each takes as many of the latest snapshots left as
 * its budget holds: the device [nsnap - count, nsnap), the host the ones
 * before, the disk the ones before those; what is left has no room. */
void snap_placement_plan(unsigned layers, const size_t budget[SNAP_NLAYERS], size_t snapshot_bytes, long nsnap,
                         snap_placement *plan) {
  memset(plan, 0, sizeof *plan);
  long left = nsnap > 0 ? nsnap : 0;
  for (int l = SNAP_LAYER_DEVICE; l < SNAP_NLAYERS; l++) {
    size_t block = snap_layer_block_bytes((snap_layer)l, snapshot_bytes);
    size_t room = !(layers & (1u << l)) ? 0 : block ? budget[l] / block : (size_t)left;
    long n = room < (size_t)left ? (long)room : left;
    left -= n;
    plan->count[l] = n, plan->first[l] = left;
  }
  plan->unplaced = left;
}

/* Records the first failure of any thread (mapp_fail's message store is
 * the main thread's; it is filled from here when the main thread looks). */
int store_thread_fail(snap_store *s, int code, const char *fmt, ...) {
  pthread_mutex_lock(&s->mu);
  if (!s->err_code) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err_msg, sizeof s->err_msg, fmt, ap);
    va_end(ap);
    s->err_code = code;
  }
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return code;
}

/* The pending thread failure as this thread's status (mutex held). */
int store_thread_status(snap_store *s) {
  return s->err_code ? mapp_fail(s->err_code, "%s", s->err_msg) : MAPP_OK;
}

int store_aligned_alloc_touched(void **out, size_t bytes, const char *what) {
  if (bytes == 0) bytes = STORE_ALIGN;
  MAPP_TRY(snap_alloc_large(out, store_round_up(bytes), STORE_ALIGN, what));
  memset(*out, 0, store_round_up(bytes));
  return MAPP_OK;
}

/* ------------------------------------------------------------ forward */

bool snap_store_holds_two(const snap_store *s) {
  if (s->all) return true;
  /* In place, snapshot i + 1's slot waits for snapshot i + 1 - ring_slots
   * to be placed, which must have been committed: two slots at least.
   * Staged, there are always two buffers. The adjoint's second read is
   * one prefetch slot further. The device tier is left out (puts, not
   * acquires). */
  bool forward = s->ring_in_place ? s->ring_slots >= 2 : s->nstage >= 2;
  return forward && s->depth >= 2 && s->dev_count == 0;
}

int snap_store_acquire(snap_store *s, long i, double **buf) {
  if (i < 0 || i >= s->nsnap) return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld outside [0, %ld)", i, s->nsnap);
  if (s->all) {
    *buf = s->all + (size_t)i * (size_t)s->g->interior;
    return MAPP_OK;
  }
  if (snap_store_on_device(s, i))
    return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld belongs to the device tier: snap_store_put_device, not acquire", i);
  /* Snapshots are acquired in order, at most two ahead of the commits
   * (snap_store_holds_two); any other order is a store still holding an
   * earlier forward (not reset), whose writers would wait forever for a
   * turn that has passed. Only this thread writes `acquired` and
   * `committed`. */
  if (i != s->acquired || i > s->committed + 1)
    return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld acquired after %ld were committed: the store holds another "
                                      "forward (snap_store_reset first)", i, s->committed);
  if (!s->threads_started) MAPP_TRY(store_start_writers(s));
  pthread_mutex_lock(&s->mu);
  double t0 = mapp_now();
  if (s->ring_in_place) /* its slot's last holder placed (and, if it had to go, on disk) */
    while (i - s->ring_slots >= s->place_next && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
  else
    while (!s->nfree && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
  s->stall_fw += mapp_now() - t0;
  int status = store_thread_status(s);
  if (!status && s->ring_in_place) {
    s->pending_slot[i % 2] = -1;
    *buf = (double *)(s->ring + store_ring_slot_offset(s, i));
  } else if (!status) {
    s->pending_slot[i % 2] = s->free_stage[--s->nfree]; /* queued by commit */
    *buf = s->stage[s->pending_slot[i % 2]];
  }
  if (!status) s->acquired = i + 1;
  pthread_mutex_unlock(&s->mu);
  return status;
}

/* A snapshot that stays in the ring leaves its writer nothing but
 * bookkeeping: it is queued without waking one (on a node whose cores all
 * compute, a woken writer preempts a compute thread mid-step), and the
 * writers record it when woken next, at the latest by finish_forward.
 * Such snapshots come after every one that must go to disk, so no
 * placement waits on them. */
int snap_store_commit(snap_store *s, long i) {
  if (s->all) return MAPP_OK;
  pthread_mutex_lock(&s->mu);
  long at = (s->q_head + s->q_count) % s->nqueue;
  s->queue_idx[at] = i, s->queue_slot[at] = s->pending_slot[i % 2];
  s->q_count++;
  s->committed = i + 1;
  if (!store_stays_in_ring(s, i)) pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return MAPP_OK;
}

int snap_store_finish_forward(snap_store *s) {
  if (s->all) return MAPP_OK;
  pthread_mutex_lock(&s->mu);
  pthread_cond_broadcast(&s->cv); /* the writers record what was queued quietly */
  double t0 = mapp_now();
  while (s->place_next < s->committed && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
  s->stall_fw += mapp_now() - t0;
  int status = store_thread_status(s);
  pthread_mutex_unlock(&s->mu);
  store_stop_writers(s);
  if (status) return status;
  if (s->dev_count) { /* the device tier's puts are asynchronous: the adjoint may read them once they are done */
    t0 = mapp_now();
    status = s->cfg.device->wait();
    s->stall_fw += mapp_now() - t0;
    if (status) return status;
  }
  if (s->place_next != s->dev_first || s->dev_next != s->nsnap)
    return mapp_fail(MAPP_ERR_SYSTEM, "forward saved %ld of %ld snapshots (%ld in host and disk, %ld on the device)",
                     s->place_next + (s->dev_next - s->dev_first), s->nsnap, s->place_next, s->dev_next - s->dev_first);
  for (long i = 0; i < s->nsnap; i++) s->count[s->e[i].layer]++;
  if (s->fd >= 0) MAPP_TRY(store_write_index(s));
  /* The adjoint's prefetching starts now, while the residual is formed. */
  return store_start_fetchers(s);
}

/* ------------------------------------------------------------ adjoint */

int snap_store_get(snap_store *s, long i, const double **data) {
  if (s->all) {
    *data = s->all + (size_t)i * (size_t)s->g->interior;
    return MAPP_OK;
  }
  /* In reverse order, at most two read before the first is released
   * (snap_store_holds_two). */
  long p = s->nsnap - 1 - i;
  if (!s->fetch_started || p < s->released || p > s->released + 1 || p >= s->released + s->depth)
    return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld read out of reverse order", i);
  if (snap_store_on_device(s, i)) /* read in place: no host trip */
    return s->cfg.device->get(store_device_slot(s, i), data);
  if (store_read_in_place(s, i)) return *data = (const double *)(s->ring + s->e[i].offset), MAPP_OK;
  pthread_mutex_lock(&s->mu);
  double t0 = mapp_now();
  while (s->ready_pos[p % s->depth] != p && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
  s->stall_bw += mapp_now() - t0;
  int status = store_thread_status(s);
  if (!status) *data = s->ready_ptr[p % s->depth];
  pthread_mutex_unlock(&s->mu);
  return status;
}

int snap_store_release(snap_store *s, long i) {
  (void)i;
  if (s->all) return MAPP_OK;
  pthread_mutex_lock(&s->mu);
  s->released++;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return MAPP_OK;
}

/* ------------------------------------------------------------ life cycle */

static int writer_count(const snap_store_config *c) { return c->io_threads > 0 ? c->io_threads : 1; }

static int create_workers(snap_store *s) {
  s->nworkers = writer_count(&s->cfg);
  MAPP_TRY(mapp_calloc((void **)&s->workers, (size_t)s->nworkers, sizeof(worker), "the writer threads"));
  MAPP_TRY(mapp_calloc((void **)&s->fetchers, (size_t)s->nworkers, sizeof(worker), "the prefetcher threads"));
  s->io_bytes = store_round_up(s->bound);
  for (int t = 0; t < 2 * s->nworkers; t++) {
    bool writer = t < s->nworkers;
    worker *w = writer ? &s->workers[t] : &s->fetchers[t - s->nworkers];
    w->s = s, w->id = writer ? t : t - s->nworkers;
    MAPP_TRY(snap_codec_create(&w->codec, &s->cfg, s->g));
    if (s->cfg.compression != SNAP_COMP_NONE && writer)
      MAPP_TRY(store_aligned_alloc_touched((void **)&w->cbuf, s->bound, "a compression buffer"));
    if (s->cfg.layers & (1u << SNAP_LAYER_DISK) || t == 0)
      MAPP_TRY(store_aligned_alloc_touched((void **)&w->io,
                                           s->io_bytes < SNAP_FILE_HEADER_BYTES ? SNAP_FILE_HEADER_BYTES : s->io_bytes,
                                           "a disk buffer"));
    /* Where the kernel refuses io_uring (old, or a seccomp filter), the
     * plain calls: the record's disk_io says which ran. */
    if (s->cfg.uring && s->cfg.layers & (1u << SNAP_LAYER_DISK))
      w->has_ring = io_uring_queue_init(STORE_URING_PIECES, &w->ring, 0) == 0;
  }
  s->uring = s->workers[0].has_ring;
  for (int t = 0; t < s->nworkers; t++) s->uring = s->uring && s->workers[t].has_ring && s->fetchers[t].has_ring;
  return MAPP_OK;
}

/* Staging buffers: one more than the writers (at least double buffering),
 * or one per writer one at a time. */
static int staging_count(const snap_store_config *c) {
  int writers = writer_count(c);
  return c->one_at_a_time ? writers : writers + 1 < 2 ? 2 : writers + 1;
}

static int fetch_depth(const snap_store_config *c) {
  return c->one_at_a_time ? 1 : c->prefetch_depth > 0 ? c->prefetch_depth : 2;
}

int snap_store_buffer_count(const snap_store_config *c) {
  int writers = writer_count(c);
  return staging_count(c) + fetch_depth(c) + 2 * writers + (c->compression != SNAP_COMP_NONE ? writers : 0);
}

static int create_buffers(snap_store *s) {
  /* In place a snapshot waits in its ring slot: no staging, and at most a
   * ring's worth is queued (acquire waits for a slot's last holder). */
  s->nstage = s->ring_in_place ? 0 : staging_count(&s->cfg);
  s->nqueue = s->ring_in_place ? s->ring_slots : s->nstage;
  s->depth = fetch_depth(&s->cfg);
  /* + 1: no zero-sized allocation when in place (nstage 0) */
  MAPP_TRY(mapp_calloc((void **)&s->stage, (size_t)s->nstage + 1, sizeof(double *), "staging buffers"));
  MAPP_TRY(mapp_calloc((void **)&s->free_stage, (size_t)s->nstage + 1, sizeof(int), "staging buffers"));
  MAPP_TRY(mapp_calloc((void **)&s->queue_idx, (size_t)s->nqueue, sizeof(long), "the writer queue"));
  MAPP_TRY(mapp_calloc((void **)&s->queue_slot, (size_t)s->nqueue, sizeof(int), "the writer queue"));
  for (int b = 0; b < s->nstage; b++) {
    MAPP_TRY(store_aligned_alloc_touched((void **)&s->stage[b], s->raw, "a staging buffer"));
    s->free_stage[s->nfree++] = b;
  }
  MAPP_TRY(mapp_calloc((void **)&s->ready, (size_t)s->depth, sizeof(double *), "prefetch buffers"));
  MAPP_TRY(mapp_calloc((void **)&s->ready_ptr, (size_t)s->depth, sizeof(double *), "prefetch buffers"));
  MAPP_TRY(mapp_calloc((void **)&s->ready_pos, (size_t)s->depth, sizeof(long), "prefetch slots"));
  for (int b = 0; b < s->depth; b++)
    MAPP_TRY(store_aligned_alloc_touched((void **)&s->ready[b], s->raw, "a prefetch buffer"));
  return MAPP_OK;
}

static int create_ring(snap_store *s) {
  if (!(s->cfg.layers & (1u << SNAP_LAYER_HOST))) return MAPP_OK;
  /* Stored sizes never exceed raw; the device tier's snapshots never come here. */
  size_t need = store_ring_bytes(s->raw) * (size_t)(s->nsnap - s->dev_count);
  s->ring_cap = s->cfg.budget[SNAP_LAYER_HOST] < need ? s->cfg.budget[SNAP_LAYER_HOST] : need;
  MAPP_TRY(mapp_calloc((void **)&s->resident, (size_t)s->nsnap, sizeof(long), "the host layer's index"));
  if (!s->ring_cap) return MAPP_OK;
  s->ring_slots = (long)(s->ring_cap / store_ring_bytes(s->raw));
  s->ring_in_place = s->cfg.in_place && s->cfg.compression == SNAP_COMP_NONE && s->ring_slots > 0;
  /* Uncompressed, the ring fills up exactly as sized: touch it now, so
   * no page fault lands in the timed forward. Compressed, its pages are
   * touched only as far as the snapshots reach (resident memory follows
   * the compressed size). */
  if (s->cfg.compression == SNAP_COMP_NONE)
    return store_aligned_alloc_touched((void **)&s->ring, s->ring_cap, "the host snapshot layer");
  if (posix_memalign((void **)&s->ring, STORE_ALIGN, store_round_up(s->ring_cap)))
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating %zu bytes for the host snapshot layer", s->ring_cap);
  return MAPP_OK;
}

/* The device tier: the latest snapshots the device budget holds, in one
 * pool allocated now (none when it holds none). */
static int create_device_tier(snap_store *s) {
  s->dev_first = s->dev_next = s->nsnap;
  if (!(s->cfg.layers & (1u << SNAP_LAYER_DEVICE))) return MAPP_OK;
  if (!s->cfg.device)
    return mapp_fail(MAPP_ERR_INPUT, "the device layer needs the CUDA backend's device tier, which this build or backend "
                                     "does not have");
  snap_placement plan;
  snap_placement_plan(s->cfg.layers, s->cfg.budget, s->raw, s->nsnap, &plan);
  s->dev_slot = snap_layer_block_bytes(SNAP_LAYER_DEVICE, s->raw);
  if (!(s->cfg.layers & ~(1u << SNAP_LAYER_DEVICE)) && plan.count[SNAP_LAYER_DEVICE] < s->nsnap)
    return mapp_fail(MAPP_ERR_INPUT,
                     "--layers device: the device budget of %zu bytes holds %ld of %ld snapshots (%zu bytes each) and "
                     "no slower layer is left; use --recompute, a larger --device-budget or host-device",
                     s->cfg.budget[SNAP_LAYER_DEVICE], plan.count[SNAP_LAYER_DEVICE], s->nsnap, s->dev_slot);
  s->dev_count = plan.count[SNAP_LAYER_DEVICE];
  s->dev_first = s->dev_next = s->nsnap - s->dev_count;
  if (!s->dev_count) return MAPP_OK;
  return s->cfg.device->pool_alloc(s->dev_slot * (size_t)s->dev_count, &s->pool);
}

int snap_store_create(snap_store **out, const snap_store_config *cfg, const snap_grid *g, const snap_config *pcfg,
                      long nsnap) {
  snap_store *s;
  MAPP_TRY(mapp_calloc((void **)&s, 1, sizeof *s, "the snapshot store"));
  *out = s;
  s->cfg = *cfg, s->g = g, s->pcfg = *pcfg, s->nsnap = nsnap, s->fd = -1;
  s->raw = (size_t)g->interior * sizeof(double);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  if (cfg->layers == 0) { /* none: one array, allocated and touched before the clock */
    size_t bytes;
    MAPP_TRY(mapp_size_mul(s->raw, (size_t)nsnap, &bytes, "the in-memory snapshots"));
    return store_aligned_alloc_touched((void **)&s->all, bytes, "the in-memory snapshots");
  }
  MAPP_TRY(mapp_calloc((void **)&s->e, (size_t)nsnap, sizeof(entry), "the snapshot index"));
  for (long i = 0; i < nsnap; i++) s->e[i].layer = -1;
  MAPP_TRY(create_device_tier(s));
  snap_codec *probe;
  MAPP_TRY(snap_codec_create(&probe, cfg, g));
  s->bound = snap_codec_bound(probe);
  snap_codec_free(probe);
  MAPP_TRY(create_workers(s));
  MAPP_TRY(create_ring(s));
  MAPP_TRY(create_buffers(s));
  if (cfg->layers & (1u << SNAP_LAYER_DISK)) MAPP_TRY(store_open_disk(s));
  return MAPP_OK;
}

int snap_store_reset(snap_store *s) {
  if (s->all) return MAPP_OK;
  store_stop_fetcher(s);
  store_stop_writers(s);
  for (long i = 0; i < s->nsnap; i++) s->e[i] = (entry){.layer = -1};
  s->ring_head = s->ring_tail = s->host_used = 0;
  s->res_first = s->res_count = 0;
  s->acquired = s->committed = s->place_next = 0;
  s->dev_next = s->dev_first;
  s->q_head = s->q_count = 0;
  /* The statistics are each run's own. */
  memset(s->count, 0, sizeof s->count);
  s->host_peak = s->stored_total = s->disk_written = s->disk_read = 0;
  s->stall_fw = s->stall_bw = 0;
  s->checksum_failures = 0;
  for (int t = 0; t < s->nworkers; t++) {
    worker *w[2] = {&s->workers[t], &s->fetchers[t]};
    for (int k = 0; k < 2; k++) w[k]->compress_s = w[k]->write_s = w[k]->read_s = w[k]->decompress_s = 0;
  }
  if (s->fd >= 0) {
    s->file_end = SNAP_FILE_HEADER_BYTES, s->disk_used = 0;
    if (store_write_header(s, false, 0, 0, 0)) return store_thread_status(s);
  }
  return MAPP_OK;
}

void snap_store_get_stats(const snap_store *s, snap_store_stats *st) {
  memset(st, 0, sizeof *st);
  if (s->all) {
    st->count[SNAP_LAYER_HOST] = s->nsnap;
    st->peak_bytes[SNAP_LAYER_HOST] = s->raw * (size_t)s->nsnap;
    st->raw_bytes = st->stored_bytes = s->raw * (size_t)s->nsnap;
    return;
  }
  for (int l = 0; l < SNAP_NLAYERS; l++) st->count[l] = s->count[l];
  st->peak_bytes[SNAP_LAYER_DEVICE] = (size_t)s->count[SNAP_LAYER_DEVICE] * s->dev_slot;
  st->peak_bytes[SNAP_LAYER_HOST] = s->host_peak;
  st->peak_bytes[SNAP_LAYER_DISK] = s->disk_used;
  st->raw_bytes = s->raw * (size_t)s->nsnap;
  st->stored_bytes = s->stored_total;
  for (int t = 0; t < s->nworkers; t++) {
    st->compress_s += s->workers[t].compress_s, st->write_s += s->workers[t].write_s;
    st->decompress_s += s->fetchers[t].decompress_s, st->read_s += s->fetchers[t].read_s;
  }
  st->disk_written = s->disk_written, st->disk_read = s->disk_read;
  st->stall_forward_s = s->stall_fw, st->stall_adjoint_s = s->stall_bw;
  st->checksum_failures = s->checksum_failures;
  st->direct_io = s->direct, st->uring = s->uring;
  snprintf(st->disk_path, sizeof st->disk_path, "%s", s->fd >= 0 ? s->path : "");
}

void snap_store_destroy(snap_store *s) {
  if (!s) return;
  store_stop_fetcher(s);
  store_stop_writers(s);
  if (s->fd >= 0) close(s->fd);
  for (int t = 0; t < 2 * s->nworkers; t++) {
    worker *w = t < s->nworkers ? (s->workers ? &s->workers[t] : NULL) : (s->fetchers ? &s->fetchers[t - s->nworkers] : NULL);
    if (!w) continue;
    snap_codec_free(w->codec);
    if (w->has_ring) io_uring_queue_exit(&w->ring);
    free(w->cbuf), free(w->io);
  }
  free(s->workers), free(s->fetchers);
  for (int b = 0; s->stage && b < s->nstage; b++) free(s->stage[b]);
  for (int b = 0; s->ready && b < s->depth; b++) free(s->ready[b]);
  free(s->stage), free(s->free_stage), free(s->queue_idx), free(s->queue_slot), free(s->ready), free(s->ready_ptr), free(s->ready_pos);
  free(s->ring), free(s->resident), free(s->e), free(s->all);
  if (s->pool) s->cfg.device->pool_free(s->pool);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

/* ------------------------------------------------------------ names */

int snap_layers_parse(const char *name, unsigned *mask) {
  static const struct {
    const char *name;
    unsigned mask;
  } table[] = {
      {"disk-host-device", 7u}, {"host-device", 3u}, {"disk-host", 6u}, {"host", 2u},
      {"device", 1u},           {"disk", 4u},        {"none", 0u},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(name, table[i].name)) return *mask = table[i].mask, MAPP_OK;
  return mapp_fail(MAPP_ERR_INPUT, "--layers: unknown value '%s' (choose %s)", name, SNAP_LAYER_NAMES);
}

const char *snap_layer_name(snap_layer l) {
  return l == SNAP_LAYER_DEVICE ? "device" : l == SNAP_LAYER_HOST ? "host" : "disk";
}

const char *snap_compression_name(snap_compression c) {
  return c == SNAP_COMP_ZSTD ? "zstd" : c == SNAP_COMP_ZFP ? "zfp" : "none";
}
