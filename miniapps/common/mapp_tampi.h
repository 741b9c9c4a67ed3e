/* Request-bound task completion: TAMPI's two modes for standard OpenMP.
 *
 * Non-blocking mode (TAMPI_Iwait): a task that starts a non-blocking MPI
 * operation is created with `detach(event)`; its body starts the operation
 * and hands the request and the event to mapp_tampi_iwait, then returns.
 * The task's dependencies are released only when the request completes: a
 * poller tests the outstanding requests with MPI_Testsome and fulfils the
 * events of the completed ones (omp_fulfill_event). No thread blocks in
 * MPI_Wait, so computation goes on while messages are in flight.
 *
 * Blocking mode (TAMPI's MPI_Wait inside a task): the task starts the
 * operation and waits for it inside its body (mapp_tampi_wait: a test loop
 * with `taskyield` at each turn, the OpenMP form of TAMPI pausing the task).
 * TAMPI's runtime then gives the task's core to another task. libgomp's
 * taskyield does nothing, so a waiting task would hold its worker, and with
 * one worker a receive that became ready before its message deadlocks the
 * ranks (measured: 2 ranks, 1 thread, tiny). So blocking mode does what
 * Nanos6 does when a task blocks: the core, not the thread, is the unit.
 * The team has spare threads; a task runs only while it holds one of
 * `workers` core tokens (mapp_tampi_begin/_done), and a waiting task gives
 * its token back until its request completes, so another thread runs a
 * task on that core meanwhile.
 * Needs MPI_THREAD_MULTIPLE either way: task bodies call MPI on any thread.
 *
 * Who polls (mapp_tampi_poller):
 *   MAPP_TAMPI_POLL_TASK: a polling task, as TAMPI's polling instance runs
 *     inside the tasking runtime: the runtime schedules it on its own
 *     workers; each run tests the requests, then re-creates the task, which
 *     returns the worker to the runtime until the new task is scheduled. A
 *     worker with other tasks to run tests once every period
 *     (TAMPI_POLLING_PERIOD); an idle one (the task ran twice with no other
 *     task completed in between) tests at every run, yielding its core in
 *     between, as Nanos6's idle workers call TAMPI's polling service. The
 *     thread that creates the tasks does not poll: it sleeps while the
 *     window below is full.
 *   MAPP_TAMPI_POLL_THREAD: the thread that creates the tasks polls, with
 *     back-off, between creating them and until all are done: one thread
 *     more than the workers, busy whenever it polls.
 *
 * Why a window of live tasks (GCC 12 libgomp): a task created while the team
 * has more than 64 x nthreads tasks runs undeferred, and before it runs
 * libgomp executes the tasks it depends on in
 * gomp_task_maybe_wait_for_dependencies, which ignores `detach` and frees a
 * detached task when its body returns; the later omp_fulfill_event then
 * touches freed memory (observed: "event is invalid" or SIGSEGV). `taskwait
 * depend` takes the same path. Keeping the live tasks under the window
 * (well below 64 x nthreads) and never using `taskwait depend` keeps every
 * task deferred, where `detach` works. Only a thread outside the workers can
 * wait for the window without stalling them: libgomp runs other tasks only
 * at a barrier or a taskwait (its `taskyield` does nothing), and a taskwait
 * would wait for every task created so far. So the creating thread is one
 * more thread in the team either way; with the polling task it sleeps.
 *
 * A watchdog (mapp_watchdog.h) turns a graph that makes no progress for
 * watchdog_s into one line on stderr and exit 3, naming what is
 * outstanding, instead of a hang. */
#ifndef MAPP_TAMPI_H
#define MAPP_TAMPI_H

#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "mapp_watchdog.h"

typedef enum { MAPP_TAMPI_POLL_TASK, MAPP_TAMPI_POLL_THREAD } mapp_tampi_poller;
typedef enum { MAPP_TAMPI_NONBLOCKING, MAPP_TAMPI_BLOCKING } mapp_tampi_mode;

typedef struct {
  mapp_tampi_poller poller;
  mapp_tampi_mode mode;
  double poll_s;     /* the polling task's period (TAMPI_POLLING_PERIOD) */
  double watchdog_s; /* no progress for this long: one line, exit 3; 0: none */
  bool report;       /* this process prints the watchdog's line (one rank) */
  const char *prog;  /* the line's prefix: "mapp-heat" */
} mapp_tampi_config;

typedef struct {
  mapp_tampi_config cfg;
  int workers;                /* the cores tasks run on at once */
  pthread_mutex_t lock;       /* guards the arrays and the failure */
  MPI_Request *requests;      /* outstanding, bound to events[i] */
  omp_event_handle_t *events;
  int *completed;             /* MPI_Testsome's indices */
  int count, capacity;
  atomic_int outstanding;     /* count, readable without the lock */
  atomic_long live;           /* tasks created and not yet complete */
  atomic_long progress;       /* tasks completed so far: the watchdog's clock */
  atomic_bool creating;       /* the creator has tasks still to create */
  long window;                /* the creator waits while live >= window */
  /* The creator's sleep (polling task): woken when live falls to wake_at. */
  pthread_mutex_t room_lock;
  pthread_cond_t room;
  atomic_bool creator_asleep;
  atomic_long wake_at;
  atomic_bool nudged;         /* a worker found nothing to run: create now */
  /* The polling task's state (only the one live polling task touches it). */
  _Atomic double last_poll;   /* mapp_now() of the last test of the requests */
  long progress_seen;         /* progress when it last ran */
  atomic_long polls;          /* tests of the requests, by any poller */
  atomic_long poll_tasks;     /* runs of the polling task */
  bool poll_once;             /* MAPP_TAMPI_POLL_ONCE=1: never re-created (a planted fault) */
  sem_t cores;                /* blocking mode: the core tokens */
  bool cores_made;
  int spare;                  /* blocking mode: threads beyond the workers */
  atomic_int waiting;         /* blocking mode: tasks waiting for a request */
  mapp_watchdog watchdog;
  long watch_seen;            /* the watchdog's: progress at its last turn, */
  double watch_since;         /* and since when it has not moved */
  int status;                 /* first failure of a task or of the poller */
  char message[512];
} mapp_tampi;

/* workers: the cores tasks run on at once; max_waiting: in blocking mode,
 * the most tasks that can wait for a request at once (the spare threads, so
 * that a thread is always free to run a task). */
int mapp_tampi_init(mapp_tampi *t, int workers, int max_waiting, const mapp_tampi_config *cfg);
void mapp_tampi_destroy(mapp_tampi *t);
/* The team to run the graph in: the workers, the spare threads of blocking
 * mode and the creating thread. */
int mapp_tampi_team(const mapp_tampi *t);

/* Creator side, from inside the team's single region: start (the polling
 * task, with the polling task poller); count a task before creating it;
 * wait until fewer than the window are live; after the last task, wait
 * until none is live (and the polling task has stopped). */
void mapp_tampi_start(mapp_tampi *t);
void mapp_tampi_created(mapp_tampi *t);
void mapp_tampi_throttle(mapp_tampi *t);
void mapp_tampi_drain(mapp_tampi *t);

/* Task side: the first call of a task's body (blocking mode: take a core). */
void mapp_tampi_begin(mapp_tampi *t);
/* Task side, non-blocking mode. The last call of a detached task's body:
 * bind its completion to req (MPI_REQUEST_NULL completes at once). */
void mapp_tampi_iwait(mapp_tampi *t, MPI_Request req, omp_event_handle_t event);
/* Task side, blocking mode: wait for req inside the task (test, taskyield). */
void mapp_tampi_wait(mapp_tampi *t, MPI_Request *req);
/* The last call of a task without detach (blocking mode: give its core back). */
void mapp_tampi_done(mapp_tampi *t);
/* A task body failed with status (message recorded by mapp_fail on this
 * thread): keep the first failure for the creator to report. */
void mapp_tampi_fail(mapp_tampi *t, int status);

/* Test the outstanding requests once and fulfil the completed ones' events;
 * returns how many completed. */
int mapp_tampi_poll(mapp_tampi *t);

/* After the tasks: the first failure, re-recorded on the calling thread. */
int mapp_tampi_status(const mapp_tampi *t);

#endif
