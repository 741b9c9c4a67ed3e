/* The host-side launch plan of the CUDA backend (crm_cuda.cu), in plain C
 * so it is tested without a device: blocks for a thread per point, and for
 * the staged row kernels (forcing and the level means) how many
 * (instance, level) rows a block stages in shared memory, or that not one
 * row fits and the thread-per-row kernel runs instead. */
#ifndef CRM_CUDA_PLAN_H
#define CRM_CUDA_PLAN_H

#include <stddef.h>

#define CRM_CUDA_BLOCK 256                /* threads per block */
#define CRM_CUDA_STAGE_ROWS 16            /* rows a staged block holds at most */
#define CRM_CUDA_STAGE_BYTES (48 * 1024)  /* the default dynamic shared memory limit */

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of CRM_CUDA_BLOCK threads for one thread per point (0 for none). */
long crm_cuda_blocks(long threads);

/* Shared bytes one staged row takes: `fields` copies of it, nx + 1 doubles
 * each (the pad breaks bank conflicts between the row-reducing threads),
 * plus `extra` bytes. */
size_t crm_cuda_staged_row_bytes(long nx, int fields, size_t extra);

typedef struct {
  int rows_per_block; /* 0: not one row fits: the thread-per-row fallback */
  long blocks;
  size_t shared_bytes; /* dynamic shared memory per block */
} crm_cuda_rows_launch;

/* The launch of a staged kernel over `rows` rows of nx columns. */
crm_cuda_rows_launch crm_cuda_plan_rows(long nx, long rows, int fields, size_t extra);

#ifdef __cplusplus
}
#endif

#endif
