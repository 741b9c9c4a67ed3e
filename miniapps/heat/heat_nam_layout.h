/* The NAM region's layout as its writer (heat_nam.c) and its reader
 * (heat_nam_reader.c) both place it: the header area and its checksum, the
 * subregions' alignment, and a rank's part of a snapshot cut into blocks.
 * Internal to those two files; the format itself is described in
 * heat_nam.h. */
#ifndef HEAT_NAM_LAYOUT_H
#define HEAT_NAM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "heat_nam.h"

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

static inline uint64_t nam_align_up(uint64_t x) { return (x + HEAT_NAM_ALIGN - 1) / HEAT_NAM_ALIGN * HEAT_NAM_ALIGN; }

static inline uint64_t nam_header_area(uint64_t nranks, uint64_t capacity) {
  return sizeof(heat_nam_header) + nranks * sizeof(heat_nam_share) + capacity * sizeof(heat_nam_snapshot);
}

/* CRC-32 of the header area with its header_crc field taken as zero. */
static inline uint64_t nam_header_checksum(const unsigned char *area, size_t len) {
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
 * with nam_block_of, the one place the layout lives. */
static inline part_shape nam_shape_of(uint64_t rows, uint64_t cols, uint64_t block_rows, uint64_t block_cols) {
  part_shape p = {.rows = (long)rows, .cols = (long)cols, .block_rows = (long)block_rows,
                  .block_cols = (long)block_cols};
  p.nbc = (p.cols + p.block_cols - 1) / p.block_cols;
  p.blocks = (p.rows + p.block_rows - 1) / p.block_rows * p.nbc;
  return p;
}

static inline part_block nam_block_of(const part_shape *p, long b) {
  part_block k = {.row0 = b / p->nbc * p->block_rows, .col0 = b % p->nbc * p->block_cols};
  k.rows = p->rows - k.row0 < p->block_rows ? p->rows - k.row0 : p->block_rows;
  k.cols = p->cols - k.col0 < p->block_cols ? p->cols - k.col0 : p->block_cols;
  k.at = (size_t)(k.row0 * p->cols + k.rows * k.col0);
  return k;
}

/* The block's rows between two row strides: the writer packs a block of
 * the grid (stride cols + 2) into its snapshot place (stride k->cols), the
 * reader unpacks it into the frame. */
static inline void nam_copy_block(const part_block *k, double *dst, long dst_stride, const double *src, long src_stride) {
  for (long r = 0; r < k->rows; ++r)
    memcpy(dst + r * dst_stride, src + r * src_stride, (size_t)k->cols * sizeof(double));
}

#endif
