/* The history as a static site (history_site.h): an index page and a page
 * per configuration, written with doc.h's HTML rendering. */
#include "history_site.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doc.h"
#include "fsutil.h"
#include "history.h"
#include "mapp_error.h"
#include "strv.h"

#define TREND_PREFIX "history-"

/* What publishing found for one configuration. */
typedef struct {
  history_judgement judged; /* change points and what check answers */
  char stem[256];           /* its trend figure: figures/STEM.svg */
  const char *slug;         /* its page, SLUG.html: the stem without TREND_PREFIX */
  bool published;
} site_entry;

static const char *fom_of(const history_series *s) { return s->fom_name ? s->fom_name : "FOM"; }
static const char *or_dash(const char *text) { return text ? text : "-"; }

/* "+2.1 %" against the revision before, "-" for the first. */
static void versus_previous(const history_series *s, size_t i, char *text, size_t len) {
  if (i == 0 || s->points[i - 1].median == 0) snprintf(text, len, "-");
  else snprintf(text, len, "%+.1f %%", 100.0 * (s->points[i].median / s->points[i - 1].median - 1.0));
}

/* What `mapp history check` answers for the series, with its reason. */
static void answer_text(const history_series *s, const history_judgement *j, double threshold, char *text, size_t len) {
  double pct = 100.0 * threshold;
  changepoint_options opt = changepoint_defaults();
  if (j->answer == HISTORY_SLOWER)
    snprintf(text, len, "**SLOWER**: %zu step%s the data support as %.3g %% slower or more (below)", j->slower,
             j->slower == 1 ? "" : "s", pct);
  else if (j->answer == HISTORY_OK)
    snprintf(text, len, "ok: no step slower by %.3g %% or more that the data support (the smallest it could show: "
                        "%.1f %%)", pct, 100.0 * j->detectable);
  else if (s->count < 2 * opt.min_segment)
    snprintf(text, len, "inconclusive: %zu revisions, too few to judge (needs %zu)", s->count, 2 * opt.min_segment);
  else if (j->undecided)
    snprintf(text, len, "inconclusive: a step of %+.1f %% from revision `%s` with too few revisions on one side to "
                        "bound it at 95 %%", 100.0 * j->undecided->change, s->points[j->undecided->index].revision);
  else if (isfinite(j->detectable))
    snprintf(text, len, "inconclusive: the noise (%.1f %% a revision) hides a %.3g %% step; the smallest it could "
                        "show is %.1f %%", 100.0 * j->noise, pct, 100.0 * j->detectable);
  else
    snprintf(text, len, "inconclusive: too few revisions to show any step at the detector's level");
}

/* ---------------------------------------------------------------- a configuration's page */

static void write_change_points(doc *d, const history_series *s, const history_changes *c, double threshold) {
  static const char *const judged[] = {"not a slowdown", "**a slowdown**", "undecided (too short to bound)"};
  doc_heading(d, 2, "Change points");
  if (c->count == 0) {
    doc_para(d, "None: E-Divisive means finds no step at p <= 0.01.");
    return;
  }
  doc_table(d, "llrlrrl");
  doc_cell(d, "first revision");
  doc_cell(d, "committed");
  doc_cell(d, "change");
  doc_cell(d, "95 %% interval");
  doc_cell(d, "p");
  doc_cell(d, "mean before \u2192 after");
  doc_cell(d, "at %.3g %%", 100.0 * threshold);
  doc_row_end(d);
  for (size_t i = 0; i < c->count; ++i) {
    const change_point *p = &c->points[i];
    char interval[64];
    doc_cell(d, "`%s`", s->points[p->index].revision);
    doc_cell(d, "%s", or_dash(s->points[p->index].commit_date));
    doc_cell(d, "%s %+.1f %%", history_direction(p), 100.0 * p->change);
    doc_cell(d, "%s", history_interval_text(p, interval, sizeof interval));
    doc_cell(d, "%.3f", p->p_value);
    doc_cell(d, "%.4g \u2192 %.4g", p->before, p->after);
    doc_cell(d, "%s", judged[changepoint_judge(p, threshold)]);
    doc_row_end(d);
  }
  doc_table_end(d);
}

/* Newest first: the question a page answers is what changed lately. */
static void write_revisions(doc *d, const history_series *s, const history_changes *c) {
  static const char *const columns[] = {"#", "revision", "committed", "ran", "runs", "median", "min", "max",
                                        "vs previous", "change point"};
  doc_heading(d, 2, "Revisions");
  doc_para(d, "Newest first; the median, min and max of each revision's repetitions that exited 0 with a figure of "
              "merit. A change point is marked on the first revision of its new level.");
  doc_table(d, "rlllrrrrrl");
  for (size_t i = 0; i < sizeof columns / sizeof columns[0]; ++i) doc_cell(d, "%s", columns[i]);
  doc_row_end(d);
  for (size_t k = s->count; k-- > 0;) {
    const history_point *p = &s->points[k];
    char versus[32], mark[128] = "";
    versus_previous(s, k, versus, sizeof versus);
    for (size_t j = 0; j < c->count; ++j)
      if (c->points[j].index == k)
        snprintf(mark, sizeof mark, "**%s %+.1f %%**", history_direction(&c->points[j]), 100.0 * c->points[j].change);
    doc_cell(d, "%zu", k + 1);
    doc_cell(d, "`%s`", p->revision);
    doc_cell(d, "%s", or_dash(p->commit_date));
    doc_cell(d, "%s", or_dash(p->time));
    doc_cell(d, "%zu", p->runs);
    doc_cell(d, "%.4g", p->median);
    doc_cell(d, "%.4g", p->min);
    doc_cell(d, "%.4g", p->max);
    doc_cell(d, "%s", versus);
    doc_cell(d, "%s", mark);
    doc_row_end(d);
  }
  doc_table_end(d);
}

/* "committed 2026-11-23T10:00:00+01:00", else when it ran (a revision git did not know). */
static void point_date(const history_point *p, char *text, size_t len) {
  if (p->commit_date) snprintf(text, len, "committed %s", p->commit_date);
  else snprintf(text, len, "commit date unknown, ran %s", or_dash(p->time));
}

static int write_page(const history_site *site, size_t i, const site_entry *e, const char *dir) {
  const history_series *s = &site->set->items[i];
  char *name = str_printf("%s.html", e->slug), *figure = str_printf("figures/%s.svg", e->stem);
  char *path = name ? path_join(dir, name) : NULL;
  doc d;
  int status = path && figure ? doc_open(&d, dir, s->config, NULL, path) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) {
    const history_point *first = &s->points[0], *last = &s->points[s->count - 1];
    char answer[512], latest[256];
    answer_text(s, &e->judged, site->threshold, answer, sizeof answer);
    verdict_explain(&site->verdicts[i], VERDICT_DEFAULT_PRECISION, latest, sizeof latest);
    doc_link(&d, "index.html", "\u2190 every configuration");
    doc_heading(&d, 1, "%s", s->config);
    char from[96], to[96];
    point_date(first, from, sizeof from);
    point_date(last, to, sizeof to);
    doc_para(&d, "%s (higher is better) on system `%s` over %zu revision%s, from `%s` (%s) to `%s` (%s), in the "
                 "history `%s`.", fom_of(s), s->system, s->count, s->count == 1 ? "" : "s", first->revision, from,
             last->revision, to, site->db_path);
    doc_para(&d, "`mapp history check --threshold %.3g`: %s. The latest revision's repetitions: %s.",
             100.0 * site->threshold, answer, latest);
    doc_figure(&d, s->config, figure);
    write_change_points(&d, s, &e->judged.changes, site->threshold);
    write_revisions(&d, s, &e->judged.changes);
    status = doc_close(&d);
  }
  free(path);
  free(figure);
  free(name);
  return status;
}

/* ---------------------------------------------------------------- the index */

/* The series' medians and its change points' indices as a trend cell. */
static void write_trend_cell(doc *d, const history_series *s, const history_changes *c) {
  double *medians = malloc((s->count ? s->count : 1) * sizeof *medians);
  size_t *marks = malloc((c->count ? c->count : 1) * sizeof *marks);
  if (medians && marks) {
    for (size_t i = 0; i < s->count; ++i) medians[i] = s->points[i].median;
    for (size_t k = 0; k < c->count; ++k) marks[k] = c->points[k].index;
    doc_cell_trend(d, medians, s->count, marks, c->count);
  } else {
    doc_cell(d, "?");
  }
  free(marks);
  free(medians);
}

static void write_index_row(doc *d, const history_series *s, const site_entry *e, const verdict_summary *latest) {
  char versus[32], href[300];
  versus_previous(s, s->count - 1, versus, sizeof versus);
  snprintf(href, sizeof href, "%s.html", e->slug);
  char *changes = history_changes_text(s, &e->judged.changes);
  const history_point *last = &s->points[s->count - 1];
  doc_cell_link(d, href, "%s", s->config);
  doc_cell(d, "%s", fom_of(s));
  doc_cell(d, "%zu", s->count);
  write_trend_cell(d, s, &e->judged.changes);
  doc_cell(d, "`%s`", last->revision);
  doc_cell(d, "%.4g", last->median);
  doc_cell(d, "%s", versus);
  doc_cell(d, "%s", verdict_name(latest->kind));
  doc_cell(d, "%s", changes ? changes : "?");
  doc_cell(d, e->judged.answer == HISTORY_SLOWER ? "**%s**" : "%s", history_answer_name(e->judged.answer));
  doc_row_end(d);
  free(changes);
}

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The systems of the published configurations, by name. */
static int published_systems(const history_site *site, const site_entry *entries, strv *systems) {
  for (size_t i = 0; i < site->set->count; ++i)
    if (entries[i].published && !strv_contains(systems, site->set->items[i].system))
      MAPP_TRY(strv_push(systems, site->set->items[i].system));
  if (systems->count) qsort(systems->items, systems->count, sizeof *systems->items, by_text);
  return MAPP_OK;
}

/* One system's configurations: a heading and their table. */
static void write_system_table(doc *d, const history_site *site, const site_entry *entries, const char *system) {
  static const char *const columns[] = {"configuration", "FOM", "revisions", "trend", "latest revision",
                                        "latest FOM", "vs previous", "measured", "change points (95 % interval)",
                                        "check"};
  const history_series_set *set = site->set;
  size_t count = 0;
  for (size_t i = 0; i < set->count; ++i) count += entries[i].published && !strcmp(set->items[i].system, system);
  doc_heading(d, 2, "system %s", system);
  doc_para(d, "%zu configuration%s measured on `%s`: a series of its own, never mixed with another system's.", count,
           count == 1 ? "" : "s", system);
  doc_table(d, "llrllrrlll");
  for (size_t c = 0; c < sizeof columns / sizeof columns[0]; ++c) doc_cell(d, "%s", columns[c]);
  doc_row_end(d);
  for (size_t i = 0; i < set->count; ++i)
    if (entries[i].published && !strcmp(set->items[i].system, system))
      write_index_row(d, &set->items[i], &entries[i], &site->verdicts[i]);
  doc_table_end(d);
}

/* The index: the configurations grouped by system, a table each. */
static int write_index(const history_site *site, const site_entry *entries, size_t published, const char *dir) {
  const history_series_set *set = site->set;
  char *path = path_join(dir, "index.html"), *db_name = path_stem(site->db_path, ".sqlite");
  char *title = db_name ? str_printf("mapp history: %s", db_name) : NULL;
  strv systems = {0};
  doc d;
  int status = path && title ? published_systems(site, entries, &systems) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = doc_open(&d, dir, title, NULL, path);
  if (status == MAPP_OK) {
    doc_heading(&d, 1, "%s", title);
    doc_para(&d, "From `%s`: %zu records, %zu revisions, %zu configurations on %zu system%s (%zu shown). Each "
                 "configuration's page has its trend figure, change points and revisions. Change points: E-Divisive "
                 "means, p <= 0.01, each step with its 95 %% interval; check: what `mapp history check --threshold "
                 "%.3g` answers (exit 1 for SLOWER).", site->db_path, set->records, set->revisions, set->count,
             set->systems, set->systems == 1 ? "" : "s", published, 100.0 * site->threshold);
    for (size_t k = 0; k < systems.count; ++k) write_system_table(&d, site, entries, systems.items[k]);
    if (!published) doc_para(&d, "No configuration matches.");
    status = doc_close(&d);
  }
  if (status == MAPP_OK) printf("%s (%zu configuration page%s)\n", path, published, published == 1 ? "" : "s");
  strv_free(&systems);
  free(title);
  free(db_name);
  free(path);
  return status;
}

/* ---------------------------------------------------------------- what a publish wrote */

/* DIR/.mapp-site lists, a relative path a line, the files the last publish
 * into DIR wrote for its configurations: each page and its trend figure's
 * image, data and script. The next publish removes those it does not write
 * again (a configuration since deselected, or gone from the history), so
 * the site holds no page its index has stopped linking; every other file in
 * DIR is left alone. */
#define SITE_MANIFEST ".mapp-site"

static int entry_files(const site_entry *e, strv *files) {
  static const char *const figure_files[] = {"svg", "dat", "gp"};
  MAPP_TRY(strv_pushf(files, "%s.html", e->slug));
  for (size_t k = 0; k < sizeof figure_files / sizeof figure_files[0]; ++k)
    MAPP_TRY(strv_pushf(files, "figures/%s.%s", e->stem, figure_files[k]));
  return MAPP_OK;
}

/* A path the manifest may name: inside DIR, no way out of it. */
static bool inside_site(const char *path) {
  return path[0] && path[0] != '/' && strcmp(path, "..") && strncmp(path, "../", 3) && !strstr(path, "/../") &&
         !(strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/.."));
}

static int read_manifest(const char *dir, strv *files) {
  char *path = path_join(dir, SITE_MANIFEST), *text = NULL;
  if (!path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = path_exists(path) ? read_text_file(path, &text) : MAPP_OK;
  char *save = NULL;
  for (char *line = text ? strtok_r(text, "\n", &save) : NULL; status == MAPP_OK && line;
       line = strtok_r(NULL, "\n", &save))
    if (inside_site(line)) status = strv_push(files, line);
  free(text);
  free(path);
  return status;
}

/* The files the earlier publish listed and this one did not write. */
static int remove_stale(const char *dir, const strv *before, const strv *now, size_t *removed) {
  *removed = 0;
  for (size_t i = 0; i < before->count; ++i) {
    if (strv_contains(now, before->items[i])) continue;
    char *path = path_join(dir, before->items[i]);
    if (!path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    int gone = unlink(path) == 0, missing = !gone && errno == ENOENT;
    int status = gone || missing ? MAPP_OK
                                 : mapp_fail(MAPP_ERR_SYSTEM, "cannot remove %s, published before: %s", path,
                                             strerror(errno));
    free(path);
    MAPP_TRY(status);
    *removed += (size_t)gone;
  }
  return MAPP_OK;
}

static int write_manifest(const char *dir, const strv *files) {
  char *path = path_join(dir, SITE_MANIFEST);
  int status = path ? strv_write_lines(files, path) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(path);
  return status;
}

/* After the pages are written: the earlier publish's leftovers removed and
 * this publish's files listed for the next. */
static int tidy_site(const char *dir, const site_entry *entries, size_t count) {
  strv before = {0}, now = {0};
  size_t removed = 0;
  int status = read_manifest(dir, &before);
  for (size_t i = 0; status == MAPP_OK && i < count; ++i)
    if (entries[i].published) status = entry_files(&entries[i], &now);
  if (status == MAPP_OK) status = remove_stale(dir, &before, &now, &removed);
  if (status == MAPP_OK) status = write_manifest(dir, &now);
  if (status == MAPP_OK && removed)
    printf("%zu file%s of configurations no longer published removed from %s\n", removed, removed == 1 ? "" : "s",
           dir);
  strv_free(&before);
  strv_free(&now);
  return status;
}

/* ---------------------------------------------------------------- publish */

/* dir and dir/figures made; a dir that cannot be, or cannot be written
 * into, is bad input (a wrong path given), not a failing system. */
static int make_site_dirs(const char *dir, char **figures) {
  *figures = NULL;
  MAPP_TRY(make_dirs(dir));
  if (access(dir, W_OK) != 0) return mapp_fail(MAPP_ERR_INPUT, "cannot write into %s: %s", dir, strerror(errno));
  if (!(*figures = path_join(dir, "figures"))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  return make_dirs(*figures);
}

/* One configuration: judged, its trend drawn, its page written. */
static int publish_one(const history_site *site, size_t i, history_trends *trends, site_entry *e, const char *dir) {
  const history_series *s = &site->set->items[i];
  MAPP_TRY(history_judge(s, site->threshold, &e->judged));
  MAPP_TRY(history_draw_trend(trends, s, &e->judged.changes, e->stem, sizeof e->stem));
  e->slug = e->stem + strlen(TREND_PREFIX);
  MAPP_TRY(write_page(site, i, e, dir));
  e->published = true;
  return MAPP_OK;
}

int history_site_publish(const history_site *site, const char *dir) {
  const history_series_set *set = site->set;
  char *figures = NULL, *db_name = path_stem(site->db_path, ".sqlite");
  strv formats = {0}, written = {0};
  site_entry *entries = calloc(set->count ? set->count : 1, sizeof *entries);
  int status = entries && db_name ? make_site_dirs(dir, &figures) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = strv_push(&formats, "svg");
  history_trends trends = {.target = {.dir = figures, .formats = &formats, .written = &written}, .db_name = db_name};
  size_t published = 0;
  for (size_t i = 0; status == MAPP_OK && i < set->count; ++i)
    if (site->keep[i] && set->items[i].count) status = publish_one(site, i, &trends, &entries[i], dir), ++published;
  if (status == MAPP_OK) status = write_index(site, entries, published, dir);
  if (status == MAPP_OK) status = tidy_site(dir, entries, set->count);
  for (size_t i = 0; entries && i < set->count; ++i) free(entries[i].judged.changes.points);
  free(entries);
  strv_free(&trends.stems);
  strv_free(&written);
  strv_free(&formats);
  free(figures);
  free(db_name);
  return status;
}
