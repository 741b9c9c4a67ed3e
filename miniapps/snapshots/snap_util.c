/* Sizes with units, resident memory, large allocations on huge pages, and
 * the capacity each layer has available now (what --mem-perc takes its
 * share of). */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include "snap_app_internal.h"

int snap_parse_size(const char *text, size_t *bytes) {
  errno = 0;
  char *end;
  double v = strtod(text, &end);
  if (end == text || errno || v < 0)
    return mapp_fail(MAPP_ERR_INPUT, "'%s' is not a size (such as 2GiB, 512MiB, 64k or 4096)", text);
  static const struct {
    const char *unit;
    double scale;
  } units[] = {{"", 1},          {"B", 1},           {"k", 1e3},         {"K", 1e3},   {"kB", 1e3}, {"KiB", 1024.0},
               {"M", 1e6},       {"MB", 1e6},        {"MiB", 1048576.0}, {"G", 1e9},   {"GB", 1e9},
               {"GiB", 1073741824.0}, {"T", 1e12},   {"TB", 1e12},       {"TiB", 1099511627776.0}};
  for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
    if (!strcmp(end, units[u].unit)) {
      double b = v * units[u].scale;
      if (b > 9e18) return mapp_fail(MAPP_ERR_INPUT, "size '%s' is too large", text);
      *bytes = (size_t)b;
      return MAPP_OK;
    }
  return mapp_fail(MAPP_ERR_INPUT, "'%s' has an unknown unit '%s' (use B, KiB, MiB, GiB, TiB, k, M, G, T)", text, end);
}

size_t snap_peak_rss(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru)) return 0;
  return (size_t)ru.ru_maxrss * 1024; /* KiB on Linux */
}

size_t snap_host_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  size_t kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %zu kB", &kib) == 1) break;
  fclose(f);
  return kib * 1024;
}

int snap_disk_available(const char *dir, size_t *bytes) {
  struct statvfs vfs;
  if (statvfs(dir, &vfs))
    return mapp_fail(MAPP_ERR_SYSTEM, "--disk-dir %s cannot be used: %s", dir, strerror(errno));
  *bytes = (size_t)vfs.f_bavail * (size_t)vfs.f_frsize;
  return MAPP_OK;
}

/* Fields and snapshot arrays are megabytes to gigabytes, walked by the
 * stencil several planes at a time: on 4 KiB pages a 3-D step touches
 * thousands of pages (a TLB miss every 512 doubles of every stream). An
 * allocation of 2 MiB or more is aligned to 2 MiB and asked for
 * transparent huge pages (a hint: where the kernel does not give them,
 * nothing changes). */
#define SNAP_HUGE_PAGE ((size_t)2 << 20)

int snap_alloc_large(void **out, size_t bytes, size_t align, const char *what) {
  *out = NULL;
  if (bytes >= SNAP_HUGE_PAGE && align < SNAP_HUGE_PAGE) align = SNAP_HUGE_PAGE;
  size_t rounded = (bytes + align - 1) / align * align;
  if (bytes == 0 || posix_memalign(out, align, rounded))
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating %zu bytes for %s", bytes, what);
#ifdef MADV_HUGEPAGE
  if (align == SNAP_HUGE_PAGE) (void)madvise(*out, rounded, MADV_HUGEPAGE);
#endif
  return MAPP_OK;
}
