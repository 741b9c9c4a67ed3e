/* mapp bisect's search without building anything: revisions are judged by
 * a planted first bad index, and some are marked as not building; the
 * search must halve the range, step around the unbuildable ones, and name
 * every revision the first bad one may be when they leave it open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bisect_search.h"

enum { MAX_REVISIONS = 64 };

typedef struct {
  size_t n, first_bad;
  bool broken[MAX_REVISIONS];
  bisect_mark marks[MAX_REVISIONS];
  size_t order[MAX_REVISIONS]; /* the revisions measured, in turn */
  size_t steps;
} history;

static void start(history *h, size_t n, size_t first_bad) {
  *h = (history){.n = n, .first_bad = first_bad};
  h->marks[0] = BISECT_GOOD;
  h->marks[n - 1] = BISECT_BAD;
}

/* Runs the search to its end as mapp bisect does; returns the suspects' count. */
static size_t search(history *h, size_t *suspects) {
  size_t next;
  while (bisect_next(h->marks, h->n, &next)) {
    assert_true(h->marks[next] == BISECT_UNTESTED);
    assert_true(h->steps < h->n);
    h->order[h->steps++] = next;
    h->marks[next] = h->broken[next] ? BISECT_SKIP : next >= h->first_bad ? BISECT_BAD : BISECT_GOOD;
  }
  return bisect_suspects(h->marks, h->n, suspects);
}

static void halves_the_range(void **state) {
  (void)state;
  for (size_t first_bad = 1; first_bad < 33; ++first_bad) {
    history h;
    start(&h, 33, first_bad);
    size_t suspects[MAX_REVISIONS];
    assert_int_equal(search(&h, suspects), 1);
    assert_int_equal(suspects[0], first_bad);
    assert_true(h.steps <= 5); /* log2 of the 31 revisions between */
  }
}

/* GOOD, n1, n2, broken, repaired, planted, BAD: what bisect.sh builds. */
static void steps_around_a_revision_that_does_not_build(void **state) {
  (void)state;
  history h;
  start(&h, 7, 5);
  h.broken[3] = true;
  size_t suspects[MAX_REVISIONS];
  assert_int_equal(search(&h, suspects), 1);
  assert_int_equal(suspects[0], 5);
  assert_int_equal(h.steps, 3);
  assert_int_equal(h.order[0], 3); /* the middle: skipped */
  assert_int_equal(h.order[1], 4); /* its later neighbour */
  assert_int_equal(h.order[2], 5);
}

/* The revision before the first bad one does not build: either may be it. */
static void a_skipped_neighbour_leaves_it_open(void **state) {
  (void)state;
  history h;
  start(&h, 7, 5);
  h.broken[4] = true;
  size_t suspects[MAX_REVISIONS];
  assert_int_equal(search(&h, suspects), 2);
  assert_int_equal(suspects[0], 4);
  assert_int_equal(suspects[1], 5);
}

static void nothing_between_builds(void **state) {
  (void)state;
  history h;
  start(&h, 5, 2);
  h.broken[1] = h.broken[2] = h.broken[3] = true;
  size_t suspects[MAX_REVISIONS];
  assert_int_equal(search(&h, suspects), 4);
  assert_int_equal(h.steps, 3);
  for (size_t i = 0; i < 4; ++i) assert_int_equal(suspects[i], i + 1);
}

static void bad_right_after_good(void **state) {
  (void)state;
  history h;
  start(&h, 2, 1);
  size_t suspects[MAX_REVISIONS];
  assert_int_equal(search(&h, suspects), 1);
  assert_int_equal(h.steps, 0);
  assert_int_equal(suspects[0], 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(halves_the_range),
      cmocka_unit_test(steps_around_a_revision_that_does_not_build),
      cmocka_unit_test(a_skipped_neighbour_leaves_it_open),
      cmocka_unit_test(nothing_between_builds),
      cmocka_unit_test(bad_right_after_good),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
