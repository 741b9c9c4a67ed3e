/* Request-bound task completion: TAMPI's two modes over a dataflow graph
 * (mapp_dataflow.h) run on OpenMP tasks.
 *
 * Non-blocking mode (TAMPI_Iwait): a node that starts a non-blocking MPI
 * operation hands the request to mapp_tampi_iwait and returns; the request
 * is one more event the node holds (mapp_df_hold), as TAMPI_Iwait adds to
 * the task's event counter in Nanos6, so its successors are released only
 * when the request completes. A poller tests the outstanding requests with
 * MPI_Testsome and releases the events of the completed ones. No thread
 * blocks in MPI_Wait, so computation goes on while messages are in flight.
 *
 * Blocking mode (TAMPI's MPI_Wait inside a task): the node starts the
 * operation and waits for it inside its body (mapp_tampi_wait: a test loop
 * with `taskyield` at each turn, the OpenMP form of TAMPI pausing the task).
 * TAMPI's runtime then gives the task's core to another task. libgomp's
 * taskyield does nothing, so a waiting task would hold its worker, and with
 * one worker a receive that became ready before its message deadlocks the
 * ranks (measured: 2 ranks, 1 thread, tiny). So blocking mode does what
 * Nanos6 does when a task blocks: the core, not the thread, is the unit.
 * The team has spare threads; a node runs only while it holds one of
 * `workers` core tokens (mapp_tampi_begin/_done), and a waiting node gives
 * its token back until its request completes, so another thread runs a
 * node on that core meanwhile.
 * Needs MPI_THREAD_MULTIPLE either way: node bodies call MPI on any thread.
 *
 * Who polls (mapp_tampi_poller):
 *   MAPP_TAMPI_POLL_TASK: a polling task, as TAMPI's polling instance runs
 *     inside the tasking runtime: the runtime schedules it on its own
 *     workers; each run tests the requests, then re-creates the task, which
 *     returns the worker to the runtime until the new task is scheduled. A
 *     worker with other tasks to run tests once every period
 *     (TAMPI_POLLING_PERIOD); an idle one (the task ran twice with no node
 *     completed in between) tests at every run, yielding its core in
 *     between, as Nanos6's idle workers call TAMPI's polling service. The
 *     team is the workers: --threads N is N threads.
 *   MAPP_TAMPI_POLL_THREAD: one thread more than the workers polls, with
 *     back-off, until the graph is done: busy whenever it polls.
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

#include "mapp_dataflow.h"
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
  mapp_df *graph;             /* the nodes the requests are bound to */
  int workers;                /* the cores nodes run on at once */
  pthread_mutex_t lock;       /* guards the arrays and the failure */
  MPI_Request *requests;      /* outstanding, bound to nodes[i] */
  mapp_df_node **nodes;
  int *completed;             /* MPI_Testsome's indices */
  int count, capacity;
  atomic_int outstanding;     /* count, readable without the lock */
  /* The polling task's state (only the one live polling task touches it). */
  _Atomic double last_poll;   /* mapp_now() of the last test of the requests */
  long progress_seen;         /* the graph's progress when it last ran */
  atomic_long polls;          /* tests of the requests, by any poller */
  atomic_long poll_tasks;     /* runs of the polling task */
  bool poll_once;             /* MAPP_TAMPI_POLL_ONCE=1: never re-created (a planted fault) */
  sem_t cores;                /* blocking mode: the core tokens */
  bool cores_made;
  int spare;                  /* blocking mode: threads beyond the workers */
  atomic_int waiting;         /* blocking mode: nodes waiting for a request */
  mapp_watchdog watchdog;
  long watch_seen;            /* the watchdog's: progress at its last turn, */
  double watch_since;         /* and since when it has not moved */
  int status;                 /* first failure of a node or of the poller */
  char message[512];
} mapp_tampi;

/* graph: the dataflow graph whose nodes the requests are bound to;
 * workers: the cores nodes run on at once; max_waiting: in blocking mode,
 * the most nodes that can wait for a request at once (the spare threads, so
 * that a thread is always free to run a node). */
int mapp_tampi_init(mapp_tampi *t, mapp_df *graph, int workers, int max_waiting, const mapp_tampi_config *cfg);
void mapp_tampi_destroy(mapp_tampi *t);
/* The team to run the graph in, from init's arguments: the workers, the
 * spare threads of blocking mode, and the polling thread of the thread
 * poller. */
int mapp_tampi_team(const mapp_tampi_config *cfg, int workers, int max_waiting);

/* From inside the team's single construct, after mapp_df_start: the
 * polling task's first run (task poller), or the polling thread's loop
 * until the graph is done (thread poller). */
void mapp_tampi_run(mapp_tampi *t);

/* Node side: the first call of a node's body (blocking mode: take a core). */
void mapp_tampi_begin(mapp_tampi *t);
/* Node side, non-blocking mode: bind node's completion to req too
 * (MPI_REQUEST_NULL, or a request already complete, binds nothing). */
void mapp_tampi_iwait(mapp_tampi *t, MPI_Request req, mapp_df_node *node);
/* Node side, blocking mode: wait for req inside the node (test, taskyield). */
void mapp_tampi_wait(mapp_tampi *t, MPI_Request *req);
/* The last call of a node's body (blocking mode: give its core back). */
void mapp_tampi_done(mapp_tampi *t);
/* A task body failed with status (message recorded by mapp_fail on this
 * thread): keep the first failure for the solver to report. */
void mapp_tampi_fail(mapp_tampi *t, int status);

/* Test the outstanding requests once and release the completed ones' nodes;
 * returns how many completed. */
int mapp_tampi_poll(mapp_tampi *t);

/* After the tasks: the first failure, re-recorded on the calling thread. */
int mapp_tampi_status(const mapp_tampi *t);

#endif
