/* A dataflow graph run on OpenMP tasks: the dependence tracking that Nanos6
 * does for OmpSs-2 (and TAMPI builds on), done here so that any task may
 * submit nodes and any thread may complete them.
 *
 * Why not OpenMP's `depend` (GCC 12 libgomp): `depend` orders sibling tasks
 * only, so one task must create the whole graph in order; a task created
 * while the team has more than 64 x nthreads tasks runs undeferred, on a
 * path that frees a `detach`ed task when its body returns; and the creating
 * thread runs other tasks only at a taskwait, which waits for every task so
 * far. So the creating thread could never be a worker, and `--threads N`
 * ran N + 1 threads. Here a node becomes an OpenMP task only once its
 * predecessors are done, and submitting a node runs nothing, so the
 * submitter is itself a task: it submits batches while fewer than `window`
 * nodes are live, ends when the window is full, and is created again by
 * the completion that brings the live nodes down to half the window. Every
 * thread of the team is a worker.
 *
 * Dependences are OpenMP's: a node that reads an object (MAPP_DF_IN) runs
 * after the object's last writer; one that writes it (MAPP_DF_OUT, also for
 * inout) after its last writer and every reader submitted since. The order
 * of submission is the program order.
 *
 * A node completes in two steps, as a task bound to TAMPI's events does: its
 * body returns, and every event it holds (mapp_df_hold: an MPI request in
 * flight, say) is released (mapp_df_release, from any thread). Only then
 * are its successors released. Ready nodes wait in a first-in first-out
 * queue and at most `max_tasks` are OpenMP tasks at once, which keeps
 * libgomp's tasks well under its undeferred threshold. One mutex guards the
 * graph: its sections are a few pointer moves per edge. */
#ifndef MAPP_DATAFLOW_H
#define MAPP_DATAFLOW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct mapp_df mapp_df;
typedef struct mapp_df_node mapp_df_node;

/* A node's body: payload is its mapp_df_payload. */
typedef void (*mapp_df_fn)(mapp_df *df, mapp_df_node *node, void *payload);
/* The submitter: submit the next batch of nodes (in program order); false
 * once every node is submitted. */
typedef bool (*mapp_df_submitter)(mapp_df *df, void *arg);

/* A datum nodes access. Zero-initialised is empty. */
typedef struct {
  mapp_df_node *writer;   /* the last writer submitted */
  mapp_df_node **readers; /* the readers submitted since */
  int nreaders, capacity;
} mapp_df_object;

typedef enum { MAPP_DF_IN, MAPP_DF_OUT } mapp_df_mode;
/* One access of a node; a NULL object is no access (a missing neighbour). */
typedef struct {
  mapp_df_object *object;
  mapp_df_mode mode;
} mapp_df_access;

enum { MAPP_DF_INLINE_SUCCESSORS = 8 };

struct mapp_df_node {
  mapp_df_fn fn;
  int preds;          /* predecessors not yet done, +1 while being submitted */
  atomic_int events;  /* the body + the events held; 0: done */
  int refs;           /* objects that name it, +1 until it is done */
  bool done;
  int nsucc, succ_capacity;
  mapp_df_node **succ; /* succ_inline or a grown array */
  mapp_df_node *succ_inline[MAPP_DF_INLINE_SUCCESSORS];
  mapp_df_node *next;  /* in the free list or the ready queue */
  _Alignas(16) unsigned char payload[];
};

struct mapp_df {
  pthread_mutex_t lock;
  size_t node_size;
  mapp_df_node *free_nodes;
  void **chunks;
  int nchunks, chunk_capacity;
  mapp_df_node *ready_head, *ready_tail;
  int tasks, max_tasks;   /* nodes running as OpenMP tasks, and the most */
  atomic_long live;       /* submitted and not yet done */
  atomic_long progress;   /* done so far: a watchdog's clock */
  long window;
  mapp_df_submitter submit;
  void *submit_arg;
  atomic_bool submitting; /* nodes still to submit */
  bool paused;            /* the submitter waits for room in the window */
  atomic_long submitter_runs;
  int status;             /* the first failure (out of memory) */
  char message[256];
};

/* payload_size: the bytes each node carries for its body; window: the most
 * live nodes before the submitter pauses; max_tasks: the most nodes that are
 * OpenMP tasks at once (at most MAPP_DF_MAX_TASKS). */
enum { MAPP_DF_MAX_TASKS = 1024 };
int mapp_df_init(mapp_df *df, size_t payload_size, long window, int max_tasks);
void mapp_df_destroy(mapp_df *df);

/* A new node running fn; its payload is zeroed. NULL when out of memory
 * (recorded: see mapp_df_status). */
mapp_df_node *mapp_df_node_new(mapp_df *df, mapp_df_fn fn);
static inline void *mapp_df_payload(mapp_df_node *node) { return node->payload; }
/* Submit node with its accesses, in program order (from the submitter). */
void mapp_df_submit(mapp_df *df, mapp_df_node *node, const mapp_df_access *access, int count);
/* Free an object's list of readers, once the graph is done. */
void mapp_df_object_free(mapp_df_object *object);

/* From a node's body: one event more before it is done; and from any
 * thread, an event happened. */
void mapp_df_hold(mapp_df_node *node);
void mapp_df_release(mapp_df *df, mapp_df_node *node);

/* From inside a parallel region's single construct: create the submitter's
 * first task. The team's barrier then runs the graph to its end. */
void mapp_df_start(mapp_df *df, mapp_df_submitter submit, void *arg);
/* Every node submitted and done. */
bool mapp_df_finished(const mapp_df *df);
/* A failure of the graph itself (out of memory), re-recorded on this thread. */
int mapp_df_status(const mapp_df *df);

#endif
