/* A build without CUDA has no device table and no device tier. */
#include "snapshots.h"

const snap_ops *snap_cuda_ops(void) { return NULL; }
const snap_device_ops *snap_cuda_device_ops(void) { return NULL; }
