/* Request-bound task completion: TAMPI's TAMPI_Iwait for standard OpenMP.
 *
 * A task that starts a non-blocking MPI operation is created with
 * `detach(event)`; its body starts the operation and hands the request and
 * the event to mapp_tampi_iwait, then returns. The task's dependencies are
 * released only when the request completes: a poller tests the outstanding
 * requests with MPI_Testsome and fulfils the events of the completed ones
 * (omp_fulfill_event). No thread ever blocks in MPI_Wait, so computation
 * goes on while messages are in flight. Needs MPI_THREAD_MULTIPLE: task
 * bodies start operations on any thread while the poller tests.
 *
 * Who polls: the thread that creates the tasks (a team member, so the
 * event is fulfilled by a thread of the team, libgomp's well-trodden path).
 * Between creating tasks it calls mapp_tampi_throttle, and when all tasks
 * are created mapp_tampi_drain; both poll with back-off.
 *
 * Why a window of live tasks (GCC 12 libgomp): a task created while the team
 * has more than 64 x nthreads tasks runs undeferred, and before it runs
 * libgomp executes the tasks it depends on in
 * gomp_task_maybe_wait_for_dependencies, which ignores `detach` and frees a
 * detached task when its body returns; the later omp_fulfill_event then
 * touches freed memory (observed: "event is invalid" or SIGSEGV). `taskwait
 * depend` takes the same path. Keeping the live tasks under the window
 * (well below 64 x nthreads) and never using `taskwait depend` keeps every
 * task deferred, where `detach` works. */
#ifndef MAPP_TAMPI_H
#define MAPP_TAMPI_H

#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>

typedef struct {
  pthread_mutex_t lock;       /* guards the arrays and the failure */
  MPI_Request *requests;      /* outstanding, bound to events[i] */
  omp_event_handle_t *events;
  int *completed;             /* MPI_Testsome's indices */
  int count, capacity;
  atomic_long live;           /* tasks created and not yet complete */
  long window;                /* the creator waits while live >= window */
  int status;                 /* first failure of a task or of the poller */
  char message[512];
} mapp_tampi;

/* team_threads: the size of the OpenMP team the tasks run in. */
int mapp_tampi_init(mapp_tampi *t, int team_threads);
void mapp_tampi_destroy(mapp_tampi *t);

/* Creator side: count a task before creating it; poll until fewer than the
 * window are live; after the last task, poll until none is live. */
void mapp_tampi_created(mapp_tampi *t);
void mapp_tampi_throttle(mapp_tampi *t);
void mapp_tampi_drain(mapp_tampi *t);

/* Task side. The last call of a detached task's body: bind its completion to
 * req (MPI_REQUEST_NULL completes at once). */
void mapp_tampi_iwait(mapp_tampi *t, MPI_Request req, omp_event_handle_t event);
/* The last call of a task without detach. */
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
