/* The timed iterations of a run and what disturbed them.
 *
 * A figure of merit is only as good as the time under it: a record says how
 * many times the timed phase ran (--min-time repeats it), every iteration's
 * time, and what took CPU time away from the run while it was timed:
 *   - steal: CPU time the hypervisor gave to other guests (/proc/stat, the
 *     whole node, in 10 ms ticks);
 *   - run delay: time the rank's threads were runnable but waited for a CPU
 *     (/proc/self/task/TID/schedstat: another process or thread had it);
 *   - involuntary context switches (getrusage) and CPU migrations
 *     (/proc/self/task/TID/sched);
 *   - the 1-minute load average before and after.
 * The harness turns these into a verdict (disturbed or not); the driver
 * only measures. Counters Linux does not offer read as unknown (-1). */
#ifndef MAPP_DISTURB_H
#define MAPP_DISTURB_H

#include <stdbool.h>

/* The iterations of the timed phase. */
typedef struct {
  double min_time;  /* --min-time asked (0: one iteration) */
  int count;        /* iterations run, the warm-up included */
  int capacity;
  double *seconds;  /* each iteration's compute time, max over ranks (malloc'd) */
  bool warmup;      /* the first was a warm-up left out of the figure */
  double reset_s;   /* the reset hooks' total time, max over ranks (untimed) */
} mapp_iterations;

/* The first timed iteration and how many there are. */
int mapp_iterations_first_timed(const mapp_iterations *it);
int mapp_iterations_timed(const mapp_iterations *it);
/* Total seconds of the timed iterations. */
double mapp_iterations_timed_s(const mapp_iterations *it);
/* The fastest timed iteration's seconds: the figure of merit's time. */
double mapp_iterations_fastest_s(const mapp_iterations *it);
int mapp_iterations_push(mapp_iterations *it, double seconds);
void mapp_iterations_free(mapp_iterations *it);

/* Counters read at one instant on one rank. */
enum { MAPP_DISTURB_MAX_THREADS = 256 };
typedef struct {
  double when;             /* mapp_now() */
  long long cpu_ticks[2];  /* /proc/stat "cpu" line: all ticks, stolen ticks; -1 unknown */
  long involuntary;        /* getrusage ru_nivcsw of the process */
  int nthreads;
  int tids[MAPP_DISTURB_MAX_THREADS];
  long long on_cpu_ns[MAPP_DISTURB_MAX_THREADS], waiting_ns[MAPP_DISTURB_MAX_THREADS];
  long long migrations[MAPP_DISTURB_MAX_THREADS];
  double load;             /* 1-minute load average; -1 unknown */
} mapp_disturb_sample;

/* What disturbed the run between two samples, over all ranks. */
typedef struct {
  bool measured;
  double interval_s;         /* between the samples, max over ranks */
  double steal_fraction;     /* stolen / all CPU ticks of the node, max over ranks; < 0 unknown */
  long long steal_ticks, all_ticks; /* of the node whose steal was largest */
  double run_delay_fraction; /* waiting / (on CPU + waiting) of the rank's threads, max over ranks; < 0 unknown */
  double run_delay_s;        /* the rank's threads' waiting, summed over ranks */
  long involuntary_switches; /* summed over ranks */
  long long migrations;      /* summed over ranks; < 0 unknown */
  double load_before, load_after; /* rank 0's node */
} mapp_disturbance;

void mapp_disturb_sample_take(mapp_disturb_sample *s);
/* The disturbance between two samples over all ranks: mapp_disturbance_between
 * (collective, mapp_reduce.h). */

#endif
