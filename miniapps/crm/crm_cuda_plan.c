/* The CUDA backend's launch plan (crm_cuda_plan.h): no CUDA here, so every
 * build compiles it and the unit tests run it without a device. */
#include "crm_cuda_plan.h"

long crm_cuda_blocks(long threads) { return threads > 0 ? (threads + CRM_CUDA_BLOCK - 1) / CRM_CUDA_BLOCK : 0; }

size_t crm_cuda_staged_row_bytes(long nx, int fields, size_t extra) {
  return (size_t)fields * (size_t)(nx + 1) * sizeof(double) + extra;
}

crm_cuda_rows_launch crm_cuda_plan_rows(long nx, long rows, int fields, size_t extra) {
  size_t row_bytes = crm_cuda_staged_row_bytes(nx, fields, extra);
  size_t fit = CRM_CUDA_STAGE_BYTES / row_bytes;
  int per_block = fit < (size_t)CRM_CUDA_STAGE_ROWS ? (int)fit : CRM_CUDA_STAGE_ROWS;
  if (per_block == 0) return (crm_cuda_rows_launch){.blocks = crm_cuda_blocks(rows)};
  return (crm_cuda_rows_launch){.rows_per_block = per_block,
                                .blocks = rows > 0 ? (rows + per_block - 1) / per_block : 0,
                                .shared_bytes = (size_t)per_block * row_bytes};
}
