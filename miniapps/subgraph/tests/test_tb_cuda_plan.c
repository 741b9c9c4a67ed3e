/* The CUDA variants' host-side plan (tb_cuda_plan.h), without a device:
 * streams per point, the events a task records and waits for (the edges a
 * capture records), and the configurations refused before any CUDA call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "tb_cuda_plan.h"

static tb_config config(tb_pattern pattern, long width) {
  return (tb_config){.pattern = pattern, .width = width, .steps = 1024, .radix = 3, .graph_steps = 64};
}

static void streams_cap_at_four_and_cycle(void **state) {
  (void)state;
  tb_config cfg = config(TB_STENCIL_1D, 16);
  tb_cuda_plan plan;
  assert_int_equal(tb_cuda_plan_make(&cfg, &plan), MAPP_OK);
  assert_int_equal(plan.nstreams, 4);
  assert_int_equal(tb_cuda_stream_of(&plan, 5), 1);
  assert_int_equal(plan.ring_steps, 1025);
  assert_int_equal(plan.ring_bytes, 1025 * 16 * sizeof(tb_tag));
  assert_int_equal(plan.events, 32);
  cfg.width = 3;
  assert_int_equal(tb_cuda_plan_make(&cfg, &plan), MAPP_OK);
  assert_int_equal(plan.nstreams, 3);
}

/* stencil_1d: (t, 5) reads 4, 5 and 6 of t - 1; 5 is on its own stream,
 * 4 and 6 are not, so it waits for their events of timestep t - 1. */
static void a_task_waits_for_inputs_on_other_streams_only(void **state) {
  (void)state;
  tb_config cfg = config(TB_STENCIL_1D, 16);
  tb_cuda_plan plan;
  long slots[TB_CUDA_MAX_DEPS];
  assert_int_equal(tb_cuda_plan_make(&cfg, &plan), MAPP_OK);
  assert_int_equal(tb_cuda_cross_waits(&cfg, &plan, 3, 5, slots), 2);
  assert_int_equal(slots[0], 0 * 16 + 4); /* t - 1 = 2: even slot row */
  assert_int_equal(slots[1], 0 * 16 + 6);
  assert_int_equal(tb_cuda_cross_waits(&cfg, &plan, 4, 5, slots), 2);
  assert_int_equal(slots[0], 1 * 16 + 4);
  assert_int_equal(tb_cuda_event_slot(&cfg, 4, 5), 0 * 16 + 5);
  assert_int_equal(tb_cuda_cross_waits(&cfg, &plan, 0, 5, slots), 0); /* timestep 0 reads nothing */
}

static void no_comm_captures_no_edges(void **state) {
  (void)state;
  tb_config cfg = config(TB_NO_COMM, 16);
  tb_cuda_plan plan;
  assert_int_equal(tb_cuda_plan_make(&cfg, &plan), MAPP_OK);
  assert_int_equal(tb_cuda_capture_edges(&cfg, &plan), 0);
}

/* stencil_1d at width 16 on 4 streams: every point but the two ends has
 * both neighbours on other streams, the ends one; 63 timesteps read. */
static void stencil_captures_two_edges_per_inner_point(void **state) {
  (void)state;
  tb_config cfg = config(TB_STENCIL_1D, 16);
  tb_cuda_plan plan;
  assert_int_equal(tb_cuda_plan_make(&cfg, &plan), MAPP_OK);
  assert_int_equal(tb_cuda_capture_edges(&cfg, &plan), 63 * (14 * 2 + 2));
}

static void too_many_dependences_or_tags_are_refused(void **state) {
  (void)state;
  tb_config cfg = config(TB_ALL_TO_ALL, 65);
  tb_cuda_plan plan;
  assert_int_equal(tb_cuda_plan_make(&cfg, &plan), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "at most 64 dependences"));
  mapp_error_clear();
  cfg = config(TB_ALL_TO_ALL, 64);
  assert_int_equal(tb_cuda_plan_make(&cfg, &plan), MAPP_OK);
  cfg = config(TB_NO_COMM, 1000);
  cfg.steps = 100000; /* 1e8 tags of 24 bytes */
  assert_int_equal(tb_cuda_plan_make(&cfg, &plan), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "exceed 1 GB"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(streams_cap_at_four_and_cycle),
      cmocka_unit_test(a_task_waits_for_inputs_on_other_streams_only),
      cmocka_unit_test(no_comm_captures_no_edges),
      cmocka_unit_test(stencil_captures_two_edges_per_inner_point),
      cmocka_unit_test(too_many_dependences_or_tags_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
