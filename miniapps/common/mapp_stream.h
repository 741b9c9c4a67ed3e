/* STREAM triad a[i] = b[i] + s * c[i]: the memory-bandwidth anchor every
 * mapp-<app>-bench reports its rate against, measured in the same process
 * (same threads, same pinning, same moment), so a fraction of it compares
 * across machines where absolute rates do not.
 *
 * Bytes are counted as STREAM counts them: 24 per element (read b and c,
 * write a), not the 32 that move with write-allocate. Arrays are sized well
 * beyond the last-level cache, and first-touched by the threads that later
 * use them (OpenMP static schedule), so each thread streams its own pages. */
#ifndef MAPP_STREAM_H
#define MAPP_STREAM_H

#include <stddef.h>

#include "mapp_bench.h"

#define MAPP_STREAM_TRIAD_BYTES 24 /* per element */
#define MAPP_STREAM_SCALAR 3.0

typedef struct {
  double *a, *b, *c;
  size_t n;
} mapp_stream;

/* Elements per array: STREAM's rule, at least 4 times the last-level cache
 * (read from sysfs; 32 MiB assumed when it cannot be read), within
 * [8 Mi, 128 Mi] elements (64 MiB .. 1 GiB per array). */
size_t mapp_stream_default_elements(void);

/* Allocates and first-touches three arrays of n doubles; MAPP_OK or
 * MAPP_ERR_SYSTEM (message recorded). mapp_stream_free accepts a zeroed or
 * freed struct. */
int mapp_stream_alloc(mapp_stream *s, size_t n);
void mapp_stream_free(mapp_stream *s);

/* One triad pass over all elements, OpenMP-parallel. */
void mapp_stream_triad(mapp_stream *s);

/* Best triad bandwidth in bytes/s over `reps` passes of n elements (STREAM
 * reports the best, which is the least disturbed); 0 on failure (message
 * recorded). */
double mapp_stream_triad_best(size_t n, int reps);

/* The process's reference: mapp_stream_triad_best over the default size
 * and 10 passes, measured on the first call and cached (the value is also
 * printed once on stderr so the denominator of every fraction is on
 * record). Call from one thread. 0 when it could not be measured. */
double mapp_stream_triad_bandwidth(void);

/* Registers benchmark "stream/triad" on n elements per array (0: the
 * default size), reporting bytes_per_second, timed by the wall clock. */
int mapp_stream_register(size_t n);

/* After a benchmark's loop: sets counter "triad_fraction" to
 *   (bytes_per_iteration * iterations / triad bytes per second)
 * as a rate, so Google Benchmark divides it by the elapsed time and
 * reports the kernel's bandwidth as a fraction of the triad's (1 = as fast
 * as the triad moves memory). Use wall-clock timing (use_real_time) so
 * the time is the one the triad was measured with. Skips the benchmark with
 * an error when the triad could not be measured. */
void mapp_bench_set_triad_fraction(mapp_bench_state *st, double bytes_per_iteration);

#endif
