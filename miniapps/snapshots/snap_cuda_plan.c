/* The CUDA backend's plan (snap_cuda_plan.h): no CUDA here, so every build
 * compiles it and the unit tests run it without a device. */
#include "snap_cuda_plan.h"

unsigned snap_cuda_blocks(long n) {
  long b = (n + SNAP_CUDA_THREADS - 1) / SNAP_CUDA_THREADS;
  if (b < 1) return 1;
  return (unsigned)(b < SNAP_CUDA_MAX_BLOCKS ? b : SNAP_CUDA_MAX_BLOCKS);
}

void snap_staging_init(snap_staging_ring *r, int nslots) { *r = (snap_staging_ring){.nslots = nslots > 0 ? nslots : 1}; }

snap_staging_use snap_staging_take(snap_staging_ring *r) {
  snap_staging_use use = {.slot = (int)(r->taken % r->nslots), .reuse = r->taken >= r->nslots};
  r->taken++;
  return use;
}
