/* The dataflow graph (mapp_dataflow.h) keeps program order where OpenMP's
 * `depend` would: a random program of nodes reading and writing a few
 * objects, run on 4 threads with a small window (the submitter pauses and
 * resumes) and few tasks at once (ready nodes queue), some nodes holding an
 * event that another task releases later. Every read must see the last
 * writer before it in program order, and every write must come after the
 * readers since the writer before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <omp.h>

#include "mapp_dataflow.h"
#include "mapp_error.h"
#include "mapp_timer.h"

enum { NODES = 3000, OBJECTS = 6, MAX_ACCESS = 3, BATCH = 7 };

typedef struct {
  int count;
  int object[MAX_ACCESS];
  mapp_df_mode mode[MAX_ACCESS];
  int expect_writer[MAX_ACCESS];  /* the last writer before, in program order (-1: none) */
  int expect_readers[MAX_ACCESS]; /* out: the reads since that writer */
  bool holds;                     /* completes only when a later task releases it */
} program_node;

typedef struct {
  program_node nodes[NODES];
  mapp_df_object objects[OBJECTS];
  _Atomic int writer[OBJECTS];   /* the writer whose write is in place */
  _Atomic int reads[OBJECTS];    /* reads done since that write */
  _Atomic int violations;
  _Atomic int ran;
  int next;                      /* the submitter's next node */
} program;

static unsigned next_random(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return (*state >> 16) & 0x7fff;
}

/* The program, and what sequential order makes each access see. */
static void make_program(program *p, unsigned seed) {
  int last_writer[OBJECTS], reads_since[OBJECTS];
  for (int o = 0; o < OBJECTS; ++o) last_writer[o] = -1, reads_since[o] = 0;
  for (int k = 0; k < NODES; ++k) {
    program_node *n = &p->nodes[k];
    n->count = 1 + (int)(next_random(&seed) % MAX_ACCESS);
    n->holds = next_random(&seed) % 5 == 0;
    int first = (int)(next_random(&seed) % OBJECTS);
    for (int a = 0; a < n->count; ++a) {
      int o = (first + a) % OBJECTS; /* distinct objects within a node */
      n->object[a] = o;
      n->mode[a] = next_random(&seed) % 3 == 0 ? MAPP_DF_OUT : MAPP_DF_IN;
      n->expect_writer[a] = last_writer[o];
      n->expect_readers[a] = reads_since[o];
    }
    for (int a = 0; a < n->count; ++a) {
      int o = n->object[a];
      if (n->mode[a] == MAPP_DF_OUT) last_writer[o] = k, reads_since[o] = 0;
      else reads_since[o]++;
    }
  }
}

typedef struct {
  program *p;
  int index;
} payload;

static void release_later(mapp_df *df, mapp_df_node *node) {
#pragma omp task firstprivate(df, node)
  {
    mapp_sleep(20e-6);
    mapp_df_release(df, node);
  }
}

static void run(mapp_df *df, mapp_df_node *node, void *arg) {
  payload *pl = arg;
  program *p = pl->p;
  const program_node *n = &p->nodes[pl->index];
  for (int a = 0; a < n->count; ++a) {
    int o = n->object[a];
    bool seen = atomic_load(&p->writer[o]) == n->expect_writer[a];
    if (n->mode[a] == MAPP_DF_OUT) seen = seen && atomic_load(&p->reads[o]) == n->expect_readers[a];
    if (!seen) atomic_fetch_add(&p->violations, 1);
  }
  mapp_sleep((double)(pl->index % 3) * 1e-6); /* uneven bodies: orders get a chance to differ */
  for (int a = 0; a < n->count; ++a) {
    int o = n->object[a];
    if (n->mode[a] == MAPP_DF_IN) atomic_fetch_add(&p->reads[o], 1);
  }
  for (int a = 0; a < n->count; ++a) {
    int o = n->object[a];
    if (n->mode[a] == MAPP_DF_OUT) atomic_store(&p->reads[o], 0), atomic_store(&p->writer[o], pl->index);
  }
  atomic_fetch_add(&p->ran, 1);
  if (n->holds) {
    mapp_df_hold(node);
    release_later(df, node);
  }
}

static bool submit_batch(mapp_df *df, void *arg) {
  program *p = arg;
  for (int b = 0; b < BATCH && p->next < NODES; ++b, ++p->next) {
    const program_node *n = &p->nodes[p->next];
    mapp_df_access access[MAX_ACCESS];
    for (int a = 0; a < n->count; ++a) access[a] = (mapp_df_access){&p->objects[n->object[a]], n->mode[a]};
    mapp_df_node *node = mapp_df_node_new(df, run);
    assert_non_null(node);
    *(payload *)mapp_df_payload(node) = (payload){p, p->next};
    mapp_df_submit(df, node, access, n->count);
  }
  return p->next < NODES;
}

static void program_order_is_kept(void **state) {
  (void)state;
  static program p;
  make_program(&p, 2026u);
  for (int o = 0; o < OBJECTS; ++o) atomic_init(&p.writer[o], -1), atomic_init(&p.reads[o], 0);
  mapp_df df;
  assert_int_equal(mapp_df_init(&df, sizeof(payload), 40, 3), MAPP_OK);
#pragma omp parallel num_threads(4)
#pragma omp single
  mapp_df_start(&df, submit_batch, &p);
  assert_true(mapp_df_finished(&df));
  assert_int_equal(atomic_load(&p.ran), NODES);
  assert_int_equal(atomic_load(&p.violations), 0);
  assert_int_equal(atomic_load(&df.progress), NODES);
  /* The window of 40 paused the submitter many times. */
  assert_true(atomic_load(&df.submitter_runs) > 10);
  assert_int_equal(mapp_df_status(&df), MAPP_OK);
  for (int o = 0; o < OBJECTS; ++o) mapp_df_object_free(&p.objects[o]);
  mapp_df_destroy(&df);
}

static void bad_task_limit_is_refused(void **state) {
  (void)state;
  mapp_df df;
  assert_int_equal(mapp_df_init(&df, 8, 10, 0), MAPP_ERR_INPUT);
  assert_int_equal(mapp_df_init(&df, 8, 10, MAPP_DF_MAX_TASKS + 1), MAPP_ERR_INPUT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(program_order_is_kept),
      cmocka_unit_test(bad_task_limit_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
