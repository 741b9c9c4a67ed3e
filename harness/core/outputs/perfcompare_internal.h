/* What perfcompare.c (the comparison, its table, JUnit) and
 * perfcompare_md.c (its CI summary) share, not part of any API. */
#ifndef HARNESS_PERFCOMPARE_INTERNAL_H
#define HARNESS_PERFCOMPARE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "junit.h"
#include "perfstats.h"
#include "stats.h"

typedef enum { COMPARE_JUDGED, COMPARE_TOO_FEW, COMPARE_ONLY_OLD, COMPARE_ONLY_NEW } compare_kind;

/* One configuration's comparison, as the table prints it. */
typedef struct {
  compare_kind kind;
  const result_group *old, *new_; /* the configuration's repetitions; one NULL when on one side only */
  char systems[96];               /* "a", or "a vs b" (OLD's vs NEW's) */
  bool across;                    /* compared across systems: an A/B, never a regression */
  perf_change change;             /* COMPARE_JUDGED: the ratio, its interval, p, detectable */
  perf_answer answer;
  char answer_text[128];          /* "SLOWER", or "A/B: b slower" */
} compare_row;

typedef struct {
  double threshold, alpha;
  size_t answers[4]; /* by perf_answer */
  size_t ab[4];      /* the same, of configurations compared across systems (an A/B, never a regression) */
  size_t compared, unmatched, too_few;
  junit_suite *junit; /* NULL: no JUnit file */
  bool collect;       /* the summary's: rows kept for it, nothing printed */
  compare_row *rows;
  size_t nrows, cap;
  char *systems_note; /* OLD and NEW from different systems: what the comparison then is (malloc'd); else NULL */
} compare_totals;

/* The CI summary of a finished comparison into *text (malloc'd). */
int perfcompare_markdown(const compare_totals *t, const char *old_path, const char *new_path, const char *report_url,
                         char **text);

#endif
