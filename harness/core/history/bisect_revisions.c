#include "bisect_revisions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "paths.h"
#include "proc.h"
#include "results.h"
#include "stats.h"

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

int bisect_resolve_revision(const bisect_run *b, const char *name, char **sha) {
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

int bisect_check_ancestry(const bisect_run *b, const char *good, const char *bad, const char *good_name,
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
int bisect_list_revisions(const bisect_run *b, const char *good, const char *bad, strv *shas) {
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

void bisect_revision_free(revision *r) {
  free(r->sha);
  free(r->subject);
  free(r->worktree);
  free(r->build_dir);
  free(r->build_log);
  free(r->run_log);
  free(r->foms);
}

int bisect_make_revisions(bisect_run *b, const strv *shas) {
  b->n = shas->count;
  b->revs = calloc(b->n, sizeof *b->revs);
  b->marks = calloc(b->n, sizeof *b->marks);
  if (!b->revs || !b->marks) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < b->n; ++i) MAPP_TRY(revision_init(b, shas->items[i], &b->revs[i]));
  return MAPP_OK;
}

/* ---------------------------------------------------------- building */

/* Runs argv with its output appended to log; *ok says whether it exited 0.
 * ccache (where the configure step chose it) sees every worktree's paths
 * relative to OUT/bisect, so the same source in two revisions is one
 * cache entry. */
static int run_logged(const bisect_run *b, strv *argv, const char *log, bool *ok, double *seconds) {
  strv names = {0}, values = {0};
  int status = strv_push(&names, "CCACHE_BASEDIR");
  if (status == MAPP_OK) status = strv_push(&values, b->root);
  if (status == MAPP_OK) status = strv_push(&names, "CCACHE_NOHASHDIR");
  if (status == MAPP_OK) status = strv_push(&values, "1");
  proc_request req = {.argv = argv, .log_path = log, .env_names = &names, .env_values = &values};
  proc_outcome outcome = {0};
  if (status == MAPP_OK) status = proc_run(&req, &outcome);
  strv_free(&names);
  strv_free(&values);
  *ok = status == MAPP_OK && outcome.exit_code == 0;
  *seconds += outcome.elapsed_s;
  return status;
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
  if (status == MAPP_OK) status = run_logged(b, &argv, r->build_log, ok, seconds);
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
  /* Neighbouring revisions share almost every source: with ccache their
   * builds compile only what changed. */
  if (status == MAPP_OK && program_on_path("ccache"))
    status = push_all(&argv, (const char *const[]){"-DCMAKE_C_COMPILER_LAUNCHER=ccache",
                                                   "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", NULL});
  if (status == MAPP_OK) status = run_logged(b, &argv, r->build_log, ok, seconds);
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
  if (status == MAPP_OK) status = run_logged(b, &argv, r->build_log, ok, seconds);
  strv_free(&argv);
  return status;
}

static char *built_marker(const revision *r) { return path_join(r->build_dir, "mapp-bisect-built"); }

/* The revision's worktree and build, made once: a revision built by an
 * earlier bisect into the same results folder is reused as it is. A build
 * that fails is not an error (*ok false): the revision is skipped. */
int bisect_build_revision(const bisect_run *b, const revision *r, bool *ok, bool *reused, double *seconds) {
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
int bisect_measure_revision(const bisect_run *b, revision *r, bool *ok, int *exit_code) {
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
