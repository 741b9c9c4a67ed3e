#include "bisect_search.h"

bisect_range bisect_bounds(const bisect_mark *marks, size_t n) {
  bisect_range r = {.good = 0, .bad = n - 1};
  for (size_t i = 1; i < n; ++i)
    if (marks[i] == BISECT_BAD) {
      r.bad = i;
      break;
    }
  for (size_t i = 1; i < r.bad; ++i)
    if (marks[i] == BISECT_GOOD) r.good = i;
  return r;
}

static bool untested_inside(const bisect_mark *marks, bisect_range r, size_t i) {
  return i > r.good && i < r.bad && marks[i] == BISECT_UNTESTED;
}

bool bisect_next(const bisect_mark *marks, size_t n, size_t *next) {
  bisect_range r = bisect_bounds(marks, n);
  size_t middle = r.good + (r.bad - r.good) / 2;
  /* Outward from the middle: a skipped revision's neighbours split the
   * range nearly as well, and one of them is likelier to build. */
  for (size_t d = 0; d < r.bad - r.good; ++d) {
    if (untested_inside(marks, r, middle + d)) {
      *next = middle + d;
      return true;
    }
    if (d <= middle && untested_inside(marks, r, middle - d)) {
      *next = middle - d;
      return true;
    }
  }
  return false;
}

size_t bisect_suspects(const bisect_mark *marks, size_t n, size_t *suspects) {
  bisect_range r = bisect_bounds(marks, n);
  size_t count = 0;
  for (size_t i = r.good + 1; i < r.bad; ++i)
    if (marks[i] == BISECT_SKIP) suspects[count++] = i;
  suspects[count++] = r.bad;
  return count;
}
