/* The performance history of the other verbs' records: adding results with
 * their revisions' commit dates, the steps in each configuration's series
 * (E-Divisive means, changepoint.h) and the trend figures that `mapp
 * history plot` and `mapp report` draw (history.h).
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

#include "fsutil.h"
#include "gnuplot.h"
#include "mapp_error.h"
#include "paths.h"
#include "perfstats.h"
#include "proc.h"
#include "results.h"

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

/* ---------------------------------------------------------------- analysis */

int history_find_changes(const history_series *s, history_changes *out) {
  *out = (history_changes){0};
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

/* The latest HISTORY_WINDOW medians of s (what the detector sees), malloc'd. */
static int window_medians(const history_series *s, double **medians, size_t *n) {
  size_t first = s->count > HISTORY_WINDOW ? s->count - HISTORY_WINDOW : 0;
  *n = s->count - first;
  *medians = malloc((*n ? *n : 1) * sizeof **medians);
  if (!*medians) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = first; i < s->count; ++i) (*medians)[i - first] = s->points[i].median;
  return MAPP_OK;
}

/* The per-revision noise of medians[n] (relative) and the smallest step
 * between the series' halves the detector's level could see with 80 %
 * power (history.h). The ratio of successive medians holds two revisions'
 * noise, hence the sqrt(2); a step moves one ratio only, so their MAD
 * ignores it. The MAD rather than the standard deviation (which compare's
 * detectable change takes) because a median of repetitions is near normal
 * where raw timings come in clusters, and one step or one wild revision
 * would inflate a standard deviation. */
static int detectable_step(const double *medians, size_t n, double *noise, double *step) {
  *noise = NAN;
  *step = INFINITY;
  if (n < 3) return MAPP_OK;
  double *ratios = malloc((n - 1) * sizeof *ratios);
  if (!ratios) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t count = 0;
  for (size_t i = 0; i + 1 < n; ++i)
    if (medians[i] > 0.0 && medians[i + 1] > 0.0) ratios[count++] = medians[i + 1] / medians[i];
  /* perf_robust_spread is relative to the median ratio (about 1), so it is
   * the spread of the log-ratios to first order */
  int status = count >= 2 ? perf_robust_spread(ratios, count, noise) : MAPP_OK;
  free(ratios);
  if (status != MAPP_OK || isnan(*noise)) return status;
  *noise /= sqrt(2.0);
  changepoint_options opt = changepoint_defaults();
  *step = perf_detectable(*noise, n / 2, *noise, n - n / 2, opt.alpha);
  return MAPP_OK;
}

/* The answer from the change points' judgements and the detectable step. */
static history_answer decide(const history_judgement *j, double threshold) {
  if (j->slower) return HISTORY_SLOWER;
  if (j->undecided) return HISTORY_INCONCLUSIVE;
  return j->detectable > threshold ? HISTORY_INCONCLUSIVE : HISTORY_OK;
}

int history_judge(const history_series *s, double threshold, history_judgement *out) {
  *out = (history_judgement){.answer = HISTORY_INCONCLUSIVE, .detectable = INFINITY, .noise = NAN};
  MAPP_TRY(history_find_changes(s, &out->changes));
  for (size_t i = 0; i < out->changes.count; ++i) {
    step_judgement j = changepoint_judge(&out->changes.points[i], threshold);
    out->slower += j == STEP_SLOWER;
    if (j == STEP_UNDECIDED && !out->undecided) out->undecided = &out->changes.points[i];
  }
  double *medians;
  size_t n;
  int status = window_medians(s, &medians, &n);
  if (status == MAPP_OK) status = detectable_step(medians, n, &out->noise, &out->detectable);
  free(medians);
  if (status != MAPP_OK) {
    free(out->changes.points);
    out->changes = (history_changes){0};
    return status;
  }
  changepoint_options opt = changepoint_defaults();
  if (s->count < 2 * opt.min_segment) out->detectable = INFINITY; /* the detector cannot split it at all */
  out->answer = decide(out, threshold);
  return MAPP_OK;
}

const char *history_answer_name(history_answer answer) {
  static const char *const names[] = {"ok", "SLOWER", "inconclusive"};
  return names[answer];
}

/* ---------------------------------------------------------------- latest verdicts */

/* Records of one app whose configuration is a series of the set and whose
 * revision is that series' latest, appended to latest[series index]. */
static int gather_latest(const json_t *records, const json_t *index, const history_series_set *set, json_t **latest) {
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    char *key = historydb_config_key(r);
    if (!key) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    const json_t *at = json_object_get(index, key);
    free(key);
    if (!at) continue;
    const history_series *s = &set->items[json_integer_value(at)];
    const char *revision = json_string_value(json_object_get(r, "git_revision"));
    if (!s->count || strcmp(revision ? revision : "unknown", s->points[s->count - 1].revision) != 0) continue;
    json_array_append((json_t *)latest[json_integer_value(at)], (json_t *)r);
  }
  return MAPP_OK;
}

/* Series index by configuration key, and an empty array per series. */
static int index_series(const history_series_set *set, json_t **index, json_t **latest) {
  *index = json_object();
  if (!*index) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < set->count; ++i) {
    latest[i] = json_array();
    if (!latest[i] || json_object_set_new(*index, set->items[i].config, json_integer((json_int_t)i)))
      return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  return MAPP_OK;
}

/* Each app's records once, gathered into latest[]. */
static int read_latest(history_db *db, const history_series_set *set, const json_t *index, json_t **latest) {
  json_t *apps_done = json_object();
  int status = apps_done ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; status == MAPP_OK && i < set->count; ++i) {
    const char *app = set->items[i].app;
    if (json_object_get(apps_done, app)) continue;
    json_object_set_new(apps_done, app, json_true());
    json_t *records = NULL;
    status = historydb_records_of(db, app, &records);
    if (status == MAPP_OK) status = gather_latest(records, index, set, latest);
    json_decref(records);
  }
  json_decref(apps_done);
  return status;
}

int history_latest_verdicts(const char *db_path, const history_series_set *set, verdict_summary *verdicts) {
  json_t **latest = calloc(set->count ? set->count : 1, sizeof *latest), *index = NULL;
  history_db *db = NULL;
  int status = latest ? index_series(set, &index, latest) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = historydb_open(db_path, false, &db);
  if (status == MAPP_OK) status = read_latest(db, set, index, latest);
  for (size_t i = 0; status == MAPP_OK && i < set->count; ++i)
    status = verdict_of_records(latest[i], VERDICT_DEFAULT_PRECISION, &verdicts[i]);
  historydb_close(db);
  for (size_t i = 0; latest && i < set->count; ++i) json_decref(latest[i]);
  free(latest);
  json_decref(index);
  return status;
}

const char *history_direction(const change_point *c) { return c->change < 0 ? "slower" : "faster"; }

char *history_interval_text(const change_point *c, char *text, size_t len) {
  if (c->bounded) snprintf(text, len, "[%+.1f, %+.1f]", 100.0 * c->low, 100.0 * c->high);
  else snprintf(text, len, "[unbounded]");
  return text;
}

char *history_changes_text(const history_series *s, const history_changes *c) {
  char interval[64];
  strv parts = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < c->count; ++i)
    status = strv_pushf(&parts, "%s %s %+.1f %% %s", s->points[c->points[i].index].revision,
                        history_direction(&c->points[i]), 100.0 * c->points[i].change,
                        history_interval_text(&c->points[i], interval, sizeof interval));
  char *text = status == MAPP_OK ? (c->count ? strv_join(&parts, ", ") : strdup("-")) : NULL;
  strv_free(&parts);
  return text;
}

/* ---------------------------------------------------------------- loading */

int history_load_series(const char *given, history_series_set *set, char **path) {
  *set = (history_series_set){0};
  *path = historydb_path(given, HISTORY_DEFAULT_PATH);
  if (!*path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  history_db *db = NULL;
  MAPP_TRY(historydb_open(*path, false, &db));
  int status = historydb_series(db, set);
  historydb_close(db);
  return status;
}

/* ---------------------------------------------------------------- trend figures */


static int write_trend_data(const void *what, const char *path) {
  const history_series *s = ((const history_trend *)what)->series;
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
static char *trend_marks(const history_changes *c) {
  strv lines = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < c->count; ++i) {
    double x = (double)c->points[i].index - 0.5;
    status = strv_pushf(&lines,
                        "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'\n"
                        "set label '%s %+.1f %%' at %g, graph 0.96 left offset 0.4, 0 tc rgb '#d62728' font ',9'",
                        x, x, history_direction(&c->points[i]), 100.0 * c->points[i].change, x);
  }
  char *text = status == MAPP_OK ? strv_join(&lines, "\n") : NULL;
  strv_free(&lines);
  return text;
}

static int trend_figure(const history_trends *ctx, const history_series *s, const history_changes *c,
                        const char *data_name, char **figure) {
  char *common = NULL, *body = NULL;
  MAPP_TRY(gnuplot_template("common.gp", &common));
  int status = gnuplot_template("history.gp", &body);
  char xmax[32], title[1024];
  snprintf(xmax, sizeof xmax, "%g", (double)s->count - 0.5);
  snprintf(title, sizeof title, "%s: %s against commit (%s)", s->config, s->fom_name ? s->fom_name : "FOM", ctx->db_name);
  char *tics = trend_tics(s), *marks = trend_marks(c);
  char *q_title = plot_gnuplot_quoted(title), *q_data = plot_gnuplot_quoted(data_name);
  char *q_fom = plot_gnuplot_quoted(s->fom_name ? s->fom_name : "FOM");
  if (status == MAPP_OK && !(tics && marks && q_title && q_data && q_fom)) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  /* common.gp's rank axis is replaced by history.gp's own */
  gnuplot_sub subs[] = {{"XMIN", "*"}, {"XMAX", "*"}, {"XTICS", "'' 1"}, {"COMMON", ""},
                        {"TITLE", q_title ? q_title : ""}, {"DATA", q_data ? q_data : ""}, {"FOM", q_fom ? q_fom : ""},
                        {"MARKS", marks ? marks : ""}};
  char *look = status == MAPP_OK ? gnuplot_fill(common, subs, 3) : NULL;
  subs[1].value = xmax;
  subs[2].value = tics ? tics : "";
  subs[3].value = look ? look : "";
  *figure = look ? gnuplot_fill(body, subs + 1, 7) : NULL;
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

/* history-KEY, with -2, -3, ... when another key of this run reduced to it. */
static int trend_stem(history_trends *ctx, const history_series *s, char *stem, size_t len) {
  char base[160];
  plot_file_stem(s->config, base, sizeof base);
  snprintf(stem, len, "history-%s", base);
  for (int k = 2; strv_contains(&ctx->stems, stem); ++k) snprintf(stem, len, "history-%s-%d", base, k);
  return strv_push(&ctx->stems, stem);
}

static int trend_script(const void *ctx, const void *what, const char *stem, const char *data_name, char **script) {
  const history_trends *trends = ctx;
  const history_trend *t = what;
  char *figure = NULL;
  int status = trend_figure(trends, t->series, t->changes, data_name, &figure);
  if (status == MAPP_OK) status = gnuplot_script(&trends->target, stem, figure, script);
  free(figure);
  return status;
}

int history_draw_trend(history_trends *ctx, const history_series *s, const history_changes *c, char *stem, size_t len) {
  MAPP_TRY(trend_stem(ctx, s, stem, len));
  history_trend t = {s, c};
  return gnuplot_render(&ctx->target, stem, write_trend_data, trend_script, ctx, &t);
}

/* ---------------------------------------------------------------- report */

json_t *history_config_keys(const json_t *records) {
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

static int report_trends(doc *d, const char *dir, const history_series_set *set, const json_t *keys,
                         const char *db_path) {
  char *plots_dir = path_join(dir, "plots"), *db_name = path_stem(db_path, ".sqlite");
  strv formats = {0}, written = {0};
  int status = plots_dir && db_name ? make_dirs(plots_dir) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = strv_push(&formats, "png");
  if (status == MAPP_OK) status = strv_push(&formats, "svg");
  history_trends ctx = {.target = {.dir = plots_dir, .formats = &formats, .written = &written}, .db_name = db_name};
  doc_heading(d, 2, "Performance history");
  doc_para(d, "From `%s`: the median figure of merit of each revision with its repetitions' min and max, oldest "
              "commit first; dashed lines are the change points E-Divisive means found (`mapp history show`, "
              "`mapp history check`).", db_path);
  size_t drawn = 0;
  for (size_t i = 0; status == MAPP_OK && i < set->count; ++i) {
    const history_series *s = &set->items[i];
    if (s->count < REPORT_MIN_REVISIONS || !json_object_get(keys, s->config)) continue;
    history_changes c;
    char stem[256];
    status = history_find_changes(s, &c);
    if (status == MAPP_OK) status = history_draw_trend(&ctx, s, &c, stem, sizeof stem);
    char *changes = status == MAPP_OK ? history_changes_text(s, &c) : NULL;
    char *figure = changes ? str_printf("plots/%s.png", stem) : NULL;
    if (figure) {
      doc_heading(d, 3, "%s", s->config);
      doc_figure(d, s->config, figure);
      doc_para(d, "Change points: %s", changes);
    } else if (status == MAPP_OK) {
      status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    }
    free(figure);
    free(changes);
    free(c.points);
    ++drawn;
  }
  if (status == MAPP_OK && !drawn)
    doc_para(d, "No configuration of these results has %d revisions in the history yet.", REPORT_MIN_REVISIONS);
  strv_free(&ctx.stems);
  strv_free(&written);
  strv_free(&formats);
  free(db_name);
  free(plots_dir);
  return status;
}

int history_report_section(doc *d, const char *dir, const json_t *records) {
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
  json_t *keys = history_config_keys(records);
  status = keys ? report_trends(d, dir, &set, keys, db_path) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_decref(keys);
  history_series_set_free(&set);
  free(db_path);
  return status;
}
