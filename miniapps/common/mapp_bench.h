/* The Google Benchmark C bridge: C kernels registered and run as Google
 * Benchmark benchmarks, so every mapp-<app>-bench gets its statistics
 * (warm-up, iteration count, repetitions, median and spread), its console
 * and JSON reporters and its flags (--benchmark_filter, _repetitions,
 * _min_time, _format, _out) without a line of C++ in the apps.
 *
 * A benchmark is a C function with the usual loop:
 *
 *   static void bm_kernel(mapp_bench_state *st, void *arg) {
 *     long n = mapp_bench_range(st, 0);
 *     ... set up (not timed) ...
 *     while (mapp_bench_keep_running(st)) kernel(...);
 *     mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * n);
 *   }
 *
 * registered from main before mapp_bench_main runs them all. */
#ifndef MAPP_BENCH_H
#define MAPP_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: the running benchmark's state (a benchmark::State). */
typedef struct mapp_bench_state mapp_bench_state;
typedef void (*mapp_bench_fn)(mapp_bench_state *st, void *arg);

typedef enum {
  MAPP_BENCH_NANOSECOND = 0, /* Google Benchmark's default */
  MAPP_BENCH_MICROSECOND,
  MAPP_BENCH_MILLISECOND,
  MAPP_BENCH_SECOND,
} mapp_bench_unit;

/* Counter flags (benchmark::Counter::Flags), combinable with |. */
enum {
  MAPP_BENCH_COUNTER_DEFAULT = 0,
  /* divided by the benchmark's elapsed time (real time when use_real_time) */
  MAPP_BENCH_COUNTER_RATE = 1 << 0,
  /* divided by the number of threads */
  MAPP_BENCH_COUNTER_AVG_THREADS = 1 << 1,
  /* multiplied by the number of iterations */
  MAPP_BENCH_COUNTER_ITERATION_INVARIANT = 1 << 2,
  /* divided by the number of iterations */
  MAPP_BENCH_COUNTER_AVG_ITERATIONS = 1 << 3,
  /* 1 / value, after the above */
  MAPP_BENCH_COUNTER_INVERT = 1 << 4,
};

#define MAPP_BENCH_MAX_ARGS 8

/* How a benchmark is instantiated and timed; zero-initialise and set what
 * you need ((mapp_bench_options){0} or NULL: one instance, no arguments,
 * the command line's min time and repetitions, CPU time in ns).
 *
 * Instances come from either
 *   - `ninstances` explicit tuples of `nargs` values, args[i * nargs + k]
 *     (Google Benchmark's ->Args), or
 *   - `ranges`: nargs {lo, hi} pairs whose Cartesian product is taken, each
 *     stepped by powers of range_multiplier (->Ranges);
 * a benchmark reads its tuple with mapp_bench_range(st, k). Both arrays are
 * copied at registration. */
typedef struct {
  int nargs;
  const char *const *arg_names; /* nargs names (name/n:4096) or NULL (name/4096) */
  int ninstances;
  const long *args;
  const long (*ranges)[2];
  int range_multiplier; /* 0: Google Benchmark's default (8) */
  double min_time;      /* seconds; 0: --benchmark_min_time */
  int repetitions;      /* 0: --benchmark_repetitions */
  /* Time by the wall clock instead of the main thread's CPU time; rates
   * are then per wall-clock second. Needed for OpenMP kernels, where the
   * main thread's CPU time misses the other threads' work. */
  bool use_real_time;
  mapp_bench_unit unit;
} mapp_bench_options;

/* Registers `fn(st, arg)` as benchmark `name` (copied; arg must outlive
 * the run). Returns MAPP_OK, or MAPP_ERR_INPUT with the reason recorded
 * (mapp_error_message) for inconsistent options. */
int mapp_bench_register(const char *name, mapp_bench_fn fn, void *arg,
                        const mapp_bench_options *opt);

/* Google Benchmark's main: parses and removes the --benchmark_* flags,
 * runs the benchmarks the filter selects, reports them. Returns MAPP_OK;
 * MAPP_ERR_INPUT for an unknown flag, a bad value of a --benchmark_* flag
 * (checked here before Google Benchmark sees it: --benchmark_repetitions=-1,
 * --benchmark_format=xml, a boolean that is not one) or a filter that
 * matches nothing;
 * MAPP_ERR_SYSTEM when a benchmark skipped with an error (so a bench that
 * could not run fails CI instead of printing a quiet row); the reason is
 * recorded for mapp_report_error. --help prints the flags and exits 0. */
int mapp_bench_main(int argc, char **argv);
/* The --benchmark_* flag check mapp_bench_main starts with, for a bench
 * main that does work of its own before it (a bandwidth probe, a data set):
 * call it first, so bad flags are refused before anything runs or prints.
 * MAPP_OK, or MAPP_ERR_INPUT naming the flag and what it must be. */
int mapp_bench_check_flags(int argc, char **argv);

/* ---- inside a benchmark function ---- */

/* The timed loop: true while more iterations are wanted. The first call
 * starts the timer, the last one stops it. */
bool mapp_bench_keep_running(mapp_bench_state *st);
/* Iterations run so far (after the loop: all of them). */
int64_t mapp_bench_iterations(const mapp_bench_state *st);
/* Value k of this instance's argument tuple. */
long mapp_bench_range(const mapp_bench_state *st, int k);

/* Exclude work inside the loop from the time (costly: ~µs each). */
void mapp_bench_pause_timing(mapp_bench_state *st);
void mapp_bench_resume_timing(mapp_bench_state *st);

/* Totals over all iterations, reported per second (items_per_second,
 * bytes_per_second in the JSON). */
void mapp_bench_set_items_processed(mapp_bench_state *st, int64_t items);
void mapp_bench_set_bytes_processed(mapp_bench_state *st, int64_t bytes);
/* A user counter `name` with MAPP_BENCH_COUNTER_* flags. */
void mapp_bench_set_counter(mapp_bench_state *st, const char *name, double value, int flags);

/* Marks this run as failed with `msg`; the loop then ends (at once when
 * called before it). Return from the function after the loop. */
void mapp_bench_skip_with_error(mapp_bench_state *st, const char *msg);

#ifdef __cplusplus
}
#endif

#endif
