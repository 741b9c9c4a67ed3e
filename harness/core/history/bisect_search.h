/* The search of `mapp bisect`, as `git bisect` does it, over the revisions
 * from GOOD (index 0) to BAD (index n - 1): measure the middle of the range
 * between the last good revision and the first bad one, and halve it. A
 * revision that cannot be measured (it does not build, or its run fails)
 * is skipped, as `git bisect skip` does, and its nearest neighbour inside
 * the range is measured instead; when only skipped revisions are left
 * between the two, the first bad one is among them or the bad end. Pure
 * logic over marks, so the skip rules are tested without building. */
#ifndef HARNESS_BISECT_SEARCH_H
#define HARNESS_BISECT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { BISECT_UNTESTED, BISECT_GOOD, BISECT_BAD, BISECT_SKIP } bisect_mark;

/* The last good index before the first bad one, and that first bad one
 * (good < bad); marks[0] must be GOOD and marks[n - 1] BAD. */
typedef struct {
  size_t good, bad;
} bisect_range;

bisect_range bisect_bounds(const bisect_mark *marks, size_t n);
/* The next revision to measure: the middle of the range or, when that one
 * is skipped, the nearest untested one inside it (the later first at equal
 * distance). False when none is left: the search is over. */
bool bisect_next(const bisect_mark *marks, size_t n, size_t *next);
/* The revisions the first bad one can be once the search is over: the
 * skipped ones inside the range, then its bad end; their count. */
size_t bisect_suspects(const bisect_mark *marks, size_t n, size_t *suspects);

#endif
