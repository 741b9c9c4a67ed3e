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
 * as it is opened, so a killed run leaves nothing behind. */
#define _GNU_SOURCE /* O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <liburing.h>

#include "snapshots.h"

#define ALIGN 4096
/* --disk-io uring: a snapshot's transfer as this many aligned requests in
 * flight at once (the disk sees a queue, not one request at a time). */
#define URING_PIECES 4

typedef struct {
  int layer;        /* a snap_layer; -1 before placement */
  size_t offset;    /* in the device pool, the ring or the file */
  size_t stored;
  uint32_t codec;
  uint64_t checksum;
} entry;

typedef struct {
  snap_store *s;
  snap_codec *codec;
  unsigned char *cbuf;  /* compressed output */
  unsigned char *io;    /* aligned disk buffer */
  pthread_t thread;
  int id;
  bool has_ring;        /* io_uring set up (--disk-io uring, disk layer) */
  struct io_uring ring; /* this worker's own: one thread submits and reaps */
  double compress_s, write_s, read_s, decompress_s;
} worker;

struct snap_store {
  snap_store_config cfg;
  const snap_grid *g;
  snap_config pcfg;
  long nsnap;
  size_t raw, bound, io_bytes;
  double *all;                      /* layers none: every snapshot, in memory */
  entry *e;
  /* host layer: a FIFO ring */
  unsigned char *ring;
  size_t ring_cap, ring_head, ring_tail, host_used;
  /* in place (raw, written there by the forward): snapshot i in slot i % ring_slots */
  bool ring_in_place;
  long ring_slots;
  long *resident, res_first, res_count;
  /* device tier: snapshots [dev_first, nsnap) in slots of one pool */
  void *pool;
  size_t dev_slot;
  long dev_first, dev_count, dev_next;
  /* disk layer */
  int fd;
  char path[512];
  size_t file_end, disk_used, disk_written, disk_read;
  bool direct, uring;               /* O_DIRECT, io_uring in force */
  /* forward: staging buffers, the queue, writers */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int nstage, nfree;
  double **stage;
  int *free_stage;
  long *queue_idx;
  int *queue_slot;
  long nqueue, q_head, q_count;    /* the writers' queue: nstage, or ring_slots in place */
  int pending_slot;                 /* acquired, not yet committed */
  long committed, place_next;
  bool stop, threads_started;
  int nworkers;
  worker *workers;
  /* adjoint: prefetchers (as many as writers), position p = nsnap-1-i in
   * ready slot p % depth */
  worker *fetchers;
  bool fetch_started, fetch_stop;
  int fetch_running;                /* prefetcher threads started */
  int depth;
  double **ready;
  const double **ready_ptr;
  long *ready_pos;                  /* the position a slot holds, -1 none */
  long released;
  long checksum_failures;
  /* the first failure in a thread */
  int err_code;
  char err_msg[400];
  double stall_fw, stall_bw;
  size_t host_peak, stored_total;
  long count[SNAP_NLAYERS];
};

uint64_t snap_checksum(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull;
  size_t words = bytes / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t w;
    memcpy(&w, p + 8 * i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (size_t i = 8 * words; i < bytes; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static size_t round_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }
/* Ring blocks start on 64-byte boundaries: a raw snapshot after a
 * compressed one is still an aligned array of doubles, handed out in place. */
static size_t ring_bytes(size_t n) { return (n + 63) / 64 * 64; }

size_t snap_layer_block_bytes(snap_layer l, size_t snapshot_bytes) {
  if (l == SNAP_LAYER_HOST) return ring_bytes(snapshot_bytes);
  if (l == SNAP_LAYER_DISK) return round_up(snapshot_bytes);
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
static int thread_fail(snap_store *s, int code, const char *fmt, ...) {
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
static int thread_status(snap_store *s) {
  return s->err_code ? mapp_fail(s->err_code, "%s", s->err_msg) : MAPP_OK;
}

static int aligned_alloc_touched(void **out, size_t bytes, const char *what) {
  if (bytes == 0) bytes = ALIGN;
  if (posix_memalign(out, ALIGN, round_up(bytes)))
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating %zu bytes for %s", bytes, what);
  memset(*out, 0, round_up(bytes));
  return MAPP_OK;
}

/* ------------------------------------------------------------ disk file */

/* The disk layer's failures, worded alike whichever call failed. */
static int write_failed(snap_store *s, size_t written, const char *why) {
  return thread_fail(s, MAPP_ERR_SYSTEM, "disk layer: writing %s failed after %zu bytes written: %s", s->path, written,
                     why);
}

static int read_failed(snap_store *s, size_t at, const char *why) {
  return thread_fail(s, MAPP_ERR_SYSTEM, "disk layer: reading %s at byte %zu failed: %s", s->path, at, why);
}

static void count_read(snap_store *s, size_t bytes) {
  pthread_mutex_lock(&s->mu); /* several prefetchers read at once */
  s->disk_read += bytes;
  pthread_mutex_unlock(&s->mu);
}

static int write_all(snap_store *s, const void *buf, size_t bytes, size_t offset) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = pwrite(s->fd, (const char *)buf + done, bytes - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && s->direct) { /* the file system refuses O_DIRECT: fall back */
      int flags = fcntl(s->fd, F_GETFL);
      if (flags >= 0 && fcntl(s->fd, F_SETFL, flags & ~O_DIRECT) == 0) {
        s->direct = false;
        continue;
      }
    }
    if (n <= 0) return write_failed(s, s->disk_written + done, n < 0 ? strerror(errno) : "no progress");
    done += (size_t)n;
  }
  s->disk_written += bytes;
  return MAPP_OK;
}

static int read_all(snap_store *s, void *buf, size_t bytes, size_t offset) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = pread(s->fd, (char *)buf + done, bytes - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return read_failed(s, offset + done, n < 0 ? strerror(errno) : "end of file");
    done += (size_t)n;
  }
  count_read(s, bytes);
  return MAPP_OK;
}

/* One snapshot's bytes through worker w's io_uring: URING_PIECES aligned
 * pieces submitted together, all reaped; a piece the kernel moved only in
 * part is finished synchronously. Errors read as write_all's/read_all's. */
static int uring_transfer(snap_store *s, worker *w, bool write, void *buf, size_t bytes, size_t offset) {
  size_t piece = round_up((bytes + URING_PIECES - 1) / URING_PIECES);
  int n = 0;
  for (size_t at = 0; at < bytes; at += piece, n++) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
    size_t len = bytes - at < piece ? bytes - at : piece; /* the last piece may be short */
    if (write) io_uring_prep_write(sqe, s->fd, (char *)buf + at, (unsigned)len, (off_t)(offset + at));
    else io_uring_prep_read(sqe, s->fd, (char *)buf + at, (unsigned)len, (off_t)(offset + at));
    io_uring_sqe_set_data64(sqe, at);
  }
  int submitted = io_uring_submit(&w->ring);
  if (submitted != n)
    return thread_fail(s, MAPP_ERR_SYSTEM, "disk layer: io_uring took %d of %d requests for %s: %s", submitted, n, s->path,
                       submitted < 0 ? strerror(-submitted) : "short submit");
  int status = MAPP_OK;
  for (int k = 0; k < n; k++) {
    struct io_uring_cqe *cqe;
    int r = io_uring_wait_cqe(&w->ring, &cqe);
    if (r < 0) /* nothing was reaped: the ring cannot go on (the run fails with it) */
      return thread_fail(s, MAPP_ERR_SYSTEM, "disk layer: waiting for io_uring on %s: %s", s->path, strerror(-r));
    size_t at = (size_t)io_uring_cqe_get_data64(cqe), len = bytes - at < piece ? bytes - at : piece;
    int res = cqe->res;
    io_uring_cqe_seen(&w->ring, cqe);
    if (status) continue; /* reap the rest; the first failure stands */
    if (res < 0)
      status = write ? write_failed(s, s->disk_written + at, strerror(-res)) : read_failed(s, offset + at, strerror(-res));
    else if ((size_t)res < len) /* moved in part: the rest the plain way */
      status = write ? write_all(s, (char *)buf + at + res, len - (size_t)res, offset + at + (size_t)res)
                     : read_all(s, (char *)buf + at + res, len - (size_t)res, offset + at + (size_t)res);
    if (!status && write) s->disk_written += (size_t)res; /* the placer's turn: only this thread writes */
    if (!status && !write) count_read(s, (size_t)res);
  }
  return status;
}

/* A snapshot's bytes to or from the file, by io_uring where in force. */
static int disk_write(snap_store *s, worker *w, const void *buf, size_t bytes, size_t offset) {
  return w->has_ring ? uring_transfer(s, w, true, (void *)buf, bytes, offset) : write_all(s, buf, bytes, offset);
}

static int disk_read(snap_store *s, worker *w, void *buf, size_t bytes, size_t offset) {
  return w->has_ring ? uring_transfer(s, w, false, buf, bytes, offset) : read_all(s, buf, bytes, offset);
}

static void fill_header(const snap_store *s, snap_file_header *h, bool complete, long on_disk, size_t index_offset,
                        uint64_t index_checksum) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, SNAP_FILE_MAGIC, 8);
  h->version = SNAP_FILE_VERSION;
  h->flags = complete ? SNAP_FILE_COMPLETE : 0;
  h->dims = (uint32_t)s->g->dims, h->space_order = (uint32_t)s->pcfg.space_order;
  h->compression = (uint32_t)s->cfg.compression;
  h->rank = (uint32_t)s->g->rank, h->nranks = (uint32_t)s->g->nranks;
  for (int d = 0; d < 3; d++) h->global[d] = s->g->global[d], h->local[d] = s->g->n[d];
  h->first = s->g->first;
  h->nt = s->pcfg.nt, h->save_every = s->pcfg.save_every, h->nsnap = s->nsnap;
  h->on_disk = on_disk, h->index_offset = (int64_t)index_offset;
  h->raw_bytes = s->raw;
  h->zfp_tolerance = s->cfg.zfp_tolerance, h->zfp_rate = s->cfg.zfp_rate;
  h->index_checksum = index_checksum;
  h->header_checksum = snap_checksum(h, offsetof(snap_file_header, header_checksum));
}

static int write_header(snap_store *s, bool complete, long on_disk, size_t index_offset, uint64_t index_checksum) {
  unsigned char *block = s->workers[0].io; /* the writers are idle whenever the header is written */
  memset(block, 0, SNAP_FILE_HEADER_BYTES);
  fill_header(s, (snap_file_header *)block, complete, on_disk, index_offset, index_checksum);
  return write_all(s, block, SNAP_FILE_HEADER_BYTES, 0);
}

static int open_disk(snap_store *s) {
  const char *dir = s->cfg.disk_dir;
  snprintf(s->path, sizeof s->path, "%s/%s.%ld.rank%d.snap", dir, s->cfg.prog ? s->cfg.prog : "mapp-snapshots",
           (long)getpid(), s->g->rank);
  int flags = O_RDWR | O_CREAT | O_TRUNC;
  s->direct = s->cfg.direct_io;
  s->fd = open(s->path, flags | (s->direct ? O_DIRECT : 0), 0644);
  if (s->fd < 0 && s->direct && errno == EINVAL) s->direct = false, s->fd = open(s->path, flags, 0644);
  if (s->fd < 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "disk layer: cannot create %s: %s", s->path, strerror(errno));
  /* Without --keep the name goes at once: the data live while the file is
   * open and vanish with the process, however it ends. */
  if (!s->cfg.keep) unlink(s->path);
  s->file_end = SNAP_FILE_HEADER_BYTES;
  if (write_header(s, false, 0, 0, 0)) return thread_status(s);
  return MAPP_OK;
}

/* One stored snapshot appended to the file (the placer's turn is held). */
static int disk_put(snap_store *s, worker *w, long i, const void *data, size_t stored, uint32_t codec) {
  if (!(s->cfg.layers & (1u << SNAP_LAYER_DISK)))
    return thread_fail(s, MAPP_ERR_INPUT,
                       "snapshot layers are full at snapshot %ld of %ld: the budgets hold %zu bytes; use --recompute or "
                       "larger budgets",
                       i + 1, s->nsnap, s->cfg.budget[SNAP_LAYER_HOST]);
  size_t padded = round_up(stored);
  if (s->disk_used + padded > s->cfg.budget[SNAP_LAYER_DISK])
    return thread_fail(s, MAPP_ERR_INPUT,
                       "disk layer budget of %zu bytes is full at snapshot %ld of %ld (%zu bytes used); use "
                       "--recompute or a larger --disk-budget",
                       s->cfg.budget[SNAP_LAYER_DISK], i + 1, s->nsnap, s->disk_used);
  memcpy(w->io, data, stored);
  if (padded > stored) memset(w->io + stored, 0, padded - stored);
  entry *e = &s->e[i];
  e->checksum = snap_checksum(w->io, stored);
  double t0 = mapp_now();
  int status = disk_write(s, w, w->io, padded, s->file_end);
  w->write_s += mapp_now() - t0;
  if (status) return status;
  e->layer = SNAP_LAYER_DISK, e->offset = s->file_end, e->stored = stored, e->codec = codec;
  s->file_end += padded, s->disk_used += padded;
  return MAPP_OK;
}

/* ------------------------------------------------------------ host ring */

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
  return thread_fail(s, MAPP_ERR_INPUT,
                     "snapshot layers are full at snapshot %ld of %ld: the host budget holds %zu bytes of snapshots "
                     "and no slower layer is left; use --recompute or larger budgets",
                     incoming + 1, s->nsnap, s->ring_cap);
}

/* The oldest host snapshot down to disk. */
static int ring_evict(snap_store *s, worker *w, long incoming) {
  if (s->res_count == 0 || !(s->cfg.layers & (1u << SNAP_LAYER_DISK))) return ring_full(s, incoming);
  long i = s->resident[s->res_first];
  entry *e = &s->e[i];
  MAPP_TRY(disk_put(s, w, i, s->ring + e->offset, e->stored, e->codec));
  s->host_used -= ring_bytes(e->stored);
  s->res_first = (s->res_first + 1) % s->nsnap, s->res_count--;
  if (s->res_count) s->ring_head = s->e[s->resident[s->res_first]].offset;
  return MAPP_OK;
}

static int place(snap_store *s, worker *w, long i, const void *data, size_t stored, uint32_t codec) {
  entry *e = &s->e[i];
  size_t need = ring_bytes(stored);
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
  return disk_put(s, w, i, data, stored, codec);
}

/* In place, snapshot i's ring slot (its offset in the ring). */
static size_t ring_slot_offset(const snap_store *s, long i) {
  return (size_t)(i % s->ring_slots) * ring_bytes(s->raw);
}

/* Written in place and kept in the ring to the end: the ring's last
 * ring_slots host-bound snapshots (every earlier one goes to disk). */
static bool stays_in_ring(const snap_store *s, long i) {
  return s->ring_in_place && i + s->ring_slots >= s->dev_first;
}

/* Snapshot i, written in place into its ring slot by the forward. The
 * ring then holds the latest ring_slots host-bound snapshots, as placing
 * them one by one would leave it; a snapshot whose slot a later host-bound
 * one will take goes down to disk now, while the next steps compute, and
 * acquire hands that slot out only after (snapshot i + ring_slots waits
 * for snapshot i to be placed). */
static int place_in_ring(snap_store *s, worker *w, long i) {
  entry *e = &s->e[i];
  *e = (entry){.layer = SNAP_LAYER_HOST, .offset = ring_slot_offset(s, i), .stored = s->raw, .codec = SNAP_COMP_NONE};
  if (i < s->ring_slots) { /* a slot taken for the first time */
    s->host_used += ring_bytes(s->raw);
    if (s->host_used > s->host_peak) s->host_peak = s->host_used;
  }
  if (stays_in_ring(s, i)) return MAPP_OK;
  if (!(s->cfg.layers & (1u << SNAP_LAYER_DISK))) return ring_full(s, i + s->ring_slots);
  return disk_put(s, w, i, s->ring + e->offset, s->raw, SNAP_COMP_NONE);
}

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
      if (status) thread_fail(s, status, "%s", mapp_error_message());
      data = w->cbuf;
    }
    pthread_mutex_lock(&s->mu);
    while (s->place_next != i && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
    bool failed = s->err_code != 0;
    pthread_mutex_unlock(&s->mu);
    /* This thread's turn: the ring and the file are its own until place_next moves. */
    if (!failed && !status) status = data ? place(s, w, i, data, stored, codec) : place_in_ring(s, w, i);
    pthread_mutex_lock(&s->mu);
    s->stored_total += stored;
    s->place_next = i + 1;
    if (slot >= 0) s->free_stage[s->nfree++] = slot;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

static int start_writers(snap_store *s) {
  s->stop = false;
  for (int t = 0; t < s->nworkers; t++) {
    if (pthread_create(&s->workers[t].thread, NULL, writer_main, &s->workers[t]))
      return mapp_fail(MAPP_ERR_SYSTEM, "cannot start snapshot writer thread %d", t);
  }
  s->threads_started = true;
  return MAPP_OK;
}

static void stop_writers(snap_store *s) {
  if (!s->threads_started) return;
  pthread_mutex_lock(&s->mu);
  s->stop = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  for (int t = 0; t < s->nworkers; t++) pthread_join(s->workers[t].thread, NULL);
  s->threads_started = false;
}

int snap_store_acquire(snap_store *s, long i, double **buf) {
  if (i < 0 || i >= s->nsnap) return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld outside [0, %ld)", i, s->nsnap);
  if (s->all) {
    *buf = s->all + (size_t)i * (size_t)s->g->interior;
    return MAPP_OK;
  }
  if (snap_store_on_device(s, i))
    return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld belongs to the device tier: snap_store_put_device, not acquire", i);
  if (!s->threads_started) MAPP_TRY(start_writers(s));
  pthread_mutex_lock(&s->mu);
  double t0 = mapp_now();
  if (s->ring_in_place) /* its slot's last holder placed (and, if it had to go, on disk) */
    while (i - s->ring_slots >= s->place_next && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
  else
    while (!s->nfree && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
  s->stall_fw += mapp_now() - t0;
  int status = thread_status(s);
  if (!status && s->ring_in_place) {
    s->pending_slot = -1;
    *buf = (double *)(s->ring + ring_slot_offset(s, i));
  } else if (!status) {
    s->pending_slot = s->free_stage[--s->nfree]; /* queued by commit */
    *buf = s->stage[s->pending_slot];
  }
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
  s->queue_idx[at] = i, s->queue_slot[at] = s->pending_slot;
  s->q_count++;
  s->committed = i + 1;
  if (!stays_in_ring(s, i)) pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return MAPP_OK;
}

bool snap_store_on_device(const snap_store *s, long i) { return !s->all && s->dev_count > 0 && i >= s->dev_first; }

static double *device_slot(const snap_store *s, long i) {
  return (double *)((unsigned char *)s->pool + (size_t)(i - s->dev_first) * s->dev_slot);
}

/* Device-tier snapshots come last and in order, after every host-bound
 * one was committed: the device keeps the latest. */
int snap_store_put_device(snap_store *s, long i, const snap_grid *g, const double *field) {
  if (!snap_store_on_device(s, i) || i != s->dev_next || s->committed != s->dev_first)
    return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld put on the device tier out of order (expected %ld, %ld of %ld committed)",
                     i, s->dev_next, s->committed, s->dev_first);
  MAPP_TRY(s->cfg.device->put(g, field, device_slot(s, i)));
  entry *e = &s->e[i];
  e->layer = SNAP_LAYER_DEVICE, e->offset = (size_t)(i - s->dev_first) * s->dev_slot, e->stored = s->raw;
  e->codec = SNAP_COMP_NONE; /* compression does not apply to the device tier */
  s->dev_next = i + 1;
  pthread_mutex_lock(&s->mu); /* writers may still be adding their sizes */
  s->stored_total += s->raw;
  pthread_mutex_unlock(&s->mu);
  return MAPP_OK;
}

static int write_index(snap_store *s) {
  long on_disk = 0;
  for (long i = 0; i < s->nsnap; i++) on_disk += s->e[i].layer == SNAP_LAYER_DISK;
  size_t bytes = round_up(sizeof(snap_file_entry) * (size_t)(on_disk ? on_disk : 1));
  snap_file_entry *index;
  MAPP_TRY(aligned_alloc_touched((void **)&index, bytes, "the disk index"));
  long n = 0;
  for (long i = 0; i < s->nsnap; i++) {
    const entry *e = &s->e[i];
    if (e->layer != SNAP_LAYER_DISK) continue;
    index[n++] = (snap_file_entry){.snapshot = i, .offset = (int64_t)e->offset, .stored = (int64_t)e->stored,
                                   .codec = e->codec, .checksum = e->checksum};
  }
  uint64_t sum = snap_checksum(index, sizeof(snap_file_entry) * (size_t)on_disk);
  size_t at = s->file_end;
  int status = write_all(s, index, bytes, at);
  free(index);
  if (status) return thread_status(s);
  /* The index reaches the disk before the header that points at it says
   * complete: a crash in between leaves an incomplete file. */
  if (fdatasync(s->fd)) return mapp_fail(MAPP_ERR_SYSTEM, "disk layer: syncing %s: %s", s->path, strerror(errno));
  if (write_header(s, true, on_disk, at, sum)) return thread_status(s);
  if (fdatasync(s->fd)) return mapp_fail(MAPP_ERR_SYSTEM, "disk layer: syncing %s: %s", s->path, strerror(errno));
  return MAPP_OK;
}

static void *prefetch_main(void *arg);

int snap_store_finish_forward(snap_store *s) {
  if (s->all) return MAPP_OK;
  pthread_mutex_lock(&s->mu);
  pthread_cond_broadcast(&s->cv); /* the writers record what was queued quietly */
  double t0 = mapp_now();
  while (s->place_next < s->committed && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
  s->stall_fw += mapp_now() - t0;
  int status = thread_status(s);
  pthread_mutex_unlock(&s->mu);
  stop_writers(s);
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
  if (s->fd >= 0) MAPP_TRY(write_index(s));
  /* The adjoint's prefetching starts now, while the residual is formed. */
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

/* ------------------------------------------------------------ adjoint */

/* A raw snapshot in the host ring is read where it is, by the adjoint
 * itself: no prefetcher touches it (none is woken for it either). */
static bool read_in_place(const snap_store *s, long i) {
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
    MAPP_TRY(disk_read(s, w, w->io, round_up(e->stored), e->offset));
    w->read_s += mapp_now() - t0;
    if (snap_checksum(w->io, e->stored) != e->checksum) {
      pthread_mutex_lock(&s->mu);
      s->checksum_failures++;
      pthread_mutex_unlock(&s->mu);
      return thread_fail(s, MAPP_ERR_VERIFY, "disk layer: snapshot %ld in %s fails its checksum", i, s->path);
    }
    src = w->io;
  }
  double t0 = mapp_now();
  int status = snap_codec_decompress(w->codec, e->codec, src, e->stored, buf);
  w->decompress_s += mapp_now() - t0;
  if (status) return thread_fail(s, status, "%s", mapp_error_message());
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
    if (read_in_place(s, s->nsnap - 1 - p)) continue;
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

int snap_store_get(snap_store *s, long i, const double **data) {
  if (s->all) {
    *data = s->all + (size_t)i * (size_t)s->g->interior;
    return MAPP_OK;
  }
  long p = s->nsnap - 1 - i;
  if (!s->fetch_started || p != s->released)
    return mapp_fail(MAPP_ERR_SYSTEM, "snapshot %ld read out of reverse order", i);
  if (snap_store_on_device(s, i)) return s->cfg.device->get(device_slot(s, i), data); /* read in place: no host trip */
  if (read_in_place(s, i)) return *data = (const double *)(s->ring + s->e[i].offset), MAPP_OK;
  pthread_mutex_lock(&s->mu);
  double t0 = mapp_now();
  while (s->ready_pos[p % s->depth] != p && !s->err_code) pthread_cond_wait(&s->cv, &s->mu);
  s->stall_bw += mapp_now() - t0;
  int status = thread_status(s);
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

static void stop_fetcher(snap_store *s) {
  if (!s->fetch_started) return;
  pthread_mutex_lock(&s->mu);
  s->fetch_stop = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  for (int t = 0; t < s->fetch_running; t++) pthread_join(s->fetchers[t].thread, NULL);
  s->fetch_started = false, s->fetch_running = 0;
}

/* ------------------------------------------------------------ life cycle */

static int create_workers(snap_store *s) {
  s->nworkers = s->cfg.io_threads > 0 ? s->cfg.io_threads : 1;
  MAPP_TRY(mapp_calloc((void **)&s->workers, (size_t)s->nworkers, sizeof(worker), "the writer threads"));
  MAPP_TRY(mapp_calloc((void **)&s->fetchers, (size_t)s->nworkers, sizeof(worker), "the prefetcher threads"));
  s->io_bytes = round_up(s->bound);
  for (int t = 0; t < 2 * s->nworkers; t++) {
    bool writer = t < s->nworkers;
    worker *w = writer ? &s->workers[t] : &s->fetchers[t - s->nworkers];
    w->s = s, w->id = writer ? t : t - s->nworkers;
    MAPP_TRY(snap_codec_create(&w->codec, &s->cfg, s->g));
    if (s->cfg.compression != SNAP_COMP_NONE && writer)
      MAPP_TRY(aligned_alloc_touched((void **)&w->cbuf, s->bound, "a compression buffer"));
    if (s->cfg.layers & (1u << SNAP_LAYER_DISK) || t == 0)
      MAPP_TRY(aligned_alloc_touched((void **)&w->io, s->io_bytes < SNAP_FILE_HEADER_BYTES ? SNAP_FILE_HEADER_BYTES
                                                                                             : s->io_bytes,
                                     "a disk buffer"));
    /* Where the kernel refuses io_uring (old, or a seccomp filter), the
     * plain calls: the record's disk_io says which ran. */
    if (s->cfg.uring && s->cfg.layers & (1u << SNAP_LAYER_DISK))
      w->has_ring = io_uring_queue_init(URING_PIECES, &w->ring, 0) == 0;
  }
  s->uring = s->workers[0].has_ring;
  for (int t = 0; t < s->nworkers; t++) s->uring = s->uring && s->workers[t].has_ring && s->fetchers[t].has_ring;
  return MAPP_OK;
}

static int create_buffers(snap_store *s) {
  /* In place a snapshot waits in its ring slot: no staging, and at most a
   * ring's worth is queued (acquire waits for a slot's last holder). */
  s->nstage = s->ring_in_place ? 0 : s->nworkers + 1 < 2 ? 2 : s->nworkers + 1; /* at least double buffering */
  s->nqueue = s->ring_in_place ? s->ring_slots : s->nstage;
  s->depth = s->cfg.prefetch_depth > 0 ? s->cfg.prefetch_depth : 2;
  /* + 1: no zero-sized allocation when in place (nstage 0) */
  MAPP_TRY(mapp_calloc((void **)&s->stage, (size_t)s->nstage + 1, sizeof(double *), "staging buffers"));
  MAPP_TRY(mapp_calloc((void **)&s->free_stage, (size_t)s->nstage + 1, sizeof(int), "staging buffers"));
  MAPP_TRY(mapp_calloc((void **)&s->queue_idx, (size_t)s->nqueue, sizeof(long), "the writer queue"));
  MAPP_TRY(mapp_calloc((void **)&s->queue_slot, (size_t)s->nqueue, sizeof(int), "the writer queue"));
  for (int b = 0; b < s->nstage; b++) {
    MAPP_TRY(aligned_alloc_touched((void **)&s->stage[b], s->raw, "a staging buffer"));
    s->free_stage[s->nfree++] = b;
  }
  MAPP_TRY(mapp_calloc((void **)&s->ready, (size_t)s->depth, sizeof(double *), "prefetch buffers"));
  MAPP_TRY(mapp_calloc((void **)&s->ready_ptr, (size_t)s->depth, sizeof(double *), "prefetch buffers"));
  MAPP_TRY(mapp_calloc((void **)&s->ready_pos, (size_t)s->depth, sizeof(long), "prefetch slots"));
  for (int b = 0; b < s->depth; b++) MAPP_TRY(aligned_alloc_touched((void **)&s->ready[b], s->raw, "a prefetch buffer"));
  return MAPP_OK;
}

static int create_ring(snap_store *s) {
  if (!(s->cfg.layers & (1u << SNAP_LAYER_HOST))) return MAPP_OK;
  /* Stored sizes never exceed raw; the device tier's snapshots never come here. */
  size_t need = ring_bytes(s->raw) * (size_t)(s->nsnap - s->dev_count);
  s->ring_cap = s->cfg.budget[SNAP_LAYER_HOST] < need ? s->cfg.budget[SNAP_LAYER_HOST] : need;
  MAPP_TRY(mapp_calloc((void **)&s->resident, (size_t)s->nsnap, sizeof(long), "the host layer's index"));
  if (!s->ring_cap) return MAPP_OK;
  s->ring_slots = (long)(s->ring_cap / ring_bytes(s->raw));
  s->ring_in_place = s->cfg.in_place && s->cfg.compression == SNAP_COMP_NONE && s->ring_slots > 0;
  /* Uncompressed, the ring fills up exactly as sized: touch it now, so
   * no page fault lands in the timed forward. Compressed, its pages are
   * touched only as far as the snapshots reach (resident memory follows
   * the compressed size). */
  if (s->cfg.compression == SNAP_COMP_NONE)
    return aligned_alloc_touched((void **)&s->ring, s->ring_cap, "the host snapshot layer");
  if (posix_memalign((void **)&s->ring, ALIGN, round_up(s->ring_cap)))
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
    return aligned_alloc_touched((void **)&s->all, bytes, "the in-memory snapshots");
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
  if (cfg->layers & (1u << SNAP_LAYER_DISK)) MAPP_TRY(open_disk(s));
  return MAPP_OK;
}

int snap_store_reset(snap_store *s) {
  if (s->all) return MAPP_OK;
  stop_fetcher(s);
  stop_writers(s);
  for (long i = 0; i < s->nsnap; i++) s->e[i] = (entry){.layer = -1};
  s->ring_head = s->ring_tail = s->host_used = 0;
  s->res_first = s->res_count = 0;
  s->committed = s->place_next = 0;
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
    if (write_header(s, false, 0, 0, 0)) return thread_status(s);
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
  stop_fetcher(s);
  stop_writers(s);
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
