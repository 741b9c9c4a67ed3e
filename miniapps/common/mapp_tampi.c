#include "mapp_tampi.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapp_error_mpi.h"
#include "mapp_timer.h"

enum { INITIAL_CAPACITY = 64 }; /* requests outstanding before the arrays grow */

/* ---------------------------------------------------------------- watchdog */

/* The watchdog's check: no node completed for watchdog_s while some are
 * live. Its clock (watch_seen, watch_since) is the watchdog thread's own. */
static bool stalled(void *arg, char *line, size_t len) {
  mapp_tampi *t = arg;
  long now = atomic_load(&t->graph->progress);
  if (now != t->watch_seen || atomic_load(&t->graph->live) == 0) {
    t->watch_seen = now;
    t->watch_since = mapp_now();
    return false;
  }
  double idle_s = mapp_now() - t->watch_since;
  if (idle_s <= t->cfg.watchdog_s) return false;
  char polled[96] = "the requests were never tested";
  if (atomic_load(&t->polls) > 0)
    snprintf(polled, sizeof polled, "the requests were last tested %.2f s ago", mapp_now() - t->last_poll);
  snprintf(line, len,
           "%s: the task graph made no progress for %.1f s (watchdog): %ld tasks live, %d MPI requests "
           "outstanding, %d tasks waiting in MPI, %s (%ld polling-task runs, %s)",
           t->cfg.prog, idle_s, atomic_load(&t->graph->live), atomic_load(&t->outstanding), atomic_load(&t->waiting),
           polled, atomic_load(&t->poll_tasks),
           t->cfg.mode == MAPP_TAMPI_BLOCKING ? "blocking mode"
           : t->cfg.poller == MAPP_TAMPI_POLL_TASK ? "task poller" : "thread poller");
  return true;
}

/* ---------------------------------------------------------------- set-up */

static bool thread_polls(const mapp_tampi_config *cfg) {
  return cfg->poller == MAPP_TAMPI_POLL_THREAD && cfg->mode == MAPP_TAMPI_NONBLOCKING;
}

int mapp_tampi_team(const mapp_tampi_config *cfg, int workers, int max_waiting) {
  return workers + (cfg->mode == MAPP_TAMPI_BLOCKING ? max_waiting : 0) + thread_polls(cfg);
}

static int alloc_arrays(mapp_tampi *t) {
  t->capacity = INITIAL_CAPACITY;
  t->requests = malloc(sizeof *t->requests * (size_t)t->capacity);
  t->nodes = malloc(sizeof *t->nodes * (size_t)t->capacity);
  t->completed = malloc(sizeof *t->completed * (size_t)t->capacity);
  if (!t->requests || !t->nodes || !t->completed)
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for the request poller");
  return MAPP_OK;
}

int mapp_tampi_init(mapp_tampi *t, mapp_df *graph, int workers, int max_waiting, const mapp_tampi_config *cfg) {
  *t = (mapp_tampi){.cfg = *cfg, .graph = graph, .workers = workers,
                    .spare = cfg->mode == MAPP_TAMPI_BLOCKING ? max_waiting : 0};
  atomic_init(&t->waiting, 0);
  atomic_init(&t->outstanding, 0);
  atomic_init(&t->polls, 0);
  atomic_init(&t->poll_tasks, 0);
  const char *once = getenv("MAPP_TAMPI_POLL_ONCE");
  t->poll_once = once && strcmp(once, "1") == 0;
  if (pthread_mutex_init(&t->lock, NULL) != 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot create the request poller's mutex");
  int status = alloc_arrays(t);
  if (status == MAPP_OK && cfg->mode == MAPP_TAMPI_BLOCKING) {
    if (sem_init(&t->cores, 0, (unsigned)workers) != 0)
      status = mapp_fail(MAPP_ERR_SYSTEM, "cannot create the %d core tokens of blocking mode", workers);
    else
      t->cores_made = true;
  }
  t->watch_seen = 0;
  t->watch_since = mapp_now();
  if (status == MAPP_OK && cfg->watchdog_s > 0) status = mapp_watchdog_start(&t->watchdog, stalled, t, cfg->report);
  if (status != MAPP_OK) mapp_tampi_destroy(t);
  return status;
}

void mapp_tampi_destroy(mapp_tampi *t) {
  mapp_watchdog_stop(&t->watchdog);
  free(t->requests);
  free(t->nodes);
  free(t->completed);
  t->requests = NULL;
  t->nodes = NULL;
  t->completed = NULL;
  if (t->cores_made) sem_destroy(&t->cores);
  t->cores_made = false;
  pthread_mutex_destroy(&t->lock);
}

/* ---------------------------------------------------------------- failures */

/* With t->lock held: keep the first failure and its message. */
static void record_failure(mapp_tampi *t, int status) {
  if (t->status != MAPP_OK) return;
  t->status = status;
  snprintf(t->message, sizeof t->message, "%s", mapp_error_message());
}

void mapp_tampi_fail(mapp_tampi *t, int status) {
  pthread_mutex_lock(&t->lock);
  record_failure(t, status);
  pthread_mutex_unlock(&t->lock);
}

int mapp_tampi_status(const mapp_tampi *t) {
  return t->status == MAPP_OK ? MAPP_OK : mapp_fail(t->status, "%s", t->message);
}

/* ---------------------------------------------------------------- nodes */

static void take_core(mapp_tampi *t) {
  while (sem_wait(&t->cores) != 0 && errno == EINTR) continue;
}

void mapp_tampi_begin(mapp_tampi *t) {
  if (t->cores_made) take_core(t);
}

void mapp_tampi_done(mapp_tampi *t) {
  if (t->cores_made) sem_post(&t->cores);
}

/* ---------------------------------------------------------------- requests */

/* With t->lock held: room for one more request, or false. */
static bool reserve(mapp_tampi *t) {
  if (t->count < t->capacity) return true;
  int capacity = 2 * t->capacity;
  MPI_Request *requests = realloc(t->requests, sizeof *requests * (size_t)capacity);
  if (requests) t->requests = requests;
  mapp_df_node **nodes = realloc(t->nodes, sizeof *nodes * (size_t)capacity);
  if (nodes) t->nodes = nodes;
  int *completed = realloc(t->completed, sizeof *completed * (size_t)capacity);
  if (completed) t->completed = completed;
  if (!requests || !nodes || !completed) return false;
  t->capacity = capacity;
  return true;
}

void mapp_tampi_iwait(mapp_tampi *t, MPI_Request req, mapp_df_node *node) {
  /* Eager sends and local puts are often complete already: nothing to wait
   * for, instead of a poller round trip later (TAMPI does the same). */
  int done = 0;
  int status = mapp_mpi_check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
  if (status != MAPP_OK) mapp_tampi_fail(t, status);
  if (done || status != MAPP_OK) return;
  pthread_mutex_lock(&t->lock);
  /* Without a slot the request cannot be tracked: the node is left to end
   * with its body, so the graph drains and the failure is reported. */
  bool room = reserve(t);
  if (room) {
    mapp_df_hold(node);
    t->requests[t->count] = req;
    t->nodes[t->count++] = node;
    atomic_store(&t->outstanding, t->count);
  } else {
    record_failure(t, mapp_fail(MAPP_ERR_SYSTEM, "out of memory registering an MPI request"));
  }
  pthread_mutex_unlock(&t->lock);
}

/* The task keeps its core while its tests spin for a tenth of the polling
 * period (most messages arrive within it, and a hand-over costs a switch);
 * then it gives the core back until the request completes, so another
 * thread runs a task on it, and sleeps a tenth of the period a turn. */
void mapp_tampi_wait(mapp_tampi *t, MPI_Request *req) {
  bool gave_core = false;
  double start = mapp_now(), spin = t->cfg.poll_s / 10;
  for (;;) {
    int done = 0;
    int status = mapp_mpi_check(MPI_Test(req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    atomic_fetch_add(&t->polls, 1);
    t->last_poll = mapp_now();
    if (status != MAPP_OK) mapp_tampi_fail(t, status);
    if (done || status != MAPP_OK) break;
#pragma omp taskyield
    if (!gave_core && t->last_poll - start < spin) continue;
    if (!gave_core && t->cores_made) {
      sem_post(&t->cores);
      atomic_fetch_add(&t->waiting, 1);
      gave_core = true;
    }
    mapp_sleep(spin);
  }
  if (gave_core) {
    atomic_fetch_sub(&t->waiting, 1);
    take_core(t);
  }
}

/* With t->lock held: after a failed test nothing can be trusted; release
 * every node so the graph drains and the first failure is reported. */
static void release_all(mapp_tampi *t) {
  for (int i = 0; i < t->count; ++i) mapp_df_release(t->graph, t->nodes[i]);
  t->count = 0;
}

int mapp_tampi_poll(mapp_tampi *t) {
  pthread_mutex_lock(&t->lock);
  int outcount = 0;
  atomic_fetch_add(&t->polls, 1);
  t->last_poll = mapp_now();
  if (t->count > 0) {
    int status = mapp_mpi_check(MPI_Testsome(t->count, t->requests, &outcount, t->completed,
                                             MPI_STATUSES_IGNORE), "MPI_Testsome");
    if (status != MAPP_OK) {
      record_failure(t, status);
      outcount = t->count;
      release_all(t);
    } else if (outcount > 0 && outcount != MPI_UNDEFINED) {
      for (int k = 0; k < outcount; ++k) mapp_df_release(t->graph, t->nodes[t->completed[k]]);
      /* MPI_Testsome set the completed requests to MPI_REQUEST_NULL. */
      int kept = 0;
      for (int i = 0; i < t->count; ++i)
        if (t->requests[i] != MPI_REQUEST_NULL) {
          t->requests[kept] = t->requests[i];
          t->nodes[kept++] = t->nodes[i];
        }
      t->count = kept;
    }
    atomic_store(&t->outstanding, t->count);
  }
  pthread_mutex_unlock(&t->lock);
  return outcount > 0 ? outcount : 0;
}

/* ---------------------------------------------------------------- the polling task */

static void polling_task(mapp_tampi *t);

/* One run: test the requests if the period has passed, or at once if this
 * worker is idle (no node completed since the last run: the runtime had
 * nothing else for it). Then re-create the task, which hands the worker
 * back to the runtime, and end. An idle worker thus tests continuously, as
 * Nanos6's idle workers run TAMPI's polling service, yielding the core
 * between tests to any other process on it; a busy one tests once a
 * period between its nodes. */
static void poll_turn(mapp_tampi *t) {
  atomic_fetch_add(&t->poll_tasks, 1);
  if (mapp_df_finished(t->graph)) return;
  bool idle = atomic_load(&t->graph->progress) == t->progress_seen;
  bool tested = idle || mapp_now() >= t->last_poll + t->cfg.poll_s;
  if (tested && mapp_tampi_poll(t) == 0 && idle) sched_yield();
  t->progress_seen = atomic_load(&t->graph->progress);
  if (!t->poll_once) polling_task(t);
}

static void polling_task(mapp_tampi *t) {
#pragma omp task
  poll_turn(t);
}

/* The polling thread: poll until the graph is done; yield first (a worker
 * may need this core), then sleep with exponential back-off up to 50 us so
 * an idle poller does not steal a core from the computation on an
 * oversubscribed node. */
static void poll_until_done(mapp_tampi *t) {
  int idle = 0;
  long last = atomic_load(&t->graph->progress);
  while (!mapp_df_finished(t->graph)) {
    long progress = atomic_load(&t->graph->progress);
    if (mapp_tampi_poll(t) > 0 || progress != last) {
      idle = 0;
      last = progress;
      continue;
    }
    if (++idle < 64) {
      sched_yield();
    } else {
      long us = 1L << (idle - 64 < 6 ? idle - 64 : 6);
      mapp_sleep((double)(us < 50 ? us : 50) * 1e-6);
    }
  }
}

void mapp_tampi_run(mapp_tampi *t) {
  t->last_poll = mapp_now();
  t->progress_seen = -1;
  if (thread_polls(&t->cfg)) poll_until_done(t);
  else if (t->cfg.poller == MAPP_TAMPI_POLL_TASK && t->cfg.mode == MAPP_TAMPI_NONBLOCKING) polling_task(t);
}
