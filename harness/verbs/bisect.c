/* mapp bisect GOOD BAD --spec FILE: the first revision whose figure of
 * merit is significantly below GOOD's, as asv's `find` does it. Each
 * revision measured is checked out in a git worktree of the results
 * folder and built there (the harness and the one app, kept for the next
 * bisect), and runs the spec's one configuration with its own mapp sweep,
 * binaries, environment and baselines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
#include "yamlutil.h"

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

/* ------------------------------------------------------------- git */

/* git -C REPO ARGS...: stdout in *text when text is given; stderr is
 * discarded, since a refusal is answered from the exit code. */
static int git(const bisect_run *b, char **text, int *exit_code, const char *const args[]) {
  strv argv = {0};
  int status = strv_push(&argv, "git");
  if (status == MAPP_OK) status = strv_push(&argv, "-C");
  if (status == MAPP_OK) status = strv_push(&argv, b->repo);
  for (size_t i = 0; args[i] && status == MAPP_OK; ++i) status = strv_push(&argv, args[i]);
  proc_request req = {.argv = &argv, .log_path = "/dev/null"};
  proc_outcome outcome = {0};
  char *captured = NULL;
  if (status == MAPP_OK) status = proc_capture(&req, &captured, &outcome);
  strv_free(&argv);
  *exit_code = outcome.exit_code;
  if (text) *text = captured;
  else free(captured);
  return status;
}

static void chomp(char *s) {
  size_t len = strlen(s);
  while (len && (s[len - 1] == '\n' || s[len - 1] == '\r')) s[--len] = '\0';
}

static int resolve_revision(const bisect_run *b, const char *name, char **sha) {
  char *spec = str_printf("%s^{commit}", name);
  if (!spec) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int code;
  const char *const args[] = {"rev-parse", "--verify", "--quiet", spec, NULL};
  int status = git(b, sha, &code, args);
  free(spec);
  if (status != MAPP_OK) return status;
  if (code != 0 || !(*sha)[0]) {
    free(*sha);
    *sha = NULL;
    return mapp_fail(MAPP_ERR_INPUT, "unknown revision '%s' in %s", name, b->repo);
  }
  chomp(*sha);
  return MAPP_OK;
}

static int check_ancestry(const bisect_run *b, const char *good, const char *bad, const char *good_name,
                          const char *bad_name) {
  if (strcmp(good, bad) == 0)
    return mapp_fail(MAPP_ERR_INPUT, "GOOD '%s' and BAD '%s' are the same revision: nothing to bisect", good_name,
                     bad_name);
  int code;
  const char *const args[] = {"merge-base", "--is-ancestor", good, bad, NULL};
  MAPP_TRY(git(b, NULL, &code, args));
  if (code != 0)
    return mapp_fail(MAPP_ERR_INPUT, "GOOD '%s' is not an ancestor of BAD '%s' in %s", good_name, bad_name, b->repo);
  return MAPP_OK;
}

static int split_lines(char *text, strv *lines) {
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) MAPP_TRY(strv_push(lines, line));
  return MAPP_OK;
}

/* GOOD, then BAD's first parents back to GOOD, oldest first: a merge is
 * one step, as with `git bisect --first-parent`. */
static int list_revisions(const bisect_run *b, const char *good, const char *bad, strv *shas) {
  char *range = str_printf("%s..%s", good, bad), *text = NULL;
  if (!range) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int code;
  const char *const args[] = {"rev-list", "--first-parent", "--reverse", range, NULL};
  int status = git(b, &text, &code, args);
  if (status == MAPP_OK && code != 0) status = mapp_fail(MAPP_ERR_SYSTEM, "git rev-list %s failed", range);
  if (status == MAPP_OK) status = strv_push(shas, good);
  if (status == MAPP_OK) status = split_lines(text, shas);
  free(range);
  free(text);
  return status;
}

static int read_subject(const bisect_run *b, revision *r) {
  int code;
  const char *const args[] = {"log", "-1", "--format=%s", r->sha, NULL};
  MAPP_TRY(git(b, &r->subject, &code, args));
  chomp(r->subject);
  return MAPP_OK;
}

/* ------------------------------------------------------- revisions */

static int revision_init(const bisect_run *b, const char *sha, revision *r) {
  *r = (revision){0};
  snprintf(r->short_sha, sizeof r->short_sha, "%s", sha);
  r->sha = strdup(sha);
  r->worktree = str_printf("%s/worktrees/%s", b->root, sha);
  r->build_dir = r->worktree ? path_join(r->worktree, "build") : NULL;
  r->build_log = str_printf("%s/logs/%s-build.log", b->root, r->short_sha);
  r->run_log = str_printf("%s/logs/%s-run.log", b->root, r->short_sha);
  if (!r->sha || !r->build_dir || !r->build_log || !r->run_log) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  return read_subject(b, r);
}

static void revision_free(revision *r) {
  free(r->sha);
  free(r->subject);
  free(r->worktree);
  free(r->build_dir);
  free(r->build_log);
  free(r->run_log);
  free(r->foms);
}

static int make_revisions(bisect_run *b, const strv *shas) {
  b->n = shas->count;
  b->revs = calloc(b->n, sizeof *b->revs);
  b->marks = calloc(b->n, sizeof *b->marks);
  if (!b->revs || !b->marks) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < b->n; ++i) MAPP_TRY(revision_init(b, shas->items[i], &b->revs[i]));
  return MAPP_OK;
}

/* ---------------------------------------------------------- building */

/* Runs argv with its output appended to log; *ok says whether it exited 0. */
static int run_logged(strv *argv, const char *log, bool *ok, double *seconds) {
  proc_request req = {.argv = argv, .log_path = log};
  proc_outcome outcome = {0};
  MAPP_TRY(proc_run(&req, &outcome));
  *ok = outcome.exit_code == 0;
  *seconds += outcome.elapsed_s;
  return MAPP_OK;
}

static int push_all(strv *argv, const char *const words[]) {
  for (size_t i = 0; words[i]; ++i) MAPP_TRY(strv_push(argv, words[i]));
  return MAPP_OK;
}

static int add_worktree(const bisect_run *b, const revision *r, bool *ok, double *seconds) {
  *ok = true;
  if (path_is_dir(r->worktree)) return MAPP_OK;
  /* --force: a worktree deleted by hand is still registered until pruned. */
  const char *const words[] = {"git", "-C", b->repo, "worktree", "add", "--force", "--detach", r->worktree, r->sha,
                               NULL};
  strv argv = {0};
  int status = push_all(&argv, words);
  if (status == MAPP_OK) status = run_logged(&argv, r->build_log, ok, seconds);
  strv_free(&argv);
  return status;
}

/* Release as the default preset makes it; CUDA only when the entry runs
 * on it, since nvcc would triple the build of every revision. */
static int configure(const bisect_run *b, const revision *r, bool *ok, double *seconds) {
  char *cache = path_join(r->build_dir, "CMakeCache.txt");
  if (!cache) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  bool configured = path_exists(cache);
  free(cache);
  *ok = true;
  if (configured) return MAPP_OK;
  const char *const words[] = {"cmake", "-S", r->worktree, "-B", r->build_dir, "-DCMAKE_BUILD_TYPE=Release",
                               "-DCMAKE_C_FLAGS_RELEASE=-O3 -DNDEBUG", "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG",
                               b->cuda ? "-DMAPP_ENABLE_CUDA=AUTO" : "-DMAPP_ENABLE_CUDA=OFF", NULL};
  strv argv = {0};
  int status = push_all(&argv, words);
  if (status == MAPP_OK) status = run_logged(&argv, r->build_log, ok, seconds);
  strv_free(&argv);
  return status;
}

static int build_targets(const bisect_run *b, const revision *r, bool *ok, double *seconds) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  strv argv = {0};
  const char *const words[] = {"cmake", "--build", r->build_dir, "--target", "mapp_harness", NULL};
  int status = push_all(&argv, words);
  if (status == MAPP_OK) status = strv_pushf(&argv, "mapp-%s", b->app);
  if (status == MAPP_OK) status = strv_pushf(&argv, "-j%ld", cores > 0 ? cores : 1);
  if (status == MAPP_OK) status = run_logged(&argv, r->build_log, ok, seconds);
  strv_free(&argv);
  return status;
}

static char *built_marker(const revision *r) { return path_join(r->build_dir, "mapp-bisect-built"); }

/* The revision's worktree and build, made once: a revision built by an
 * earlier bisect into the same results folder is reused as it is. A build
 * that fails is not an error (*ok false): the revision is skipped. */
static int build_revision(const bisect_run *b, const revision *r, bool *ok, bool *reused, double *seconds) {
  char *marker = built_marker(r);
  if (!marker) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  *reused = path_exists(marker);
  *ok = *reused;
  *seconds = 0.0;
  int status = MAPP_OK;
  if (!*reused) {
    unlink(r->build_log);
    status = add_worktree(b, r, ok, seconds);
    if (status == MAPP_OK && *ok) status = configure(b, r, ok, seconds);
    if (status == MAPP_OK && *ok) status = build_targets(b, r, ok, seconds);
    if (status == MAPP_OK && *ok) status = write_text_file(marker, r->sha);
  }
  free(marker);
  return status;
}

/* --------------------------------------------------------- measuring */

static int push_env(strv *names, strv *values, const char *name, const char *value) {
  MAPP_TRY(strv_push(names, name));
  return strv_push(values, value);
}

/* The revision's own harness, apps, environments and baselines, whatever
 * this mapp was started with. */
static int revision_env(const revision *r, strv *names, strv *values) {
  char *bin = path_join(r->build_dir, "bin"), *baselines = path_join(r->worktree, "baselines");
  int status = bin && baselines ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = push_env(names, values, "MAPP_BIN_DIR", bin);
  if (status == MAPP_OK) status = push_env(names, values, "MAPP_SOURCE_DIR", r->worktree);
  if (status == MAPP_OK) status = push_env(names, values, "MAPP_BASELINE_DIR", baselines);
  free(bin);
  free(baselines);
  return status;
}

static int sweep_argv(const bisect_run *b, const revision *r, const char *out, strv *argv) {
  MAPP_TRY(strv_pushf(argv, "%s/bin/mapp", r->build_dir));
  const char *const words[] = {"sweep", b->entry_spec, "--out", out, NULL};
  MAPP_TRY(push_all(argv, words));
  if (b->opt.env_path) {
    MAPP_TRY(strv_push(argv, "--env"));
    MAPP_TRY(strv_push(argv, b->opt.env_path));
  }
  return MAPP_OK;
}

static int keep_foms(const result_group *g, revision *r) {
  r->foms = malloc(g->timed * sizeof *r->foms);
  if (!r->foms) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  memcpy(r->foms, g->foms, g->timed * sizeof *r->foms);
  r->nfoms = g->timed;
  r->fom_median = g->fom_median;
  return MAPP_OK;
}

/* The figures of merit of the entry's configuration in the sweep's records;
 * fewer than two (runs that failed, a combination the build lacks) leave
 * the revision unmeasured. */
static int collect_foms(const bisect_run *b, const char *out, revision *r) {
  char *file = str_printf("%s/%s/results.jsonl", out, b->spec_name);
  if (!file) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_t *records = NULL;
  group_table groups = {0};
  int status = path_exists(file) ? results_load(file, &records) : MAPP_OK;
  if (status == MAPP_OK && records) status = stats_group(records, &groups);
  if (status == MAPP_ERR_INPUT) {
    /* records this revision's harness wrote and ours cannot read: the
     * revision is unmeasured, not the bisect failed */
    mapp_error_clear();
    status = MAPP_OK;
  }
  if (status == MAPP_OK && groups.count == 1 && groups.items[0].timed >= 2) status = keep_foms(&groups.items[0], r);
  group_table_free(&groups);
  json_decref(records);
  free(file);
  return status;
}

/* Runs the entry's repetitions with the revision's own mapp sweep. A
 * sweep that exits 1 (a baseline or verification failed) still measured
 * its runs; one that exits otherwise did not (*ok false). */
static int measure_revision(const bisect_run *b, revision *r, bool *ok, int *exit_code) {
  char *out = str_printf("%s/runs/%s", b->root, r->short_sha);
  if (!out) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  strv argv = {0}, names = {0}, values = {0};
  int status = sweep_argv(b, r, out, &argv);
  if (status == MAPP_OK) status = revision_env(r, &names, &values);
  proc_request req = {.argv = &argv, .env_names = &names, .env_values = &values, .log_path = r->run_log};
  proc_outcome outcome = {0};
  unlink(r->run_log);
  if (status == MAPP_OK) status = proc_run(&req, &outcome);
  *exit_code = outcome.exit_code;
  if (status == MAPP_OK && (outcome.exit_code == 0 || outcome.exit_code == MAPP_ERR_VERIFY))
    status = collect_foms(b, out, r);
  *ok = r->nfoms >= 2;
  strv_free(&argv);
  strv_free(&names);
  strv_free(&values);
  free(out);
  return status;
}

/* ------------------------------------------------------------ report */

static void print_header(void) {
  printf("%-5s %-12s %-18s %11s  %-24s %8s  %-7s %s\n", "step", "revision", "build", "median FOM",
         "ratio to GOOD [95% CI]", "p (U)", "verdict", "subject");
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

static void print_measured(const revision *r, const perf_change *c, const char *verdict) {
  printf("%11.4g  ", r->fom_median);
  if (c) printf("%6.3f [%6.3f, %6.3f]   %8.2g%s ", c->ratio, c->low, c->high, c->p_value, c->exact ? " " : "~");
  else printf("%-24s %8s  ", "-", "-");
  printf("%-7s %.50s\n", verdict, r->subject);
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
  MAPP_TRY(build_revision(b, r, &built, &reused, &seconds));
  if (!built) {
    printf("%-18s ", "FAILED");
    print_unmeasured(r, "does not build", r->build_log);
    *measured = false;
    return MAPP_OK;
  }
  print_build(reused, seconds);
  MAPP_TRY(measure_revision(b, r, measured, &exit_code));
  if (!*measured) {
    char why[64];
    snprintf(why, sizeof why, "its sweep measured nothing (exit %d)", exit_code);
    print_unmeasured(r, why, r->run_log);
  }
  return MAPP_OK;
}

/* Measures revision i against GOOD and marks it. */
static int judge(bisect_run *b, size_t i, const char *step) {
  bool measured;
  MAPP_TRY(build_and_measure(b, i, step, &measured));
  if (!measured) {
    b->marks[i] = BISECT_SKIP;
    return MAPP_OK;
  }
  const revision *good = &b->revs[0], *r = &b->revs[i];
  perf_change c;
  MAPP_TRY(perf_compare(good->foms, good->nfoms, r->foms, r->nfoms, &c));
  bool slower = perf_is_regression(&c, b->opt.threshold, b->opt.alpha);
  bool faster = perf_is_improvement(&c, b->opt.threshold, b->opt.alpha);
  b->marks[i] = slower ? BISECT_BAD : BISECT_GOOD;
  print_measured(r, &c, slower ? "SLOWER" : faster ? "faster" : "same");
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
  print_measured(&b->revs[0], NULL, "GOOD");
  return MAPP_OK;
}

/* BAD must be measurably slower, or there is nothing to find (exit 1). */
static int judge_bad(bisect_run *b) {
  size_t last = b->n - 1;
  MAPP_TRY(judge(b, last, "bad"));
  if (b->marks[last] == BISECT_SKIP) return unmeasurable(b, "BAD", last);
  if (b->marks[last] == BISECT_GOOD) {
    printf("BAD %s is not significantly slower than GOOD %s (beyond %.3g %% with p < %g): nothing to bisect\n",
           b->revs[last].short_sha, b->revs[0].short_sha, 100.0 * b->opt.threshold, b->opt.alpha);
    return MAPP_ERR_VERIFY;
  }
  return MAPP_OK;
}

static int print_verdict(const bisect_run *b) {
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
  free(suspects);
  return MAPP_OK;
}

static int search(bisect_run *b) {
  print_header();
  MAPP_TRY(measure_good(b));
  MAPP_TRY(judge_bad(b));
  size_t next, step = 0;
  while (bisect_next(b->marks, b->n, &next)) {
    char label[16];
    snprintf(label, sizeof label, "%zu", ++step);
    MAPP_TRY(judge(b, next, label));
  }
  return print_verdict(b);
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
  int status = resolve_revision(b, good_name, &good);
  if (status == MAPP_OK) status = resolve_revision(b, bad_name, &bad);
  if (status == MAPP_OK) status = check_ancestry(b, good, bad, good_name, bad_name);
  if (status == MAPP_OK) status = list_revisions(b, good, bad, shas);
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
  for (size_t i = 0; b->revs && i < b->n; ++i) revision_free(&b->revs[i]);
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
         "SLOWER: median FOM more than %.3g %% below GOOD's with p < %g (Mann-Whitney U); worktrees in %s/worktrees\n",
         b->revs[0].short_sha, b->revs[b->n - 1].short_sha, b->n - 1, b->opt.entry, b->opt.spec_path, b->app,
         b->opt.repetitions, 100.0 * b->opt.threshold, b->opt.alpha, b->root);
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
  if (status == MAPP_OK) status = make_revisions(&b, &shas);
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
