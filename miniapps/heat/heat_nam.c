/* The NAM region's writer, compute side: in file mode a file mapped into
 * memory and exposed as an MPI window, each rank putting its blocks of a
 * snapshot into its own subregion; in rank mode the same puts go to the
 * memory rank's window (heat_nam_rank.c has that rank's side). The reader
 * is heat_nam_reader.c; layout and guarantees: heat_nam.h and
 * heat_nam_layout.h. */
#define _GNU_SOURCE /* MADV_POPULATE_WRITE */
#include "heat_nam.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "heat_nam_writer.h"

/* ---------------------------------------------------------------- writer */

int nam_plan_layout(const heat_domain *d, long every, heat_nam_header *h, heat_nam_share *shares) {
  const heat_config *c = &d->cfg;
  *h = (heat_nam_header){.version = HEAT_NAM_VERSION, .rows = (uint64_t)c->rows, .cols = (uint64_t)c->cols,
                         .block_rows = (uint64_t)c->block_rows, .block_cols = (uint64_t)c->block_cols,
                         .steps = (uint64_t)c->steps, .every = (uint64_t)every,
                         .capacity = (uint64_t)(c->steps / every), .nranks = (uint64_t)d->nranks,
                         .nsources = (uint64_t)c->nsources};
  memcpy(h->magic, HEAT_NAM_MAGIC, sizeof h->magic);
  for (int s = 0; s < c->nsources; ++s) {
    const heat_source *src = &c->sources[s];
    double v[4] = {src->row, src->col, src->range, src->temperature};
    memcpy(h->sources[s], v, sizeof v);
  }
  h->header_bytes = nam_align_up(nam_header_area(h->nranks, h->capacity));
  uint64_t offset = h->header_bytes;
  for (int r = 0; r < d->nranks; ++r) {
    mapp_row_share share;
    MAPP_TRY(mapp_share_block_rows(&d->blocking, r, d->nranks, &share));
    uint64_t used = (uint64_t)share.cells.count * h->cols * sizeof(double) * h->capacity;
    shares[r] = (heat_nam_share){.first_row = (uint64_t)share.cells.first,
                                 .row_count = (uint64_t)share.cells.count, .offset = offset,
                                 .bytes = nam_align_up(used)};
    offset += shares[r].bytes;
  }
  h->file_bytes = offset;
  return MAPP_OK;
}

static int map_file(const char *path, int flags, uint64_t offset, size_t bytes, int prot, void **out) {
  int fd = open(path, flags, 0644);
  if (fd < 0)
    return mapp_fail(MAPP_ERR_INPUT, "cannot open NAM region '%s': %s", path, strerror(errno));
  void *map = mmap(NULL, bytes, prot, MAP_SHARED, fd, (off_t)offset);
  int err = errno;
  close(fd); /* the mapping keeps the file */
  if (map == MAP_FAILED)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot map %zu bytes of NAM region '%s': %s", bytes, path, strerror(err));
  *out = map;
  return MAPP_OK;
}

/* Page tables writable now, in setup, so no put of the timestep loop takes
 * a page fault (a NAM is memory that is simply there). MAP_POPULATE is not
 * enough: it maps a shared file's pages read-only, and the first store to
 * each page then faults again so the file system can track it as dirty
 * (ext4, 1024^2 grid: 6.6 ms per 8 MiB snapshot in faults, against 0.4 ms
 * of copying). MADV_POPULATE_WRITE (Linux 5.14) takes those write faults
 * here; older kernels get one store per page. */
static int populate_for_write(void *map, size_t bytes) {
  if (madvise(map, bytes, MADV_POPULATE_WRITE) == 0) return MAPP_OK;
  if (errno != EINVAL)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot populate %zu bytes of the NAM region: %s", bytes, strerror(errno));
  long page = sysconf(_SC_PAGESIZE);
  for (size_t at = 0; at < bytes; at += (size_t)page) ((volatile unsigned char *)map)[at] = 0; /* a fresh file: zeros */
  return MAPP_OK;
}

int nam_sync_map(void *map, size_t bytes, const char *what) {
  if (msync(map, bytes, MS_SYNC) != 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "syncing the NAM region's %s failed: %s", what, strerror(errno));
  return MAPP_OK;
}

/* Truncating first means a failed run can never leave an older region's
 * claims in place. */
int nam_create_file(const char *path, const heat_nam_header *h, const heat_nam_share *shares, heat_nam *n) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return mapp_fail(MAPP_ERR_INPUT, "cannot create NAM region '%s': %s", path, strerror(errno));
  /* Allocated, not sparse: a full disk is this error now, not a SIGBUS on
   * a store into the mapping in the middle of the run. */
  int err = posix_fallocate(fd, 0, (off_t)h->file_bytes);
  close(fd);
  if (err)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot allocate NAM region '%s' of %llu bytes: %s", path,
                     (unsigned long long)h->file_bytes, strerror(err));
  n->head_bytes = (size_t)h->header_bytes;
  MAPP_TRY(map_file(path, O_RDWR, 0, n->head_bytes, PROT_READ | PROT_WRITE, (void **)&n->head));
  memcpy(n->head, h, sizeof *h);
  memcpy(n->head + sizeof *h, shares, h->nranks * sizeof *shares);
  heat_nam_header *live = (heat_nam_header *)n->head;
  live->header_crc = nam_header_checksum(n->head, nam_header_area(h->nranks, h->capacity));
  return nam_sync_map(n->head, n->head_bytes, "header");
}

int nam_agree(MPI_Comm comm, int status) {
  int worst = status;
  MAPP_MPI(MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, comm));
  if (worst != MAPP_OK && status == MAPP_OK) return mapp_fail(worst, "another rank failed on the NAM region");
  return worst;
}

static int expose_window(heat_nam *n) {
  int err = MPI_Win_create(n->sub, (MPI_Aint)n->sub_bytes, sizeof(double), MPI_INFO_NULL, n->comm, &n->win);
  if (err == MPI_SUCCESS) return MAPP_OK;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(err, text, &len);
  /* The usual cause: Open MPI's osc/pt2pt, chosen for a singleton (no
   * mpirun) or when the shared-memory transport has no single-copy
   * mechanism; it fails here, and refuses MPI_THREAD_MULTIPLE (tasks). */
  return mapp_fail(MAPP_ERR_SYSTEM,
                   "MPI_Win_create over the NAM region failed: %s (with Open MPI, exclude the osc/pt2pt "
                   "RMA component: OMPI_MCA_osc=^pt2pt)",
                   text);
}

/* The staging snapshot is touched now, like the region, so the copy-outs
 * take no page faults either. */
static int alloc_buffers(heat_nam *n) {
  size_t elems = (size_t)n->slot_elems, blocks = (size_t)n->part.blocks;
  MAPP_TRY(mapp_calloc((void **)&n->timesteps, (size_t)n->capacity, sizeof(long), "snapshot timesteps"));
  MAPP_TRY(mapp_calloc((void **)&n->crcs, (size_t)n->capacity * blocks, sizeof *n->crcs, "block checksums"));
  MAPP_TRY(mapp_alloc((void **)&n->stage, elems * sizeof(double), "the snapshot staging buffer"));
  memset(n->stage, 0, elems * sizeof(double));
  return MAPP_OK;
}

/* File mode: rank 0 creates the file, every rank maps its subregion and
 * exposes it as its part of the window. */
static int setup_file(heat_nam *n, const char *path, const heat_domain *d, const heat_nam_header *h,
                      const heat_nam_share *shares) {
  int status = d->rank == 0 ? nam_create_file(path, h, shares, n) : MAPP_OK;
  /* Others open the file only once rank 0 has created it. */
  int created = status;
  MPI_Bcast(&created, 1, MPI_INT, 0, n->comm);
  if (created != MAPP_OK && status == MAPP_OK) status = mapp_fail(created, "rank 0 could not create the NAM region");
  if (status == MAPP_OK) {
    n->sub_bytes = (size_t)shares[d->rank].bytes;
    status = map_file(path, O_RDWR, shares[d->rank].offset, n->sub_bytes, PROT_READ | PROT_WRITE, (void **)&n->sub);
  }
  if (status == MAPP_OK) status = populate_for_write(n->sub, n->sub_bytes);
  if (status == MAPP_OK) status = alloc_buffers(n);
  MAPP_TRY(nam_agree(n->comm, status));
  n->target = d->rank;
  return expose_window(n);
}

static int setup(heat_nam *n, const char *path, const heat_domain *d) {
  heat_nam_header h;
  heat_nam_share *shares = NULL;
  MAPP_TRY(mapp_calloc((void **)&shares, (size_t)d->nranks, sizeof *shares, "the NAM layout"));
  int status = nam_plan_layout(d, n->opt.every, &h, shares);
  if (n->opt.mode == HEAT_NAM_RANK) {
    if (status == MAPP_OK) status = alloc_buffers(n);
    /* The memory rank waits for the layout whatever happened here. */
    status = nam_rank_attach(n, status, &h, shares);
  } else if (status == MAPP_OK) {
    status = setup_file(n, path, d, &h, shares);
  }
  free(shares);
  return status;
}

void heat_nam_cancel(MPI_Comm comm, MPI_Comm world, int status) {
  heat_nam none = {.comm = comm, .world = world, .win = MPI_WIN_NULL};
  MPI_Comm_rank(comm, &none.rank);
  nam_rank_attach(&none, status, NULL, NULL);
}

int heat_nam_create(const char *path, const heat_domain *d, MPI_Comm world, const heat_nam_options *opt,
                    heat_nam **out) {
  *out = NULL;
  long every = opt->every;
  int status = MAPP_OK;
  if (every < 1 || every > d->cfg.steps)
    status = mapp_fail(MAPP_ERR_INPUT, "--snapshot-every %ld: must be between 1 and the %ld timesteps", every,
                       d->cfg.steps);
  else if (d->cfg.block_rows > INT_MAX / d->cfg.block_cols)
    status = mapp_fail(MAPP_ERR_INPUT, "blocks of %ld x %ld cells are too large for one MPI_Put", d->cfg.block_rows,
                       d->cfg.block_cols);
  heat_nam *n = NULL;
  if (status == MAPP_OK) status = mapp_calloc((void **)&n, 1, sizeof *n, "the NAM region");
  if (status != MAPP_OK) {
    /* The memory rank waits for a layout: tell it there is none. */
    if (opt->mode == HEAT_NAM_RANK) heat_nam_cancel(d->comm, world, status);
    return status;
  }
  *n = (heat_nam){.opt = *opt, .comm = d->comm, .world = world, .rank = d->rank, .nranks = d->nranks,
                  .win = MPI_WIN_NULL, .capacity = d->cfg.steps / every, .slot_elems = d->local_rows * d->cfg.cols,
                  .part = nam_shape_of((uint64_t)d->local_rows, (uint64_t)d->cfg.cols, (uint64_t)d->cfg.block_rows,
                                       (uint64_t)d->cfg.block_cols)};
  status = setup(n, path, d);
  if (status != MAPP_OK) {
    heat_nam_free(n);
    return status;
  }
  *out = n;
  return MAPP_OK;
}

void heat_nam_free(heat_nam *n) {
  if (!n) return;
  nam_rank_stop_guard(n);
  if (n->win != MPI_WIN_NULL) MPI_Win_free(&n->win);
  if (n->sub) munmap(n->sub, n->sub_bytes);
  if (n->head) munmap(n->head, n->head_bytes);
  free(n->timesteps);
  free(n->crcs);
  free(n->stage);
  free(n);
}

bool heat_nam_due(const heat_nam *n, long t) { return n && t % n->opt.every == 0; }

long heat_nam_claim_slot(heat_nam *n, long t) {
  n->timesteps[n->count] = t;
  return n->count++;
}

/* Block b's place in the rank's grid: interior cells start at row 1, col 1. */
static double *grid_cells(const heat_domain *d, const part_block *k) {
  return d->grid + (k->row0 + 1) * d->stride + k->col0 + 1;
}

void heat_nam_stage_block(heat_nam *n, const heat_domain *d, long b) {
  part_block k = nam_block_of(&n->part, b);
  nam_copy_block(&k, n->stage + k.at, k.cols, grid_cells(d, &k), d->stride);
}

/* The checksum comes from the staged copy while it is in cache, not from a
 * pass over the region afterwards, and per block, so the tasks that put
 * the blocks compute it in parallel; heat_nam_finish combines them. Both
 * sides of the put are contiguous: Open MPI's datatype engine moved a
 * strided 128^2 block at a quarter of memcpy's speed (1.5 against 0.3 ms
 * per 8 MiB snapshot), so packing it first (copy-out) and putting it whole
 * costs less than one strided put. */
int heat_nam_put_block(heat_nam *n, long slot, long b, MPI_Request *req) {
  part_block k = nam_block_of(&n->part, b);
  const double *origin = n->stage + k.at;
  int count = (int)(k.rows * k.cols);
  if (n->opt.checksum)
    n->crcs[slot * n->part.blocks + b] = crc32_z(0, (const unsigned char *)origin, (size_t)count * sizeof(double));
  MPI_Aint disp = n->base + (MPI_Aint)((size_t)slot * (size_t)n->slot_elems + k.at);
  if (req)
    MAPP_MPI(MPI_Rput(origin, count, MPI_DOUBLE, n->target, disp, count, MPI_DOUBLE, n->win, req));
  else
    MAPP_MPI(MPI_Put(origin, count, MPI_DOUBLE, n->target, disp, count, MPI_DOUBLE, n->win));
  return MAPP_OK;
}

/* A passive-target epoch on the rank that holds this rank's subregion: its
 * own window, exclusively (file mode), or the memory rank's, shared: every
 * compute rank holds one at once and none conflicts (each writes its own
 * subregion), so NOCHECK spares the lock's messages (rank mode). */
static int lock_target(heat_nam *n) {
  if (n->opt.mode == HEAT_NAM_RANK) MAPP_MPI(MPI_Win_lock(MPI_LOCK_SHARED, n->target, MPI_MODE_NOCHECK, n->win));
  else MAPP_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, n->target, 0, n->win));
  return MAPP_OK;
}

static int unlock_target(heat_nam *n) {
  MAPP_MPI(MPI_Win_unlock(n->target, n->win));
  return MAPP_OK;
}

/* One rank's blocks of snapshot `slot`, copied out and put, in the epoch
 * the caller opened. */
static int put_blocks(heat_nam *n, heat_domain *d, long slot) {
  for (long b = 0; b < n->part.blocks; ++b) {
    heat_nam_stage_block(n, d, b);
    MAPP_TRY(heat_nam_put_block(n, slot, b, NULL));
  }
  return MAPP_OK;
}

/* The seed's epoch per snapshot: every rank targets only its own subregion
 * (the NAM subregion addressed by its rank). In rank mode the memory rank's
 * guard times the whole epoch: a put may wait for it too where the network
 * needs its progress. */
int heat_nam_save_if_due(heat_nam *n, heat_domain *d, long t, mapp_timers *timers) {
  if (!heat_nam_due(n, t)) return MAPP_OK;
  mapp_timer_start(timers, MAPP_PHASE_IO);
  long slot = heat_nam_claim_slot(n, t);
  int status;
  if (n->opt.mode == HEAT_NAM_RANK) {
    nam_rank_wait_begin(n, "a snapshot's epoch");
    status = lock_target(n);
    if (status == MAPP_OK) status = put_blocks(n, d, slot);
    if (status == MAPP_OK) status = unlock_target(n);
    nam_rank_wait_end(n);
  } else {
    status = mapp_mpi_check(MPI_Win_fence(MPI_MODE_NOPRECEDE, n->win), "MPI_Win_fence");
    if (status == MAPP_OK) status = put_blocks(n, d, slot);
    if (status == MAPP_OK) status = mapp_mpi_check(MPI_Win_fence(MPI_MODE_NOSUCCEED, n->win), "MPI_Win_fence");
  }
  mapp_timer_stop(timers, MAPP_PHASE_IO);
  return status;
}

/* The task variant's epoch: the guard (rank mode) around each call. */
int heat_nam_lock(heat_nam *n) {
  nam_rank_wait_begin(n, "opening a snapshot's epoch");
  int status = lock_target(n);
  nam_rank_wait_end(n);
  return status;
}

int heat_nam_unlock(heat_nam *n) {
  nam_rank_wait_begin(n, "closing a snapshot's epoch");
  int status = unlock_target(n);
  nam_rank_wait_end(n);
  return status;
}

int nam_publish(heat_nam *n, const long *timesteps, long count, const uint32_t *crcs) {
  heat_nam_header *h = (heat_nam_header *)n->head;
  const heat_nam_share *shares = (const heat_nam_share *)(n->head + sizeof *h);
  heat_nam_snapshot *snaps = (heat_nam_snapshot *)(n->head + sizeof *h + h->nranks * sizeof *shares);
  for (long s = 0; s < count; ++s) {
    uLong crc = crcs[s];
    for (uint64_t r = 1; r < h->nranks; ++r)
      crc = crc32_combine(crc, crcs[r * (size_t)count + (size_t)s],
                          (z_off_t)(shares[r].row_count * h->cols * sizeof(double)));
    snaps[s] = (heat_nam_snapshot){.timestep = (uint64_t)timesteps[s], .crc = crc};
  }
  MAPP_TRY(nam_sync_map(n->head, n->head_bytes, "snapshot table"));
  h->saved = (uint64_t)count;
  h->header_crc = nam_header_checksum(n->head, nam_header_area(h->nranks, h->capacity));
  return nam_sync_map(n->head, n->head_bytes, "header");
}

uint32_t nam_slot_checksum(const part_shape *part, const uLong *block_crc) {
  uLong crc = 0;
  for (long b = 0; b < part->blocks; ++b) {
    part_block k = nam_block_of(part, b);
    crc = crc32_combine(crc, block_crc[b], (z_off_t)((size_t)(k.rows * k.cols) * sizeof(double)));
  }
  return (uint32_t)crc;
}

/* --nam-checksum none in file mode: the blocks' CRCs from the region, once,
 * after the run (the puts skipped them). */
static void checksum_region(heat_nam *n) {
  for (long s = 0; s < n->count; ++s)
    for (long b = 0; b < n->part.blocks; ++b) {
      part_block k = nam_block_of(&n->part, b);
      const double *stored = n->sub + (size_t)s * (size_t)n->slot_elems + k.at;
      n->crcs[s * n->part.blocks + b] =
          crc32_z(0, (const unsigned char *)stored, (size_t)(k.rows * k.cols) * sizeof(double));
    }
}

static int finish_file(heat_nam *n) {
  uint32_t *mine = NULL, *all = NULL;
  int status = nam_sync_map(n->sub, n->sub_bytes, "snapshots");
  if (status == MAPP_OK && !n->opt.checksum) checksum_region(n);
  if (status == MAPP_OK) status = mapp_calloc((void **)&mine, (size_t)n->count + 1, sizeof *mine, "snapshot checksums");
  if (status == MAPP_OK && n->rank == 0)
    status = mapp_calloc((void **)&all, (size_t)n->nranks * (size_t)n->count + 1, sizeof *all, "snapshot checksums");
  for (long s = 0; status == MAPP_OK && s < n->count; ++s)
    mine[s] = nam_slot_checksum(&n->part, n->crcs + s * n->part.blocks);
  status = nam_agree(n->comm, status);
  if (status == MAPP_OK)
    status = mapp_mpi_check(MPI_Gather(mine, (int)n->count, MPI_UINT32_T, all, (int)n->count, MPI_UINT32_T, 0,
                                       n->comm), "MPI_Gather of snapshot checksums");
  if (status == MAPP_OK && n->rank == 0) status = nam_publish(n, n->timesteps, n->count, all);
  free(mine);
  free(all);
  return nam_agree(n->comm, status);
}

int heat_nam_finish(heat_nam *n, int status) {
  if (n->opt.mode == HEAT_NAM_RANK) return nam_rank_finish(n, status);
  return status == MAPP_OK ? finish_file(n) : status;
}
