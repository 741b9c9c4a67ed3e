/* Timed iterations and what disturbed them (mapp_disturb.h). */
#define _GNU_SOURCE
#include "mapp_disturb.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mapp_error.h"
#include "mapp_timer.h"

/* ------------------------------------------------------------ iterations */

int mapp_iterations_first_timed(const mapp_iterations *it) { return it->warmup ? 1 : 0; }

int mapp_iterations_timed(const mapp_iterations *it) { return it->count - mapp_iterations_first_timed(it); }

double mapp_iterations_timed_s(const mapp_iterations *it) {
  double total = 0.0;
  for (int i = mapp_iterations_first_timed(it); i < it->count; ++i) total += it->seconds[i];
  return total;
}

int mapp_iterations_push(mapp_iterations *it, double seconds) {
  if (it->count == it->capacity) {
    int capacity = it->capacity ? 2 * it->capacity : 16;
    double *grown = realloc(it->seconds, (size_t)capacity * sizeof *grown);
    if (!grown) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory keeping %d iteration times", capacity);
    it->seconds = grown, it->capacity = capacity;
  }
  it->seconds[it->count++] = seconds;
  return MAPP_OK;
}

void mapp_iterations_free(mapp_iterations *it) {
  free(it->seconds);
  it->seconds = NULL;
  it->count = it->capacity = 0;
}

/* ------------------------------------------------------------ samples */

/* The "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal. */
static void read_cpu_ticks(long long ticks[2]) {
  ticks[0] = ticks[1] = -1;
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return;
  long long v[8];
  if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
             &v[7]) == 8) {
    ticks[0] = 0;
    for (int i = 0; i < 8; ++i) ticks[0] += v[i];
    ticks[1] = v[7];
  }
  fclose(f);
}

static double read_load(void) {
  double load = -1.0;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = -1.0;
    fclose(f);
  }
  return load;
}

/* schedstat: time on CPU, time runnable but waiting (ns), timeslices. */
static void read_thread_schedstat(int tid, long long *on_cpu, long long *waiting) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
  *on_cpu = *waiting = -1;
  FILE *f = fopen(path, "r");
  if (!f) return;
  if (fscanf(f, "%lld %lld", on_cpu, waiting) != 2) *on_cpu = *waiting = -1;
  fclose(f);
}

static long long read_thread_migrations(int tid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/sched", tid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long long migrations = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "se.nr_migrations", 16) == 0) {
      const char *colon = strchr(line, ':');
      if (colon) migrations = atoll(colon + 1);
      break;
    }
  fclose(f);
  return migrations;
}

static void read_threads(mapp_disturb_sample *s) {
  s->nthreads = 0;
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return;
  for (struct dirent *e; (e = readdir(dir)) && s->nthreads < MAPP_DISTURB_MAX_THREADS;) {
    int tid = atoi(e->d_name);
    if (tid <= 0) continue;
    int t = s->nthreads++;
    s->tids[t] = tid;
    read_thread_schedstat(tid, &s->on_cpu_ns[t], &s->waiting_ns[t]);
    s->migrations[t] = read_thread_migrations(tid);
  }
  closedir(dir);
}

void mapp_disturb_sample_take(mapp_disturb_sample *s) {
  s->load = read_load();
  read_cpu_ticks(s->cpu_ticks);
  struct rusage usage;
  s->involuntary = getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_nivcsw : -1;
  read_threads(s);
  s->when = mapp_now();
}

/* ------------------------------------------------------------ between */

static int thread_index(const mapp_disturb_sample *s, int tid) {
  for (int t = 0; t < s->nthreads; ++t)
    if (s->tids[t] == tid) return t;
  return -1;
}

/* This rank's threads between the samples: a thread born in between counts
 * from zero; one that ended in between is lost (Linux keeps no schedstat of
 * dead threads), which undercounts only. */
typedef struct {
  long long on_cpu, waiting, migrations;
} thread_totals;

static thread_totals threads_between(const mapp_disturb_sample *a, const mapp_disturb_sample *b) {
  thread_totals sum = {0, 0, 0};
  for (int t = 0; t < b->nthreads; ++t) {
    int s = thread_index(a, b->tids[t]);
    long long cpu0 = s >= 0 ? a->on_cpu_ns[s] : 0, wait0 = s >= 0 ? a->waiting_ns[s] : 0;
    long long mig0 = s >= 0 ? a->migrations[s] : 0;
    if (b->on_cpu_ns[t] < 0 || cpu0 < 0) sum.on_cpu = -1;
    if (sum.on_cpu >= 0) sum.on_cpu += b->on_cpu_ns[t] - cpu0, sum.waiting += b->waiting_ns[t] - wait0;
    if (b->migrations[t] < 0 || mig0 < 0) sum.migrations = -1;
    if (sum.migrations >= 0) sum.migrations += b->migrations[t] - mig0;
  }
  return sum;
}

int mapp_disturbance_between(const mapp_disturb_sample *a, const mapp_disturb_sample *b, MPI_Comm comm,
                             mapp_disturbance *out) {
  thread_totals threads = threads_between(a, b);
  long long all = b->cpu_ticks[0] - a->cpu_ticks[0], stolen = b->cpu_ticks[1] - a->cpu_ticks[1];
  bool ticks_known = a->cpu_ticks[0] >= 0 && b->cpu_ticks[0] >= 0;
  double steal = ticks_known && all > 0 ? (double)stolen / (double)all : (ticks_known ? 0.0 : -1.0);
  long long busy = threads.on_cpu + threads.waiting;
  double delay = threads.on_cpu < 0 ? -1.0 : busy > 0 ? (double)threads.waiting / (double)busy : 0.0;
  /* Maxima: the interval, steal and its ticks, run delay; unknown (-1) loses to any known value. */
  double mx[3] = {b->when - a->when, steal, delay}, max_out[3];
  double sums[3] = {threads.waiting > 0 ? 1e-9 * (double)threads.waiting : 0.0,
                    (double)(b->involuntary - a->involuntary), (double)threads.migrations};
  double sum_out[3], unknown_migrations = threads.migrations < 0 ? 1.0 : 0.0, any_unknown;
  MAPP_MPI(MPI_Allreduce(mx, max_out, 3, MPI_DOUBLE, MPI_MAX, comm));
  MAPP_MPI(MPI_Allreduce(sums, sum_out, 3, MPI_DOUBLE, MPI_SUM, comm));
  MAPP_MPI(MPI_Allreduce(&unknown_migrations, &any_unknown, 1, MPI_DOUBLE, MPI_MAX, comm));
  /* The ticks of the rank whose node saw the most steal. */
  struct {
    double steal;
    int rank;
  } mine = {steal, 0}, worst;
  MPI_Comm_rank(comm, &mine.rank);
  MAPP_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  long long ticks[2] = {all, stolen};
  MAPP_MPI(MPI_Bcast(ticks, 2, MPI_LONG_LONG, worst.rank, comm));
  double loads[2] = {a->load, b->load};
  MAPP_MPI(MPI_Bcast(loads, 2, MPI_DOUBLE, 0, comm));
  *out = (mapp_disturbance){.measured = true, .interval_s = max_out[0], .steal_fraction = max_out[1],
                            .all_ticks = ticks[0], .steal_ticks = ticks[1], .run_delay_fraction = max_out[2],
                            .run_delay_s = sum_out[0], .involuntary_switches = (long)sum_out[1],
                            .migrations = any_unknown > 0 ? -1 : (long long)sum_out[2], .load_before = loads[0],
                            .load_after = loads[1]};
  return MAPP_OK;
}
