/* The host-side plan of the CUDA backend (snap_cuda.cu), in plain C so it
 * is tested without a device: the launch geometry of its grid-stride
 * kernels, and the ring of staging slots that carries snapshots (adjoint)
 * and injection values (both directions) to the device without stopping
 * the host: which slot a transfer uses, and whether that slot's previous
 * transfer must be waited for first. */
#ifndef SNAP_CUDA_PLAN_H
#define SNAP_CUDA_PLAN_H

#include <stdbool.h>

#define SNAP_CUDA_THREADS 256     /* threads per block */
#define SNAP_CUDA_MAX_BLOCKS 65535 /* grid-stride loops cover the rest */
#define SNAP_CUDA_STAGING_SLOTS 2  /* double buffering: one in flight while the next is filled */

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of SNAP_CUDA_THREADS for n points: enough for one point a thread,
 * at most SNAP_CUDA_MAX_BLOCKS, at least 1 (a launch of 0 blocks fails). */
unsigned snap_cuda_blocks(long n);

typedef struct {
  int nslots;
  long taken; /* transfers planned so far */
} snap_staging_ring;

typedef struct {
  int slot;
  /* The slot carried an earlier transfer: the host waits for that copy
   * before refilling the slot's host buffer, and the copy stream waits for
   * the kernel that read the slot's device buffer before overwriting it. */
  bool reuse;
} snap_staging_use;

void snap_staging_init(snap_staging_ring *r, int nslots);
snap_staging_use snap_staging_take(snap_staging_ring *r);

#ifdef __cplusplus
}
#endif

#endif
