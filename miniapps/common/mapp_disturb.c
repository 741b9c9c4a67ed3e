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

double mapp_iterations_fastest_s(const mapp_iterations *it) {
  int first = mapp_iterations_first_timed(it);
  double fastest = first < it->count ? it->seconds[first] : 0.0;
  for (int i = first + 1; i < it->count; ++i)
    if (it->seconds[i] < fastest) fastest = it->seconds[i];
  return fastest;
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
