/* The snapshot store's disk layer: one file per rank, written and read
 * with pwrite/pread or, under --disk-io uring, each worker's own io_uring;
 * the file's header and index, and the checksums that guard both and every
 * snapshot. */
#define _GNU_SOURCE /* O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snap_store_internal.h"

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

/* The disk layer's failures, worded alike whichever call failed. */
static int write_failed(snap_store *s, size_t written, const char *why) {
  return store_thread_fail(s, MAPP_ERR_SYSTEM, "disk layer: writing %s failed after %zu bytes written: %s", s->path,
                           written, why);
}

static int read_failed(snap_store *s, size_t at, const char *why) {
  return store_thread_fail(s, MAPP_ERR_SYSTEM, "disk layer: reading %s at byte %zu failed: %s", s->path, at, why);
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

/* One snapshot's bytes through worker w's io_uring: STORE_URING_PIECES aligned
 * pieces submitted together, all reaped; a piece the kernel moved only in
 * part is finished synchronously. Errors read as write_all's/read_all's. */
static int uring_transfer(snap_store *s, worker *w, bool write, void *buf, size_t bytes, size_t offset) {
  size_t piece = store_round_up((bytes + STORE_URING_PIECES - 1) / STORE_URING_PIECES);
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
    return store_thread_fail(s, MAPP_ERR_SYSTEM, "disk layer: io_uring took %d of %d requests for %s: %s", submitted, n,
                             s->path, submitted < 0 ? strerror(-submitted) : "short submit");
  int status = MAPP_OK;
  for (int k = 0; k < n; k++) {
    struct io_uring_cqe *cqe;
    int r = io_uring_wait_cqe(&w->ring, &cqe);
    if (r < 0) /* nothing was reaped: the ring cannot go on (the run fails with it) */
      return store_thread_fail(s, MAPP_ERR_SYSTEM, "disk layer: waiting for io_uring on %s: %s", s->path, strerror(-r));
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

int store_disk_read(snap_store *s, worker *w, void *buf, size_t bytes, size_t offset) {
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

int store_write_header(snap_store *s, bool complete, long on_disk, size_t index_offset, uint64_t index_checksum) {
  unsigned char *block = s->workers[0].io; /* the writers are idle whenever the header is written */
  memset(block, 0, SNAP_FILE_HEADER_BYTES);
  fill_header(s, (snap_file_header *)block, complete, on_disk, index_offset, index_checksum);
  return write_all(s, block, SNAP_FILE_HEADER_BYTES, 0);
}

int store_open_disk(snap_store *s) {
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
  if (store_write_header(s, false, 0, 0, 0)) return store_thread_status(s);
  return MAPP_OK;
}

/* One stored snapshot appended to the file (the placer's turn is held). */
int store_disk_put(snap_store *s, worker *w, long i, const void *data, size_t stored, uint32_t codec) {
  if (!(s->cfg.layers & (1u << SNAP_LAYER_DISK)))
    return store_thread_fail(s, MAPP_ERR_INPUT,
                             "snapshot layers are full at snapshot %ld of %ld: the budgets hold %zu bytes; use "
                             "--recompute or larger budgets",
                             i + 1, s->nsnap, s->cfg.budget[SNAP_LAYER_HOST]);
  size_t padded = store_round_up(stored);
  if (s->disk_used + padded > s->cfg.budget[SNAP_LAYER_DISK])
    return store_thread_fail(s, MAPP_ERR_INPUT,
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

int store_write_index(snap_store *s) {
  long on_disk = 0;
  for (long i = 0; i < s->nsnap; i++) on_disk += s->e[i].layer == SNAP_LAYER_DISK;
  size_t bytes = store_round_up(sizeof(snap_file_entry) * (size_t)(on_disk ? on_disk : 1));
  snap_file_entry *index;
  MAPP_TRY(store_aligned_alloc_touched((void **)&index, bytes, "the disk index"));
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
  if (status) return store_thread_status(s);
  /* The index reaches the disk before the header that points at it says
   * complete: a crash in between leaves an incomplete file. */
  if (fdatasync(s->fd)) return mapp_fail(MAPP_ERR_SYSTEM, "disk layer: syncing %s: %s", s->path, strerror(errno));
  if (store_write_header(s, true, on_disk, at, sum)) return store_thread_status(s);
  if (fdatasync(s->fd)) return mapp_fail(MAPP_ERR_SYSTEM, "disk layer: syncing %s: %s", s->path, strerror(errno));
  return MAPP_OK;
}
