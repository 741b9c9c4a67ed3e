/* The order of a worker's compiled schedule (sg_op_def.phase): among ops
 * whose predecessors are placed, the lowest phase first, then the lowest
 * index. A first-in first-out order placed an op of a later timestep ahead
 * of one of an earlier timestep, and ranks whose schedules each parked on
 * such an op waiting for the other's deadlocked (mapp-subgraph, spread,
 * --copy-bytes, 4 ranks: test subgraph.mpi.subgraph.spread.copies.n4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "sg.h"

static atomic_int clock_tick;
static int ran_at[4];

static void log_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)size, (void)ctx;
  ran_at[*(const int *)args] = atomic_fetch_add(&clock_tick, 1) + 1;
}

/* a -> c, and b on its own; one worker, so its schedule is the run order. */
static void run_three(const int phase[3], int want[3]) {
  sg_runtime *rt = NULL;
  sg_config cfg = {.workers = 1, .spin_us = 10, .host_runs = true};
  assert_int_equal(sg_runtime_create(&cfg, &rt), MAPP_OK);
  static const int ids[3] = {0, 1, 2};
  static const char *names[3] = {"a", "b", "c"};
  sg_op_def ops[3];
  for (int i = 0; i < 3; ++i)
    ops[i] = (sg_op_def){.name = names[i], .kind = SG_OP_TASK, .affinity = 0, .fn = log_task, .args = &ids[i],
                         .arg_size = sizeof ids[i], .phase = phase[i]};
  sg_edge_def edge = {.src = 0, .dst = 2};
  sg_graph_def def = {.name = "phases", .ops = ops, .nops = 3, .edges = &edge, .nedges = 1};
  sg_subgraph *sg = NULL;
  assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  atomic_store(&clock_tick, 0);
  memset(ran_at, 0, sizeof ran_at);
  sg_event fin;
  assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &fin), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, fin), MAPP_OK);
  for (int i = 0; i < 3; ++i) assert_int_equal(ran_at[i], want[i]);
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
}

/* No phases: the definition's order, which the edges allow here. */
static void index_order_without_phases(void **unused) {
  (void)unused;
  run_three((const int[3]){0, 0, 0}, (int[3]){1, 2, 3});
}

/* b is of a later phase: c (ready only after a) goes before it. */
static void lower_phase_first(void **unused) {
  (void)unused;
  run_three((const int[3]){0, 1, 0}, (int[3]){1, 3, 2});
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(index_order_without_phases),
      cmocka_unit_test(lower_phase_first),
  };
  return cmocka_run_group_tests_name("schedule phases", tests, NULL, NULL);
}
