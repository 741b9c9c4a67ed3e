/* mapp history add|show|plot|check|publish: the figures of merit of every
 * configuration across commits, stored in one SQLite file (historydb.h),
 * with the steps in them found by E-Divisive means (history.h); publish
 * writes them as a static site (history_site.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "fsutil.h"
#include "gnuplot.h"
#include "history.h"
#include "history_site.h"
#include "history_summary.h"
#include "historydb.h"
#include "junit.h"
#include "mapp_error.h"
#include "selection.h"
#include "verbs.h"
#include "verdict.h"

/* ---------------------------------------------------------------- filters */

/* show, plot and check take FILTERs: FIELD=VALUE matches a part of the key
 * exactly (app, variant, backend, size, scaling, ranks, threads, setting,
 * system); a bare word matches when the key contains it. All must match. */
static const char *const filter_fields[] = {"app",     "variant", "backend", "size",  "scaling",
                                            "ranks",   "threads", "setting", "system"};
#define FILTER_FIELDS (sizeof filter_fields / sizeof filter_fields[0])

static int check_filters(char **filters, int count) {
  for (int i = 0; i < count; ++i) {
    const char *eq = strchr(filters[i], '=');
    if (!eq) continue;
    bool known = false;
    for (size_t f = 0; f < FILTER_FIELDS && !known; ++f)
      known = strlen(filter_fields[f]) == (size_t)(eq - filters[i]) && !strncmp(filters[i], filter_fields[f], eq - filters[i]);
    if (!known)
      return mapp_fail(MAPP_ERR_INPUT,
                       "unknown filter field in '%s' (fields: app variant backend size scaling ranks threads setting system)",
                       filters[i]);
  }
  return MAPP_OK;
}

/* A series' text field by name (setting: also "label"); NULL for the
 * numbers (ranks, threads) and unknown names. */
static const char *series_text(const history_series *s, const char *field) {
  return !strcmp(field, "app") ? s->app : !strcmp(field, "variant") ? s->variant
         : !strcmp(field, "backend") ? s->backend : !strcmp(field, "size") ? s->size
         : !strcmp(field, "scaling") ? s->scaling : !strcmp(field, "system") ? s->system
         : !strcmp(field, "setting") || !strcmp(field, "label") ? s->setting : NULL;
}

static bool field_matches(const history_series *s, const char *field, const char *value) {
  char number[32];
  const char *have = series_text(s, field);
  if (!have) {
    snprintf(number, sizeof number, "%ld", !strcmp(field, "ranks") ? s->ranks : s->threads);
    have = number;
  }
  return strcmp(have, value) == 0;
}

/* A series' field for --only/--exclude (label: the setting). */
static const char *series_value(const void *item, const char *field, char *buf, size_t len, bool *known) {
  const history_series *s = item;
  *known = true;
  if (!strcmp(field, "ranks") || !strcmp(field, "threads")) {
    snprintf(buf, len, "%ld", !strcmp(field, "ranks") ? s->ranks : s->threads);
    return buf;
  }
  const char *text = !strcmp(field, "setting") ? NULL : series_text(s, field); /* label: the setting */
  *known = text != NULL;
  return text ? text : "";
}

/* The FILTER words of a subcommand and its --only/--exclude, with the
 * series the latter keep (filter_prepare). */
typedef struct {
  char **words;
  int nwords;
  selection select;
  bool *keep;
} series_filter;

static int filter_prepare(series_filter *f, const history_series_set *set) {
  if (!(f->keep = calloc(set->count ? set->count : 1, sizeof *f->keep))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  return selection_mark(&f->select, set->items, set->count, sizeof *set->items, series_value, "configuration", f->keep);
}

static void filter_free(series_filter *f) {
  free(f->keep);
  selection_free(&f->select);
}

static bool words_match(const history_series *s, char **filters, int count) {
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

static bool series_selected(const series_filter *f, const history_series_set *set, size_t i) {
  return f->keep[i] && words_match(&set->items[i], f->words, f->nwords);
}

/* ---------------------------------------------------------------- show */

static size_t config_width(const history_series_set *set, const series_filter *f) {
  size_t width = strlen("configuration");
  for (size_t i = 0; i < set->count; ++i)
    if (series_selected(f, set, i) && strlen(set->items[i].config) > width)
      width = strlen(set->items[i].config);
  return width;
}

static int show_one(const history_series *s, const verdict_summary *latest, int width) {
  history_changes c;
  MAPP_TRY(history_find_changes(s, &c));
  char *changes = history_changes_text(s, &c);
  free(c.points);
  if (!changes) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  const history_point *last = &s->points[s->count - 1];
  char versus[32] = "-";
  if (s->count > 1) snprintf(versus, sizeof versus, "%+.1f %%", 100.0 * (last->median / s->points[s->count - 2].median - 1.0));
  printf("%-*s  %-18s %4zu  %-18s %11.4g %9s  %-9s  %s\n", width, s->config, s->fom_name ? s->fom_name : "FOM",
         s->count, last->revision, last->median, versus, verdict_name(latest->kind), changes);
  free(changes);
  return MAPP_OK;
}

/* --revisions: the configuration's series, a row per revision, each change
 * point marked on the first revision of its new level. */
static int show_revisions(const history_series *s) {
  history_changes c;
  MAPP_TRY(history_find_changes(s, &c));
  printf("\n%s (%s)\n  %-18s %-25s %4s %11s %11s %11s %9s\n", s->config, s->fom_name ? s->fom_name : "FOM", "revision",
         "committed", "runs", "median", "min", "max", "vs prev");
  for (size_t i = 0, k = 0; i < s->count; ++i) {
    const history_point *p = &s->points[i];
    char versus[32] = "-";
    if (i) snprintf(versus, sizeof versus, "%+.1f %%", 100.0 * (p->median / s->points[i - 1].median - 1.0));
    printf("  %-18s %-25s %4zu %11.4g %11.4g %11.4g %9s", p->revision, p->commit_date ? p->commit_date : "-", p->runs,
           p->median, p->min, p->max, versus);
    for (; k < c.count && c.points[k].index == i; ++k) {
      char interval[64];
      printf("  <- change point: %s %+.1f %% %s (p %.3f)", history_direction(&c.points[k]),
             100.0 * c.points[k].change, history_interval_text(&c.points[k], interval, sizeof interval),
             c.points[k].p_value);
    }
    printf("\n");
  }
  free(c.points);
  return MAPP_OK;
}

/* The latest revision's verdict of every series (history_latest_verdicts),
 * malloc'd. */
static int latest_verdicts(const char *path, const history_series_set *set, verdict_summary **verdicts) {
  *verdicts = calloc(set->count ? set->count : 1, sizeof **verdicts);
  if (!*verdicts) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  return history_latest_verdicts(path, set, *verdicts);
}

/* What show, check and publish start from: the series, filtered, and the
 * latest revision's verdict of each. */
static int load_judged(const char *given, series_filter *f, history_series_set *set, char **path,
                       verdict_summary **verdicts) {
  MAPP_TRY(history_load_series(given, set, path));
  MAPP_TRY(filter_prepare(f, set));
  return latest_verdicts(*path, set, verdicts);
}

static int show(const char *given, bool revisions, series_filter *f) {
  history_series_set set = {0};
  char *path = NULL;
  verdict_summary *verdicts = NULL;
  int status = load_judged(given, f, &set, &path, &verdicts);
  if (status == MAPP_OK) {
    printf("history %s: %zu records, %zu revisions, %zu configurations, %zu system%s\n", path, set.records,
           set.revisions, set.count, set.systems, set.systems == 1 ? "" : "s");
    int width = (int)config_width(&set, f);
    printf("%-*s  %-18s %4s  %-18s %11s %9s  %-9s  %s\n", width, "configuration", "FOM", "revs", "latest revision",
           "latest FOM", "vs prev", "measured", "change points (E-Divisive means, p <= 0.01; 95 % interval)");
    size_t shown = 0;
    for (size_t i = 0; status == MAPP_OK && i < set.count; ++i)
      if (series_selected(f, &set, i)) status = show_one(&set.items[i], &verdicts[i], width), ++shown;
    if (status == MAPP_OK && !shown) printf("no configuration matches\n");
    for (size_t i = 0; revisions && status == MAPP_OK && i < set.count; ++i)
      if (series_selected(f, &set, i)) status = show_revisions(&set.items[i]);
  }
  free(verdicts);
  history_series_set_free(&set);
  free(path);
  return status;
}

/* ---------------------------------------------------------------- check */

typedef struct {
  size_t checked, slower, inconclusive;
  junit_suite *junit; /* NULL: no JUnit file */
} check_tally;

/* The series' case in the JUnit file: a "slowdown" failure when SLOWER. */
static int junit_series(check_tally *t, const history_series *s, const history_judgement *j,
                        const verdict_summary *latest, double threshold) {
  if (!t->junit) return MAPP_OK;
  const char *answer = j->answer == HISTORY_SLOWER ? "SLOWER" : j->answer == HISTORY_INCONCLUSIVE ? "inconclusive" : "ok";
  char revisions[24], detectable[24], message[256] = "";
  snprintf(revisions, sizeof revisions, "%zu", s->count);
  snprintf(detectable, sizeof detectable, "%.3g %%", 100.0 * j->detectable);
  for (size_t i = 0; i < j->changes.count && !message[0]; ++i) {
    const change_point *p = &j->changes.points[i];
    if (changepoint_judge(p, threshold) == STEP_SLOWER)
      snprintf(message, sizeof message, "%+.1f %% from revision %s (p %.3f), slower by %.3g %% or more", 100.0 * p->change,
               s->points[p->index].revision, p->p_value, 100.0 * threshold);
  }
  const junit_property props[] = {{"answer", answer}, {"revisions", revisions}, {"detectable", detectable},
                                  {"verdict", verdict_name(latest->kind)}};
  char *classname = str_printf("mapp.history.%s", s->app ? s->app : "unknown");
  junit_case c = {.classname = classname, .name = s->config, .status = j->answer == HISTORY_SLOWER ? JUNIT_FAILURE : JUNIT_PASS,
                  .type = j->answer == HISTORY_SLOWER ? "slowdown" : NULL,
                  .message = j->answer == HISTORY_SLOWER ? message : NULL, .details = j->answer == HISTORY_SLOWER ? message : NULL,
                  .properties = props, .property_count = sizeof props / sizeof props[0]};
  int status = classname ? junit_add_case(t->junit, &c) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(classname);
  return status;
}

/* "latest revision: noisy: 5 repetitions, too few ..." */
static void print_latest(const verdict_summary *latest) {
  char why[160];
  verdict_explain(latest, VERDICT_DEFAULT_PRECISION, why, sizeof why);
  printf("; latest revision %s\n", why);
}

static void print_slower(const history_series *s, const change_point *p) {
  const history_point *at = &s->points[p->index];
  char interval[64];
  printf("SLOWER %s: %+.1f %% from revision %s (95 %% interval %s %%, committed %s; %s %.4g -> %.4g, p %.3f)\n",
         s->config, 100.0 * p->change, at->revision, history_interval_text(p, interval, sizeof interval),
         at->commit_date ? at->commit_date : "?", s->fom_name ? s->fom_name : "FOM", p->before, p->after, p->p_value);
}

/* The lines `history check` prints for a judged series. */
static void print_judged(const history_series *s, const history_judgement *j, const verdict_summary *latest,
                         double threshold) {
  for (size_t i = 0; i < j->changes.count; ++i)
    if (changepoint_judge(&j->changes.points[i], threshold) == STEP_SLOWER) print_slower(s, &j->changes.points[i]);
  if (j->answer == HISTORY_INCONCLUSIVE) {
    char why[320];
    history_inconclusive_text(s, j, threshold, why, sizeof why);
    printf("inconclusive %s: %s", s->config, why);
  }
  if (j->answer == HISTORY_OK)
    printf("ok     %s: %zu revisions, no step slower by %.3g %% or more that the data support (could show %.1f %%)",
           s->config, s->count, 100.0 * threshold, 100.0 * j->detectable);
  if (j->answer == HISTORY_SLOWER) printf("       %s", s->config);
  print_latest(latest);
}

typedef struct {
  double threshold; /* the fraction (0.05: 5 %) */
  const char *junit, *format, *report_url;
} check_options;

/* Judges one series into *h, printing its lines (text format) and adding its JUnit case. */
static int check_one(const history_series *s, const verdict_summary *latest, const check_options *o, check_tally *t,
                     history_judged *h) {
  *h = (history_judged){.series = s, .latest = latest};
  MAPP_TRY(history_judge(s, o->threshold, &h->judgement));
  ++t->checked;
  t->slower += h->judgement.answer == HISTORY_SLOWER;
  t->inconclusive += h->judgement.answer == HISTORY_INCONCLUSIVE;
  if (strcmp(o->format, "markdown") != 0) print_judged(s, &h->judgement, latest, o->threshold);
  return junit_series(t, s, &h->judgement, latest, o->threshold);
}

/* The end of the check: its totals line, or the summary of every series judged. */
static int check_report(const char *path, const history_judged *items, const check_tally *t, const check_options *o) {
  if (strcmp(o->format, "markdown") == 0) {
    char *text = NULL;
    MAPP_TRY(history_summary_check(path, items, t->checked, o->threshold, o->report_url, &text));
    fputs(text, stdout);
    free(text);
    return MAPP_OK;
  }
  printf("history %s: %zu configurations checked, %zu with a slowdown of %.3g %% or more that the data support; "
         "%zu inconclusive (too few revisions, or noise that hides a %.3g %% step)\n",
         path, t->checked, t->slower, 100.0 * o->threshold, t->inconclusive, 100.0 * o->threshold);
  return MAPP_OK;
}

static int check(const char *given, series_filter *f, const check_options *o) {
  history_series_set set = {0};
  char *path = NULL;
  check_tally t = {0};
  verdict_summary *verdicts = NULL;
  history_judged *items = NULL;
  int status = o->junit ? junit_check_path(o->junit) : MAPP_OK;
  if (status == MAPP_OK && o->junit) status = junit_suite_new("history", &t.junit);
  if (status == MAPP_OK) status = load_judged(given, f, &set, &path, &verdicts);
  if (status == MAPP_OK && !(items = calloc(set.count ? set.count : 1, sizeof *items)))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; status == MAPP_OK && i < set.count; ++i)
    if (series_selected(f, &set, i)) status = check_one(&set.items[i], &verdicts[i], o, &t, &items[t.checked]);
  if (status == MAPP_OK) status = check_report(path, items, &t, o);
  if (status == MAPP_OK && t.junit) status = junit_write(t.junit, o->junit);
  if (status == MAPP_OK && t.slower) status = MAPP_ERR_VERIFY;
  history_judged_free(items, set.count);
  junit_suite_free(t.junit);
  free(verdicts);
  history_series_set_free(&set);
  free(path);
  return status;
}

/* ---------------------------------------------------------------- plot */

/* The default --out: history/ beside the history file. */
static char *default_plot_dir(const char *db_path) {
  char *dir = path_dirname(db_path);
  char *out = dir ? path_join(dir, "history") : NULL;
  free(dir);
  return out;
}

static int plot(const char *given, const char *out, const char *format, series_filter *f) {
  history_series_set set;
  char *path = NULL, *dir = NULL, *db_name = NULL;
  strv formats = {0}, written = {0};
  int status = gnuplot_formats_parse(format, &formats);
  if (status == MAPP_OK) status = history_load_series(given, &set, &path);
  else set = (history_series_set){0};
  if (status == MAPP_OK) status = filter_prepare(f, &set);
  if (status == MAPP_OK && !(dir = out ? strdup(out) : default_plot_dir(path))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !(db_name = path_stem(path, ".sqlite"))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = make_dirs(dir);
  history_trends ctx = {.target = {.dir = dir, .formats = &formats, .written = &written}, .db_name = db_name};
  for (size_t i = 0; status == MAPP_OK && i < set.count; ++i) {
    if (!series_selected(f, &set, i)) continue;
    history_changes c;
    char stem[256];
    status = history_find_changes(&set.items[i], &c);
    if (status == MAPP_OK) status = history_draw_trend(&ctx, &set.items[i], &c, stem, sizeof stem);
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

/* ---------------------------------------------------------------- publish */

static int publish(const char *given, const char *dir, double threshold_pct, series_filter *f) {
  history_series_set set = {0};
  char *path = NULL;
  verdict_summary *verdicts = NULL;
  int status = load_judged(given, f, &set, &path, &verdicts);
  if (status == MAPP_OK) {
    history_site site = {.db_path = path, .set = &set, .keep = f->keep, .verdicts = verdicts,
                         .threshold = threshold_pct / 100.0};
    status = history_site_publish(&site, dir);
  }
  free(verdicts);
  history_series_set_free(&set);
  free(path);
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
  "A configuration is one per system (the environment's system:, else the host): two machines\n"    \
  "are two series. FILTERs select configurations: FIELD=VALUE (app, variant, backend, size,\n"      \
  "scaling, ranks, threads, setting, system) matches exactly, a bare word matches a\n"              \
  "configuration that contains it."

/* verb_parse for show, plot and check: FILTER words as the positionals,
 * checked, and with --only/--exclude into f. */
static int parse_filtered(const char *verb, const char *summary, const mapp_option *opts, int argc, char **argv,
                          verb_args *args, series_filter *f) {
  int status = verb_parse(verb, "[FILTER...]", summary, opts, 0, 64, false, argc, argv, args);
  if (status == MAPP_OK && !args->help_shown) status = check_filters(args->cli.positional, args->cli.positional_count);
  f->words = args->cli.positional;
  f->nwords = args->cli.positional_count;
  return status;
}

static int history_show(int argc, char **argv) {
  const char *db = NULL;
  bool revisions = false;
  series_filter f = {0};
  const mapp_option opts[] = {
      DB_OPTION(&db),
      {.name = "revisions", .kind = MAPP_OPT_FLAG, .dest = &revisions,
       .help = "then each configuration's revisions: median, min, max, change, change points"},
      SELECTION_OPTIONS(&f.select),
      MAPP_OPTION_END};
  verb_args args;
  int status = parse_filtered("history show",
                              "One row per configuration: the latest revision's median figure of merit, its change\n"
                              "against the previous revision, the verdict of its repetitions (stable, noisy,\n"
                              "too-short, disturbed) and the change points of the series with the 95 % interval\n"
                              "of each step.\n" FILTER_HELP,
                              opts, argc, argv, &args, &f);
  if (status == MAPP_OK && !args.help_shown) status = show(db, revisions, &f);
  filter_free(&f);
  verb_args_free(&args);
  return status;
}

static int history_plot(int argc, char **argv) {
  const char *db = NULL, *out = NULL, *format = "png,svg";
  series_filter f = {0};
  const mapp_option opts[] = {
      DB_OPTION(&db),
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &out, .help = "folder of the figures",
       .default_text = "history/ beside the history file"},
      {.name = "format", .kind = MAPP_OPT_STRING, .dest = &format, .choices = "png,svg,pdf",
       .help = "image formats, comma separated"},
      SELECTION_OPTIONS(&f.select),
      MAPP_OPTION_END};
  verb_args args;
  int status = parse_filtered("history plot",
                              "Draw each configuration's figure of merit against commit (median and min-max of the\n"
                              "repetitions, change points dashed) as OUT/history-CONFIG.{png,svg,dat,gp}.\n" FILTER_HELP,
                              opts, argc, argv, &args, &f);
  if (status == MAPP_OK && !args.help_shown) status = plot(db, out, format, &f);
  filter_free(&f);
  verb_args_free(&args);
  return status;
}

static int history_check(int argc, char **argv) {
  const char *db = NULL, *junit = NULL, *format = "text", *report_url = NULL;
  double threshold = 100.0 * HISTORY_DEFAULT_THRESHOLD;
  series_filter f = {0};
  const mapp_option opts[] = {
      DB_OPTION(&db),
      {.name = "threshold", .kind = MAPP_OPT_DOUBLE, .dest = &threshold, .dmin = 0.0, .dmax = 100.0,
       .help = "smallest slowdown that counts, in percent of the figure of merit"},
      {.name = "junit", .kind = MAPP_OPT_STRING, .dest = &junit,
       .help = "also write the answers as JUnit XML to this file (a SLOWER configuration is a failure)"},
      MD_FORMAT_OPTION(&format),
      MD_REPORT_URL_OPTION(&report_url, "none: how to publish the site"),
      SELECTION_OPTIONS(&f.select),
      MAPP_OPTION_END};
  verb_args args;
  int status = parse_filtered("history check",
                              "Find the change points of every configuration's series (E-Divisive means with a\n"
                              "permutation test, p <= 0.01) and exit 1 naming each configuration and the first\n"
                              "revision of a step the data support as a slowdown of --threshold percent or more:\n"
                              "slower, with the 95 % interval of its change reaching -threshold. A series whose\n"
                              "noise hides such a step, or too short to bound one, is inconclusive (exit 0), with\n"
                              "the smallest step it could show. Each line ends with the latest revision's verdict\n"
                              "(stable, noisy, too-short, disturbed). --format markdown: a summary for CI instead.\n"
                              FILTER_HELP,
                              opts, argc, argv, &args, &f);
  check_options o = {.threshold = threshold / 100.0, .junit = junit, .format = format, .report_url = report_url};
  if (status == MAPP_OK && !args.help_shown) status = check(db, &f, &o);
  filter_free(&f);
  verb_args_free(&args);
  return status;
}

static int history_publish(int argc, char **argv) {
  const char *db = NULL;
  double threshold = 5.0;
  series_filter f = {0};
  const mapp_option opts[] = {
      DB_OPTION(&db),
      {.name = "threshold", .kind = MAPP_OPT_DOUBLE, .dest = &threshold, .dmin = 0.0, .dmax = 100.0,
       .help = "smallest slowdown the check column counts, in percent of the figure of merit"},
      SELECTION_OPTIONS(&f.select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("history publish", "DIR",
                          "Write the history as a static site, as asv publish does: DIR/index.html lists every\n"
                          "configuration, a table per system, with its latest figure of merit, its change\n"
                          "against the previous revision, its change points and what check answers;\n"
                          "DIR/CONFIG.html shows its trend (SVG, change points marked) and its revisions. The\n"
                          "pages open from the file system: no server, no script, figures inlined (their files\n"
                          "in DIR/figures/).",
                          opts, 1, 1, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) status = publish(db, args.cli.positional[0], threshold, &f);
  filter_free(&f);
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
    {"check", history_check, "exit 1 when the data support a step slower by --threshold % or more"},
    {"publish", history_publish, "a static site: an index of configurations, a page with the trend of each"},
};
#define HISTORY_VERBS (sizeof history_verbs / sizeof history_verbs[0])

static void print_history_usage(void) {
  printf("usage: mapp history add|show|plot|check|publish [options]   (mapp history VERB --help)\n\n"
         "The figures of merit of every configuration across commits, in one SQLite file\n"
         "(--db, else $MAPP_HISTORY, else " HISTORY_DEFAULT_PATH ").\n\n");
  for (size_t i = 0; i < HISTORY_VERBS; ++i) printf("  %-7s %s\n", history_verbs[i].name, history_verbs[i].summary);
}

int verb_history(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))) {
    print_history_usage();
    return MAPP_OK;
  }
  for (size_t i = 0; argc >= 2 && i < HISTORY_VERBS; ++i)
    if (!strcmp(argv[1], history_verbs[i].name)) return history_verbs[i].run(argc - 1, argv + 1);
  if (argc < 2) return mapp_fail(MAPP_ERR_INPUT, "no history verb given (add, show, plot, check, publish; see mapp history --help)");
  return mapp_fail(MAPP_ERR_INPUT, "unknown history verb '%s' (add, show, plot, check, publish; see mapp history --help)", argv[1]);
}
