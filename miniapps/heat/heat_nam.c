/* The NAM region: a file mapped into memory and exposed as an MPI window
 * (writer), and its validating reader. Layout and guarantees: heat_nam.h. */
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

/* Subregions start at multiples of this, so each rank maps only its own
 * (mmap offsets must be page multiples; 64 KiB covers every page size). */
#define HEAT_NAM_ALIGN 65536u

/* A rank's part of a snapshot: its rows, cut into blocks (layout below). */
typedef struct {
  long rows, cols, block_rows, block_cols;
  long nbc, blocks; /* block columns, blocks */
} part_shape;

/* Block b of a part: its cells relative to the part's first interior cell,
 * and `at`, its offset in doubles in the part's snapshot. */
typedef struct {
  long row0, rows, col0, cols;
  size_t at;
} part_block;

struct heat_nam {
  MPI_Comm comm;
  int rank, nranks;
  MPI_Win win;
  double *sub; /* this rank's subregion, mapped */
  size_t sub_bytes;
  unsigned char *head; /* rank 0: the header area, mapped */
  size_t head_bytes;
  long every, capacity, count;
  long *timesteps;  /* of each claimed slot */
  part_shape part;  /* this rank's blocks */
  long slot_elems;  /* doubles of one snapshot of this rank */
  double *stage;    /* one snapshot in the slot's layout: the puts' origin */
  uLong *crcs;      /* capacity x blocks: CRC-32 of each block as put */
};

static uint64_t align_up(uint64_t x) { return (x + HEAT_NAM_ALIGN - 1) / HEAT_NAM_ALIGN * HEAT_NAM_ALIGN; }

static uint64_t header_area(uint64_t nranks, uint64_t capacity) {
  return sizeof(heat_nam_header) + nranks * sizeof(heat_nam_share) + capacity * sizeof(heat_nam_snapshot);
}

/* CRC-32 of the header area with its header_crc field taken as zero. */
static uint64_t header_checksum(const unsigned char *area, size_t len) {
  static const unsigned char zero[sizeof(uint64_t)];
  size_t at = offsetof(heat_nam_header, header_crc);
  uLong crc = crc32_z(0, area, at);
  crc = crc32_z(crc, zero, sizeof zero);
  return crc32_z(crc, area + at + sizeof zero, len - at - sizeof zero);
}

/* ------------------------------------------------- a rank's part, by block */

/* The blocks of a rank's part (its rows of the grid), in block order (block
 * rows top down, left to right in each). In a snapshot each block is
 * contiguous and row-major, at the offset where the blocks before it end,
 * so a block row of `rows` rows holds rows x cols doubles and block (i, j)
 * starts at row0 x cols + rows x col0. Writer and reader both place blocks
 * with part_block, the one place the layout lives. */
static part_shape shape_of(uint64_t rows, uint64_t cols, uint64_t block_rows, uint64_t block_cols) {
  part_shape p = {.rows = (long)rows, .cols = (long)cols, .block_rows = (long)block_rows,
                  .block_cols = (long)block_cols};
  p.nbc = (p.cols + p.block_cols - 1) / p.block_cols;
  p.blocks = (p.rows + p.block_rows - 1) / p.block_rows * p.nbc;
  return p;
}

static part_block block_of(const part_shape *p, long b) {
  part_block k = {.row0 = b / p->nbc * p->block_rows, .col0 = b % p->nbc * p->block_cols};
  k.rows = p->rows - k.row0 < p->block_rows ? p->rows - k.row0 : p->block_rows;
  k.cols = p->cols - k.col0 < p->block_cols ? p->cols - k.col0 : p->block_cols;
  k.at = (size_t)(k.row0 * p->cols + k.rows * k.col0);
  return k;
}

/* The block's rows between two row strides: the writer packs a block of
 * the grid (stride cols + 2) into its snapshot place (stride k->cols), the
 * reader unpacks it into the frame. */
static void copy_block(const part_block *k, double *dst, long dst_stride, const double *src, long src_stride) {
  for (long r = 0; r < k->rows; ++r)
    memcpy(dst + r * dst_stride, src + r * src_stride, (size_t)k->cols * sizeof(double));
}

/* ---------------------------------------------------------------- writer */

/* The header and every rank's share for d's run: the same on every rank,
 * computed from the decomposition rather than communicated. */
static int plan_layout(const heat_domain *d, long every, heat_nam_header *h, heat_nam_share *shares) {
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
  h->header_bytes = align_up(header_area(h->nranks, h->capacity));
  uint64_t offset = h->header_bytes;
  for (int r = 0; r < d->nranks; ++r) {
    mapp_row_share share;
    MAPP_TRY(mapp_share_block_rows(&d->blocking, r, d->nranks, &share));
    uint64_t used = (uint64_t)share.cells.count * h->cols * sizeof(double) * h->capacity;
    shares[r] = (heat_nam_share){.first_row = (uint64_t)share.cells.first,
                                 .row_count = (uint64_t)share.cells.count, .offset = offset,
                                 .bytes = align_up(used)};
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

static int sync_map(void *map, size_t bytes, const char *what) {
  if (msync(map, bytes, MS_SYNC) != 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "syncing the NAM region's %s failed: %s", what, strerror(errno));
  return MAPP_OK;
}

/* Rank 0: a fresh file of the full size whose header claims no snapshot.
 * Truncating first means a failed run can never leave an older region's
 * claims in place. */
static int create_file(const char *path, const heat_nam_header *h, const heat_nam_share *shares, heat_nam *n) {
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
  live->header_crc = header_checksum(n->head, header_area(h->nranks, h->capacity));
  return sync_map(n->head, n->head_bytes, "header");
}

/* The worst status over the ranks; a rank that did not fail itself names
 * the cause so every rank returns a message. */
static int agree_status(MPI_Comm comm, int status) {
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

static int setup(heat_nam *n, const char *path, const heat_domain *d, long every) {
  heat_nam_header h;
  heat_nam_share *shares = NULL;
  MAPP_TRY(mapp_calloc((void **)&shares, (size_t)d->nranks, sizeof *shares, "the NAM layout"));
  int status = plan_layout(d, every, &h, shares);
  if (status == MAPP_OK && d->rank == 0) status = create_file(path, &h, shares, n);
  /* Others open the file only once rank 0 has created it. */
  int created = status;
  MPI_Bcast(&created, 1, MPI_INT, 0, n->comm);
  if (created != MAPP_OK && status == MAPP_OK) status = mapp_fail(created, "rank 0 could not create the NAM region");
  if (status == MAPP_OK) {
    n->sub_bytes = (size_t)shares[d->rank].bytes;
    status = map_file(path, O_RDWR, shares[d->rank].offset, n->sub_bytes, PROT_READ | PROT_WRITE, (void **)&n->sub);
  }
  free(shares);
  if (status == MAPP_OK) status = populate_for_write(n->sub, n->sub_bytes);
  if (status == MAPP_OK) status = alloc_buffers(n);
  MAPP_TRY(agree_status(n->comm, status));
  return expose_window(n);
}

int heat_nam_create(const char *path, const heat_domain *d, long every, heat_nam **out) {
  *out = NULL;
  if (every < 1 || every > d->cfg.steps)
    return mapp_fail(MAPP_ERR_INPUT, "--snapshot-every %ld: must be between 1 and the %ld timesteps", every,
                     d->cfg.steps);
  if (d->cfg.block_rows > INT_MAX / d->cfg.block_cols)
    return mapp_fail(MAPP_ERR_INPUT, "blocks of %ld x %ld cells are too large for one MPI_Put", d->cfg.block_rows,
                     d->cfg.block_cols);
  heat_nam *n;
  MAPP_TRY(mapp_calloc((void **)&n, 1, sizeof *n, "the NAM region"));
  *n = (heat_nam){.comm = d->comm, .rank = d->rank, .nranks = d->nranks, .win = MPI_WIN_NULL,
                  .every = every, .capacity = d->cfg.steps / every,
                  .slot_elems = d->local_rows * d->cfg.cols,
                  .part = shape_of((uint64_t)d->local_rows, (uint64_t)d->cfg.cols, (uint64_t)d->cfg.block_rows,
                                   (uint64_t)d->cfg.block_cols)};
  int status = setup(n, path, d, every);
  if (status != MAPP_OK) {
    heat_nam_free(n);
    return status;
  }
  *out = n;
  return MAPP_OK;
}

void heat_nam_free(heat_nam *n) {
  if (!n) return;
  if (n->win != MPI_WIN_NULL) MPI_Win_free(&n->win);
  if (n->sub) munmap(n->sub, n->sub_bytes);
  if (n->head) munmap(n->head, n->head_bytes);
  free(n->timesteps);
  free(n->crcs);
  free(n->stage);
  free(n);
}

bool heat_nam_due(const heat_nam *n, long t) { return n && t % n->every == 0; }

long heat_nam_claim_slot(heat_nam *n, long t) {
  n->timesteps[n->count] = t;
  return n->count++;
}

/* Block b's place in the rank's grid: interior cells start at row 1, col 1. */
static double *grid_cells(const heat_domain *d, const part_block *k) {
  return d->grid + (k->row0 + 1) * d->stride + k->col0 + 1;
}

void heat_nam_stage_block(heat_nam *n, const heat_domain *d, long b) {
  part_block k = block_of(&n->part, b);
  copy_block(&k, n->stage + k.at, k.cols, grid_cells(d, &k), d->stride);
}

/* The checksum comes from the staged copy while it is in cache, not from a
 * pass over the region afterwards, and per block, so the tasks that put
 * the blocks compute it in parallel; heat_nam_finish combines them. Both
 * sides of the put are contiguous: Open MPI's datatype engine moved a
 * strided 128^2 block at a quarter of memcpy's speed (1.5 against 0.3 ms
 * per 8 MiB snapshot), so packing it first (copy-out) and putting it whole
 * costs less than one strided put. */
int heat_nam_put_block(heat_nam *n, long slot, long b, MPI_Request *req) {
  part_block k = block_of(&n->part, b);
  const double *origin = n->stage + k.at;
  int count = (int)(k.rows * k.cols);
  n->crcs[slot * n->part.blocks + b] = crc32_z(0, (const unsigned char *)origin, (size_t)count * sizeof(double));
  MPI_Aint disp = (MPI_Aint)((size_t)slot * (size_t)n->slot_elems + k.at);
  if (req)
    MAPP_MPI(MPI_Rput(origin, count, MPI_DOUBLE, n->rank, disp, count, MPI_DOUBLE, n->win, req));
  else
    MAPP_MPI(MPI_Put(origin, count, MPI_DOUBLE, n->rank, disp, count, MPI_DOUBLE, n->win));
  return MAPP_OK;
}

/* The seed's epoch per snapshot: every rank targets only its own subregion
 * (the NAM subregion addressed by its rank). */
int heat_nam_save_if_due(heat_nam *n, heat_domain *d, long t, mapp_timers *timers) {
  if (!heat_nam_due(n, t)) return MAPP_OK;
  mapp_timer_start(timers, MAPP_PHASE_IO);
  long slot = heat_nam_claim_slot(n, t);
  MAPP_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, n->win));
  for (long b = 0; b < n->part.blocks; ++b) {
    heat_nam_stage_block(n, d, b);
    MAPP_TRY(heat_nam_put_block(n, slot, b, NULL));
  }
  MAPP_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, n->win));
  mapp_timer_stop(timers, MAPP_PHASE_IO);
  return MAPP_OK;
}

int heat_nam_lock(heat_nam *n) {
  MAPP_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, n->rank, 0, n->win));
  return MAPP_OK;
}

int heat_nam_unlock(heat_nam *n) {
  MAPP_MPI(MPI_Win_unlock(n->rank, n->win));
  return MAPP_OK;
}

/* Rank 0: the snapshot table (CRCs of the ranks' parts combined in rank
 * order), synced, and only then the count, so the count never covers data
 * that is not in the file. */
static int publish(heat_nam *n, const uint32_t *crcs) {
  heat_nam_header *h = (heat_nam_header *)n->head;
  const heat_nam_share *shares = (const heat_nam_share *)(n->head + sizeof *h);
  heat_nam_snapshot *snaps = (heat_nam_snapshot *)(n->head + sizeof *h + h->nranks * sizeof *shares);
  for (long s = 0; s < n->count; ++s) {
    uLong crc = crcs[s];
    for (int r = 1; r < n->nranks; ++r)
      crc = crc32_combine(crc, crcs[(size_t)r * (size_t)n->count + (size_t)s],
                          (z_off_t)(shares[r].row_count * h->cols * sizeof(double)));
    snaps[s] = (heat_nam_snapshot){.timestep = (uint64_t)n->timesteps[s], .crc = crc};
  }
  MAPP_TRY(sync_map(n->head, n->head_bytes, "snapshot table"));
  h->saved = (uint64_t)n->count;
  h->header_crc = header_checksum(n->head, header_area(h->nranks, h->capacity));
  return sync_map(n->head, n->head_bytes, "header");
}

/* The CRC-32 of slot s as stored: its blocks' CRCs combined in block
 * (= storage) order. */
static uint32_t slot_checksum(const heat_nam *n, long s) {
  const uLong *block_crc = n->crcs + s * n->part.blocks;
  uLong crc = 0;
  for (long b = 0; b < n->part.blocks; ++b) {
    part_block k = block_of(&n->part, b);
    crc = crc32_combine(crc, block_crc[b], (z_off_t)((size_t)(k.rows * k.cols) * sizeof(double)));
  }
  return (uint32_t)crc;
}

int heat_nam_finish(heat_nam *n) {
  uint32_t *mine = NULL, *all = NULL;
  int status = sync_map(n->sub, n->sub_bytes, "snapshots");
  if (status == MAPP_OK) status = mapp_calloc((void **)&mine, (size_t)n->count + 1, sizeof *mine, "snapshot checksums");
  if (status == MAPP_OK && n->rank == 0)
    status = mapp_calloc((void **)&all, (size_t)n->nranks * (size_t)n->count + 1, sizeof *all, "snapshot checksums");
  for (long s = 0; status == MAPP_OK && s < n->count; ++s) mine[s] = slot_checksum(n, s);
  status = agree_status(n->comm, status);
  if (status == MAPP_OK)
    status = mapp_mpi_check(MPI_Gather(mine, (int)n->count, MPI_UINT32_T, all, (int)n->count, MPI_UINT32_T, 0,
                                       n->comm), "MPI_Gather of snapshot checksums");
  if (status == MAPP_OK && n->rank == 0) status = publish(n, all);
  free(mine);
  free(all);
  return agree_status(n->comm, status);
}

/* ---------------------------------------------------------------- reader */

static int check_header(const heat_nam_region *r, const char *path) {
  const heat_nam_header *h = &r->h;
  if (memcmp(h->magic, HEAT_NAM_MAGIC, sizeof h->magic) != 0)
    return mapp_fail(MAPP_ERR_INPUT, "'%s' is not a mapp NAM region (bad magic)", path);
  if (h->version != HEAT_NAM_VERSION)
    return mapp_fail(MAPP_ERR_INPUT, "'%s' is NAM region version %llu, this build reads %d", path,
                     (unsigned long long)h->version, HEAT_NAM_VERSION);
  bool sane = h->rows >= 1 && h->cols >= 1 && h->rows < (1ull << 40) && h->cols < (1ull << 40) &&
              h->nranks >= 1 && h->nranks <= h->rows && h->capacity >= 1 && h->capacity <= h->steps &&
              h->capacity < (1ull << 32) && h->nsources <= HEAT_MAX_SOURCES &&
              h->header_bytes == align_up(header_area(h->nranks, h->capacity));
  if (!sane) return mapp_fail(MAPP_ERR_INPUT, "'%s': the NAM region header is corrupted", path);
  if (r->bytes < h->header_bytes || r->bytes < h->file_bytes)
    return mapp_fail(MAPP_ERR_INPUT, "'%s' is truncated: %zu bytes, its header says %llu", path, r->bytes,
                     (unsigned long long)(h->file_bytes > h->header_bytes ? h->file_bytes : h->header_bytes));
  if (header_checksum(r->map, header_area(h->nranks, h->capacity)) != h->header_crc)
    return mapp_fail(MAPP_ERR_INPUT, "'%s': the NAM region header fails its checksum", path);
  if (h->saved == 0)
    return mapp_fail(MAPP_ERR_INPUT, "'%s' holds no complete snapshot (the run writing it did not finish)", path);
  if (h->saved > h->capacity)
    return mapp_fail(MAPP_ERR_INPUT, "'%s' claims %llu snapshots in %llu slots", path,
                     (unsigned long long)h->saved, (unsigned long long)h->capacity);
  return MAPP_OK;
}

/* The ranks' rows tile the grid in order and their subregions hold them. */
static int check_shares(const heat_nam_region *r, const char *path) {
  const heat_nam_header *h = &r->h;
  uint64_t next_row = 0;
  for (uint64_t k = 0; k < h->nranks; ++k) {
    const heat_nam_share *s = &r->shares[k];
    bool ok = s->first_row == next_row && s->row_count >= 1 &&
              s->bytes >= s->row_count * h->cols * sizeof(double) * h->capacity &&
              s->offset >= h->header_bytes && s->offset + s->bytes <= h->file_bytes;
    if (!ok) return mapp_fail(MAPP_ERR_INPUT, "'%s': the share of rank %llu is corrupted", path, (unsigned long long)k);
    next_row += s->row_count;
  }
  if (next_row != h->rows)
    return mapp_fail(MAPP_ERR_INPUT, "'%s': the ranks' rows cover %llu of %llu rows", path,
                     (unsigned long long)next_row, (unsigned long long)h->rows);
  return MAPP_OK;
}

int heat_nam_open(const char *path, heat_nam_region *r) {
  *r = (heat_nam_region){0};
  int fd = open(path, O_RDONLY);
  if (fd < 0) return mapp_fail(MAPP_ERR_INPUT, "cannot open NAM region '%s': %s", path, strerror(errno));
  struct stat st;
  int err = fstat(fd, &st) != 0 ? errno : 0;
  if (!err && (size_t)st.st_size < sizeof r->h) {
    close(fd);
    return mapp_fail(MAPP_ERR_INPUT, "'%s' is truncated: %lld bytes, smaller than a NAM region header", path,
                     (long long)st.st_size);
  }
  void *map = err ? MAP_FAILED : mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED && !err) err = errno;
  close(fd);
  if (err) return mapp_fail(MAPP_ERR_INPUT, "cannot read NAM region '%s': %s", path, strerror(err));
  r->map = map;
  r->bytes = (size_t)st.st_size;
  memcpy(&r->h, r->map, sizeof r->h);
  int status = check_header(r, path);
  if (status == MAPP_OK) {
    r->shares = (const heat_nam_share *)(r->map + sizeof r->h);
    r->snapshots = (const heat_nam_snapshot *)(r->shares + r->h.nranks);
    status = check_shares(r, path);
  }
  if (status != MAPP_OK) heat_nam_close(r);
  return status;
}

void heat_nam_close(heat_nam_region *r) {
  if (r->map) munmap((void *)r->map, r->bytes);
  r->map = NULL;
}

void heat_nam_config(const heat_nam_region *r, heat_config *cfg) {
  const heat_nam_header *h = &r->h;
  *cfg = (heat_config){.rows = (long)h->rows, .cols = (long)h->cols, .block_rows = (long)h->block_rows,
                       .block_cols = (long)h->block_cols, .steps = (long)h->steps, .nsources = (int)h->nsources};
  for (int s = 0; s < cfg->nsources; ++s)
    cfg->sources[s] = (heat_source){.row = h->sources[s][0], .col = h->sources[s][1],
                                    .range = h->sources[s][2], .temperature = h->sources[s][3]};
}

int heat_nam_frame(const heat_nam_region *r, long s, double *matrix) {
  heat_config cfg;
  heat_nam_config(r, &cfg);
  long width = cfg.cols + 2;
  for (long gr = 0; gr < cfg.rows + 2; ++gr) {
    bool edge = gr == 0 || gr == cfg.rows + 1;
    for (long gc = 0; gc < width; gc += edge ? 1 : width - 1)
      matrix[gr * width + gc] = heat_boundary_value(&cfg, gr, gc);
  }
  /* The snapshot's CRC is over the ranks' parts in rank order, as stored:
   * one running CRC over them. */
  uLong crc = 0;
  for (uint64_t k = 0; k < r->h.nranks; ++k) {
    const heat_nam_share *sh = &r->shares[k];
    part_shape p = shape_of(sh->row_count, r->h.cols, r->h.block_rows, r->h.block_cols);
    const double *part = (const double *)(r->map + sh->offset) + (size_t)s * sh->row_count * r->h.cols;
    crc = crc32_z(crc, (const unsigned char *)part, sh->row_count * r->h.cols * sizeof(double));
    double *cells = matrix + (long)(sh->first_row + 1) * width + 1;
    for (long b = 0; b < p.blocks; ++b) {
      part_block blk = block_of(&p, b);
      copy_block(&blk, cells + blk.row0 * width + blk.col0, width, part + blk.at, blk.cols);
    }
  }
  if (crc != r->snapshots[s].crc)
    return mapp_fail(MAPP_ERR_INPUT, "snapshot %ld (timestep %llu) fails its checksum: the region is corrupted", s,
                     (unsigned long long)r->snapshots[s].timestep);
  return MAPP_OK;
}
