#include "mapp_tampi.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapp_error_mpi.h"
#include "mapp_timer.h"

/* Live tasks allowed per team thread: half of libgomp's 64 x nthreads
 * undeferred threshold, so a task finished but not yet retired by the
 * runtime (our count drops first) never tips it over. */
enum { WINDOW_PER_THREAD = 32, INITIAL_CAPACITY = 64 };
/* The sleeping creator, once the window is full, is woken when the live
 * tasks fall to window / REFILL_FROM, so each wake-up creates most of a
 * window and it takes a worker's core rarely (every wake-up is a switch);
 * or sooner, when a worker found nothing to run (nudge_creator): live tasks
 * that wait on another rank may need tasks not yet created to complete
 * there, and waiting for the low mark could then wait for ever. */
enum { REFILL_FROM = 8 };

/* ---------------------------------------------------------------- watchdog */

/* The watchdog's check: no task completed for watchdog_s while some are
 * live. Its clock (watch_seen, watch_since) is the watchdog thread's own. */
static bool stalled(void *arg, char *line, size_t len) {
  mapp_tampi *t = arg;
  long now = atomic_load(&t->progress);
  if (now != t->watch_seen || atomic_load(&t->live) == 0) {
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
           t->cfg.prog, idle_s, atomic_load(&t->live), atomic_load(&t->outstanding), atomic_load(&t->waiting),
           polled, atomic_load(&t->poll_tasks),
           t->cfg.mode == MAPP_TAMPI_BLOCKING ? "blocking mode"
           : t->cfg.poller == MAPP_TAMPI_POLL_TASK ? "task poller" : "thread poller");
  return true;
}

/* ---------------------------------------------------------------- set-up */

int mapp_tampi_team(const mapp_tampi *t) { return t->workers + t->spare + 1; }

static int alloc_arrays(mapp_tampi *t) {
  t->capacity = INITIAL_CAPACITY;
  t->requests = malloc(sizeof *t->requests * (size_t)t->capacity);
  t->events = malloc(sizeof *t->events * (size_t)t->capacity);
  t->completed = malloc(sizeof *t->completed * (size_t)t->capacity);
  if (!t->requests || !t->events || !t->completed)
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for the request poller");
  return MAPP_OK;
}

int mapp_tampi_init(mapp_tampi *t, int workers, int max_waiting, const mapp_tampi_config *cfg) {
  *t = (mapp_tampi){.cfg = *cfg, .workers = workers, .spare = cfg->mode == MAPP_TAMPI_BLOCKING ? max_waiting : 0};
  t->window = (long)WINDOW_PER_THREAD * mapp_tampi_team(t);
  atomic_init(&t->waiting, 0);
  atomic_init(&t->live, 0);
  atomic_init(&t->progress, 0);
  atomic_init(&t->outstanding, 0);
  atomic_init(&t->creating, true);
  atomic_init(&t->creator_asleep, false);
  atomic_init(&t->wake_at, 0);
  atomic_init(&t->nudged, false);
  atomic_init(&t->polls, 0);
  atomic_init(&t->poll_tasks, 0);
  const char *once = getenv("MAPP_TAMPI_POLL_ONCE");
  t->poll_once = once && strcmp(once, "1") == 0;
  if (pthread_mutex_init(&t->lock, NULL) != 0 || pthread_mutex_init(&t->room_lock, NULL) != 0 ||
      pthread_cond_init(&t->room, NULL) != 0)
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
  free(t->events);
  free(t->completed);
  t->requests = NULL;
  t->events = NULL;
  t->completed = NULL;
  if (t->cores_made) sem_destroy(&t->cores);
  t->cores_made = false;
  pthread_mutex_destroy(&t->lock);
  pthread_mutex_destroy(&t->room_lock);
  pthread_cond_destroy(&t->room);
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

/* ---------------------------------------------------------------- live tasks */

void mapp_tampi_created(mapp_tampi *t) { atomic_fetch_add(&t->live, 1); }

/* A task completed: count it, and wake the creator when the live tasks
 * fell to the level it sleeps for. The creator publishes creator_asleep
 * before it checks live under room_lock, and this side decrements live
 * before it reads creator_asleep, so one of the two sees the other. */
static void wake_creator(mapp_tampi *t) {
  pthread_mutex_lock(&t->room_lock);
  pthread_cond_signal(&t->room);
  pthread_mutex_unlock(&t->room_lock);
}

static void retire(mapp_tampi *t) {
  long left = atomic_fetch_sub(&t->live, 1) - 1;
  atomic_fetch_add(&t->progress, 1);
  if (atomic_load(&t->creator_asleep) && left <= atomic_load(&t->wake_at)) wake_creator(t);
}

/* A worker is idle (its polling task found nothing else done, or its task
 * waits in MPI): if the creator sleeps with room in the window, it creates
 * now rather than at the low mark. */
static void nudge_creator(mapp_tampi *t) {
  if (!atomic_load(&t->creator_asleep) || atomic_load(&t->live) >= t->window) return;
  atomic_store(&t->nudged, true);
  wake_creator(t);
}

static void take_core(mapp_tampi *t) {
  while (sem_wait(&t->cores) != 0 && errno == EINTR) continue;
}

void mapp_tampi_begin(mapp_tampi *t) {
  if (t->cores_made) take_core(t);
}

void mapp_tampi_done(mapp_tampi *t) {
  if (t->cores_made) sem_post(&t->cores);
  retire(t);
}

static void complete(mapp_tampi *t, omp_event_handle_t event) {
  omp_fulfill_event(event);
  retire(t);
}

/* ---------------------------------------------------------------- requests */

/* With t->lock held: room for one more request, or false. */
static bool reserve(mapp_tampi *t) {
  if (t->count < t->capacity) return true;
  int capacity = 2 * t->capacity;
  MPI_Request *requests = realloc(t->requests, sizeof *requests * (size_t)capacity);
  if (requests) t->requests = requests;
  omp_event_handle_t *events = realloc(t->events, sizeof *events * (size_t)capacity);
  if (events) t->events = events;
  int *completed = realloc(t->completed, sizeof *completed * (size_t)capacity);
  if (completed) t->completed = completed;
  if (!requests || !events || !completed) return false;
  t->capacity = capacity;
  return true;
}

void mapp_tampi_iwait(mapp_tampi *t, MPI_Request req, omp_event_handle_t event) {
  /* Eager sends and local puts are often complete already: release the
   * task now instead of a poller round trip later (TAMPI does the same). */
  int done = 0;
  int status = mapp_mpi_check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
  if (status != MAPP_OK) mapp_tampi_fail(t, status);
  if (done || status != MAPP_OK) {
    complete(t, event);
    return;
  }
  pthread_mutex_lock(&t->lock);
  bool room = reserve(t);
  if (room) {
    t->requests[t->count] = req;
    t->events[t->count++] = event;
    atomic_store(&t->outstanding, t->count);
  } else {
    record_failure(t, mapp_fail(MAPP_ERR_SYSTEM, "out of memory registering an MPI request"));
  }
  pthread_mutex_unlock(&t->lock);
  /* Without a slot the task cannot be tracked: release it so the graph
   * drains and the failure is reported. */
  if (!room) complete(t, event);
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
      nudge_creator(t);
    }
    mapp_sleep(spin);
  }
  if (gave_core) {
    atomic_fetch_sub(&t->waiting, 1);
    take_core(t);
  }
}

/* With t->lock held: after a failed test nothing can be trusted; release
 * every task so the graph drains and the first failure is reported. */
static void release_all(mapp_tampi *t) {
  for (int i = 0; i < t->count; ++i) complete(t, t->events[i]);
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
      for (int k = 0; k < outcount; ++k) complete(t, t->events[t->completed[k]]);
      /* MPI_Testsome set the completed requests to MPI_REQUEST_NULL. */
      int kept = 0;
      for (int i = 0; i < t->count; ++i)
        if (t->requests[i] != MPI_REQUEST_NULL) {
          t->requests[kept] = t->requests[i];
          t->events[kept++] = t->events[i];
        }
      t->count = kept;
    }
    atomic_store(&t->outstanding, t->count);
  }
  pthread_mutex_unlock(&t->lock);
  return outcount > 0 ? outcount : 0;
}

/* ---------------------------------------------------------------- the polling task */

static bool graph_done(mapp_tampi *t) { return !atomic_load(&t->creating) && atomic_load(&t->live) == 0; }

static void polling_task(mapp_tampi *t);

/* One run: test the requests if the period has passed, or at once if this
 * worker is idle (no task completed since the last run: the runtime had
 * nothing else for it). Then re-create the task, which hands the worker
 * back to the runtime, and end. An idle worker thus tests continuously, as
 * Nanos6's idle workers run TAMPI's polling service, yielding the core
 * between tests to any other process on it; a busy one tests once a
 * period between its tasks. */
static void poll_turn(mapp_tampi *t) {
  atomic_fetch_add(&t->poll_tasks, 1);
  if (graph_done(t)) return;
  bool idle = atomic_load(&t->progress) == t->progress_seen;
  bool tested = idle || mapp_now() >= t->last_poll + t->cfg.poll_s;
  if (tested && mapp_tampi_poll(t) == 0 && idle) {
    nudge_creator(t);
    sched_yield();
  }
  t->progress_seen = atomic_load(&t->progress);
  if (!t->poll_once) polling_task(t);
}

static void polling_task(mapp_tampi *t) {
#pragma omp task
  poll_turn(t);
}

void mapp_tampi_start(mapp_tampi *t) {
  t->last_poll = mapp_now();
  t->progress_seen = -1;
  if (t->cfg.poller == MAPP_TAMPI_POLL_TASK && t->cfg.mode == MAPP_TAMPI_NONBLOCKING) polling_task(t);
}

/* ---------------------------------------------------------------- the creator */

/* Sleep until at most `level` tasks are live, or (nudgeable) a worker is
 * idle while the window has room. */
static void sleep_until(mapp_tampi *t, long level, bool nudgeable) {
  if (atomic_load(&t->live) <= level) return;
  pthread_mutex_lock(&t->room_lock);
  atomic_store(&t->wake_at, level);
  atomic_store(&t->nudged, false);
  atomic_store(&t->creator_asleep, true);
  while (atomic_load(&t->live) > level && !(nudgeable && atomic_load(&t->nudged))) {
    /* A bounded wait: a wake-up lost to a task that completed between the
     * check and the wait costs 10 ms, not the run. */
    struct timespec until = mapp_deadline(CLOCK_REALTIME, 10e-3);
    pthread_cond_timedwait(&t->room, &t->room_lock, &until);
  }
  atomic_store(&t->creator_asleep, false);
  pthread_mutex_unlock(&t->room_lock);
}

/* Poll until at most `level` tasks are live: yield first (a worker may need
 * this core), then sleep with exponential back-off up to 50 us so an idle
 * poller does not steal a core from the computation on an oversubscribed
 * node. */
static void poll_until(mapp_tampi *t, long level) {
  int idle = 0;
  long last = atomic_load(&t->live);
  while (atomic_load(&t->live) > level) {
    long live = atomic_load(&t->live);
    if (mapp_tampi_poll(t) > 0 || live != last) {
      idle = 0;
      last = live;
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

/* The creating thread polls only when it is the poller, and then creates
 * again as soon as the window has room; otherwise it sleeps (the polling
 * task, or in blocking mode the tasks themselves, test the requests). */
void mapp_tampi_throttle(mapp_tampi *t) {
  if (atomic_load(&t->live) < t->window) return;
  if (t->cfg.poller == MAPP_TAMPI_POLL_THREAD && t->cfg.mode == MAPP_TAMPI_NONBLOCKING)
    poll_until(t, t->window - 1);
  else
    sleep_until(t, t->window / REFILL_FROM, true);
}

void mapp_tampi_drain(mapp_tampi *t) {
  atomic_store(&t->creating, false);
  if (t->cfg.poller == MAPP_TAMPI_POLL_THREAD && t->cfg.mode == MAPP_TAMPI_NONBLOCKING) poll_until(t, 0);
  else sleep_until(t, 0, false);
}
