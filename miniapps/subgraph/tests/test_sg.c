/* Unit tests of the sg runtime (sg.h): the eager path, the subgraph
 * compile checks, replay with ports and interpolations and instantiations in flight (the
 * contract, destroying while in flight and the host as worker 0 are in
 * test_sg_contract.c). Every test runs with 1 and 2 workers where it
 * matters. */
#include <time.h>

#include "test_sg_lib.h"

/* ------------------------------------------------------------ eager */

static void eager_chain_runs_in_order(void **unused) {
  (void)unused;
  for (int workers = 1; workers <= 2; ++workers) {
    sg_runtime *rt = make_runtime(workers, 10);
    reset_log();
    sg_event gate, prev = SG_NO_EVENT, last = SG_NO_EVENT;
    assert_int_equal(sg_event_create(rt, &gate), MAPP_OK);
    for (int i = 0; i < 50; ++i) {
      id_args a = {i};
      sg_event pre[2] = {prev, gate};
      assert_int_equal(sg_launch_task(rt, "log", log_task, &a, sizeof a, pre, 2, &last), MAPP_OK);
      prev = last;
    }
    assert_int_equal(atomic_load(&clock_tick), 0); /* nothing before the gate */
    assert_false(sg_event_has_triggered(rt, last));
    sg_event_trigger(rt, gate);
    assert_int_equal(sg_event_wait(rt, last), MAPP_OK);
    for (int i = 0; i < 50; ++i) assert_int_equal(ran_at[i], i + 1);
    assert_int_equal(sg_runtime_status(rt), MAPP_OK);
    sg_runtime_destroy(rt);
  }
}

static void eager_merge_waits_for_all(void **unused) {
  (void)unused;
  sg_runtime *rt = make_runtime(2, 0);
  reset_log();
  sg_event evs[20], merged, gate;
  assert_int_equal(sg_event_create(rt, &gate), MAPP_OK);
  for (int i = 0; i < 20; ++i) {
    id_args a = {i};
    assert_int_equal(sg_launch_task(rt, "log", log_task, &a, sizeof a, &gate, 1, &evs[i]), MAPP_OK);
  }
  assert_int_equal(sg_event_merge(rt, evs, 20, &merged), MAPP_OK);
  assert_false(sg_event_has_triggered(rt, merged));
  sg_event_trigger(rt, gate);
  assert_int_equal(sg_event_wait(rt, merged), MAPP_OK);
  assert_int_equal(atomic_load(&clock_tick), 20);
  sg_runtime_destroy(rt);
}

static void eager_copies_and_barrier(void **unused) {
  (void)unused;
  sg_runtime *rt = make_runtime(2, 10);
  double src[4][5], dst[4][5] = {{0}}, line[20] = {0};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 5; ++c) src[r][c] = r * 10 + c;
  /* 2-D: the middle 3 columns of each row; 1-D: everything, flat */
  sg_copy_desc block = {.dst = &dst[0][1], .src = &src[0][1], .row_bytes = 3 * sizeof(double), .rows = 4,
                        .dst_stride = sizeof dst[0], .src_stride = sizeof src[0]};
  sg_copy_desc flat = {.dst = line, .src = src, .row_bytes = sizeof src, .rows = 1};
  sg_barrier *b;
  assert_int_equal(sg_barrier_create(rt, 2, &b), MAPP_OK);
  sg_event e1, e2, a1, a2;
  assert_int_equal(sg_launch_copy(rt, &block, NULL, 0, &e1), MAPP_OK);
  assert_int_equal(sg_launch_copy(rt, &flat, NULL, 0, &e2), MAPP_OK);
  assert_int_equal(sg_launch_arrive(rt, b, &e1, 1, &a1), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, a1), MAPP_OK);
  assert_false(sg_event_has_triggered(rt, sg_barrier_event(b))); /* one arrival of two */
  assert_int_equal(sg_launch_arrive(rt, b, &e2, 1, &a2), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, sg_barrier_event(b)), MAPP_OK);
  for (int r = 0; r < 4; ++r) {
    assert_true(dst[r][0] == 0.0 && dst[r][4] == 0.0);
    for (int c = 1; c < 4; ++c) assert_true(dst[r][c] == src[r][c]);
  }
  for (int i = 0; i < 20; ++i) assert_true(line[i] == src[i / 5][i % 5]);
  sg_barrier_destroy(b);
  sg_runtime_destroy(rt);
}

static void stale_handles_read_as_triggered(void **unused) {
  (void)unused;
  sg_runtime *rt = make_runtime(1, 0);
  sg_event a, b;
  assert_int_equal(sg_event_create(rt, &a), MAPP_OK);
  sg_event_trigger(rt, a);
  assert_int_equal(sg_event_create(rt, &b), MAPP_OK); /* reuses a's slot, next generation */
  assert_true((a >> 32) == (b >> 32));
  assert_true(sg_event_has_triggered(rt, a));
  assert_false(sg_event_has_triggered(rt, b));
  sg_event_trigger(rt, b);
  sg_runtime_destroy(rt);
}

/* ------------------------------------------------------------ subgraphs */

/* A diamond a -> {b, c} -> d with op names, arguments = their ids. */
typedef struct {
  sg_op_def ops[8];
  id_args args[8];
  sg_edge_def edges[8];
  sg_graph_def def;
} diamond;

static void make_diamond(diamond *g, int workers_apart) {
  memset(g, 0, sizeof *g);
  static const char *names[4] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    g->args[i].id = i;
    g->ops[i] = (sg_op_def){.name = names[i], .kind = SG_OP_TASK, .affinity = workers_apart ? (i == 2) : 0,
                            .fn = log_task, .args = &g->args[i], .arg_size = sizeof(id_args)};
  }
  sg_edge_def e[4] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  memcpy(g->edges, e, sizeof e);
  g->def = (sg_graph_def){.name = "diamond", .ops = g->ops, .nops = 4, .edges = g->edges, .nedges = 4};
}

static void compile_counts_only_cross_edges(void **unused) {
  (void)unused;
  sg_runtime *rt = make_runtime(2, 0);
  diamond g;
  make_diamond(&g, 1); /* c on worker 1, the rest on worker 0 */
  sg_subgraph *sg;
  assert_int_equal(sg_subgraph_create(rt, &g.def, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  sg_subgraph_stats s;
  sg_subgraph_get_stats(sg, &s);
  assert_int_equal(s.workers_used, 2);
  assert_int_equal(s.cross_edges, 2); /* a -> c, c -> d */
  assert_int_equal(s.local_edges, 2);
  assert_int_equal(s.counters, 2);    /* c and d: a and b need none */
  sg_subgraph_destroy(sg);
  make_diamond(&g, 0); /* all on worker 0: no counter at all */
  assert_int_equal(sg_subgraph_create(rt, &g.def, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  sg_subgraph_get_stats(sg, &s);
  assert_int_equal(s.counters, 0);
  assert_int_equal(s.workers_used, 1);
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
}

static void diamond_replays_in_order(void **unused) {
  (void)unused;
  for (int workers = 1; workers <= 2; ++workers) {
    sg_runtime *rt = make_runtime(workers, 10);
    diamond g;
    make_diamond(&g, 1);
    sg_subgraph *sg;
    assert_int_equal(sg_subgraph_create(rt, &g.def, &sg), MAPP_OK);
    assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
    for (int rep = 0; rep < 100; ++rep) {
      reset_log();
      sg_event fin;
      assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &fin), MAPP_OK);
      assert_int_equal(sg_event_wait(rt, fin), MAPP_OK);
      assert_true(ran_at[0] == 1 && ran_at[3] == 4);
      assert_true(ran_at[1] > 1 && ran_at[1] < 4 && ran_at[2] > 1 && ran_at[2] < 4);
    }
    sg_subgraph_destroy(sg);
    sg_runtime_destroy(rt);
  }
}

static int expect_compile_error(sg_runtime *rt, const sg_graph_def *def, const char *needle) {
  sg_subgraph *sg = NULL;
  mapp_error_clear();
  int status = sg_subgraph_create(rt, def, &sg);
  if (status == MAPP_OK) status = sg_subgraph_compile(sg);
  sg_subgraph_destroy(sg);
  assert_int_equal(status, MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), needle));
  mapp_error_clear();
  return status;
}

static void compile_rejects_bad_definitions(void **unused) {
  (void)unused;
  sg_runtime *rt = make_runtime(2, 0);
  diamond g;
  make_diamond(&g, 1);
  sg_graph_def d = g.def;
  /* a cycle: d -> a */
  g.edges[4] = (sg_edge_def){3, 0};
  d.nedges = 5;
  expect_compile_error(rt, &d, "has a cycle through op");
  /* an edge to a missing op */
  g.edges[4] = (sg_edge_def){3, 9};
  expect_compile_error(rt, &d, "names an op outside");
  d.nedges = 4;
  /* a precondition port nothing consumes */
  sg_port_edge pre[1] = {{.port = 0, .op = 0}};
  d.npre_ports = 2, d.pre_edges = pre, d.npre_edges = 1;
  expect_compile_error(rt, &d, "dangling port: precondition port 1");
  /* a port edge naming a port that does not exist */
  pre[0].port = 5;
  d.npre_ports = 1;
  expect_compile_error(rt, &d, "dangling port");
  d.npre_ports = 0, d.npre_edges = 0;
  /* a postcondition port nothing produces, and one produced twice */
  sg_port_edge post[2] = {{.port = 0, .op = 3}, {.port = 0, .op = 2}};
  d.npost_ports = 2, d.post_edges = post, d.npost_edges = 1;
  expect_compile_error(rt, &d, "dangling port: postcondition port 1");
  d.npost_ports = 1, d.npost_edges = 2;
  expect_compile_error(rt, &d, "has 2 producers");
  d.npost_ports = 0, d.npost_edges = 0;
  /* interpolations outside the argument block, then outside the payload */
  sg_interp_def in = {.arg_offset = 4, .size = 8, .op = 1, .op_offset = 0};
  d.arg_size = 8, d.interps = &in, d.ninterps = 1;
  expect_compile_error(rt, &d, "outside the 8-byte argument block");
  in.arg_offset = 0, in.size = 4, in.op_offset = 2; /* id_args is 4 bytes */
  expect_compile_error(rt, &d, "outside op 'b''s 4-byte payload");
  /* the same definition, fixed, compiles */
  in.op_offset = 0;
  sg_subgraph *sg;
  assert_int_equal(sg_subgraph_create(rt, &d, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
}

/* ---- ports, interpolations, instantiations in flight ---- */

typedef struct {
  int64_t *out;
  int64_t value; /* interpolated */
  int slot;
} store_args;

static void store_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)size, (void)ctx;
  const store_args *a = args;
  a->out[a->slot] = a->value;
}

static void ports_and_interpolations(void **unused) {
  (void)unused;
  for (int workers = 1; workers <= 2; ++workers) {
    sg_runtime *rt = make_runtime(workers, 10);
    int64_t out[4] = {0}, copied[4] = {0};
    store_args sa[2] = {{out, 0, 0}, {out, 0, 1}};
    /* op0 stores arg 0, op1 stores arg 1, op2 copies out[0..1] to copied[2..3] (dst patched) */
    sg_op_def ops[3] = {
        {.name = "store0", .kind = SG_OP_TASK, .affinity = 0, .fn = store_task, .args = &sa[0], .arg_size = sizeof sa[0]},
        {.name = "store1", .kind = SG_OP_TASK, .affinity = 1, .fn = store_task, .args = &sa[1], .arg_size = sizeof sa[1]},
        {.name = "copy", .kind = SG_OP_COPY, .affinity = 1,
         .copy = {.dst = NULL, .src = out, .row_bytes = 2 * sizeof(int64_t), .rows = 1}}};
    sg_edge_def edges[2] = {{0, 2}, {1, 2}};
    sg_port_edge pre[1] = {{.port = 0, .op = 1}}, post[1] = {{.port = 0, .op = 2}};
    typedef struct {
      int64_t v0, v1;
      void *dst;
    } block;
    sg_interp_def in[3] = {{.arg_offset = offsetof(block, v0), .size = 8, .op = 0, .op_offset = offsetof(store_args, value)},
                           {.arg_offset = offsetof(block, v1), .size = 8, .op = 1, .op_offset = offsetof(store_args, value)},
                           {.arg_offset = offsetof(block, dst), .size = sizeof(void *), .op = 2,
                            .op_offset = offsetof(sg_copy_desc, dst)}};
    sg_graph_def def = {.name = "ports", .ops = ops, .nops = 3, .edges = edges, .nedges = 2, .npre_ports = 1,
                        .pre_edges = pre, .npre_edges = 1, .npost_ports = 1, .post_edges = post, .npost_edges = 1,
                        .arg_size = sizeof(block), .interps = in, .ninterps = 3};
    sg_subgraph *sg;
    assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
    assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
    for (int rep = 1; rep <= 20; ++rep) {
      block args = {rep * 10, rep * 10 + 1, &copied[2]};
      sg_event port, done, fin;
      assert_int_equal(sg_event_create(rt, &port), MAPP_OK);
      assert_int_equal(sg_subgraph_instantiate(sg, &args, sizeof args, SG_NO_EVENT, &port, &done, &fin), MAPP_OK);
      assert_false(sg_event_has_triggered(rt, done)); /* store1 waits for the port */
      sg_event_trigger(rt, port);
      assert_int_equal(sg_event_wait(rt, done), MAPP_OK);
      assert_int_equal(sg_event_wait(rt, fin), MAPP_OK);
      assert_int_equal(copied[2], rep * 10);
      assert_int_equal(copied[3], rep * 10 + 1);
    }
    sg_subgraph_destroy(sg);
    sg_runtime_destroy(rt);
  }
}

/* A copy's descriptor patched per instantiation is planned again from its
 * unplanned form: its rows are adjacent in the definition (compile alone
 * would make them one run) but the interpolation spreads them out, and its
 * destination alternates between two buffers. */
static void interpolated_copy_is_planned_again(void **unused) {
  (void)unused;
  for (int workers = 1; workers <= 2; ++workers) {
    sg_runtime *rt = make_runtime(workers, 10);
    int64_t src[4] = {11, 22, 33, 44}, dst[2][8];
    sg_op_def op = {.name = "spread", .kind = SG_OP_COPY, .affinity = -1,
                    .copy = {.dst = dst[0], .src = src, .row_bytes = 8, .rows = 4, .dst_stride = 8, .src_stride = 8}};
    typedef struct {
      void *dst;
      size_t dst_stride;
    } block;
    sg_interp_def in[2] = {
        {.arg_offset = offsetof(block, dst), .size = sizeof(void *), .op = 0, .op_offset = offsetof(sg_copy_desc, dst)},
        {.arg_offset = offsetof(block, dst_stride), .size = sizeof(size_t), .op = 0,
         .op_offset = offsetof(sg_copy_desc, dst_stride)}};
    sg_graph_def def = {.name = "spread", .ops = &op, .nops = 1, .arg_size = sizeof(block), .interps = in,
                        .ninterps = 2};
    sg_subgraph *sg;
    assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
    assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
    for (int rep = 0; rep < 6; ++rep) {
      int64_t *out = dst[rep & 1];
      for (int i = 0; i < 8; ++i) out[i] = -1;
      block args = {out, 2 * sizeof(int64_t)};
      sg_event fin;
      assert_int_equal(sg_subgraph_instantiate(sg, &args, sizeof args, SG_NO_EVENT, NULL, NULL, &fin), MAPP_OK);
      assert_int_equal(sg_event_wait(rt, fin), MAPP_OK);
      for (int r = 0; r < 4; ++r) {
        assert_int_equal(out[2 * r], src[r]);
        assert_int_equal(out[2 * r + 1], -1);
      }
    }
    sg_subgraph_destroy(sg);
    sg_runtime_destroy(rt);
  }
}

/* Instantiations chained by their finish events run in launch order even
 * when all are launched before the first may start (several in flight). */
static void in_flight_keeps_order(void **unused) {
  (void)unused;
  sg_runtime *rt = make_runtime(2, 10);
  int64_t log[64] = {0};
  atomic_int at = 0;
  append_args aa = {log, &at, 0};
  sg_op_def op = {.name = "append", .kind = SG_OP_TASK, .affinity = -1, .fn = append_task, .args = &aa,
                  .arg_size = sizeof aa};
  sg_interp_def in = {.arg_offset = 0, .size = 8, .op = 0, .op_offset = offsetof(append_args, value)};
  sg_graph_def def = {.name = "append", .ops = &op, .nops = 1, .arg_size = 8, .interps = &in, .ninterps = 1};
  sg_subgraph *sg;
  assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  sg_event gate, prev, fin[64];
  assert_int_equal(sg_event_create(rt, &gate), MAPP_OK);
  prev = gate;
  for (int64_t i = 0; i < 64; ++i) {
    assert_int_equal(sg_subgraph_instantiate(sg, &i, sizeof i, prev, NULL, NULL, &fin[i]), MAPP_OK);
    prev = fin[i];
  }
  assert_int_equal(atomic_load(&at), 0);
  sg_event_trigger(rt, gate);
  assert_int_equal(sg_event_wait(rt, fin[63]), MAPP_OK);
  for (int64_t i = 0; i < 64; ++i) assert_int_equal(log[i], i);
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
}

/* Instantiations chained through ports, not finish events, pipeline: the
 * next one's op A runs while the previous one is still blocked in B. */
static void port_chaining_pipelines(void **unused) {
  (void)unused;
  sg_runtime *rt = make_runtime(2, 10);
  reset_log();
  id_args ids[2] = {{0}, {1}};
  sg_op_def ops[2] = {
      {.name = "A", .kind = SG_OP_TASK, .affinity = 0, .fn = log_task, .args = &ids[0], .arg_size = sizeof(id_args)},
      {.name = "B", .kind = SG_OP_TASK, .affinity = 1, .fn = log_task, .args = &ids[1], .arg_size = sizeof(id_args)}};
  sg_port_edge pre[2] = {{.port = 0, .op = 0}, {.port = 1, .op = 1}}, post[2] = {{.port = 0, .op = 0}, {.port = 1, .op = 1}};
  sg_graph_def def = {.name = "chain", .ops = ops, .nops = 2, .npre_ports = 2, .pre_edges = pre, .npre_edges = 2,
                      .npost_ports = 2, .post_edges = post, .npost_edges = 2};
  sg_subgraph *sg;
  assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  sg_event gate, in1[2], out1[2], out2[2], fin1, fin2;
  assert_int_equal(sg_event_create(rt, &gate), MAPP_OK);
  in1[0] = SG_NO_EVENT, in1[1] = gate;
  assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, in1, out1, &fin1), MAPP_OK);
  assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, out1, out2, &fin2), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, out2[0]), MAPP_OK); /* the second A has run ... */
  assert_false(sg_event_has_triggered(rt, fin1));        /* ... while the first is not finished */
  assert_false(sg_event_has_triggered(rt, out1[1]));
  sg_event_trigger(rt, gate);
  assert_int_equal(sg_event_wait(rt, fin2), MAPP_OK);
  assert_true(sg_event_has_triggered(rt, fin1));
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
}

/* A precondition port already triggered at instantiation counts as
 * arrived at once; the op still waits for the port that has not. */
static void triggered_ports_count_at_instantiation(void **unused) {
  (void)unused;
  for (int workers = 1; workers <= 2; ++workers) {
    sg_runtime *rt = make_runtime(workers, 10);
    reset_log();
    id_args id = {0};
    sg_op_def op = {.name = "A", .kind = SG_OP_TASK, .affinity = workers - 1, .fn = log_task, .args = &id,
                    .arg_size = sizeof id};
    sg_port_edge pre[2] = {{.port = 0, .op = 0}, {.port = 1, .op = 0}};
    sg_graph_def def = {.name = "two-ports", .ops = &op, .nops = 1, .npre_ports = 2, .pre_edges = pre,
                        .npre_edges = 2};
    sg_subgraph *sg;
    assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_OK);
    assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
    for (int rep = 0; rep < 20; ++rep) {
      reset_log();
      sg_event ports[2], fin;
      assert_int_equal(sg_event_create(rt, &ports[0]), MAPP_OK);
      assert_int_equal(sg_event_create(rt, &ports[1]), MAPP_OK);
      sg_event_trigger(rt, ports[rep & 1]); /* one arrived before, the other pending */
      assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, ports, NULL, &fin), MAPP_OK);
      while (sg_runtime_help(rt)) {
      }
      nanosleep(&(struct timespec){.tv_nsec = 200 * 1000}, NULL);
      assert_int_equal(atomic_load(&clock_tick), 0); /* not before the pending port */
      assert_false(sg_event_has_triggered(rt, fin));
      sg_event_trigger(rt, ports[!(rep & 1)]);
      assert_int_equal(sg_event_wait(rt, fin), MAPP_OK);
      assert_int_equal(ran_at[0], 1);
    }
    sg_subgraph_destroy(sg);
    sg_runtime_destroy(rt);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(eager_chain_runs_in_order),
      cmocka_unit_test(eager_merge_waits_for_all),
      cmocka_unit_test(eager_copies_and_barrier),
      cmocka_unit_test(stale_handles_read_as_triggered),
      cmocka_unit_test(compile_counts_only_cross_edges),
      cmocka_unit_test(diamond_replays_in_order),
      cmocka_unit_test(compile_rejects_bad_definitions),
      cmocka_unit_test(ports_and_interpolations),
      cmocka_unit_test(interpolated_copy_is_planned_again),
      cmocka_unit_test(in_flight_keeps_order),
      cmocka_unit_test(port_chaining_pipelines),
      cmocka_unit_test(triggered_ports_count_at_instantiation),
  };
  int failed = cmocka_run_group_tests_name("worker threads", tests, threads_only, NULL);
  return failed + cmocka_run_group_tests_name("host as worker 0", tests, host_as_worker, NULL);
}
