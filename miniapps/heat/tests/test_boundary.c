/* The fixed boundary against values worked out by hand from the original
 * BSC Heat's rule (heat.h): on a 2 x 3 grid with one source at the top-left
 * corner (row 0, col 0, range 1, temperature 2.5),
 *   top row    y = 0, x = c / 5:  2.5 (1 - c/5)   -> 2.5, 2.0, 1.5, 1.0, 0.5
 *   left col   x = 0, y = r / 4:  2.5 (1 - r/4)   -> 1.875, 1.25 (rows 1, 2)
 *   bottom row y = 1: distance >= 1               -> 0 everywhere
 *   right col  x = 1: distance > 1                -> 0
 * The old rule (r / (rows + 1), c / (cols + 1) on every edge) gives other
 * values, and the test shows it would catch that rule. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "heat.h"

static heat_config corner_source(void) {
  heat_config cfg = {.rows = 2, .cols = 3, .block_rows = 1, .block_cols = 1, .steps = 1, .nsources = 1};
  cfg.sources[0] = (heat_source){.row = 0.0, .col = 0.0, .range = 1.0, .temperature = 2.5};
  return cfg;
}

typedef struct {
  long r, c;
  double value;
} cell;

static const cell by_hand[] = {
    {0, 0, 2.5}, {0, 1, 2.0}, {0, 2, 1.5}, {0, 3, 1.0}, {0, 4, 0.5},  /* top */
    {1, 0, 1.875}, {2, 0, 1.25},                                     /* left */
    {3, 0, 0.0}, {3, 2, 0.0}, {3, 4, 0.0},                           /* bottom */
    {1, 4, 0.0}, {2, 4, 0.0},                                        /* right */
};
enum { NCELLS = sizeof by_hand / sizeof by_hand[0] };

/* The rule mapp used before: every edge at r / (rows + 1), c / (cols + 1). */
static double old_rule(const heat_config *cfg, long gr, long gc) {
  double y = (double)gr / (double)(cfg->rows + 1), x = (double)gc / (double)(cfg->cols + 1);
  const heat_source *s = &cfg->sources[0];
  double d = hypot(y - s->row, x - s->col);
  return d <= s->range ? s->temperature * (s->range - d) / s->range : 0.0;
}

static void boundary_matches_hand_values(void **state) {
  (void)state;
  heat_config cfg = corner_source();
  for (int k = 0; k < NCELLS; ++k)
    assert_float_equal(heat_boundary_value(&cfg, by_hand[k].r, by_hand[k].c), by_hand[k].value, 1e-15);
}

static void old_rule_fails_the_hand_values(void **state) {
  (void)state;
  heat_config cfg = corner_source();
  int differing = 0;
  for (int k = 0; k < NCELLS; ++k)
    differing += fabs(old_rule(&cfg, by_hand[k].r, by_hand[k].c) - by_hand[k].value) > 1e-15;
  /* top (c = 1..4) and left (r = 1, 2) differ under the old rule */
  assert_true(differing >= 6);
}

static void bsc_preset_is_the_original_default(void **state) {
  (void)state;
  heat_config cfg;
  assert_int_equal(heat_config_preset("bsc", &cfg), MAPP_OK);
  assert_int_equal(cfg.rows, 8192);
  assert_int_equal(cfg.cols, 8192);
  assert_int_equal(cfg.block_rows, 1024);
  assert_int_equal(cfg.nsources, 2);
  assert_float_equal(cfg.sources[1].row, 1.0, 0.0);
  assert_float_equal(cfg.sources[1].col, 0.5, 0.0);
  assert_float_equal(cfg.sources[1].temperature, 2.5, 0.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(boundary_matches_hand_values),
      cmocka_unit_test(old_rule_fails_the_hand_values),
      cmocka_unit_test(bsc_preset_is_the_original_default),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
