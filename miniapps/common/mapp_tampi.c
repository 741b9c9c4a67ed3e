#include "mapp_tampi.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mapp_error_mpi.h"

/* Live tasks allowed per team thread: half of libgomp's 64 x nthreads
 * undeferred threshold, so a task finished but not yet retired by the
 * runtime (our count drops first) never tips it over. */
enum { WINDOW_PER_THREAD = 32, INITIAL_CAPACITY = 64 };

int mapp_tampi_init(mapp_tampi *t, int team_threads) {
  *t = (mapp_tampi){.window = (long)WINDOW_PER_THREAD * (team_threads > 0 ? team_threads : 1)};
  atomic_init(&t->live, 0);
  if (pthread_mutex_init(&t->lock, NULL) != 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot create the request poller's mutex");
  t->capacity = INITIAL_CAPACITY;
  t->requests = malloc(sizeof *t->requests * (size_t)t->capacity);
  t->events = malloc(sizeof *t->events * (size_t)t->capacity);
  t->completed = malloc(sizeof *t->completed * (size_t)t->capacity);
  if (!t->requests || !t->events || !t->completed) {
    mapp_tampi_destroy(t);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for the request poller");
  }
  return MAPP_OK;
}

void mapp_tampi_destroy(mapp_tampi *t) {
  free(t->requests);
  free(t->events);
  free(t->completed);
  t->requests = NULL;
  t->events = NULL;
  t->completed = NULL;
  pthread_mutex_destroy(&t->lock);
}

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

void mapp_tampi_created(mapp_tampi *t) { atomic_fetch_add(&t->live, 1); }

void mapp_tampi_done(mapp_tampi *t) { atomic_fetch_sub(&t->live, 1); }

static void complete(mapp_tampi *t, omp_event_handle_t event) {
  omp_fulfill_event(event);
  atomic_fetch_sub(&t->live, 1);
}

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
  } else {
    record_failure(t, mapp_fail(MAPP_ERR_SYSTEM, "out of memory registering an MPI request"));
  }
  pthread_mutex_unlock(&t->lock);
  /* Without a slot the task cannot be tracked: release it so the graph
   * drains and the failure is reported. */
  if (!room) complete(t, event);
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
  }
  pthread_mutex_unlock(&t->lock);
  return outcount > 0 ? outcount : 0;
}

/* Poll until done(t): yield first (a worker may need this core), then sleep
 * with exponential back-off up to 50 us so an idle poller does not steal a
 * core from the computation on an oversubscribed node. */
static void poll_until(mapp_tampi *t, bool (*done)(mapp_tampi *)) {
  int idle = 0;
  long last = atomic_load(&t->live);
  while (!done(t)) {
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
      struct timespec pause = {0, (us < 50 ? us : 50) * 1000L};
      nanosleep(&pause, NULL);
    }
  }
}

static bool below_window(mapp_tampi *t) { return atomic_load(&t->live) < t->window; }
static bool none_live(mapp_tampi *t) { return atomic_load(&t->live) == 0; }

void mapp_tampi_throttle(mapp_tampi *t) { poll_until(t, below_window); }
void mapp_tampi_drain(mapp_tampi *t) { poll_until(t, none_live); }
