#include "mapp_dataflow.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

enum { NODES_PER_CHUNK = 256 };

int mapp_df_init(mapp_df *df, size_t payload_size, long window, int max_tasks) {
  *df = (mapp_df){.window = window, .max_tasks = max_tasks};
  if (max_tasks < 1 || max_tasks > MAPP_DF_MAX_TASKS)
    return mapp_fail(MAPP_ERR_INPUT, "a dataflow graph runs 1 to %d nodes as tasks at once, asked %d",
                     MAPP_DF_MAX_TASKS, max_tasks);
  size_t align = _Alignof(max_align_t);
  df->node_size = (sizeof(mapp_df_node) + payload_size + align - 1) / align * align;
  atomic_init(&df->live, 0);
  atomic_init(&df->progress, 0);
  atomic_init(&df->submitting, true);
  atomic_init(&df->submitter_runs, 0);
  if (pthread_mutex_init(&df->lock, NULL) != 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot create the dataflow graph's mutex");
  return MAPP_OK;
}

void mapp_df_destroy(mapp_df *df) {
  for (int i = 0; i < df->nchunks; ++i) {
    unsigned char *chunk = df->chunks[i];
    for (int k = 0; k < NODES_PER_CHUNK; ++k) {
      mapp_df_node *n = (mapp_df_node *)(chunk + (size_t)k * df->node_size);
      if (n->succ != n->succ_inline) free(n->succ);
    }
    free(chunk);
  }
  free(df->chunks);
  df->chunks = NULL;
  df->nchunks = 0;
  pthread_mutex_destroy(&df->lock);
}

void mapp_df_object_free(mapp_df_object *object) {
  free(object->readers);
  *object = (mapp_df_object){0};
}

/* ---------------------------------------------------------------- failures */

/* With df->lock held: keep the first failure. The graph goes on without the
 * edge or the node that failed, so it drains and the caller reports. */
static void record_failure(mapp_df *df, const char *what) {
  if (df->status != MAPP_OK) return;
  df->status = MAPP_ERR_SYSTEM;
  snprintf(df->message, sizeof df->message, "out of memory for %s of the dataflow graph", what);
}

int mapp_df_status(const mapp_df *df) {
  return df->status == MAPP_OK ? MAPP_OK : mapp_fail(df->status, "%s", df->message);
}

/* ---------------------------------------------------------------- nodes */

/* With df->lock held. */
static bool add_chunk(mapp_df *df) {
  if (df->nchunks == df->chunk_capacity) {
    int capacity = df->chunk_capacity ? 2 * df->chunk_capacity : 16;
    void **chunks = realloc(df->chunks, sizeof *chunks * (size_t)capacity);
    if (!chunks) return false;
    df->chunks = chunks;
    df->chunk_capacity = capacity;
  }
  unsigned char *chunk = calloc(NODES_PER_CHUNK, df->node_size);
  if (!chunk) return false;
  df->chunks[df->nchunks++] = chunk;
  for (int k = NODES_PER_CHUNK - 1; k >= 0; --k) {
    mapp_df_node *n = (mapp_df_node *)(chunk + (size_t)k * df->node_size);
    n->succ = n->succ_inline;
    n->next = df->free_nodes;
    df->free_nodes = n;
  }
  return true;
}

mapp_df_node *mapp_df_node_new(mapp_df *df, mapp_df_fn fn) {
  pthread_mutex_lock(&df->lock);
  mapp_df_node *n = NULL;
  if (df->free_nodes || add_chunk(df)) {
    n = df->free_nodes;
    df->free_nodes = n->next;
  } else {
    record_failure(df, "a node");
  }
  pthread_mutex_unlock(&df->lock);
  if (!n) return NULL;
  memset(n->payload, 0, df->node_size - offsetof(mapp_df_node, payload));
  n->fn = fn;
  n->preds = 1;
  atomic_init(&n->events, 1);
  n->refs = 1;
  n->done = false;
  n->nsucc = 0;
  n->succ = n->succ_inline;
  n->succ_capacity = MAPP_DF_INLINE_SUCCESSORS;
  n->next = NULL;
  return n;
}

/* With df->lock held: one reference fewer; a node done and named by no
 * object goes back to the free list. */
static void unref(mapp_df *df, mapp_df_node *n) {
  if (--n->refs > 0) return;
  if (n->succ != n->succ_inline) free(n->succ);
  n->succ = n->succ_inline;
  n->next = df->free_nodes;
  df->free_nodes = n;
}

/* ---------------------------------------------------------------- edges */

/* With df->lock held: `to` runs after `from` (nothing if from is done). */
static void add_edge(mapp_df *df, mapp_df_node *from, mapp_df_node *to) {
  if (from->done) return;
  if (from->nsucc == from->succ_capacity) {
    int capacity = 2 * from->succ_capacity;
    mapp_df_node **succ = malloc(sizeof *succ * (size_t)capacity);
    if (!succ) {
      record_failure(df, "an edge");
      return;
    }
    memcpy(succ, from->succ, sizeof *succ * (size_t)from->nsucc);
    if (from->succ != from->succ_inline) free(from->succ);
    from->succ = succ;
    from->succ_capacity = capacity;
  }
  from->succ[from->nsucc++] = to;
  to->preds++;
}

/* With df->lock held. */
static void add_reader(mapp_df *df, mapp_df_object *o, mapp_df_node *n) {
  if (o->nreaders == o->capacity) {
    int capacity = o->capacity ? 2 * o->capacity : 8;
    mapp_df_node **readers = realloc(o->readers, sizeof *readers * (size_t)capacity);
    if (!readers) {
      record_failure(df, "a reader");
      return;
    }
    o->readers = readers;
    o->capacity = capacity;
  }
  o->readers[o->nreaders++] = n;
  n->refs++;
}

/* With df->lock held: OpenMP's rules. A reader follows the last writer; a
 * writer follows the readers since (which follow that writer), or the
 * writer itself when there were none. */
static void add_access(mapp_df *df, mapp_df_node *n, mapp_df_access a) {
  mapp_df_object *o = a.object;
  if (a.mode == MAPP_DF_IN) {
    if (o->writer) add_edge(df, o->writer, n);
    add_reader(df, o, n);
    return;
  }
  if (o->nreaders > 0) {
    for (int i = 0; i < o->nreaders; ++i) {
      add_edge(df, o->readers[i], n);
      unref(df, o->readers[i]);
    }
    o->nreaders = 0;
  } else if (o->writer) {
    add_edge(df, o->writer, n);
  }
  if (o->writer) unref(df, o->writer);
  o->writer = n;
  n->refs++;
}

/* ---------------------------------------------------------------- running */

/* With df->lock held. */
static void enqueue(mapp_df *df, mapp_df_node *n) {
  n->next = NULL;
  if (df->ready_tail) df->ready_tail->next = n;
  else df->ready_head = n;
  df->ready_tail = n;
}

/* With df->lock held: the ready nodes that may become tasks now. */
static int take_ready(mapp_df *df, mapp_df_node **out) {
  int k = 0;
  while (df->tasks < df->max_tasks && df->ready_head) {
    mapp_df_node *n = df->ready_head;
    df->ready_head = n->next;
    if (!df->ready_head) df->ready_tail = NULL;
    df->tasks++;
    out[k++] = n;
  }
  return k;
}

static void after_body(mapp_df *df, mapp_df_node *n);

static void spawn(mapp_df *df, mapp_df_node **nodes, int count) {
  for (int i = 0; i < count; ++i) {
    mapp_df_node *n = nodes[i];
#pragma omp task firstprivate(df, n)
    {
      n->fn(df, n, n->payload);
      after_body(df, n);
    }
  }
}

static void submitter_task(mapp_df *df);

static void spawn_submitter(mapp_df *df) {
#pragma omp task firstprivate(df)
  submitter_task(df);
}

/* With df->lock held: n's events are all done. Its successors may become
 * ready; true when the submitter should be created again. */
static bool complete(mapp_df *df, mapp_df_node *n) {
  n->done = true;
  for (int i = 0; i < n->nsucc; ++i)
    if (--n->succ[i]->preds == 0) enqueue(df, n->succ[i]);
  n->nsucc = 0;
  long live = atomic_fetch_sub(&df->live, 1) - 1;
  atomic_fetch_add(&df->progress, 1);
  unref(df, n);
  if (!df->paused || live > df->window / 2) return false;
  df->paused = false;
  return true;
}

/* The locked part of a node's end (resume, tasks to create), then the
 * creation outside the lock. */
static void finish(mapp_df *df, mapp_df_node *n, bool body_ended) {
  mapp_df_node *ready[MAPP_DF_MAX_TASKS];
  bool resume = false;
  pthread_mutex_lock(&df->lock);
  if (body_ended) df->tasks--;
  if (n) resume = complete(df, n);
  int count = take_ready(df, ready);
  pthread_mutex_unlock(&df->lock);
  spawn(df, ready, count);
  if (resume) spawn_submitter(df);
}

static void after_body(mapp_df *df, mapp_df_node *n) {
  bool last = atomic_fetch_sub(&n->events, 1) == 1;
  finish(df, last ? n : NULL, true);
}

void mapp_df_hold(mapp_df_node *node) { atomic_fetch_add(&node->events, 1); }

void mapp_df_release(mapp_df *df, mapp_df_node *node) {
  if (atomic_fetch_sub(&node->events, 1) == 1) finish(df, node, false);
}

void mapp_df_submit(mapp_df *df, mapp_df_node *node, const mapp_df_access *access, int count) {
  mapp_df_node *ready[MAPP_DF_MAX_TASKS];
  pthread_mutex_lock(&df->lock);
  for (int i = 0; i < count; ++i)
    if (access[i].object) add_access(df, node, access[i]);
  atomic_fetch_add(&df->live, 1);
  if (--node->preds == 0) enqueue(df, node);
  int k = take_ready(df, ready);
  pthread_mutex_unlock(&df->lock);
  spawn(df, ready, k);
}

/* Submit batches while the window has room; pause (the completion that
 * halves the live nodes creates this task again) or end. */
static void submitter_task(mapp_df *df) {
  atomic_fetch_add(&df->submitter_runs, 1);
  for (;;) {
    bool more = df->submit(df, df->submit_arg);
    pthread_mutex_lock(&df->lock);
    bool full = atomic_load(&df->live) >= df->window;
    if (!more) atomic_store(&df->submitting, false);
    else if (full) df->paused = true;
    pthread_mutex_unlock(&df->lock);
    if (!more || full) return;
  }
}

void mapp_df_start(mapp_df *df, mapp_df_submitter submit, void *arg) {
  df->submit = submit;
  df->submit_arg = arg;
  spawn_submitter(df);
}

bool mapp_df_finished(const mapp_df *df) {
  return !atomic_load(&df->submitting) && atomic_load(&df->live) == 0;
}
