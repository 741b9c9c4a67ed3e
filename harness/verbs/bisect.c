/* mapp bisect GOOD BAD --spec FILE: the first revision whose figure of
 * merit is significantly below GOOD's, as asv's `find` does it. Each
 * revision measured is checked out in a git worktree of the results
 * folder and built there (the harness and the one app, kept for the next
 * bisect), and runs the spec's one configuration with its own mapp sweep,
 * binaries, environment and baselines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bisect_revisions.h"
#include "bisect_search.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "paths.h"
#include "perfstats.h"
#include "proc.h"
#include "results.h"
#include "spec.h"
#include "stats.h"
#include "verbs.h"
#include "verdict.h"
#include "yamlutil.h"

/* ------------------------------------------------------------ report */

static void print_header(void) {
  printf("%-5s %-12s %-18s %11s  %-24s %8s  %10s  %-9s  %-12s %s\n", "step", "revision", "build", "median FOM",
         "ratio to GOOD [95% CI]", "p (U)", "detectable", "measured", "verdict", "subject");
}

static void print_row_start(const char *step, const revision *r) {
  printf("%-5s %-12s ", step, r->short_sha);
  fflush(stdout);
}

static void print_build(bool reused, double seconds) {
  char text[32];
  if (reused) snprintf(text, sizeof text, "reused");
  else snprintf(text, sizeof text, "built %.0f s", seconds);
  printf("%-18s ", text);
  fflush(stdout);
}

/* A measured row: the comparison with GOOD (none for GOOD itself), the
 * verdict of the revision's own repetitions (verdict.h) and the answer. */
static void print_measured(const revision *r, const perf_change *c, verdict_kind measured, const char *answer) {
  printf("%11.4g  ", r->fom_median);
  if (c && c->bounded) printf("%6.3f [%6.3f, %6.3f]   %8.2g%s ", c->ratio, c->low, c->high, c->p_value, c->exact ? " " : "~");
  else if (c) printf("%6.3f [%6s, %6s]   %8.2g%s ", c->ratio, "-", "-", c->p_value, c->exact ? " " : "~");
  else printf("%-24s %8s  ", "-", "-");
  char detectable[24] = "-";
  if (c && isfinite(c->detectable)) snprintf(detectable, sizeof detectable, "+-%.1f %%", 100.0 * c->detectable);
  else if (c) snprintf(detectable, sizeof detectable, "none");
  printf("%10s  %-9s  %-12s %.50s\n", detectable, verdict_name(measured), answer, r->subject);
}

static void print_unmeasured(const revision *r, const char *why, const char *log) {
  printf("skip: %s (log: %s)  %.50s\n", why, log, r->subject);
}

/* --------------------------------------------------------- the search */

/* Builds and measures revision i; *measured false when it could not be
 * (it is then skipped). */
static int build_and_measure(const bisect_run *b, size_t i, const char *step, bool *measured) {
  revision *r = &b->revs[i];
  bool built = false, reused = false;
  double seconds = 0.0;
  int exit_code = 0;
  print_row_start(step, r);
  MAPP_TRY(bisect_build_revision(b, r, &built, &reused, &seconds));
  if (!built) {
    printf("%-18s ", "FAILED");
    print_unmeasured(r, "does not build", r->build_log);
    *measured = false;
    return MAPP_OK;
  }
  print_build(reused, seconds);
  MAPP_TRY(bisect_measure_revision(b, r, measured, &exit_code));
  if (!*measured) {
    char why[64];
    snprintf(why, sizeof why, "its sweep measured nothing (exit %d)", exit_code);
    print_unmeasured(r, why, r->run_log);
  }
  return MAPP_OK;
}

/* The verdict of a measured revision's repetitions, from the records its
 * sweep wrote (OUT/bisect/runs/SHA12/SPEC/results.jsonl); noisy when they
 * cannot be read, as for too few repetitions. */
static int revision_verdict(const bisect_run *b, const revision *r, verdict_kind *kind) {
  *kind = VERDICT_NOISY;
  char *file = str_printf("%s/runs/%s/%s/results.jsonl", b->root, r->short_sha, b->spec_name);
  if (!file) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_t *records = NULL;
  group_table groups = {0};
  int status = results_load(file, &records);
  if (status == MAPP_OK) status = stats_group(records, &groups);
  if (status == MAPP_OK && groups.count == 1) *kind = groups.items[0].verdict.kind;
  if (status == MAPP_ERR_INPUT) {
    /* records this revision's harness wrote and ours cannot read: the
     * comparison stands, the verdict is unknown */
    mapp_error_clear();
    status = MAPP_OK;
  }
  group_table_free(&groups);
  json_decref(records);
  free(file);
  return status;
}

/* Measures revision i against GOOD and marks it: bad when SLOWER, good
 * otherwise (an inconclusive one is marked good, as git bisect has no
 * third answer, and listed at the end); *change (when not NULL) gets the
 * comparison. */
static int judge(bisect_run *b, size_t i, const char *step, bool *inconclusive, perf_change *change) {
  bool measured;
  MAPP_TRY(build_and_measure(b, i, step, &measured));
  if (!measured) {
    b->marks[i] = BISECT_SKIP;
    return MAPP_OK;
  }
  const revision *good = &b->revs[0], *r = &b->revs[i];
  perf_change c;
  verdict_kind kind;
  MAPP_TRY(perf_compare(good->foms, good->nfoms, r->foms, r->nfoms, b->opt.alpha, &c));
  MAPP_TRY(revision_verdict(b, r, &kind));
  perf_answer answer = perf_judge(&c, b->opt.threshold, b->opt.alpha);
  b->marks[i] = answer == PERF_SLOWER ? BISECT_BAD : BISECT_GOOD;
  inconclusive[i] = answer == PERF_INCONCLUSIVE;
  if (change) *change = c;
  print_measured(r, &c, kind, perf_answer_name(answer));
  fflush(stdout);
  return MAPP_OK;
}

/* GOOD and BAD are the user's: one that cannot be measured is bad input. */
static int unmeasurable(const bisect_run *b, const char *which, size_t i) {
  return mapp_fail(MAPP_ERR_INPUT, "%s %s cannot be measured: it does not build or its sweep failed (logs: %s/logs)",
                   which, b->revs[i].short_sha, b->root);
}

/* GOOD is the reference every other revision is compared with: measured
 * once, and it must build and run. */
static int measure_good(bisect_run *b) {
  bool measured;
  MAPP_TRY(build_and_measure(b, 0, "good", &measured));
  if (!measured) return unmeasurable(b, "GOOD", 0);
  b->marks[0] = BISECT_GOOD;
  verdict_kind kind;
  MAPP_TRY(revision_verdict(b, &b->revs[0], &kind));
  print_measured(&b->revs[0], NULL, kind, "GOOD");
  return MAPP_OK;
}

/* BAD must be measurably slower, or there is nothing to find (exit 1). */
static int judge_bad(bisect_run *b, bool *inconclusive) {
  size_t last = b->n - 1;
  perf_change c;
  MAPP_TRY(judge(b, last, "bad", inconclusive, &c));
  if (b->marks[last] == BISECT_SKIP) return unmeasurable(b, "BAD", last);
  if (b->marks[last] == BISECT_GOOD) {
    printf("BAD %s is not significantly slower than GOOD %s (beyond %.3g %% with p < %g): nothing to bisect",
           b->revs[last].short_sha, b->revs[0].short_sha, 100.0 * b->opt.threshold, b->opt.alpha);
    if (inconclusive[last] && isfinite(c.detectable))
      printf(" (inconclusive: %ld repetitions could detect a change of %.1f %%)", b->opt.repetitions,
             100.0 * c.detectable);
    else if (inconclusive[last])
      printf(" (inconclusive: %ld repetitions cannot reach p < %g)", b->opt.repetitions, b->opt.alpha);
    printf("\n");
    return MAPP_ERR_VERIFY;
  }
  return MAPP_OK;
}

/* Revisions marked good though the noise hid the answer: the first bad
 * one may be among them. */
static void print_inconclusive(const bisect_run *b, const bool *inconclusive) {
  size_t count = 0;
  for (size_t i = 1; i + 1 < b->n; ++i) count += inconclusive[i] && b->marks[i] == BISECT_GOOD;
  if (!count) return;
  printf("judged good though inconclusive (the noise hides a %.3g %% change; more --repetitions would decide):",
         100.0 * b->opt.threshold);
  for (size_t i = 1; i + 1 < b->n; ++i)
    if (inconclusive[i] && b->marks[i] == BISECT_GOOD) printf(" %s", b->revs[i].short_sha);
  printf("\n");
}

static int print_verdict(const bisect_run *b, const bool *inconclusive) {
  size_t *suspects = malloc(b->n * sizeof *suspects);
  if (!suspects) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t count = bisect_suspects(b->marks, b->n, suspects);
  const revision *first = &b->revs[suspects[0]];
  if (count == 1) {
    printf("first bad revision: %s %s\n", first->sha, first->subject);
  } else {
    printf("first bad is one of");
    for (size_t i = 0; i < count; ++i) printf(" %s", b->revs[suspects[i]].short_sha);
    printf(" (skipped, as they do not build or could not be measured:");
    for (size_t i = 0; i + 1 < count; ++i) printf(" %s", b->revs[suspects[i]].short_sha);
    printf(")\n");
  }
  print_inconclusive(b, inconclusive);
  free(suspects);
  return MAPP_OK;
}

static int run_search(bisect_run *b, bool *inconclusive) {
  print_header();
  MAPP_TRY(measure_good(b));
  MAPP_TRY(judge_bad(b, inconclusive));
  size_t next, step = 0;
  while (bisect_next(b->marks, b->n, &next)) {
    char label[16];
    snprintf(label, sizeof label, "%zu", ++step);
    MAPP_TRY(judge(b, next, label, inconclusive, NULL));
  }
  return print_verdict(b, inconclusive);
}

static int search(bisect_run *b) {
  bool *inconclusive = calloc(b->n, sizeof *inconclusive);
  if (!inconclusive) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = run_search(b, inconclusive);
  free(inconclusive);
  return status;
}

/* ----------------------------------------------------- the spec entry */

/* An entry that expands to more than one configuration would mix them in
 * one sample; the variant must be named, since none means all of them. */
static int check_one_configuration(const sweep_spec *spec, const bisect_options *opt) {
  if (opt->entry >= (long)spec->nruns)
    return mapp_fail(MAPP_ERR_INPUT, "--entry %ld is out of range: %s has %zu entries (0 to %zu)", opt->entry,
                     opt->spec_path, spec->nruns, spec->nruns - 1);
  const spec_run *run = &spec->runs[opt->entry];
  if (!run->variants.count)
    return mapp_fail(MAPP_ERR_INPUT,
                     "entry %ld of %s names no variants, which means all of the app's; bisect measures exactly one "
                     "configuration (variants: [V])",
                     opt->entry, opt->spec_path);
  size_t configurations = run->variants.count * run->backends.count * run->sizes.count * run->nranks *
                          (run->nthreads ? run->nthreads : 1) * run->ncombos;
  if (configurations != 1)
    return mapp_fail(MAPP_ERR_INPUT,
                     "entry %ld of %s expands to %zu configurations; bisect measures exactly one (one each of "
                     "variants, backends, sizes, ranks, threads, matrix values)",
                     opt->entry, opt->spec_path, configurations);
  return MAPP_OK;
}

/* OUT/bisect/entry.yaml: the entry as the user wrote it (re-emitted by
 * libfyaml, so any key the revisions' harness knows passes through), with
 * the bisect's repetitions. */
static int write_entry_spec(bisect_run *b) {
  yaml_doc y;
  MAPP_TRY(yaml_load_file(b->opt.spec_path, &y));
  struct fy_node *runs = fy_node_mapping_lookup_by_string(fy_document_root(y.doc), "runs", FY_NT);
  struct fy_node *entry = runs ? fy_node_sequence_get_by_index(runs, (int)b->opt.entry) : NULL;
  char *flow = entry ? fy_emit_node_to_string(entry, FYECF_MODE_FLOW_ONELINE) : NULL;
  char *text = NULL;
  if (flow) text = str_printf("name: %s\nrepetitions: %ld\nruns:\n  - %s\n", b->spec_name, b->opt.repetitions, flow);
  b->entry_spec = path_join(b->root, "entry.yaml");
  int status = MAPP_OK;
  if (!text || !b->entry_spec)
    status = mapp_fail(MAPP_ERR_SYSTEM, "cannot write entry %ld of %s", b->opt.entry, b->opt.spec_path);
  if (status == MAPP_OK) status = write_text_file(b->entry_spec, text);
  free(text);
  free(flow);
  yaml_close(&y);
  return status;
}

static int load_spec(bisect_run *b) {
  sweep_spec spec;
  MAPP_TRY(spec_load(b->opt.spec_path, &spec));
  int status = check_one_configuration(&spec, &b->opt);
  if (status == MAPP_OK) {
    const spec_run *run = &spec.runs[b->opt.entry];
    b->spec_name = strdup(spec.name);
    b->app = strdup(run->app);
    b->cuda = strv_contains(&run->backends, "cuda");
    if (!b->spec_name || !b->app) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  spec_free(&spec);
  return status;
}

/* The two-sided U test cannot go below 2 / C(2n, n) with n runs a side:
 * fewer repetitions than reach alpha could never find anything. */
static int check_repetitions(const bisect_options *opt) {
  double arrangements = 1.0;
  for (long k = 1; k <= opt->repetitions; ++k) arrangements = arrangements * (double)(opt->repetitions + k) / (double)k;
  if (2.0 / arrangements < opt->alpha) return MAPP_OK;
  return mapp_fail(MAPP_ERR_INPUT,
                   "--repetitions %ld cannot reach significance: the smallest p of the U test with %ld runs a side is "
                   "%.3g, not below --alpha %g",
                   opt->repetitions, opt->repetitions, 2.0 / arrangements, opt->alpha);
}

/* ------------------------------------------------------------ setup */

static int resolve_range(bisect_run *b, const char *good_name, const char *bad_name, strv *shas) {
  char *good = NULL, *bad = NULL;
  int status = bisect_resolve_revision(b, good_name, &good);
  if (status == MAPP_OK) status = bisect_resolve_revision(b, bad_name, &bad);
  if (status == MAPP_OK) status = bisect_check_ancestry(b, good, bad, good_name, bad_name);
  if (status == MAPP_OK) status = bisect_list_revisions(b, good, bad, shas);
  free(good);
  free(bad);
  return status;
}

static int make_folders(bisect_run *b) {
  char *out = path_absolute(b->opt.out);
  b->root = out ? path_join(out, "bisect") : NULL;
  free(out);
  if (!b->root) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  const char *const subs[] = {"worktrees", "runs", "logs", NULL};
  for (size_t i = 0; subs[i]; ++i) {
    char *dir = path_join(b->root, subs[i]);
    int status = dir ? make_dirs(dir) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(dir);
    MAPP_TRY(status);
  }
  /* Two bisects in one folder would check out into each other's worktrees. */
  return dir_lock(b->root, "bisect", &b->lock_fd);
}

static void bisect_free(bisect_run *b) {
  for (size_t i = 0; b->revs && i < b->n; ++i) bisect_revision_free(&b->revs[i]);
  free(b->revs);
  free(b->marks);
  free(b->repo);
  free(b->root);
  free(b->entry_spec);
  free(b->spec_name);
  free(b->app);
  dir_unlock(&b->lock_fd);
}

static void print_plan(const bisect_run *b) {
  printf("bisect %s..%s: %zu revision(s) after GOOD (first parent), entry %ld of %s (%s), %ld repetitions each;\n"
         "SLOWER: median FOM more than %.3g %% below GOOD's with p < %g (Mann-Whitney U); same: the 95 %% interval\n"
         "excludes a %.3g %% change; else inconclusive (marked good); worktrees in %s/worktrees\n",
         b->revs[0].short_sha, b->revs[b->n - 1].short_sha, b->n - 1, b->opt.entry, b->opt.spec_path, b->app,
         b->opt.repetitions, 100.0 * b->opt.threshold, b->opt.alpha, 100.0 * b->opt.threshold, b->root);
}

static int bisect(const bisect_options *opt, const char *good_name, const char *bad_name) {
  bisect_run b = {.opt = *opt, .lock_fd = -1};
  strv shas = {0};
  b.repo = opt->repo ? strdup(opt->repo) : paths_source_dir();
  int status = b.repo ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !opt->spec_path) status = mapp_fail(MAPP_ERR_INPUT, "--spec FILE is required");
  if (status == MAPP_OK) status = check_repetitions(opt);
  if (status == MAPP_OK) status = load_spec(&b);
  if (status == MAPP_OK) status = resolve_range(&b, good_name, bad_name, &shas);
  if (status == MAPP_OK) status = make_folders(&b);
  if (status == MAPP_OK) status = write_entry_spec(&b);
  if (status == MAPP_OK) status = bisect_make_revisions(&b, &shas);
  if (status == MAPP_OK) print_plan(&b);
  if (status == MAPP_OK) status = search(&b);
  strv_free(&shas);
  bisect_free(&b);
  return status;
}

int verb_bisect(int argc, char **argv) {
  bisect_options opt = {.out = "results", .repetitions = 6, .threshold = 0.05, .alpha = 0.05};
  const mapp_option opts[] = {
      {.name = "spec", .kind = MAPP_OPT_STRING, .dest = &opt.spec_path,
       .help = "sweep spec naming the configuration", .default_text = "none: required"},
      {.name = "entry", .kind = MAPP_OPT_LONG, .dest = &opt.entry, .min = 0, .max = 1000000,
       .help = "the spec's runs entry to measure; it must expand to exactly one configuration"},
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &opt.out,
       .help = "results root: worktrees, builds, runs and logs go to OUT/bisect/"},
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &opt.env_path, .help = "environment file",
       .default_text = "each revision's envs/local.yaml"},
      {.name = "repo", .kind = MAPP_OPT_STRING, .dest = &opt.repo, .help = "git repository of the revisions",
       .default_text = "the source tree of this mapp"},
      {.name = "repetitions", .kind = MAPP_OPT_LONG, .dest = &opt.repetitions, .min = 2, .max = 1000,
       .help = "runs per revision (6: the U test's p can reach 0.0022, and stays below 0.05 with 5 of the 36 "
               "pairs out of order)"},
      {.name = "threshold", .kind = MAPP_OPT_DOUBLE, .dest = &opt.threshold, .dmin = 0.0, .dmax = 0.99,
       .help = "slowdown of the median figure of merit that counts (0.05: 5 %)"},
      {.name = "alpha", .kind = MAPP_OPT_DOUBLE, .dest = &opt.alpha, .dmin = 1e-9, .dmax = 0.5,
       .help = "significance level of the two-sided Mann-Whitney U test"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("bisect", "GOOD BAD",
                          "Find the first revision between GOOD and BAD (first-parent history) whose figure of merit\n"
                          "is significantly below GOOD's, measuring one configuration of a sweep spec. Each revision\n"
                          "is built in a git worktree of OUT/bisect (the harness and the one app, reused by later\n"
                          "bisects); one that does not build or run is skipped. Exit 0 with the first bad revision\n"
                          "(or the skipped ones it may be), 1 when BAD is not significantly slower than GOOD.",
                          opts, 2, 2, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown)
    status = bisect(&opt, args.cli.positional[0], args.cli.positional[1]);
  verb_args_free(&args);
  return status;
}
