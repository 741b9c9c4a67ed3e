/* The NAM region's validating reader: every field of the header checked
 * against the file before a frame is read, and each block's checksum
 * against what the writer put. Layout and guarantees: heat_nam.h. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "heat_nam_layout.h"

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
              h->header_bytes == nam_align_up(nam_header_area(h->nranks, h->capacity));
  if (!sane) return mapp_fail(MAPP_ERR_INPUT, "'%s': the NAM region header is corrupted", path);
  if (r->bytes < h->header_bytes || r->bytes < h->file_bytes)
    return mapp_fail(MAPP_ERR_INPUT, "'%s' is truncated: %zu bytes, its header says %llu", path, r->bytes,
                     (unsigned long long)(h->file_bytes > h->header_bytes ? h->file_bytes : h->header_bytes));
  if (nam_header_checksum(r->map, nam_header_area(h->nranks, h->capacity)) != h->header_crc)
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
    part_shape p = nam_shape_of(sh->row_count, r->h.cols, r->h.block_rows, r->h.block_cols);
    const double *part = (const double *)(r->map + sh->offset) + (size_t)s * sh->row_count * r->h.cols;
    crc = crc32_z(crc, (const unsigned char *)part, sh->row_count * r->h.cols * sizeof(double));
    double *cells = matrix + (long)(sh->first_row + 1) * width + 1;
    for (long b = 0; b < p.blocks; ++b) {
      part_block blk = nam_block_of(&p, b);
      nam_copy_block(&blk, cells + blk.row0 * width + blk.col0, width, part + blk.at, blk.cols);
    }
  }
  if (crc != r->snapshots[s].crc)
    return mapp_fail(MAPP_ERR_INPUT, "snapshot %ld (timestep %llu) fails its checksum: the region is corrupted", s,
                     (unsigned long long)r->snapshots[s].timestep);
  return MAPP_OK;
}
