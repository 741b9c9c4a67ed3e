/* STREAM triad and the triad-fraction counter (see mapp_stream.h). */
#include "mapp_stream.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "mapp_timer.h"

enum { STREAM_REPS = 10 };
static const size_t MIN_ELEMENTS = (size_t)8 << 20;   /* 64 MiB per array */
static const size_t MAX_ELEMENTS = (size_t)128 << 20; /* 1 GiB per array */
static const size_t LLC_FALLBACK = (size_t)32 << 20;

/* Size of one sysfs cache entry such as "32768K", in bytes (0 if unreadable). */
static size_t sysfs_cache_size(const char *dir) {
  char path[128], text[32] = {0};
  snprintf(path, sizeof path, "%s/size", dir);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';
  char *unit;
  long v = strtol(text, &unit, 10);
  if (v <= 0) return 0;
  size_t scale = *unit == 'K' ? 1024 : *unit == 'M' ? 1024 * 1024 : *unit == 'G' ? 1u << 30 : 1;
  return (size_t)v * scale;
}

/* The highest-level cache of cpu0, from sysfs. Not sysconf: glibc reads it
 * from cpuid, which in a VM can report the host's whole L3 (384 MiB on the
 * development machine) rather than the 32 MiB this guest shares. */
static size_t llc_bytes(void) {
  size_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 16; ++i) {
    char dir[96], path[128];
    snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
    snprintf(path, sizeof path, "%s/level", dir);
    FILE *f = fopen(path, "r");
    if (!f) break;
    int level = 0;
    if (fscanf(f, "%d", &level) != 1) level = 0;
    fclose(f);
    size_t size = sysfs_cache_size(dir);
    if (level > best_level && size > 0) best = size, best_level = level;
  }
  return best ? best : LLC_FALLBACK;
}

size_t mapp_stream_default_elements(void) {
  size_t n = 4 * llc_bytes() / sizeof(double);
  return n < MIN_ELEMENTS ? MIN_ELEMENTS : n > MAX_ELEMENTS ? MAX_ELEMENTS : n;
}

/* First touch: each thread writes the pages it will stream in the triad
 * (same static schedule), so on a NUMA machine they sit near it. */
static void first_touch(mapp_stream *s) {
  double *restrict a = s->a, *restrict b = s->b, *restrict c = s->c;
  long n = (long)s->n;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 2.0;
    c[i] = 0.5;
  }
}

int mapp_stream_alloc(mapp_stream *s, size_t n) {
  *s = (mapp_stream){.n = n};
  size_t bytes = n * sizeof(double);
  double **arrays[] = {&s->a, &s->b, &s->c};
  for (int k = 0; k < 3; ++k) {
    if (posix_memalign((void **)arrays[k], 64, bytes) != 0) {
      mapp_stream_free(s);
      return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating 3 x %zu bytes for the STREAM triad",
                       bytes);
    }
  }
  first_touch(s);
  return MAPP_OK;
}

void mapp_stream_free(mapp_stream *s) {
  free(s->a);
  free(s->b);
  free(s->c);
  *s = (mapp_stream){0};
}

void mapp_stream_triad(mapp_stream *s) {
  double *restrict a = s->a;
  const double *restrict b = s->b, *restrict c = s->c;
  long n = (long)s->n;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) a[i] = b[i] + MAPP_STREAM_SCALAR * c[i];
}

double mapp_stream_triad_best(size_t n, int reps) {
  mapp_stream s;
  if (mapp_stream_alloc(&s, n) != MAPP_OK) return 0.0;
  mapp_stream_triad(&s); /* warm-up: threads started, TLB and caches settled */
  double best = 0.0;
  for (int r = 0; r < reps; ++r) {
    double t0 = mapp_now();
    mapp_stream_triad(&s);
    double bw = (double)(MAPP_STREAM_TRIAD_BYTES * n) / (mapp_now() - t0);
    if (bw > best) best = bw;
  }
  mapp_stream_free(&s);
  return best;
}

double mapp_stream_triad_bandwidth(void) {
  static double cached = -1.0;
  if (cached < 0) {
    size_t n = mapp_stream_default_elements();
    cached = mapp_stream_triad_best(n, STREAM_REPS);
    fprintf(stderr, "mapp: STREAM triad, best of %d passes over 3 x %zu MiB, %d threads: %.2f GB/s\n",
            STREAM_REPS, n * sizeof(double) >> 20, omp_get_max_threads(), cached * 1e-9);
  }
  return cached;
}

/* ---- the stream/triad benchmark ---- */

static size_t registered_elements; /* the benchmark's arg points here */

static void bm_triad(mapp_bench_state *st, void *arg) {
  size_t n = *(const size_t *)arg;
  mapp_stream s;
  if (mapp_stream_alloc(&s, n) != MAPP_OK) {
    mapp_bench_skip_with_error(st, mapp_error_message());
    return;
  }
  while (mapp_bench_keep_running(st)) mapp_stream_triad(&s);
  mapp_bench_set_bytes_processed(st, mapp_bench_iterations(st) * (int64_t)(MAPP_STREAM_TRIAD_BYTES * n));
  mapp_stream_free(&s);
}

int mapp_stream_register(size_t n) {
  registered_elements = n ? n : mapp_stream_default_elements();
  mapp_bench_options opt = {.use_real_time = true, .unit = MAPP_BENCH_MILLISECOND};
  return mapp_bench_register("stream/triad", bm_triad, &registered_elements, &opt);
}

void mapp_bench_set_triad_fraction(mapp_bench_state *st, double bytes_per_iteration) {
  double triad = mapp_stream_triad_bandwidth();
  if (triad <= 0) {
    mapp_bench_skip_with_error(st, "the STREAM triad bandwidth could not be measured");
    return;
  }
  double bytes = bytes_per_iteration * (double)mapp_bench_iterations(st);
  mapp_bench_set_counter(st, "triad_fraction", bytes / triad, MAPP_BENCH_COUNTER_RATE);
}
