/* Every Task Bench pattern at widths 1, 2, 7 and 16 under both variants
 * with 1 and 2 workers, every input tag checked by the tasks, every point's
 * last tag checked here and its last value equal bit for bit across the
 * variants and worker counts; the same with --copy-bytes (every copied
 * byte checked by its reader) at graph-steps 4 and 3 (odd: the copies'
 * addresses alternate between instantiations, so they are interpolated);
 * each of these without a device and on the emulated device with every
 * --stream-ordered (runahead, none, host and device tasks alternating);
 * then the checks themselves shown to fail: a reversed dependence, a
 * stream that does not wait on its producer's token, and host tasks given
 * runahead (caught by --check-peek). One process, MPI on one rank. */
#include <stdio.h>
#include <string.h>

#include "subgraph.h"

static int last_tags_bad(const tb_state *st) {
  long last = st->cfg.steps - 1, bad = 0;
  for (long p = 0; p < st->cfg.width; ++p) {
    const tb_tag *tag = tb_tag_at(st, last, p);
    bad += tag->t != last || tag->p != p;
  }
  return (int)bad;
}

/* The last timestep's values; every run of a (pattern, width) must give
 * the first run's bit for bit. */
static double reference[16], values[16];

static int run_case(tb_config cfg, tb_variant variant, int *bad_tags) {
  tb_state *st = NULL;
  int status = tb_state_create(&cfg, MPI_COMM_WORLD, &st);
  if (status == MAPP_OK) status = variant == TB_VARIANT_EAGER ? tb_run_eager(st) : tb_run_subgraph(st);
  *bad_tags = st ? last_tags_bad(st) : -1;
  for (long p = 0; st && p < cfg.width; ++p)
    values[p] = tb_tag_at(st, cfg.steps - 1, p)->v;
  if (st) tb_subgraph_release(st);
  tb_state_destroy(st);
  return status;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  static const long widths[] = {1, 2, 7, 16};
  int failures = 0, cases = 0;
  /* copy_bytes 0: none; 20: copies with a tail shorter than a word */
  static const struct {
    long copy_bytes, graph_steps;
  } modes[] = {{0, 4}, {20, 4}, {20, 3}};
  /* no device; the emulated one with each --stream-ordered */
  static const struct {
    bool device;
    tb_stream_ordered ordered;
    const char *name;
  } devices[] = {{false, TB_STREAM_ORDERED_ALL, "none"},
                 {true, TB_STREAM_ORDERED_ALL, "emulated, stream-ordered all"},
                 {true, TB_STREAM_ORDERED_NONE, "emulated, stream-ordered none"},
                 {true, TB_STREAM_ORDERED_ALTERNATE, "emulated, stream-ordered alternate"}};
  for (int pattern = 0; pattern < TB_PATTERN_COUNT; ++pattern)
    for (int wi = 0; wi < 4; ++wi)
      for (int dev = 0; dev < 4; ++dev)
      for (int mode = 0; mode < 3; ++mode)
        for (int variant = 0; variant < 2; ++variant)
          for (int workers = 1; workers <= 2; ++workers) {
            long w = widths[wi];
            if (dev && mode == 1) continue; /* copies on a device: at odd graph-steps (mode 2) only */
            tb_config cfg = {.pattern = (tb_pattern)pattern, .width = w, .steps = 12, .radix = w < 3 ? w : 3,
                             .iterations = 0, .kernel = TB_KERNEL_COMPUTE, .scratch_bytes = 64, .workers = workers,
                             .spin_us = 20, .graph_steps = modes[mode].graph_steps, .in_flight = 2,
                             .interpolate = workers == 2, .copy_bytes = modes[mode].copy_bytes,
                             .device = devices[dev].device, .stream_ordered = devices[dev].ordered,
                             .device_poll_ns = 1000};
            if (tb_config_check(&cfg, 1) != MAPP_OK) {
              printf("FAIL config %s w=%ld: %s\n", tb_pattern_name(cfg.pattern), w, mapp_error_message());
              failures++;
              continue;
            }
            int bad = 0, status = run_case(cfg, (tb_variant)variant, &bad);
            cases++;
            if (dev == 0 && mode == 0 && variant == 0 && workers == 1) memcpy(reference, values, sizeof values);
            else if (memcmp(reference, values, sizeof(double) * (size_t)w)) bad = -1; /* answers disagree */
            if (status != MAPP_OK || bad) {
              printf("FAIL %s width %ld copy-bytes %ld graph-steps %ld %s workers %d device %s: status %d, %d bad "
                     "last tags (-1: values differ): %s\n",
                     tb_pattern_name(cfg.pattern), w, cfg.copy_bytes, cfg.graph_steps, variant ? "subgraph" : "eager",
                     workers, devices[dev].name, status, bad, mapp_error_message());
              mapp_error_clear();
              failures++;
            }
          }
  /* The check can fail: a reversed dependence is caught on every path. */
  for (int variant = 0; variant < 2; ++variant)
    for (int workers = 1; workers <= 2; ++workers) {
      tb_config cfg = {.pattern = TB_STENCIL_1D, .width = 7, .steps = 8, .radix = 3, .workers = workers,
                       .spin_us = 20, .graph_steps = 4, .in_flight = 2, .break_dependence = true};
      int bad = 0, status = run_case(cfg, (tb_variant)variant, &bad);
      cases++;
      if (status != MAPP_ERR_VERIFY || !strstr(mapp_error_message(), "wrong input tag")) {
        printf("FAIL broken dependence not caught: %s workers %d, status %d\n", variant ? "subgraph" : "eager", workers,
               status);
        failures++;
      }
      mapp_error_clear();
    }
  /* The asynchronous effects' checks can fail. A consumer whose stream
   * does not wait on its producer's token runs its kernel while the
   * producer's (long: K = 10^6, about 2 ms) still runs on another stream:
   * at width 3 on 2 workers worker 1's stream has one kernel a step and
   * worker 0's two, so it runs a kernel ahead by the second step, and the
   * tag check sees it. Host tasks that promise stream order get no wait for
   * their producers' device side and read on the host too early:
   * --check-peek names it. */
  static const struct {
    tb_plant plant;
    tb_stream_ordered ordered;
    const char *expect;
  } plants[] = {{TB_PLANT_NO_DEVICE_WAIT, TB_STREAM_ORDERED_ALL, "wrong input tag"},
                {TB_PLANT_HOST_RUNAHEAD, TB_STREAM_ORDERED_ALTERNATE, "peek: op 'task'"}};
  for (int k = 0; k < 2; ++k) {
    tb_config cfg = {.pattern = TB_STENCIL_1D, .width = 3, .steps = 8, .radix = 3, .workers = 2, .iterations = 1000000,
                     .spin_us = 20, .graph_steps = 4, .in_flight = 2, .device = true, .device_poll_ns = 1000,
                     .stream_ordered = plants[k].ordered, .check_peek = true, .plant = plants[k].plant};
    int bad = 0, status = run_case(cfg, TB_VARIANT_SUBGRAPH, &bad);
    cases++;
    if (status != MAPP_ERR_VERIFY || !strstr(mapp_error_message(), plants[k].expect)) {
      printf("FAIL planted bug %d not caught: status %d, '%s' (expected '%s')\n", (int)plants[k].plant, status,
             mapp_error_message(), plants[k].expect);
      failures++;
    }
    mapp_error_clear();
  }
  printf("%d cases, %d failures\n", cases, failures);
  MPI_Finalize();
  return failures ? 1 : 0;
}
