/* Core-to-core hand-off round trip (see mapp_latency.h). */
#define _GNU_SOURCE
#include "mapp_latency.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "mapp_error.h"
#include "mapp_timer.h"

#define BATCH_MAX_S 0.1 /* a batch's time limit (mapp_latency.h) */

typedef struct {
  _Alignas(64) atomic_long ping; /* the measuring thread's trip number */
  _Alignas(64) atomic_long pong; /* the echo's answer */
  _Alignas(64) atomic_bool abort;
  long total;
  int cpu;
  int pinned; /* 1 pinned, -1 could not pin */
} bounce;

static int pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* Waits until *word == want; false (and the abort flag set) when a second
 * passes first, or when the other side aborted. */
static bool await(bounce *b, atomic_long *word, long want) {
  double deadline = 0.0;
  for (unsigned i = 1; atomic_load_explicit(word, memory_order_acquire) != want; ++i) {
    if ((i & 4095) == 0) {
      if (atomic_load_explicit(&b->abort, memory_order_relaxed)) return false;
      if (deadline == 0.0) deadline = mapp_now() + 1.0;
      else if (mapp_now() > deadline) {
        atomic_store(&b->abort, true);
        return false;
      }
    }
  }
  return true;
}

static void *echo(void *arg) {
  bounce *b = arg;
  b->pinned = pin_self(b->cpu) == 0 ? 1 : -1;
  for (long i = 1; i <= b->total; ++i) {
    if (!await(b, &b->ping, i)) return NULL;
    atomic_store_explicit(&b->pong, i, memory_order_release);
  }
  return NULL;
}

static int compare_doubles(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The measuring side, on its own pinned thread so the caller's affinity is
 * left alone. */
typedef struct {
  bounce *b;
  int cpu, batches;
  long trips;
  double *batch_ns;
  int status; /* 0, 1 could not pin, 2 aborted */
} measure_arg;

static void *measure(void *arg) {
  measure_arg *m = arg;
  bounce *b = m->b;
  if (pin_self(m->cpu) != 0) {
    m->status = 1;
    atomic_store(&b->abort, true);
    return NULL;
  }
  long trip = 0;
  for (int k = 0; k < m->batches; ++k) {
    double t0 = mapp_now();
    long done = 0;
    for (; done < m->trips; ++done) {
      /* On a loaded node a trip can take a time slice: cut the batch short
       * rather than let the measurement take minutes (the echo follows the
       * trip numbers, so the next batch goes on where this one stopped). */
      if ((done & 63) == 63 && mapp_now() - t0 > BATCH_MAX_S) break;
      atomic_store_explicit(&b->ping, ++trip, memory_order_release);
      if (!await(b, &b->pong, trip)) {
        m->status = 2;
        return NULL;
      }
    }
    m->batch_ns[k] = (mapp_now() - t0) * 1e9 / (double)done;
  }
  return NULL;
}

int mapp_core_round_trip(int cpu_a, int cpu_b, long trips, int batches, double *ns) {
  if (trips < 1 || batches < 1 || batches > 1000 || cpu_a < 0 || cpu_b < 0)
    return mapp_fail(MAPP_ERR_INPUT, "core round trip: %ld trips x %d batches between CPUs %d and %d", trips,
                     batches, cpu_a, cpu_b);
  bounce *b = aligned_alloc(64, sizeof *b);
  double *batch_ns = calloc((size_t)batches, sizeof *batch_ns);
  if (!b || !batch_ns) {
    free(b);
    free(batch_ns);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for the core round trip");
  }
  *b = (bounce){.total = trips * batches, .cpu = cpu_b};
  atomic_init(&b->ping, 0);
  atomic_init(&b->pong, 0);
  atomic_init(&b->abort, false);
  measure_arg m = {.b = b, .cpu = cpu_a, .batches = batches, .trips = trips, .batch_ns = batch_ns};
  pthread_t echo_thread, measure_thread;
  int status = MAPP_OK;
  if (pthread_create(&echo_thread, NULL, echo, b) != 0) {
    status = mapp_fail(MAPP_ERR_SYSTEM, "core round trip: cannot start a thread");
  } else {
    if (pthread_create(&measure_thread, NULL, measure, &m) != 0) {
      atomic_store(&b->abort, true);
      status = mapp_fail(MAPP_ERR_SYSTEM, "core round trip: cannot start a thread");
    } else {
      pthread_join(measure_thread, NULL);
    }
    atomic_store(&b->abort, true); /* the echo may still wait for a trip that never comes */
    pthread_join(echo_thread, NULL);
  }
  if (status == MAPP_OK && (m.status == 1 || b->pinned < 0))
    status = mapp_fail(MAPP_ERR_SYSTEM, "core round trip: cannot pin threads to CPUs %d and %d", cpu_a, cpu_b);
  else if (status == MAPP_OK && m.status == 2)
    status = mapp_fail(MAPP_ERR_SYSTEM, "core round trip: a hand-off between CPUs %d and %d took over a second",
                       cpu_a, cpu_b);
  if (status == MAPP_OK) {
    qsort(batch_ns, (size_t)batches, sizeof *batch_ns, compare_doubles);
    *ns = batch_ns[batches / 2];
  }
  free(batch_ns);
  free(b);
  return status;
}

bool mapp_two_cpus(int *a, int *b) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &set)) *(found++ ? b : a) = c;
  return found == 2;
}
