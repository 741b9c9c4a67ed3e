/* Helpers the app's hooks share (not part of the API). */
#ifndef SNAP_APP_INTERNAL_H
#define SNAP_APP_INTERNAL_H

#include "snapshots.h"

/* MemAvailable (bytes), 0 when unknown. */
size_t snap_host_available(void);
/* Free space of the file system holding dir. */
int snap_disk_available(const char *dir, size_t *bytes);

#endif
