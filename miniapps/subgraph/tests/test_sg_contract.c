/* Unit tests of the sg runtime (sg.h), continued from test_sg.c: the
 * contract check (a task that launches or waits fails at the call),
 * destroying a subgraph while instantiations are in flight, arrivals,
 * bad runtime configurations and the host as worker 0. */
#include <pthread.h>
#include <time.h>

#include "test_sg_lib.h"

/* ---- the contract ---- */

static sg_event never; /* an event nobody triggers */
static int violation_status[2];

static void launching_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)args, (void)size;
  sg_event e;
  violation_status[0] = sg_launch_task(ctx->rt, "child", log_task, NULL, 0, NULL, 0, &e);
}

static void waiting_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)args, (void)size;
  violation_status[1] = sg_event_wait(ctx->rt, never); /* would hang forever */
}

static void contract_violations_fail_at_the_call(void **unused) {
  (void)unused;
  for (int which = 0; which < 2; ++which) {
    sg_runtime *rt = make_runtime(2, 0);
    assert_int_equal(sg_event_create(rt, &never), MAPP_OK);
    sg_op_def op = {.name = which ? "waiter" : "launcher", .kind = SG_OP_TASK, .affinity = 1,
                    .fn = which ? waiting_task : launching_task};
    sg_graph_def def = {.name = "bad-graph", .ops = &op, .nops = 1};
    sg_subgraph *sg;
    assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
    assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
    sg_event fin;
    violation_status[which] = MAPP_OK;
    assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &fin), MAPP_OK);
    assert_int_equal(sg_event_wait(rt, fin), MAPP_OK); /* finishes: no deadlock */
    assert_int_equal(violation_status[which], MAPP_ERR_VERIFY);
    mapp_error_clear();
    assert_int_equal(sg_runtime_status(rt), MAPP_ERR_VERIFY);
    const char *msg = mapp_error_message();
    assert_non_null(strstr(msg, which ? "op 'waiter'" : "op 'launcher'"));
    assert_non_null(strstr(msg, "subgraph 'bad-graph'"));
    assert_non_null(strstr(msg, which ? "sg_event_wait" : "sg_launch"));
    mapp_error_clear();
    sg_event_trigger(rt, never);
    sg_subgraph_destroy(sg);
    sg_runtime_destroy(rt);
  }
}

/* ---- destroy while in flight ---- */

static void slow_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)size, (void)ctx;
  const append_args *a = args;
  volatile double x = 1;
  for (int i = 0; i < 2000; ++i) x = x * 1.0000001;
  atomic_fetch_add(a->at, 1);
}

static void destroy_while_in_flight(void **unused) {
  (void)unused;
  for (int workers = 1; workers <= 2; ++workers) {
    sg_runtime *rt = make_runtime(workers, 0);
    atomic_int count = 0;
    append_args aa = {NULL, &count, 0};
    sg_op_def ops[4];
    for (int i = 0; i < 4; ++i)
      ops[i] = (sg_op_def){.name = "slow", .kind = SG_OP_TASK, .affinity = i, .fn = slow_task, .args = &aa,
                           .arg_size = sizeof aa};
    sg_edge_def edges[3] = {{0, 1}, {1, 2}, {0, 3}};
    sg_port_edge pre[1] = {{.port = 0, .op = 3}};
    sg_graph_def def = {.name = "doomed", .ops = ops, .nops = 4, .edges = edges, .nedges = 3, .npre_ports = 1,
                        .pre_edges = pre, .npre_edges = 1};
    sg_subgraph *sg;
    assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
    assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
    sg_event gate, port, fin[16], prev;
    assert_int_equal(sg_event_create(rt, &gate), MAPP_OK);
    assert_int_equal(sg_event_create(rt, &port), MAPP_OK);
    prev = SG_NO_EVENT;
    for (int i = 0; i < 16; ++i) { /* half gated (not started), half chained and running */
      sg_event start = i < 8 ? prev : gate;
      assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, start, &port, NULL, &fin[i]), MAPP_OK);
      prev = fin[i];
    }
    sg_subgraph_destroy(sg); /* in flight: instantiations keep it alive */
    sg_event_trigger(rt, port);
    sg_event_trigger(rt, gate);
    for (int i = 0; i < 16; ++i) assert_int_equal(sg_event_wait(rt, fin[i]), MAPP_OK);
    assert_int_equal(atomic_load(&count), 16 * 4);
    sg_runtime_destroy(rt);
  }
}

/* Arrival ops in a subgraph: two per replay on a barrier of four, so the
 * barrier triggers after the second replay, not the first. */
static void subgraph_arrivals(void **unused) {
  (void)unused;
  sg_runtime *rt = make_runtime(2, 10);
  sg_barrier *b;
  assert_int_equal(sg_barrier_create(rt, 4, &b), MAPP_OK);
  sg_op_def ops[2] = {{.name = "arrive0", .kind = SG_OP_ARRIVE, .affinity = 0, .barrier = b},
                      {.name = "arrive1", .kind = SG_OP_ARRIVE, .affinity = 1, .barrier = b}};
  sg_graph_def def = {.name = "arrivals", .ops = ops, .nops = 2};
  sg_subgraph *sg;
  assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  sg_event fin;
  assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &fin), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, fin), MAPP_OK);
  assert_false(sg_event_has_triggered(rt, sg_barrier_event(b)));
  assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &fin), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, sg_barrier_event(b)), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, fin), MAPP_OK);
  sg_subgraph_destroy(sg);
  sg_barrier_destroy(b);
  sg_runtime_destroy(rt);
}

static void rejects_bad_runtime_config(void **unused) {
  (void)unused;
  sg_runtime *rt = NULL;
  sg_config cfg = {.workers = SG_MAX_WORKERS + 1};
  assert_int_equal(sg_runtime_create(&cfg, &rt), MAPP_ERR_INPUT);
  assert_null(rt);
  cfg.workers = 0;
  assert_int_equal(sg_runtime_create(&cfg, &rt), MAPP_ERR_INPUT);
  mapp_error_clear();
}

/* ---- the host as worker 0 ---- */

static _Atomic(pthread_t *) ran_on;
static pthread_t ran_on_thread;

static void note_thread(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)args, (void)size;
  assert_int_equal(ctx->worker, 0);
  ran_on_thread = pthread_self();
  atomic_store(&ran_on, &ran_on_thread);
}

/* A one-worker host_runs runtime starts no thread: the launch runs on the
 * thread that waits for it, inside the wait, and not before. */
static void host_runs_the_op_inside_its_wait(void **unused) {
  (void)unused;
  sg_config cfg = {.workers = 1, .spin_us = 10, .host_runs = true};
  sg_runtime *rt = NULL;
  assert_int_equal(sg_runtime_create(&cfg, &rt), MAPP_OK);
  sg_op_def op = {.name = "note", .kind = SG_OP_TASK, .affinity = -1, .fn = note_thread};
  sg_graph_def def = {.name = "one", .ops = &op, .nops = 1};
  sg_subgraph *sg;
  assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  for (int rep = 0; rep < 3; ++rep) {
    atomic_store(&ran_on, NULL);
    sg_event fin;
    assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &fin), MAPP_OK);
    assert_null(atomic_load(&ran_on)); /* queued for worker 0: the host, not waiting yet */
    assert_int_equal(sg_event_wait(rt, fin), MAPP_OK);
    assert_non_null(atomic_load(&ran_on));
    assert_true(pthread_equal(ran_on_thread, pthread_self()));
  }
  /* sg_runtime_help runs one queued unit and says whether it did */
  sg_event done;
  atomic_store(&ran_on, NULL);
  assert_false(sg_runtime_help(rt));
  assert_int_equal(sg_launch_task(rt, "note", note_thread, NULL, 0, NULL, 0, &done), MAPP_OK);
  assert_true(sg_runtime_help(rt));
  assert_true(sg_event_has_triggered(rt, done));
  assert_true(pthread_equal(ran_on_thread, pthread_self()));
  assert_false(sg_runtime_help(rt));
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
  rt = make_runtime(1, 0);
  if (!host_mode) assert_false(sg_runtime_help(rt)); /* workers only: the host has nothing to run */
  sg_runtime_destroy(rt);
}

typedef struct {
  sg_runtime *rt;
  sg_event gate;
} late_trigger;

static void *trigger_later(void *p) {
  late_trigger *lt = p;
  nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
  sg_event_trigger(lt->rt, lt->gate);
  return NULL;
}

/* The host waits (spinning, then asleep) for work whose cause is another
 * thread's trigger: it wakes, runs it and returns. Launches left queued
 * when the runtime is destroyed are run by the destroy. */
static void host_wakes_for_another_threads_trigger(void **unused) {
  (void)unused;
  for (long spin_us = 0; spin_us <= 10; spin_us += 10) {
    sg_config cfg = {.workers = 1, .spin_us = spin_us, .host_runs = true};
    sg_runtime *rt = NULL;
    assert_int_equal(sg_runtime_create(&cfg, &rt), MAPP_OK);
    late_trigger lt = {.rt = rt};
    assert_int_equal(sg_event_create(rt, &lt.gate), MAPP_OK);
    sg_event done;
    atomic_store(&ran_on, NULL);
    assert_int_equal(sg_launch_task(rt, "note", note_thread, NULL, 0, &lt.gate, 1, &done), MAPP_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, trigger_later, &lt), 0);
    assert_int_equal(sg_event_wait(rt, done), MAPP_OK);
    assert_true(pthread_equal(ran_on_thread, pthread_self()));
    pthread_join(t, NULL);
    atomic_store(&ran_on, NULL);
    assert_int_equal(sg_launch_task(rt, "note", note_thread, NULL, 0, NULL, 0, &done), MAPP_OK);
    sg_runtime_destroy(rt);
    assert_non_null(atomic_load(&ran_on));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(contract_violations_fail_at_the_call),
      cmocka_unit_test(destroy_while_in_flight),
      cmocka_unit_test(subgraph_arrivals),
      cmocka_unit_test(rejects_bad_runtime_config),
      cmocka_unit_test(host_runs_the_op_inside_its_wait),
      cmocka_unit_test(host_wakes_for_another_threads_trigger),
  };
  int failed = cmocka_run_group_tests_name("worker threads", tests, threads_only, NULL);
  return failed + cmocka_run_group_tests_name("host as worker 0", tests, host_as_worker, NULL);
}
