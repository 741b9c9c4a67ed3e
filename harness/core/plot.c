/* mapp plot RESULTS: the figures of DESIGN.md drawn with gnuplot. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "fsutil.h"
#include "mapp_build_info.h"
#include "mapp_error.h"
#include "mapp_record.h"
#include "paths.h"
#include "plotdata.h"
#include "proc.h"
#include "results.h"
#include "spec.h"
#include "stats.h"
#include "verbs.h"

/* The terminal line of each format: 900x600 pixels for the screen formats,
 * the same aspect for print. */
static const char *const terminals[][2] = {
    {"png", "set terminal pngcairo size 900,600 noenhanced font 'Sans,11'"},
    {"svg", "set terminal svg size 900,600 dynamic noenhanced font 'Sans,11' background '#ffffff'"},
    {"pdf", "set terminal pdfcairo size 6in,4in noenhanced font 'Sans,10'"},
};
#define FORMAT_COUNT (sizeof terminals / sizeof terminals[0])

static const char *terminal_of(const char *format) {
  for (size_t i = 0; i < FORMAT_COUNT; ++i)
    if (strcmp(terminals[i][0], format) == 0) return terminals[i][1];
  return NULL;
}

static const char *const titles[PLOT_KIND_COUNT] = {
    [PLOT_WEAK_EFFICIENCY] = "weak-scaling efficiency", [PLOT_SPEEDUP] = "speedup over",
    [PLOT_STRONG_SPEEDUP] = "strong-scaling speedup", [PLOT_FOM] = "figure of merit"};

/* "speedup over percrm/serial": a speedup figure names the reference its
 * app used, since apps of one sweep may use different ones. */
static void figure_title(const plot_set *set, char *buf, size_t len) {
  char reference[128];
  speedup_ref_text(set->reference, reference, sizeof reference);
  snprintf(buf, len, "%s%s%s", titles[set->kind], reference[0] ? " " : "", reference);
}

/* A string for the inside of a single-quoted gnuplot string: gnuplot's
 * only escape there is '' for a quote, and a line break would end the
 * command. Strings from results.jsonl (app, variant, FOM name, the folder's
 * name) are anyone's to write, and unescaped they could close the quote and
 * call system() (issue 14); so every one goes through here (plot.h). */
char *plot_gnuplot_quoted(const char *text) {
  char *out = malloc(2 * strlen(text) + 1), *o = out;
  for (const char *c = text; out && *c; ++c) {
    unsigned char ch = (unsigned char)*c;
    if (ch == '\'') *o++ = '\'';
    *o++ = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
  }
  if (out) *o = '\0';
  return out;
}

/* A record's string as a file-name stem: letters, digits and ._+- kept,
 * anything else (a slash, a quote, a blank) '_', so a figure stays in
 * plots/ and its name needs no quoting anywhere. */
void plot_file_stem(const char *text, char *buf, size_t len) {
  size_t n = 0;
  for (const char *c = text; *c && n + 1 < len; ++c) {
    unsigned char ch = (unsigned char)*c;
    bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == '+' || ch == '-';
    buf[n++] = plain ? (char)ch : '_';
  }
  buf[n] = '\0';
  if (n == 0 || buf[0] == '.') snprintf(buf, len, "app%s", n ? buf : "");
}

/* A series label inside the data file's double quotes (columnheader):
 * quotes, backslashes and line breaks would end it or start a new line. */
static void data_label(const char *text, FILE *f) {
  for (const char *c = text; *c; ++c) {
    unsigned char ch = (unsigned char)*c;
    fputc(ch == '"' ? '\'' : ch == '\\' || ch < 0x20 || ch == 0x7f ? ' ' : (int)ch, f);
  }
}

typedef struct {
  const char *name, *value;
} placeholder;

/* text with every @NAME@ of subs replaced (malloc'd); other at-signs stay. */
static char *fill_template(const char *text, const placeholder *subs, size_t nsubs) {
  size_t cap = strlen(text) + 1;
  for (size_t i = 0; i < nsubs; ++i) cap += 8 * strlen(subs[i].value); /* a few uses of each */
  char *out = malloc(cap), *o = out;
  for (const char *p = text; out && *p;) {
    const placeholder *hit = NULL;
    for (size_t i = 0; *p == '@' && i < nsubs && !hit; ++i) {
      size_t len = strlen(subs[i].name);
      if (strncmp(p + 1, subs[i].name, len) == 0 && p[len + 1] == '@') hit = &subs[i];
    }
    const char *piece = hit ? hit->value : p;
    size_t len = hit ? strlen(hit->value) : 1;
    if ((size_t)(o - out) + len + 1 > cap) {
      size_t used = (size_t)(o - out);
      char *grown = realloc(out, cap = 2 * cap + len);
      if (!grown) free(out);
      out = grown;
      o = out + used;
      if (!out) break;
    }
    memcpy(o, piece, len);
    o += len;
    p += hit ? strlen(hit->name) + 2 : 1;
  }
  if (out) *o = '\0';
  return out;
}

static int read_template(const char *name, char **text) {
  char *dir = paths_source_file("plots");
  char *path = dir ? path_join(dir, name) : NULL;
  int status = path ? read_text_file(path, text) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(path);
  free(dir);
  return status;
}

/* One block per series, two blank lines apart (gnuplot's `index`), each
 * opening with its label for `title columnheader(1)`. */
static int write_data(const plot_set *set, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
  char what[192];
  figure_title(set, what, sizeof what);
  fputs("# ", f);
  data_label(set->app, f);
  fputc(' ', f);
  data_label(what, f);
  fputs(": ranks value low high oversubscribed (median and min/max over repetitions; 1: drawn hollow)\n", f);
  for (size_t i = 0; i < set->nseries; ++i) {
    const plot_series *s = &set->series[i];
    fprintf(f, "%s\"", i ? "\n\n" : "");
    data_label(s->label, f);
    fputs("\"\n", f);
    for (size_t k = 0; k < s->npoints; ++k)
      fprintf(f, "%ld %.9g %.9g %.9g %d\n", s->points[k].ranks, s->points[k].y.value, s->points[k].y.low,
              s->points[k].y.high, s->points[k].oversubscribed);
  }
  return fclose(f) == 0 ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
}

/* Points of oversubscribed runs (column 5 of the data) drawn hollow: a
 * white marker over the series' own, an open circle in the series' colour
 * over that, a key entry and a footnote saying what hollow means. Both
 * texts are empty when no point is oversubscribed. */
typedef struct {
  char *note, *overlay;
} hollow_layers;

static int hollow_make(bool any, const char *nseries, const char *q_data, hollow_layers *h) {
  *h = (hollow_layers){0};
  if (!any) {
    h->note = strdup("");
    h->overlay = strdup("");
  } else {
    h->note = strdup("set label 998 'hollow: oversubscribed (ranks x threads beyond the cores given, or ranks sharing "
                     "a GPU)' at screen 0.99, screen 0.03 right font ',8' front");
    h->overlay = str_printf(", \\\n     for [i=0:%s-1] '%s' index i using 1:($5 > 0 ? $2 : 1/0) with points pt 5 ps 1.5 "
                            "lc rgb 'white' notitle, \\\n     for [i=0:%s-1] '%s' index i using 1:($5 > 0 ? $2 : 1/0) "
                            "with points pt 6 ps 1.5 lt i+1 notitle, \\\n     NaN with points pt 6 ps 1.5 lc rgb "
                            "'#404040' title 'oversubscribed'",
                            nseries, q_data, nseries, q_data);
  }
  return h->note && h->overlay ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

static void hollow_free(hollow_layers *h) {
  free(h->note);
  free(h->overlay);
}

static bool set_oversubscribed(const plot_set *set) {
  for (size_t i = 0; i < set->nseries; ++i)
    for (size_t k = 0; k < set->series[i].npoints; ++k)
      if (set->series[i].points[k].oversubscribed) return true;
  return false;
}

static bool data_oversubscribed(const figure_data *d) {
  for (size_t i = 0; i < d->count; ++i)
    for (size_t k = 0; k < d->series[i].count; ++k)
      if (d->series[i].points[k].oversubscribed) return true;
  return false;
}

/* Rank counts as gnuplot xtics "1, 2, 4". */
static void format_xtics(const plot_set *set, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (long n = set->min_ranks; n > 0 && n <= set->max_ranks && used < len; ++n) {
    bool present = false;
    for (size_t i = 0; i < set->nseries && !present; ++i)
      for (size_t k = 0; k < set->series[i].npoints && !present; ++k) present = set->series[i].points[k].ranks == n;
    if (present) used += (size_t)snprintf(buf + used, len - used, "%s%ld", used ? ", " : "", n);
  }
}

static double highest(const plot_set *set) {
  double top = 0;
  for (size_t i = 0; i < set->nseries; ++i)
    for (size_t k = 0; k < set->series[i].npoints; ++k) top = fmax(top, set->series[i].points[k].y.high);
  return top;
}

typedef struct {
  const char *plots_dir, *sweep_name;
  const strv *formats;
  strv *written;
  const char *footer; /* PDF footer: environment, compiler, revision, date (gnuplot-quoted) */
} render_context;

/* For each format its terminal and output, the figure, and on PDF (the
 * report's print copy) a footer line saying where the numbers came from. */
static int push_outputs(const render_context *ctx, const char *stem, const char *figure, strv *lines) {
  char *q_stem = plot_gnuplot_quoted(stem);
  if (!q_stem) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < ctx->formats->count; ++i) {
    const char *format = ctx->formats->items[i];
    bool pdf = strcmp(format, "pdf") == 0;
    status = strv_pushf(&lines[0], "%s\nset output '%s.%s'\n%s%s%s%s\nunset output\nreset\n", terminal_of(format),
                        q_stem, format, pdf && ctx->footer ? "set label 999 '" : "", pdf && ctx->footer ? ctx->footer : "",
                        pdf && ctx->footer ? "' at screen 0.01, screen 0.015 font ',6' front\n" : "", figure);
  }
  free(q_stem);
  return status;
}

/* The script: for each format its terminal and output, then the figure. */
static int build_script(const render_context *ctx, const plot_set *set, const char *stem, const char *data_name,
                        char **script) {
  char *common = NULL, *body = NULL;
  MAPP_TRY(read_template("common.gp", &common));
  char name[64], xmin[32], xmax[32], xtics[512], ymax[32], nseries[32], base[32], what[192], title[320];
  char reference[128];
  snprintf(name, sizeof name, "%s.gp", plot_kind_slug(set->kind));
  int status = read_template(name, &body);
  snprintf(xmin, sizeof xmin, "%g", set->min_ranks / 1.4);
  snprintf(xmax, sizeof xmax, "%g", set->max_ranks * 1.4);
  snprintf(ymax, sizeof ymax, "%g", fmax(1.2, 1.15 * highest(set)));
  snprintf(nseries, sizeof nseries, "%zu", set->nseries);
  snprintf(base, sizeof base, "%ld", set->min_ranks);
  speedup_ref_text(set->reference, reference, sizeof reference);
  figure_title(set, what, sizeof what);
  snprintf(title, sizeof title, "%s: %s (%s)", set->app, what, ctx->sweep_name);
  format_xtics(set, xtics, sizeof xtics);
  /* Every string a template puts between quotes, escaped (plot_gnuplot_quoted). */
  char *q_title = plot_gnuplot_quoted(title), *q_data = plot_gnuplot_quoted(data_name);
  char *q_fom = plot_gnuplot_quoted(set->fom_name), *q_reference = plot_gnuplot_quoted(reference);
  if (status == MAPP_OK && !(q_title && q_data && q_fom && q_reference))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  hollow_layers hollow = {0};
  if (status == MAPP_OK) status = hollow_make(set_oversubscribed(set), nseries, q_data, &hollow);
  placeholder subs[] = {{"XMIN", xmin}, {"XMAX", xmax}, {"XTICS", xtics}, {"YMAX", ymax},
                        {"NSERIES", nseries}, {"BASE_RANKS", base}, {"TITLE", q_title ? q_title : ""},
                        {"DATA", q_data ? q_data : ""}, {"FOM", q_fom ? q_fom : ""},
                        {"REFERENCE", q_reference ? q_reference : ""}, {"HOLLOW_NOTE", hollow.note ? hollow.note : ""},
                        {"HOLLOW", hollow.overlay ? hollow.overlay : ""}, {"COMMON", ""}};
  size_t nsubs = sizeof subs / sizeof subs[0];
  char *look = status == MAPP_OK ? fill_template(common, subs, nsubs - 1) : NULL;
  subs[nsubs - 1].value = look ? look : "";
  char *figure = look ? fill_template(body, subs, nsubs) : NULL;
  strv lines = {0};
  if (figure && status == MAPP_OK) status = push_outputs(ctx, stem, figure, &lines);
  free(q_title);
  free(q_data);
  free(q_fom);
  free(q_reference);
  hollow_free(&hollow);
  if (status == MAPP_OK && !figure) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !(*script = strv_join(&lines, "\n"))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  strv_free(&lines);
  free(figure);
  free(look);
  free(body);
  free(common);
  return status;
}

static int run_gnuplot(const char *plots_dir, const char *script_name) {
  strv argv = {0};
  char *log = path_join(plots_dir, "gnuplot.log");
  int status = log ? strv_push(&argv, MAPP_GNUPLOT) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = strv_push(&argv, script_name);
  proc_outcome outcome;
  proc_request req = {.argv = &argv, .log_path = log, .cwd = plots_dir};
  if (status == MAPP_OK) status = proc_run(&req, &outcome);
  if (status == MAPP_OK && outcome.exit_code != 0) {
    proc_print_log_tail(log, 8, stderr);
    status = mapp_fail(MAPP_ERR_SYSTEM, "gnuplot failed on %s/%s (exit %d; see %s)", plots_dir, script_name,
                       outcome.exit_code, log);
  }
  free(log);
  strv_free(&argv);
  return status;
}

/* The images of one figure must exist after gnuplot; list them. */
static int collect_images(const render_context *ctx, const char *stem) {
  for (size_t i = 0; i < ctx->formats->count; ++i) {
    char *image = str_printf("%s/%s.%s", ctx->plots_dir, stem, ctx->formats->items[i]);
    int status = !image ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory")
                 : path_exists(image) ? strv_push(ctx->written, image)
                                      : mapp_fail(MAPP_ERR_SYSTEM, "gnuplot did not write %s", image);
    free(image);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

/* What one figure needs: its data written to a path, and its script for a
 * stem and the data file's name. */
typedef struct {
  int (*write_data)(const void *what, const char *path);
  int (*script)(const render_context *ctx, const void *what, const char *stem, const char *data_name, char **script);
  const void *what;
} figure_job;

/* STEM.dat, STEM.gp, gnuplot, and the images listed: every figure's steps. */
static int render_stem(const render_context *ctx, const char *stem, const figure_job *fig) {
  char data_name[300], script_name[300];
  snprintf(data_name, sizeof data_name, "%s.dat", stem);
  snprintf(script_name, sizeof script_name, "%s.gp", stem);
  char *data_path = path_join(ctx->plots_dir, data_name), *script_path = path_join(ctx->plots_dir, script_name);
  char *script = NULL;
  int status = data_path && script_path ? fig->write_data(fig->what, data_path) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = fig->script(ctx, fig->what, stem, data_name, &script);
  if (status == MAPP_OK) status = write_text_file(script_path, script);
  if (status == MAPP_OK) status = run_gnuplot(ctx->plots_dir, script_name);
  if (status == MAPP_OK) status = collect_images(ctx, stem);
  free(script);
  free(script_path);
  free(data_path);
  return status;
}

static int write_set_data(const void *set, const char *path) { return write_data(set, path); }
static int set_script(const render_context *ctx, const void *set, const char *stem, const char *data_name, char **script) {
  return build_script(ctx, set, stem, data_name, script);
}

static int render(const render_context *ctx, const plot_set *set) {
  char stem[256], app[200];
  plot_file_stem(set->app, app, sizeof app);
  snprintf(stem, sizeof stem, "%s-%s", app, plot_kind_slug(set->kind));
  figure_job fig = {write_set_data, set_script, set};
  return render_stem(ctx, stem, &fig);
}

static int render_app(const render_context *ctx, const group_table *t, const char *app, const speedup_refs *refs) {
  for (int kind = 0; kind < PLOT_KIND_COUNT; ++kind) {
    plot_set set;
    int status = plot_set_build(t, app, (plot_kind)kind, refs, &set);
    if (status == MAPP_OK && set.nseries) status = render(ctx, &set);
    plot_set_free(&set);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

/* ---------------------------------------------------------------- spec figures */

static int write_figure_data(const figure_data *d, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
  for (size_t k = 0; k < d->count; ++k) {
    fputc('"', f);
    data_label(d->series[k].label, f);
    fputs("\"\n", f);
    for (size_t i = 0; i < d->series[k].count; ++i) {
      const figure_point *p = &d->series[k].points[i];
      fprintf(f, "%.17g %.17g %.17g %.17g %d\n", p->x, p->y, p->low, p->high, p->oversubscribed);
    }
    fputs("\n\n", f);
  }
  return fclose(f) == 0 ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
}

/* The x axis: log, or the categories' names as tics. */
static int figure_xaxis(const figure_spec *f, const figure_data *d, char **out) {
  if (!d->categorical) return (*out = strdup(f->logx ? "set logscale x 10" : "")) ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  strv tics = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < d->categories.count; ++i) {
    char *q = plot_gnuplot_quoted(d->categories.items[i]);
    status = q ? strv_pushf(&tics, "'%s' %zu", q, i) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(q);
  }
  char *list = status == MAPP_OK ? strv_join(&tics, ", ") : NULL;
  *out = list ? str_printf("set xrange [-0.5:%zu.5]\nset xtics (%s)", d->categories.count - 1, list) : NULL;
  free(list);
  strv_free(&tics);
  return status == MAPP_OK && !*out ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory") : status;
}

static int figure_script(const render_context *ctx, const figure_spec *f, const char *app, const figure_data *d,
                         const char *stem, const char *data_name, char **script) {
  char *common = NULL, *body = NULL, *xaxis = NULL;
  MAPP_TRY(read_template("common.gp", &common));
  int status = read_template("figure.gp", &body);
  if (status == MAPP_OK) status = figure_xaxis(f, d, &xaxis);
  char title[512], ylabel[256], nseries[32];
  if (f->title) snprintf(title, sizeof title, "%s: %s (%s)", app, f->title, ctx->sweep_name);
  else snprintf(title, sizeof title, "%s: %s against %s (%s)", app, f->y, f->x, ctx->sweep_name);
  if (!strcmp(f->y, "speedup")) snprintf(ylabel, sizeof ylabel, "speedup over %s", d->reference ? d->reference : "?");
  else snprintf(ylabel, sizeof ylabel, "%s", f->y);
  snprintf(nseries, sizeof nseries, "%zu", d->count);
  char *q_title = plot_gnuplot_quoted(title), *q_data = plot_gnuplot_quoted(data_name);
  char *q_x = plot_gnuplot_quoted(f->x), *q_y = plot_gnuplot_quoted(ylabel);
  if (status == MAPP_OK && !(q_title && q_data && q_x && q_y)) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  const char *yaxis = f->logy ? "set logscale y 10\nset format y '%g'" : "set yrange [0:*]\nset format y '%.1s%c'";
  hollow_layers hollow = {0};
  if (status == MAPP_OK) status = hollow_make(data_oversubscribed(d), nseries, q_data, &hollow);
  placeholder subs[] = {{"XMIN", "*"}, {"XMAX", "*"}, {"XTICS", "'' 1"}, {"XAXIS", xaxis ? xaxis : ""},
                        {"YAXIS", yaxis}, {"TITLE", q_title ? q_title : ""}, {"XLABEL", q_x ? q_x : ""},
                        {"YLABEL", q_y ? q_y : ""}, {"NSERIES", nseries}, {"DATA", q_data ? q_data : ""},
                        {"HOLLOW_NOTE", hollow.note ? hollow.note : ""}, {"HOLLOW", hollow.overlay ? hollow.overlay : ""},
                        {"COMMON", ""}};
  size_t nsubs = sizeof subs / sizeof subs[0];
  char *look = status == MAPP_OK ? fill_template(common, subs, nsubs - 1) : NULL;
  subs[nsubs - 1].value = look ? look : "";
  char *figure = look ? fill_template(body, subs, nsubs) : NULL;
  strv lines = {0};
  if (status == MAPP_OK && !figure) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = push_outputs(ctx, stem, figure, &lines);
  if (status == MAPP_OK && !(*script = strv_join(&lines, "\n"))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  strv_free(&lines);
  free(figure);
  free(look);
  free(q_title);
  free(q_data);
  free(q_x);
  free(q_y);
  hollow_free(&hollow);
  free(xaxis);
  free(body);
  free(common);
  return status;
}

/* A spec figure as a figure_job: its spec, app and data together. */
typedef struct {
  const figure_spec *f;
  const char *app;
  const figure_data *d;
} spec_figure;

static int write_spec_data(const void *what, const char *path) {
  return write_figure_data(((const spec_figure *)what)->d, path);
}
static int spec_script(const render_context *ctx, const void *what, const char *stem, const char *data_name,
                       char **script) {
  const spec_figure *sf = what;
  return figure_script(ctx, sf->f, sf->app, sf->d, stem, data_name, script);
}

static int render_figure(const render_context *ctx, const figure_spec *f, const char *app, const figure_data *d) {
  char stem[256], app_stem[200], name_stem[64];
  plot_file_stem(app, app_stem, sizeof app_stem);
  plot_file_stem(f->name, name_stem, sizeof name_stem);
  snprintf(stem, sizeof stem, "%s-%s", app_stem, name_stem);
  spec_figure sf = {f, app, d};
  figure_job fig = {write_spec_data, spec_script, &sf};
  return render_stem(ctx, stem, &fig);
}

/* The spec's figures for each app they name (every app of the results when
 * they name none); an app without the figure's x or y in its records is an
 * input error naming both. */
static int draw_figures(const render_context *ctx, const json_t *records, const speedup_refs *refs,
                        const sweep_spec *spec, const char *const *apps, size_t napps) {
  for (size_t i = 0; i < spec->nfigures; ++i)
    for (size_t a = 0; a < napps; ++a) {
      const figure_spec *f = &spec->figures[i];
      if (f->app && strcmp(f->app, apps[a]) != 0) continue;
      figure_data d;
      MAPP_TRY(figure_collect(records, f, apps[a], refs, &d));
      int status = d.count ? render_figure(ctx, f, apps[a], &d) : MAPP_OK;
      figure_data_free(&d);
      MAPP_TRY(status);
    }
  return MAPP_OK;
}

int plot_reference(const char *results_dir, const char *given, speedup_refs *refs) {
  *refs = (speedup_refs){0};
  if (given) return speedup_refs_parse(given, refs);
  char *spec_path = path_join(results_dir, "spec.yaml");
  int status = spec_path ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && path_exists(spec_path)) {
    sweep_spec spec;
    status = spec_load(spec_path, &spec);
    if (status == MAPP_OK) {
      *refs = spec.reference; /* taken over: the spec no longer owns it */
      spec.reference = (speedup_refs){0};
      spec_free(&spec);
    }
  }
  free(spec_path);
  return status;
}

char *plot_index_path(const char *results_file) {
  char *dir = path_dirname(results_file);
  char *index = dir ? path_join(dir, "plots/index.txt") : NULL;
  free(dir);
  return index;
}

static int write_index(const char *results_file, const strv *written) {
  char *index = plot_index_path(results_file);
  char *text = strv_join(written, "\n");
  char *with_newline = text ? str_printf("%s%s", text, written->count ? "\n" : "") : NULL;
  int status = index && with_newline ? write_text_file(index, with_newline) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(with_newline);
  free(text);
  free(index);
  return status;
}

static int draw(const render_context *ctx, const json_t *records, const speedup_refs *refs, const sweep_spec *spec) {
  group_table table;
  MAPP_TRY(stats_group(records, &table));
  const char *apps[64];
  size_t napps = plot_apps(&table, apps, 64);
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < napps; ++i)
    status = render_app(ctx, &table, apps[i], refs);
  if (status == MAPP_OK) status = draw_figures(ctx, records, refs, spec, apps, napps);
  group_table_free(&table);
  return status;
}

/* The results folder's spec (for its figures); an empty one when it has none. */
static int load_spec(const char *dir, sweep_spec *spec) {
  *spec = (sweep_spec){0};
  char *path = path_join(dir, "spec.yaml");
  int status = !path ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory") : path_exists(path) ? spec_load(path, spec) : MAPP_OK;
  free(path);
  return status;
}

/* "env local, GNU 12.2.0, revision abc123, 2026-11-23T08:00Z": where the
 * numbers of a printed figure came from (the first record's). */
static char *footer_of(const json_t *records) {
  const json_t *r = json_array_get(records, 0);
  char when[32];
  mapp_utc_now(when, sizeof when);
  const char *env = json_string_value(json_object_get(r, "env")), *cc = json_string_value(json_object_get(r, "compiler"));
  const char *rev = json_string_value(json_object_get(r, "git_revision")), *host = json_string_value(json_object_get(r, "host"));
  char *text = str_printf("mapp | env %s | host %s | %s | revision %s | plotted %s", env ? env : "?", host ? host : "?",
                          cc ? cc : "?", rev ? rev : "?", when);
  char *quoted = text ? plot_gnuplot_quoted(text) : NULL;
  free(text);
  return quoted;
}

int plot_results(const char *results_file, const char *reference, const selection *select, const strv *formats,
                 strv *written) {
  for (size_t i = 0; i < formats->count; ++i)
    if (!terminal_of(formats->items[i]))
      return mapp_fail(MAPP_ERR_INPUT, "unknown plot format '%s' (choose png, svg, pdf)", formats->items[i]);
  char *dir = path_dirname(results_file), *plots_dir = dir ? path_join(dir, "plots") : NULL;
  char *sweep_name = dir ? path_stem(dir, "") : NULL;
  speedup_refs refs = {0};
  json_t *records = NULL;
  int status = plots_dir && sweep_name ? results_load(results_file, &records) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = selection_filter_records(select, records);
  if (status == MAPP_OK) status = plot_reference(dir, reference, &refs);
  if (status == MAPP_OK && refs.count == 0) status = speedup_refs_from_records(records, &refs);
  if (status == MAPP_OK) status = make_dirs(plots_dir);
  sweep_spec spec = {0};
  if (status == MAPP_OK) status = load_spec(dir, &spec);
  char *footer = status == MAPP_OK ? footer_of(records) : NULL;
  render_context ctx = {.plots_dir = plots_dir, .sweep_name = sweep_name, .formats = formats, .written = written,
                        .footer = footer};
  if (status == MAPP_OK) status = draw(&ctx, records, &refs, &spec);
  spec_free(&spec);
  free(footer);
  if (status == MAPP_OK) status = write_index(results_file, written);
  json_decref(records);
  speedup_refs_free(&refs);
  free(sweep_name);
  free(plots_dir);
  free(dir);
  return status;
}

static int split_formats(const char *text, strv *formats) {
  char *copy = strdup(text);
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  char *save = NULL;
  for (char *word = strtok_r(copy, ",", &save); word && status == MAPP_OK; word = strtok_r(NULL, ",", &save))
    status = strv_push(formats, word);
  free(copy);
  if (status == MAPP_OK && formats->count == 0) status = mapp_fail(MAPP_ERR_INPUT, "--format names no format");
  return status;
}

int verb_plot(int argc, char **argv) {
  const char *reference = NULL, *format = "png,svg";
  selection select = {0};
  const mapp_option opts[] = {
      PLOT_REFERENCE_OPTION(&reference),
      {.name = "format", .kind = MAPP_OPT_STRING, .dest = &format, .choices = "png,svg,pdf",
       .help = "image formats, comma separated"},
      SELECTION_OPTIONS(&select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("plot", "RESULTS_DIR|RESULTS.jsonl",
                          "Draw weak-scaling efficiency, speedup over the reference, strong-scaling speedup and\n"
                          "each app's figure of merit against the rank count, into RESULTS/plots/.",
                          opts, 1, 1, false, argc, argv, &args);
  strv formats = {0}, written = {0};
  char *results_file = NULL;
  if (status == MAPP_OK && !args.help_shown) status = split_formats(format, &formats);
  if (status == MAPP_OK && !args.help_shown && !(results_file = results_file_of(args.cli.positional[0])))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !args.help_shown) status = plot_results(results_file, reference, &select, &formats, &written);
  for (size_t i = 0; status == MAPP_OK && i < written.count; ++i) printf("%s\n", written.items[i]);
  if (status == MAPP_OK && !args.help_shown && written.count == 0) printf("no figures: the results hold no timed runs\n");
  free(results_file);
  strv_free(&formats);
  strv_free(&written);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
