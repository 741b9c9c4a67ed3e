/* mapp history add|show|plot|check: the figures of merit of every
 * configuration across commits, stored in one SQLite file (historydb.h),
 * with the steps in them found by E-Divisive means (changepoint.h).
 *
 * A series is one configuration (as mapp compare groups repetitions); its
 * points are revisions, each the median of that revision's repetitions,
 * ordered by commit date (asked of the source tree's git) where known and
 * by when the revision ran where not. The detector runs on the medians:
 * a revision is one observation of the code, however many times it ran,
 * and its median is already robust to the odd slow repetition. */
#include "history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "fsutil.h"
#include "historydb.h"
#include "mapp_build_info.h"
#include "mapp_error.h"
#include "paths.h"
#include "plot.h"
#include "proc.h"
#include "results.h"
#include "verbs.h"

#define HISTORY_DEFAULT_PATH "results/history.sqlite"
/* The detector looks at the latest HISTORY_WINDOW revisions of a series:
 * its memory and time grow with the square of their number, and the
 * question a history answers is what changed lately. */
enum { REPORT_MIN_REVISIONS = 3, TICK_LENGTH = 7, HISTORY_WINDOW = 500 };

/* ---------------------------------------------------------------- commit dates */

/* The commit a recorded revision names, as hex digits: "c66d3fe530dd",
 * "c66d3fe530dd-dirty" (built from a modified tree: its commit's date is
 * the closest there is) and git describe's "v1.2-3-gc66d3fe530dd". Anything
 * else (a record says "unknown", or something that is no revision and must
 * not reach git's command line) gives false. */
static bool commit_hash(const char *revision, char *hash, size_t len) {
  const char *start = revision, *g = strstr(revision, "-g");
  if (g) start = g + 2;
  size_t n = strspn(start, "0123456789abcdef");
  bool tail_ok = start[n] == '\0' || strcmp(start + n, "-dirty") == 0;
  if (n < 4 || n > 40 || n >= len || !tail_ok) return false;
  memcpy(hash, start, n);
  hash[n] = '\0';
  return true;
}

/* The committer date of hash in the source tree's repository (ISO 8601,
 * malloc'd); NULL where git, the repository or the commit is not there: a
 * history made elsewhere is still a history, ordered by run time. */
static char *commit_date_of(const char *source, const char *hash) {
  /* ^{commit}: a hash of a tree or blob is no revision (and git show would
   * print its contents) */
  char object[64];
  snprintf(object, sizeof object, "%s^{commit}", hash);
  strv argv = {0};
  int status = MAPP_OK;
  const char *words[] = {"git", "-C", source, "show", "-s", "--format=%cI", object, "--"};
  for (size_t i = 0; status == MAPP_OK && i < sizeof words / sizeof words[0]; ++i) status = strv_push(&argv, words[i]);
  char *text = NULL;
  proc_outcome outcome = {0};
  proc_request req = {.argv = &argv, .log_path = "/dev/null"};
  if (status == MAPP_OK) status = proc_capture(&req, &text, &outcome);
  strv_free(&argv);
  double when;
  if (status != MAPP_OK || outcome.exit_code != 0 || !text) {
    mapp_error_clear();
    free(text);
    return NULL;
  }
  text[strcspn(text, "\r\n")] = '\0';
  if (history_parse_time(text, &when)) return text;
  free(text);
  return NULL;
}

/* revision -> commit date (or null) for each revision of the records the
 * history does not date yet; git runs once per revision, before the add's
 * transaction, so the write lock is held only for the writing. */
static int date_revisions(history_db *db, const json_t *records, json_t **dates) {
  json_t *dated = NULL;
  MAPP_TRY(historydb_dated_revisions(db, &dated));
  char *source = paths_source_dir();
  *dates = json_object();
  int status = source && *dates ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    if (status != MAPP_OK) break;
    const char *revision = json_string_value(json_object_get(r, "git_revision"));
    if (!revision) revision = "unknown";
    if (json_object_get(dated, revision) || json_object_get(*dates, revision)) continue;
    char hash[48];
    char *date = commit_hash(revision, hash, sizeof hash) ? commit_date_of(source, hash) : NULL;
    json_object_set_new(*dates, revision, date ? json_string(date) : json_null());
    free(date);
  }
  free(source);
  json_decref(dated);
  return status;
}

/* ---------------------------------------------------------------- add */

static int load_all(char *const *results, size_t count, json_t **all) {
  *all = json_array();
  if (!*all) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t k = 0; k < count; ++k) {
    char *file = results_file_of(results[k]);
    json_t *records = NULL;
    int status = file ? results_load(file, &records) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    if (status == MAPP_OK) json_array_extend(*all, records);
    json_decref(records);
    free(file);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

int history_add_results(const char *db_path, char *const *results, size_t count) {
  json_t *records = NULL, *dates = NULL;
  history_db *db = NULL;
  /* Every file is read before the history is touched: a bad line in the
   * last file adds nothing from the first. */
  int status = load_all(results, count, &records);
  if (status == MAPP_OK) status = historydb_open(db_path, true, &db);
  if (status == MAPP_OK) status = date_revisions(db, records, &dates);
  history_add_tally tally = {0};
  if (status == MAPP_OK) status = historydb_add(db, records, dates, &tally);
  if (status == MAPP_OK)
    printf("history %s: added %zu of %zu records (%zu already there)\n", db_path, tally.added, tally.records,
           tally.records - tally.added);
  historydb_close(db);
  json_decref(dates);
  json_decref(records);
  return status;
}

char *history_path_beside(const char *results_root) {
  char *fallback = path_join(results_root, "history.sqlite");
  char *path = fallback ? historydb_path(NULL, fallback) : NULL;
  free(fallback);
  return path;
}

/* ---------------------------------------------------------------- filters */

/* show, plot and check take FILTERs: FIELD=VALUE matches a part of the key
 * exactly (app, variant, backend, size, scaling, ranks, threads, setting);
 * a bare word matches when the key contains it. All must match. */
static const char *const filter_fields[] = {"app", "variant", "backend", "size", "scaling", "ranks", "threads", "setting"};
#define FILTER_FIELDS (sizeof filter_fields / sizeof filter_fields[0])

static int check_filters(char **filters, int count) {
  for (int i = 0; i < count; ++i) {
    const char *eq = strchr(filters[i], '=');
    if (!eq) continue;
    bool known = false;
    for (size_t f = 0; f < FILTER_FIELDS && !known; ++f)
      known = strlen(filter_fields[f]) == (size_t)(eq - filters[i]) && !strncmp(filters[i], filter_fields[f], eq - filters[i]);
    if (!known)
      return mapp_fail(MAPP_ERR_INPUT, "unknown filter field in '%s' (fields: app variant backend size scaling ranks threads setting)",
                       filters[i]);
  }
  return MAPP_OK;
}

static bool field_matches(const history_series *s, const char *field, const char *value) {
  char number[32];
  const char *have = !strcmp(field, "app") ? s->app : !strcmp(field, "variant") ? s->variant
                     : !strcmp(field, "backend") ? s->backend : !strcmp(field, "size") ? s->size
                     : !strcmp(field, "scaling") ? s->scaling : !strcmp(field, "setting") ? s->setting : NULL;
  if (!have) {
    snprintf(number, sizeof number, "%ld", !strcmp(field, "ranks") ? s->ranks : s->threads);
    have = number;
  }
  return strcmp(have, value) == 0;
}

static bool series_selected(const history_series *s, char **filters, int count) {
  for (int i = 0; i < count; ++i) {
    const char *eq = strchr(filters[i], '=');
    if (!eq && !strstr(s->config, filters[i])) return false;
    if (eq) {
      char field[32];
      snprintf(field, sizeof field, "%.*s", (int)(eq - filters[i]), filters[i]);
      if (!field_matches(s, field, eq + 1)) return false;
    }
  }
  return true;
}

/* ---------------------------------------------------------------- analysis */

typedef struct {
  change_point *points;
  size_t count;
} series_changes;

static int find_changes(const history_series *s, series_changes *out) {
  *out = (series_changes){0};
  double *medians = malloc((s->count ? s->count : 1) * sizeof *medians);
  if (!medians) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t first = s->count > HISTORY_WINDOW ? s->count - HISTORY_WINDOW : 0;
  for (size_t i = first; i < s->count; ++i) medians[i - first] = s->points[i].median;
  changepoint_options opt = changepoint_defaults();
  int status = changepoint_detect(medians, s->count - first, &opt, &out->points, &out->count);
  for (size_t i = 0; status == MAPP_OK && i < out->count; ++i) out->points[i].index += first;
  free(medians);
  return status;
}

static const char *direction(const change_point *c) { return c->change < 0 ? "slower" : "faster"; }

/* "c66d3fe530dd slower -10.2 %, ..." (malloc'd). */
static char *changes_text(const history_series *s, const series_changes *c) {
  strv parts = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < c->count; ++i)
    status = strv_pushf(&parts, "%s %s %+.1f %%", s->points[c->points[i].index].revision, direction(&c->points[i]),
                        100.0 * c->points[i].change);
  char *text = status == MAPP_OK ? (c->count ? strv_join(&parts, ", ") : strdup("-")) : NULL;
  strv_free(&parts);
  return text;
}

/* ---------------------------------------------------------------- loading */

static int load_series(const char *given, history_series_set *set, char **path) {
  *set = (history_series_set){0};
  *path = historydb_path(given, HISTORY_DEFAULT_PATH);
  if (!*path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  history_db *db = NULL;
  MAPP_TRY(historydb_open(*path, false, &db));
  int status = historydb_series(db, set);
  historydb_close(db);
  return status;
}

/* ---------------------------------------------------------------- show */

static size_t config_width(const history_series_set *set, char **filters, int nfilters) {
  size_t width = strlen("configuration");
  for (size_t i = 0; i < set->count; ++i)
    if (series_selected(&set->items[i], filters, nfilters) && strlen(set->items[i].config) > width)
      width = strlen(set->items[i].config);
  return width;
}

static int show_one(const history_series *s, int width) {
  series_changes c;
  MAPP_TRY(find_changes(s, &c));
  char *changes = changes_text(s, &c);
  free(c.points);
  if (!changes) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  const history_point *last = &s->points[s->count - 1];
  char versus[32] = "-";
  if (s->count > 1) snprintf(versus, sizeof versus, "%+.1f %%", 100.0 * (last->median / s->points[s->count - 2].median - 1.0));
  printf("%-*s  %-18s %4zu  %-18s %11.4g %9s  %s\n", width, s->config, s->fom_name ? s->fom_name : "FOM", s->count,
         last->revision, last->median, versus, changes);
  free(changes);
  return MAPP_OK;
}

/* --revisions: the configuration's series, a row per revision, each change
 * point marked on the first revision of its new level. */
static int show_revisions(const history_series *s) {
  series_changes c;
  MAPP_TRY(find_changes(s, &c));
  printf("\n%s (%s)\n  %-18s %-25s %4s %11s %11s %11s %9s\n", s->config, s->fom_name ? s->fom_name : "FOM", "revision",
         "committed", "runs", "median", "min", "max", "vs prev");
  for (size_t i = 0, k = 0; i < s->count; ++i) {
    const history_point *p = &s->points[i];
    char versus[32] = "-";
    if (i) snprintf(versus, sizeof versus, "%+.1f %%", 100.0 * (p->median / s->points[i - 1].median - 1.0));
    printf("  %-18s %-25s %4zu %11.4g %11.4g %11.4g %9s", p->revision, p->commit_date ? p->commit_date : "-", p->runs,
           p->median, p->min, p->max, versus);
    for (; k < c.count && c.points[k].index == i; ++k)
      printf("  <- change point: %s %+.1f %% (p %.3f)", direction(&c.points[k]), 100.0 * c.points[k].change,
             c.points[k].p_value);
    printf("\n");
  }
  free(c.points);
  return MAPP_OK;
}

static int show(const char *given, bool revisions, char **filters, int nfilters) {
  history_series_set set;
  char *path = NULL;
  int status = load_series(given, &set, &path);
  if (status == MAPP_OK) {
    printf("history %s: %zu records, %zu revisions, %zu configurations\n", path, set.records, set.revisions, set.count);
    int width = (int)config_width(&set, filters, nfilters);
    printf("%-*s  %-18s %4s  %-18s %11s %9s  %s\n", width, "configuration", "FOM", "revs", "latest revision",
           "latest FOM", "vs prev", "change points (E-Divisive means, p <= 0.01)");
    size_t shown = 0;
    for (size_t i = 0; status == MAPP_OK && i < set.count; ++i)
      if (series_selected(&set.items[i], filters, nfilters)) status = show_one(&set.items[i], width), ++shown;
    if (status == MAPP_OK && !shown) printf("no configuration matches\n");
    for (size_t i = 0; revisions && status == MAPP_OK && i < set.count; ++i)
      if (series_selected(&set.items[i], filters, nfilters)) status = show_revisions(&set.items[i]);
  }
  history_series_set_free(&set);
  free(path);
  return status;
}

/* ---------------------------------------------------------------- check */

typedef struct {
  size_t checked, slower, too_short;
} check_tally;

static int check_one(const history_series *s, double threshold, check_tally *t) {
  changepoint_options opt = changepoint_defaults();
  if (s->count < 2 * opt.min_segment) {
    ++t->too_short;
    printf("-      %s: %zu revisions, too few to judge (needs %zu)\n", s->config, s->count, 2 * opt.min_segment);
    return MAPP_OK;
  }
  series_changes c;
  MAPP_TRY(find_changes(s, &c));
  ++t->checked;
  bool worse = false;
  for (size_t i = 0; i < c.count; ++i) {
    const change_point *p = &c.points[i];
    if (!changepoint_worse(p, threshold)) continue;
    const history_point *at = &s->points[p->index];
    printf("SLOWER %s: %+.1f %% from revision %s (committed %s; %s %.4g -> %.4g, p %.3f)\n", s->config,
           100.0 * p->change, at->revision, at->commit_date ? at->commit_date : "?", s->fom_name ? s->fom_name : "FOM",
           p->before, p->after, p->p_value);
    worse = true;
  }
  if (!worse) printf("ok     %s: %zu revisions, no step slower by %.3g %% or more\n", s->config, s->count, 100.0 * threshold);
  t->slower += worse;
  free(c.points);
  return MAPP_OK;
}

static int check(const char *given, double threshold_pct, char **filters, int nfilters) {
  history_series_set set;
  char *path = NULL;
  check_tally t = {0};
  int status = load_series(given, &set, &path);
  for (size_t i = 0; status == MAPP_OK && i < set.count; ++i)
    if (series_selected(&set.items[i], filters, nfilters)) status = check_one(&set.items[i], threshold_pct / 100.0, &t);
  if (status == MAPP_OK) {
    printf("history %s: %zu configurations checked, %zu with a step slower by %.3g %% or more; %zu with too few "
           "revisions\n",
           path, t.checked, t.slower, threshold_pct, t.too_short);
    if (t.slower) status = MAPP_ERR_VERIFY;
  }
  history_series_set_free(&set);
  free(path);
  return status;
}

/* ---------------------------------------------------------------- plot */

/* The terminals of mapp plot's screen formats (plot.c), so a trend looks
 * like the other figures. */
static const char *trend_terminal(const char *format) {
  if (!strcmp(format, "png")) return "set terminal pngcairo size 900,600 noenhanced font 'Sans,11'";
  if (!strcmp(format, "svg")) return "set terminal svg size 900,600 dynamic noenhanced font 'Sans,11' background '#ffffff'";
  if (!strcmp(format, "pdf")) return "set terminal pdfcairo size 6in,4in noenhanced font 'Sans,10'";
  return NULL;
}

typedef struct {
  const char *dir;      /* where the figures go */
  const char *db_name;  /* in the title */
  const strv *formats;
  strv *written;        /* images drawn */
  strv stems;           /* stems used, so two keys that reduce to one stem do not overwrite */
} trend_context;

/* text with each @NAME@ of names replaced by its value (malloc'd). */
static char *fill(const char *text, const char *const *names, const char *const *values, size_t n) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  if (!f) return NULL;
  for (const char *p = text; *p; ++p) {
    size_t hit = n;
    for (size_t i = 0; *p == '@' && i < n && hit == n; ++i)
      if (!strncmp(p + 1, names[i], strlen(names[i])) && p[1 + strlen(names[i])] == '@') hit = i;
    if (hit == n) fputc(*p, f);
    else fputs(values[hit], f), p += strlen(names[hit]) + 1;
  }
  return fclose(f) == 0 ? out : (free(out), NULL);
}

static int read_plot_template(const char *name, char **text) {
  char *dir = paths_source_file("plots");
  char *path = dir ? path_join(dir, name) : NULL;
  int status = path ? read_text_file(path, text) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(path);
  free(dir);
  return status;
}

static int write_trend_data(const history_series *s, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return mapp_fail(MAPP_ERR_SYSTEM, "cannot write %s", path);
  fprintf(f, "# %s: index median min max runs revision commit_date (oldest first)\n", s->config);
  for (size_t i = 0; i < s->count; ++i) {
    const history_point *p = &s->points[i];
    fprintf(f, "%zu %.9g %.9g %.9g %zu %s %s\n", i, p->median, p->min, p->max, p->runs, p->revision,
            p->commit_date ? p->commit_date : "-");
  }
  return fclose(f) == 0 ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "cannot write %s", path);
}

/* "'c66d3fe' 0, 'a1b2c3d*' 1": the short hash of each point (* when dirty). */
static char *trend_tics(const history_series *s) {
  strv tics = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < s->count; ++i) {
    char tick[TICK_LENGTH + 2];
    snprintf(tick, TICK_LENGTH + 1, "%s", s->points[i].revision);
    if (strstr(s->points[i].revision, "-dirty")) strcat(tick, "*");
    char *q = plot_gnuplot_quoted(tick);
    status = q ? strv_pushf(&tics, "'%s' %zu", q, i) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(q);
  }
  char *text = status == MAPP_OK ? strv_join(&tics, ", ") : NULL;
  strv_free(&tics);
  return text;
}

/* A dashed line before each change point's first revision, with its size. */
static char *trend_marks(const series_changes *c) {
  strv lines = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < c->count; ++i) {
    double x = (double)c->points[i].index - 0.5;
    status = strv_pushf(&lines,
                        "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'\n"
                        "set label '%s %+.1f %%' at %g, graph 0.96 left offset 0.4, 0 tc rgb '#d62728' font ',9'",
                        x, x, direction(&c->points[i]), 100.0 * c->points[i].change, x);
  }
  char *text = status == MAPP_OK ? strv_join(&lines, "\n") : NULL;
  strv_free(&lines);
  return text;
}

static int trend_figure(const trend_context *ctx, const history_series *s, const series_changes *c,
                        const char *data_name, char **figure) {
  char *common = NULL, *body = NULL;
  MAPP_TRY(read_plot_template("common.gp", &common));
  int status = read_plot_template("history.gp", &body);
  char xmax[32], title[1024];
  snprintf(xmax, sizeof xmax, "%g", (double)s->count - 0.5);
  snprintf(title, sizeof title, "%s: %s against commit (%s)", s->config, s->fom_name ? s->fom_name : "FOM", ctx->db_name);
  char *tics = trend_tics(s), *marks = trend_marks(c);
  char *q_title = plot_gnuplot_quoted(title), *q_data = plot_gnuplot_quoted(data_name);
  char *q_fom = plot_gnuplot_quoted(s->fom_name ? s->fom_name : "FOM");
  if (status == MAPP_OK && !(tics && marks && q_title && q_data && q_fom)) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  /* common.gp's rank axis is replaced by history.gp's own */
  const char *names[] = {"XMIN", "XMAX", "XTICS", "COMMON", "TITLE", "DATA", "FOM", "MARKS"};
  const char *look_values[] = {"*", "*", "'' 1"};
  char *look = status == MAPP_OK ? fill(common, names, look_values, 3) : NULL;
  const char *values[] = {"", xmax, tics, look, q_title, q_data, q_fom, marks};
  *figure = look ? fill(body, names + 1, values + 1, 7) : NULL;
  if (status == MAPP_OK && !*figure) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(look);
  free(tics);
  free(marks);
  free(q_title);
  free(q_data);
  free(q_fom);
  free(body);
  free(common);
  return status;
}

static int trend_script(const trend_context *ctx, const char *stem, const char *figure, char **script) {
  strv parts = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < ctx->formats->count; ++i)
    status = strv_pushf(&parts, "%s\nset output '%s.%s'\n%s\nunset output\nreset\n",
                        trend_terminal(ctx->formats->items[i]), stem, ctx->formats->items[i], figure);
  *script = status == MAPP_OK ? strv_join(&parts, "\n") : NULL;
  strv_free(&parts);
  return status == MAPP_OK && !*script ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory") : status;
}

static int run_gnuplot(const char *dir, const char *script_name) {
  strv argv = {0};
  char *log = path_join(dir, "gnuplot.log");
  int status = log ? strv_push(&argv, MAPP_GNUPLOT) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = strv_push(&argv, script_name);
  proc_outcome outcome;
  proc_request req = {.argv = &argv, .log_path = log, .cwd = dir};
  if (status == MAPP_OK) status = proc_run(&req, &outcome);
  if (status == MAPP_OK && outcome.exit_code != 0) {
    proc_print_log_tail(log, 8, stderr);
    status = mapp_fail(MAPP_ERR_SYSTEM, "gnuplot failed on %s/%s (exit %d; see %s)", dir, script_name, outcome.exit_code, log);
  }
  free(log);
  strv_free(&argv);
  return status;
}

/* history-KEY, with -2, -3, ... when another key of this run reduced to it. */
static int trend_stem(trend_context *ctx, const history_series *s, char *stem, size_t len) {
  char base[160];
  plot_file_stem(s->config, base, sizeof base);
  snprintf(stem, len, "history-%s", base);
  for (int k = 2; strv_contains(&ctx->stems, stem); ++k) snprintf(stem, len, "history-%s-%d", base, k);
  return strv_push(&ctx->stems, stem);
}

static int collect_trend_images(const trend_context *ctx, const char *stem) {
  for (size_t i = 0; i < ctx->formats->count; ++i) {
    char *image = str_printf("%s/%s.%s", ctx->dir, stem, ctx->formats->items[i]);
    int status = !image ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory")
                 : path_exists(image) ? strv_push(ctx->written, image)
                                      : mapp_fail(MAPP_ERR_SYSTEM, "gnuplot did not write %s", image);
    free(image);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

/* STEM.dat, STEM.gp and the images of one configuration's trend. */
static int draw_trend(trend_context *ctx, const history_series *s, const series_changes *c, char *stem, size_t len) {
  MAPP_TRY(trend_stem(ctx, s, stem, len));
  char data_name[256], script_name[256];
  snprintf(data_name, sizeof data_name, "%s.dat", stem);
  snprintf(script_name, sizeof script_name, "%s.gp", stem);
  char *data_path = path_join(ctx->dir, data_name), *script_path = path_join(ctx->dir, script_name);
  char *figure = NULL, *script = NULL;
  int status = data_path && script_path ? write_trend_data(s, data_path) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = trend_figure(ctx, s, c, data_name, &figure);
  if (status == MAPP_OK) status = trend_script(ctx, stem, figure, &script);
  if (status == MAPP_OK) status = write_text_file(script_path, script);
  if (status == MAPP_OK) status = run_gnuplot(ctx->dir, script_name);
  if (status == MAPP_OK) status = collect_trend_images(ctx, stem);
  free(script);
  free(figure);
  free(script_path);
  free(data_path);
  return status;
}

static int split_formats(const char *text, strv *formats) {
  char *copy = strdup(text), *save = NULL;
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  for (char *word = strtok_r(copy, ",", &save); word && status == MAPP_OK; word = strtok_r(NULL, ",", &save))
    status = trend_terminal(word) ? strv_push(formats, word)
                                  : mapp_fail(MAPP_ERR_INPUT, "unknown plot format '%s' (choose png, svg, pdf)", word);
  free(copy);
  if (status == MAPP_OK && formats->count == 0) status = mapp_fail(MAPP_ERR_INPUT, "--format names no format");
  return status;
}

/* The default --out: history/ beside the history file. */
static char *default_plot_dir(const char *db_path) {
  char *dir = path_dirname(db_path);
  char *out = dir ? path_join(dir, "history") : NULL;
  free(dir);
  return out;
}

static int plot(const char *given, const char *out, const char *format, char **filters, int nfilters) {
  history_series_set set;
  char *path = NULL, *dir = NULL, *db_name = NULL;
  strv formats = {0}, written = {0};
  int status = split_formats(format, &formats);
  if (status == MAPP_OK) status = load_series(given, &set, &path);
  else set = (history_series_set){0};
  if (status == MAPP_OK && !(dir = out ? strdup(out) : default_plot_dir(path))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !(db_name = path_stem(path, ".sqlite"))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = make_dirs(dir);
  trend_context ctx = {.dir = dir, .db_name = db_name, .formats = &formats, .written = &written};
  for (size_t i = 0; status == MAPP_OK && i < set.count; ++i) {
    if (!series_selected(&set.items[i], filters, nfilters)) continue;
    series_changes c;
    char stem[256];
    status = find_changes(&set.items[i], &c);
    if (status == MAPP_OK) status = draw_trend(&ctx, &set.items[i], &c, stem, sizeof stem);
    free(c.points);
  }
  for (size_t i = 0; status == MAPP_OK && i < written.count; ++i) printf("%s\n", written.items[i]);
  if (status == MAPP_OK && !written.count) printf("no figures: no configuration matches\n");
  strv_free(&ctx.stems);
  strv_free(&written);
  strv_free(&formats);
  history_series_set_free(&set);
  free(db_name);
  free(dir);
  free(path);
  return status;
}

/* ---------------------------------------------------------------- report */

/* The configuration keys of a results folder's records, as a JSON set. */
static json_t *config_keys(const json_t *records) {
  json_t *keys = json_object();
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    char *key = historydb_config_key(r);
    if (key && keys) json_object_set_new(keys, key, json_true());
    free(key);
  }
  return keys;
}

static int report_trends(FILE *md, const char *dir, const history_series_set *set, const json_t *keys,
                         const char *db_path) {
  char *plots_dir = path_join(dir, "plots"), *db_name = path_stem(db_path, ".sqlite");
  strv formats = {0}, written = {0};
  int status = plots_dir && db_name ? make_dirs(plots_dir) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = strv_push(&formats, "png");
  if (status == MAPP_OK) status = strv_push(&formats, "svg");
  trend_context ctx = {.dir = plots_dir, .db_name = db_name, .formats = &formats, .written = &written};
  fprintf(md, "## Performance history\n\nFrom `%s`: the median figure of merit of each revision with its "
              "repetitions' min and max, oldest commit first; dashed lines are the change points E-Divisive means "
              "found (`mapp history show`, `mapp history check`).\n\n", db_path);
  size_t drawn = 0;
  for (size_t i = 0; status == MAPP_OK && i < set->count; ++i) {
    const history_series *s = &set->items[i];
    if (s->count < REPORT_MIN_REVISIONS || !json_object_get(keys, s->config)) continue;
    series_changes c;
    char stem[256];
    status = find_changes(s, &c);
    if (status == MAPP_OK) status = draw_trend(&ctx, s, &c, stem, sizeof stem);
    char *changes = status == MAPP_OK ? changes_text(s, &c) : NULL;
    if (changes) fprintf(md, "### %s\n\n![%s](plots/%s.png)\n\nChange points: %s\n\n", s->config, s->config, stem, changes);
    free(changes);
    free(c.points);
    ++drawn;
  }
  if (status == MAPP_OK && !drawn)
    fprintf(md, "No configuration of these results has %d revisions in the history yet.\n\n", REPORT_MIN_REVISIONS);
  strv_free(&ctx.stems);
  strv_free(&written);
  strv_free(&formats);
  free(db_name);
  free(plots_dir);
  return status;
}

int history_report_section(FILE *md, const char *dir, const json_t *records) {
  char *root = path_dirname(dir), *db_path = root ? history_path_beside(root) : NULL;
  free(root);
  if (!db_path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (!path_exists(db_path)) {
    free(db_path);
    return MAPP_OK;
  }
  history_db *db = NULL;
  history_series_set set = {0};
  int status = historydb_open(db_path, false, &db);
  if (status == MAPP_OK) status = historydb_series(db, &set);
  historydb_close(db);
  if (status != MAPP_OK) {
    fprintf(stderr, "mapp report: warning: %s; the report has no performance history\n", mapp_error_message());
    mapp_error_clear();
    free(db_path);
    return MAPP_OK;
  }
  json_t *keys = config_keys(records);
  status = keys ? report_trends(md, dir, &set, keys, db_path) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_decref(keys);
  history_series_set_free(&set);
  free(db_path);
  return status;
}

/* ---------------------------------------------------------------- verb */

#define DB_OPTION(D)                                                                                 \
  {.name = "db", .kind = MAPP_OPT_STRING, .dest = (D), .help = "the history file",                   \
   .default_text = "$MAPP_HISTORY, else " HISTORY_DEFAULT_PATH}

static int history_add(int argc, char **argv) {
  const char *db = NULL;
  const mapp_option opts[] = {DB_OPTION(&db), MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("history add", "RESULTS...",
                          "Add every record of results folders (or results.jsonl files) to the history, with its\n"
                          "revision's commit date from the source tree's git. One transaction: all or nothing; a\n"
                          "record already there is not added again.",
                          opts, 1, 100000, false, argc, argv, &args);
  char *path = status == MAPP_OK && !args.help_shown ? historydb_path(db, HISTORY_DEFAULT_PATH) : NULL;
  if (status == MAPP_OK && !args.help_shown)
    status = path ? history_add_results(path, args.cli.positional, (size_t)args.cli.positional_count)
                  : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(path);
  verb_args_free(&args);
  return status;
}

#define FILTER_HELP                                                                                  \
  "FILTERs select configurations: FIELD=VALUE (app, variant, backend, size, scaling, ranks,\n"       \
  "threads, setting) matches exactly, a bare word matches a configuration that contains it."

static int history_show(int argc, char **argv) {
  const char *db = NULL;
  bool revisions = false;
  const mapp_option opts[] = {
      DB_OPTION(&db),
      {.name = "revisions", .kind = MAPP_OPT_FLAG, .dest = &revisions,
       .help = "then each configuration's revisions: median, min, max, change, change points"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("history show", "[FILTER...]",
                          "One row per configuration: the latest revision's median figure of merit, its change\n"
                          "against the previous revision, and the change points of the series.\n" FILTER_HELP,
                          opts, 0, 64, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) status = check_filters(args.cli.positional, args.cli.positional_count);
  if (status == MAPP_OK && !args.help_shown)
    status = show(db, revisions, args.cli.positional, args.cli.positional_count);
  verb_args_free(&args);
  return status;
}

static int history_plot(int argc, char **argv) {
  const char *db = NULL, *out = NULL, *format = "png,svg";
  const mapp_option opts[] = {
      DB_OPTION(&db),
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &out, .help = "folder of the figures",
       .default_text = "history/ beside the history file"},
      {.name = "format", .kind = MAPP_OPT_STRING, .dest = &format, .choices = "png,svg,pdf",
       .help = "image formats, comma separated"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("history plot", "[FILTER...]",
                          "Draw each configuration's figure of merit against commit (median and min-max of the\n"
                          "repetitions, change points dashed) as OUT/history-CONFIG.{png,svg,dat,gp}.\n" FILTER_HELP,
                          opts, 0, 64, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) status = check_filters(args.cli.positional, args.cli.positional_count);
  if (status == MAPP_OK && !args.help_shown) status = plot(db, out, format, args.cli.positional, args.cli.positional_count);
  verb_args_free(&args);
  return status;
}

static int history_check(int argc, char **argv) {
  const char *db = NULL;
  double threshold = 5.0;
  const mapp_option opts[] = {
      DB_OPTION(&db),
      {.name = "threshold", .kind = MAPP_OPT_DOUBLE, .dest = &threshold, .dmin = 0.0, .dmax = 100.0,
       .help = "smallest slowdown that counts, in percent of the figure of merit"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("history check", "[FILTER...]",
                          "Find the change points of every configuration's series (E-Divisive means with a\n"
                          "permutation test, p <= 0.01) and exit 1 naming each configuration and the first\n"
                          "revision of a step that lowers its figure of merit by --threshold percent or more.\n" FILTER_HELP,
                          opts, 0, 64, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) status = check_filters(args.cli.positional, args.cli.positional_count);
  if (status == MAPP_OK && !args.help_shown) status = check(db, threshold, args.cli.positional, args.cli.positional_count);
  verb_args_free(&args);
  return status;
}

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} history_verb;

static const history_verb history_verbs[] = {
    {"add", history_add, "add results folders or results.jsonl files to the history"},
    {"show", history_show, "latest figure of merit, change against the previous revision, change points"},
    {"plot", history_plot, "figure of merit against commit, one figure per configuration"},
    {"check", history_check, "exit 1 when a configuration has a step slower by --threshold % or more"},
};
#define HISTORY_VERBS (sizeof history_verbs / sizeof history_verbs[0])

static void print_history_usage(void) {
  printf("usage: mapp history add|show|plot|check [options]   (mapp history VERB --help)\n\n"
         "The figures of merit of every configuration across commits, in one SQLite file\n"
         "(--db, else $MAPP_HISTORY, else " HISTORY_DEFAULT_PATH ").\n\n");
  for (size_t i = 0; i < HISTORY_VERBS; ++i) printf("  %-6s %s\n", history_verbs[i].name, history_verbs[i].summary);
}

int verb_history(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))) {
    print_history_usage();
    return MAPP_OK;
  }
  for (size_t i = 0; argc >= 2 && i < HISTORY_VERBS; ++i)
    if (!strcmp(argv[1], history_verbs[i].name)) return history_verbs[i].run(argc - 1, argv + 1);
  if (argc < 2) return mapp_fail(MAPP_ERR_INPUT, "no history verb given (add, show, plot, check; see mapp history --help)");
  return mapp_fail(MAPP_ERR_INPUT, "unknown history verb '%s' (add, show, plot, check; see mapp history --help)", argv[1]);
}
