/* What `mapp bisect` does to one revision: the git questions (names,
 * ancestry, the first-parent range, subjects), a worktree of the revision
 * under OUT/bisect/worktrees built there once (the harness and the one
 * app; reused by later bisects into the same folder), and the entry's
 * repetitions run with that build's own mapp sweep. verbs/bisect.c holds
 * the search and what it prints. */
#ifndef HARNESS_BISECT_REVISIONS_H
#define HARNESS_BISECT_REVISIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "bisect_search.h"
#include "strv.h"

typedef struct {
  const char *spec_path, *out, *env_path, *repo;
  long entry, repetitions;
  double threshold, alpha;
} bisect_options;

/* One revision between GOOD and BAD and what became of it. */
typedef struct {
  char *sha, *subject;
  char short_sha[13];
  char *worktree, *build_dir, *build_log, *run_log;
  double *foms; /* the repetitions' figures of merit, once measured */
  size_t nfoms;
  double fom_median;
} revision;

typedef struct {
  bisect_options opt;
  char *repo;      /* the git repository the revisions come from */
  char *root;      /* OUT/bisect (absolute): worktrees/, runs/, logs/, entry.yaml */
  char *entry_spec; /* the chosen entry alone, with the repetitions, for each revision's sweep */
  char *spec_name, *app;
  bool cuda;
  revision *revs; /* [0] GOOD ... [n - 1] BAD, in first-parent order */
  bisect_mark *marks;
  size_t n;
  int lock_fd;
} bisect_run;

/* The commit `name` names (a full hash, malloc'd); an unknown one is an
 * input error naming it. */
int bisect_resolve_revision(const bisect_run *b, const char *name, char **sha);
/* An input error unless GOOD is an ancestor of BAD and not BAD itself. */
int bisect_check_ancestry(const bisect_run *b, const char *good, const char *bad, const char *good_name,
                          const char *bad_name);
/* GOOD, then BAD's first parents back to GOOD, oldest first. */
int bisect_list_revisions(const bisect_run *b, const char *good, const char *bad, strv *shas);
/* b->revs for the shas (worktree, build and log paths, subject). */
int bisect_make_revisions(bisect_run *b, const strv *shas);
void bisect_revision_free(revision *r);
/* The revision's worktree and build, made once (*reused when an earlier
 * bisect made them); a build that fails is not an error (*ok false). */
int bisect_build_revision(const bisect_run *b, const revision *r, bool *ok, bool *reused, double *seconds);
/* The entry's repetitions with the revision's own mapp sweep: r->foms;
 * *ok false when the sweep measured nothing (exit other than 0 or 1). */
int bisect_measure_revision(const bisect_run *b, revision *r, bool *ok, int *exit_code);

#endif
