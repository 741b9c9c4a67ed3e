/* The NAM region: a file mapped into memory and exposed as an MPI window
 * (writer), and its validating reader. Layout and guarantees: heat_nam.h. */
#define _GNU_SOURCE /* MAP_POPULATE */
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
  long slot_elems;  /* doubles of one snapshot of this rank */
  long cols, block_rows, block_cols;
  /* A block put as one strided datatype each side; [short rows][short cols]
   * covers the remainder blocks at the grid's bottom and right edges. */
  MPI_Datatype origin[2][2], target[2][2];
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
  /* Populated: the file's pages are allocated now, in setup, not by page
   * faults inside the puts of the timestep loop (a NAM is memory that is
   * simply there). */
  void *map = mmap(NULL, bytes, prot, MAP_SHARED | MAP_POPULATE, fd, (off_t)offset);
  int err = errno;
  close(fd); /* the mapping keeps the file */
  if (map == MAP_FAILED)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot map %zu bytes of NAM region '%s': %s", bytes, path, strerror(err));
  *out = map;
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
  int err = ftruncate(fd, (off_t)h->file_bytes) != 0 ? errno : 0;
  close(fd);
  if (err)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot size NAM region '%s' to %llu bytes: %s", path,
                     (unsigned long long)h->file_bytes, strerror(err));
  n->head_bytes = (size_t)h->header_bytes;
  MAPP_TRY(map_file(path, O_RDWR, 0, n->head_bytes, PROT_READ | PROT_WRITE, (void **)&n->head));
  memcpy(n->head, h, sizeof *h);
  memcpy(n->head + sizeof *h, shares, h->nranks * sizeof *shares);
  heat_nam_header *live = (heat_nam_header *)n->head;
  live->header_crc = header_checksum(n->head, header_area(h->nranks, h->capacity));
  return sync_map(n->head, n->head_bytes, "header");
}

static int make_block_types(heat_nam *n, const heat_domain *d) {
  const mapp_blocking *b = &d->blocking;
  long nr[2] = {b->block_rows, b->rows - (b->nbr - 1) * b->block_rows};
  long nc[2] = {b->block_cols, b->cols - (b->nbc - 1) * b->block_cols};
  if (d->stride > INT_MAX || b->block_rows > INT_MAX)
    return mapp_fail(MAPP_ERR_INPUT, "rows of %ld cells are too long for MPI datatypes", d->stride);
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 2; ++c) {
      MAPP_MPI(MPI_Type_vector((int)nr[a], (int)nc[c], (int)d->stride, MPI_DOUBLE, &n->origin[a][c]));
      MAPP_MPI(MPI_Type_vector((int)nr[a], (int)nc[c], (int)n->cols, MPI_DOUBLE, &n->target[a][c]));
      MAPP_MPI(MPI_Type_commit(&n->origin[a][c]));
      MAPP_MPI(MPI_Type_commit(&n->target[a][c]));
    }
  return MAPP_OK;
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
  if (status == MAPP_OK) status = mapp_calloc((void **)&n->timesteps, (size_t)n->capacity, sizeof(long), "snapshot timesteps");
  if (status == MAPP_OK) status = make_block_types(n, d);
  MAPP_TRY(agree_status(n->comm, status));
  return expose_window(n);
}

int heat_nam_create(const char *path, const heat_domain *d, long every, heat_nam **out) {
  *out = NULL;
  if (every < 1 || every > d->cfg.steps)
    return mapp_fail(MAPP_ERR_INPUT, "--snapshot-every %ld: must be between 1 and the %ld timesteps", every,
                     d->cfg.steps);
  heat_nam *n;
  MAPP_TRY(mapp_calloc((void **)&n, 1, sizeof *n, "the NAM region"));
  *n = (heat_nam){.comm = d->comm, .rank = d->rank, .nranks = d->nranks, .win = MPI_WIN_NULL,
                  .every = every, .capacity = d->cfg.steps / every,
                  .slot_elems = d->local_rows * d->cfg.cols, .cols = d->cfg.cols,
                  .block_rows = d->cfg.block_rows, .block_cols = d->cfg.block_cols};
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 2; ++c) n->origin[a][c] = n->target[a][c] = MPI_DATATYPE_NULL;
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
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 2; ++c) {
      if (n->origin[a][c] != MPI_DATATYPE_NULL) MPI_Type_free(&n->origin[a][c]);
      if (n->target[a][c] != MPI_DATATYPE_NULL) MPI_Type_free(&n->target[a][c]);
    }
  if (n->sub) munmap(n->sub, n->sub_bytes);
  if (n->head) munmap(n->head, n->head_bytes);
  free(n->timesteps);
  free(n);
}

bool heat_nam_due(const heat_nam *n, long t) { return n && t % n->every == 0; }

long heat_nam_claim_slot(heat_nam *n, long t) {
  n->timesteps[n->count] = t;
  return n->count++;
}

/* One block into slot `slot` of this rank's subregion, at its place in the
 * row-major snapshot; with req, request-based (MPI_Rput). */
static int put_block(heat_nam *n, heat_domain *d, long slot, long i, long j, MPI_Request *req) {
  mapp_range rows, cols;
  heat_block_cells(d, i, j, &rows, &cols);
  const double *origin = d->grid + rows.first * d->stride + cols.first;
  MPI_Aint disp = (MPI_Aint)(slot * n->slot_elems + (rows.first - 1) * n->cols + cols.first - 1);
  int a = rows.count != n->block_rows, c = cols.count != n->block_cols;
  if (req)
    MAPP_MPI(MPI_Rput(origin, 1, n->origin[a][c], n->rank, disp, 1, n->target[a][c], n->win, req));
  else
    MAPP_MPI(MPI_Put(origin, 1, n->origin[a][c], n->rank, disp, 1, n->target[a][c], n->win));
  return MAPP_OK;
}

int heat_nam_rput_block(heat_nam *n, heat_domain *d, long slot, long i, long j, MPI_Request *req) {
  return put_block(n, d, slot, i, j, req);
}

/* The seed's epoch per snapshot: every rank targets only its own subregion
 * (the NAM subregion addressed by its rank). */
int heat_nam_save_if_due(heat_nam *n, heat_domain *d, long t, mapp_timers *timers) {
  if (!heat_nam_due(n, t)) return MAPP_OK;
  mapp_timer_start(timers, MAPP_PHASE_IO);
  long slot = heat_nam_claim_slot(n, t);
  MAPP_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, n->win));
  for (long i = 0; i < d->share.blocks.count; ++i)
    for (long j = 0; j < d->blocking.nbc; ++j) MAPP_TRY(put_block(n, d, slot, i, j, NULL));
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

int heat_nam_finish(heat_nam *n) {
  uint32_t *mine = NULL, *all = NULL;
  int status = sync_map(n->sub, n->sub_bytes, "snapshots");
  if (status == MAPP_OK) status = mapp_calloc((void **)&mine, (size_t)n->count + 1, sizeof *mine, "snapshot checksums");
  if (status == MAPP_OK && n->rank == 0)
    status = mapp_calloc((void **)&all, (size_t)n->nranks * (size_t)n->count + 1, sizeof *all, "snapshot checksums");
  for (long s = 0; status == MAPP_OK && s < n->count; ++s)
    mine[s] = (uint32_t)crc32_z(0, (const unsigned char *)(n->sub + s * n->slot_elems),
                                (size_t)n->slot_elems * sizeof(double));
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
  /* The ranks' parts in rank order are the interior in row order: one
   * running CRC over them is the CRC of the frame. */
  uLong crc = 0;
  size_t row_bytes = (size_t)cfg.cols * sizeof(double);
  for (uint64_t k = 0; k < r->h.nranks; ++k) {
    const heat_nam_share *sh = &r->shares[k];
    const unsigned char *part = r->map + sh->offset + (size_t)s * sh->row_count * row_bytes;
    crc = crc32_z(crc, part, sh->row_count * row_bytes);
    for (uint64_t row = 0; row < sh->row_count; ++row)
      memcpy(matrix + (long)(sh->first_row + row + 1) * width + 1, part + row * row_bytes, row_bytes);
  }
  if (crc != r->snapshots[s].crc)
    return mapp_fail(MAPP_ERR_INPUT, "snapshot %ld (timestep %llu) fails its checksum: the region is corrupted", s,
                     (unsigned long long)r->snapshots[s].timestep);
  return MAPP_OK;
}
