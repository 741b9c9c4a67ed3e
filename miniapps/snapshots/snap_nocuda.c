/* A build without CUDA has no device table. */
#include "snapshots.h"

const snap_ops *snap_cuda_ops(void) { return NULL; }
