/* The sg runtime's asynchronous effects on the emulated device: how
 * compile classifies each edge (control, async, token wait, stream order)
 * and what a replay and the eager path guarantee: a consumer that promises
 * stream order is issued before its producer's device work is done (the
 * runahead) yet its own device work runs after it; a host consumer runs
 * after it; a device task's event triggers after its device side. */
#include <stdatomic.h>

#include "test_sg_lib.h"

static sg_runtime *device_runtime(int workers) {
  sg_runtime *rt = NULL;
  sg_config cfg = {.workers = workers, .spin_us = 50, .device = SG_DEVICE_EMULATED, .device_poll_ns = 2000};
  assert_int_equal(sg_runtime_create(&cfg, &rt), MAPP_OK);
  return rt;
}

/* What the ops saw: the producer's kernel done, at the consumer's issue
 * (host side) and at its kernel (device side) or host run. */
static atomic_int producer_done, seen_at_issue, seen_on_device, seen_on_host;

static void busy_wait_ns(long ns) {
  long until = sg_now_ns() + ns;
  while (sg_now_ns() < until) continue;
}

static void producer_kernel(const void *args, size_t size, int device_worker) {
  (void)args, (void)size, (void)device_worker;
  busy_wait_ns(20 * 1000 * 1000); /* 20 ms: the consumer's host side comes long before */
  atomic_store(&producer_done, 1);
}

static void consumer_kernel(const void *args, size_t size, int device_worker) {
  (void)args, (void)size, (void)device_worker;
  atomic_store(&seen_on_device, atomic_load(&producer_done) + 1);
}

static void producer(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)args, (void)size;
  assert_int_equal(sg_stream_launch(ctx->stream, producer_kernel, NULL, 0), MAPP_OK);
}

static void consumer(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)args, (void)size;
  atomic_store(&seen_at_issue, atomic_load(&producer_done) + 1);
  assert_int_equal(sg_stream_launch(ctx->stream, consumer_kernel, NULL, 0), MAPP_OK);
}

static void host_consumer(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)args, (void)size;
  assert_null(ctx->stream);
  atomic_store(&seen_on_host, atomic_load(&producer_done) + 1);
}

static void reset_seen(void) {
  atomic_store(&producer_done, 0), atomic_store(&seen_at_issue, 0);
  atomic_store(&seen_on_device, 0), atomic_store(&seen_on_host, 0);
}

/* The definition created and compiled, with its statistics. */
static sg_subgraph *compiled(sg_runtime *rt, const sg_graph_def *def, sg_subgraph_stats *stats) {
  sg_subgraph *sg;
  assert_int_equal(sg_subgraph_create(rt, def, &sg), MAPP_OK);
  assert_int_equal(sg_subgraph_compile(sg), MAPP_OK);
  sg_subgraph_get_stats(sg, stats);
  return sg;
}

/* A (device, worker 0) feeds B (stream-ordered, worker 0: the stream's
 * order), C (stream-ordered, worker 1: a token wait) and D (a host op,
 * worker 1: an async edge); B feeds D (async). */
static void edges_by_kind(void **unused) {
  (void)unused;
  sg_runtime *rt = device_runtime(2);
  sg_op_def ops[] = {
      {.name = "A", .kind = SG_OP_TASK, .affinity = 0, .fn = producer, .device = true, .stream_ordered = true},
      {.name = "B", .kind = SG_OP_TASK, .affinity = 0, .fn = consumer, .device = true, .stream_ordered = true},
      {.name = "C", .kind = SG_OP_TASK, .affinity = 1, .fn = consumer, .device = true, .stream_ordered = true},
      {.name = "D", .kind = SG_OP_TASK, .affinity = 1, .fn = host_consumer},
  };
  sg_edge_def edges[] = {{0, 1}, {0, 2}, {0, 3}, {1, 3}};
  sg_graph_def def = {.name = "effects", .ops = ops, .nops = 4, .edges = edges, .nedges = 4};
  sg_subgraph_stats s;
  sg_subgraph *sg = compiled(rt, &def, &s);
  assert_int_equal(s.control_edges, 4);
  assert_int_equal(s.async_edges, 2);        /* A -> D, B -> D */
  assert_int_equal(s.device_waits, 1);       /* A -> C */
  assert_int_equal(s.stream_order_edges, 1); /* A -> B */
  assert_int_equal(s.tokens, 1);             /* A's */
  assert_int_equal(s.notifications, 3);      /* A and B (D waits for them), C (worker 1's stream's last) */
  for (int rep = 0; rep < 2; ++rep) {
    reset_seen();
    sg_event finish;
    assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &finish), MAPP_OK);
    assert_int_equal(sg_event_wait(rt, finish), MAPP_OK);
    assert_int_equal(atomic_load(&seen_at_issue), 1);  /* B, C issued while A's kernel ran: the runahead */
    assert_int_equal(atomic_load(&seen_on_device), 2); /* their kernels after A's */
    assert_int_equal(atomic_load(&seen_on_host), 2);   /* D after A's device side */
  }
  assert_int_equal(sg_runtime_status(rt), MAPP_OK);
  sg_subgraph_destroy(sg);
  sg_device_stats d;
  sg_runtime_device_stats(rt, &d);
  assert_int_equal(d.kernels, 6);
  assert_int_equal(d.notifications, 6);
  sg_runtime_destroy(rt);
}

/* Without the promise, C waits for A's device side before it is issued. */
static void no_promise_no_runahead(void **unused) {
  (void)unused;
  sg_runtime *rt = device_runtime(2);
  sg_op_def ops[] = {
      {.name = "A", .kind = SG_OP_TASK, .affinity = 0, .fn = producer, .device = true},
      {.name = "C", .kind = SG_OP_TASK, .affinity = 1, .fn = consumer, .device = true},
  };
  sg_edge_def edges[] = {{0, 1}};
  sg_graph_def def = {.name = "ordered", .ops = ops, .nops = 2, .edges = edges, .nedges = 1};
  sg_subgraph_stats s;
  sg_subgraph *sg = compiled(rt, &def, &s);
  assert_int_equal(s.async_edges, 1);
  assert_int_equal(s.device_waits, 0);
  reset_seen();
  sg_event finish;
  assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &finish), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, finish), MAPP_OK);
  assert_int_equal(atomic_load(&seen_at_issue), 2);
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
}

/* Device copies go to the subgraph's copy stream: a copy after a device
 * task waits on its token (another stream), a copy after a copy needs
 * nothing (the same stream, whichever worker issues them), a stream-ordered
 * task after a copy waits on the copy's token; the bytes arrive in order. */
static void copies_on_the_copy_stream(void **unused) {
  (void)unused;
  sg_runtime *rt = device_runtime(2);
  static char a[64], b[64], c[64];
  memset(a, 0, sizeof a), memset(b, 0, sizeof b), memset(c, 0, sizeof c);
  strcpy(a, "the producer's bytes");
  sg_op_def ops[] = {
      {.name = "A", .kind = SG_OP_TASK, .affinity = 0, .fn = producer, .device = true, .stream_ordered = true},
      {.name = "a->b", .kind = SG_OP_COPY, .affinity = 0, .copy = {.dst = b, .src = a, .row_bytes = 64, .rows = 1},
       .device = true},
      {.name = "b->c", .kind = SG_OP_COPY, .affinity = 1, .copy = {.dst = c, .src = b, .row_bytes = 64, .rows = 1},
       .device = true},
      {.name = "C", .kind = SG_OP_TASK, .affinity = 1, .fn = consumer, .device = true, .stream_ordered = true},
  };
  sg_edge_def edges[] = {{0, 1}, {1, 2}, {2, 3}};
  sg_graph_def def = {.name = "copies", .ops = ops, .nops = 4, .edges = edges, .nedges = 3};
  sg_subgraph_stats s;
  sg_subgraph *sg = compiled(rt, &def, &s);
  assert_int_equal(s.device_waits, 2);       /* A -> a->b, b->c -> C */
  assert_int_equal(s.stream_order_edges, 1); /* a->b -> b->c, on two workers */
  assert_int_equal(s.async_edges, 0);
  reset_seen();
  sg_event finish;
  assert_int_equal(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &finish), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, finish), MAPP_OK);
  assert_string_equal(c, "the producer's bytes");
  assert_int_equal(atomic_load(&seen_on_device), 2); /* C's kernel after A's */
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
}

/* The eager path: a device task's event triggers after its device side. */
static void eager_device_task_waits_for_device(void **unused) {
  (void)unused;
  sg_runtime *rt = device_runtime(1);
  reset_seen();
  sg_event a, d;
  assert_int_equal(sg_launch_device_task(rt, "A", producer, NULL, 0, NULL, 0, &a), MAPP_OK);
  assert_int_equal(sg_launch_task(rt, "D", host_consumer, NULL, 0, &a, 1, &d), MAPP_OK);
  assert_int_equal(sg_event_wait(rt, d), MAPP_OK);
  assert_int_equal(atomic_load(&seen_on_host), 2);
  sg_runtime_destroy(rt);
}

/* A device op needs a device; a kernel needs a stream. */
static void device_ops_need_a_device(void **unused) {
  (void)unused;
  sg_runtime *rt = NULL;
  sg_config cfg = {.workers = 1, .spin_us = 0};
  assert_int_equal(sg_runtime_create(&cfg, &rt), MAPP_OK);
  sg_op_def op = {.name = "A", .kind = SG_OP_TASK, .affinity = 0, .fn = producer, .device = true};
  sg_graph_def def = {.name = "nodevice", .ops = &op, .nops = 1};
  sg_subgraph *sg = NULL;
  assert_int_equal(sg_subgraph_create(rt, &def, &sg), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "on a runtime without a device"));
  mapp_error_clear();
  sg_event ev;
  assert_int_equal(sg_launch_device_task(rt, "A", producer, NULL, 0, NULL, 0, &ev), MAPP_ERR_INPUT);
  mapp_error_clear();
  assert_int_equal(sg_stream_launch(NULL, producer_kernel, NULL, 0), MAPP_ERR_INPUT);
  mapp_error_clear();
  sg_runtime_destroy(rt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(edges_by_kind),
      cmocka_unit_test(no_promise_no_runahead),
      cmocka_unit_test(copies_on_the_copy_stream),
      cmocka_unit_test(eager_device_task_waits_for_device),
      cmocka_unit_test(device_ops_need_a_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
