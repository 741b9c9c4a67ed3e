/* The figures of a results folder (DESIGN.md): weak-scaling efficiency,
 * speedup, strong-scaling speedup, the figure of merit, and the spec's own
 * figures, drawn with gnuplot into RESULTS/plots/. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "gnuplot.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "mapp_record.h"
#include "export.h"
#include "model.h"
#include "plotdata.h"
#include "results.h"
#include "spec.h"
#include "stats.h"
#include "strv.h"

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

/* One block per series, two blank lines apart (gnuplot's `index`), each
 * opening with its label for `title columnheader(1)`. */
static int write_data(const plot_set *set, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
  char what[192];
  figure_title(set, what, sizeof what);
  fputs("# ", f);
  gnuplot_data_label(set->app, f);
  fputc(' ', f);
  gnuplot_data_label(what, f);
  fputs(": ranks value low high oversubscribed (median and min/max over repetitions; 1: drawn hollow)\n", f);
  for (size_t i = 0; i < set->nseries; ++i) {
    const plot_series *s = &set->series[i];
    fprintf(f, "%s\"", i ? "\n\n" : "");
    gnuplot_data_label(s->label, f);
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

/* Series of simulated runs (their setting "simulated:ENV" is in the label)
 * drawn dashed, so a prediction never reads as a measurement: DASHES is
 * the gnuplot dash type of each series ("1,2,1"), and the note says what
 * dashed means (empty when no series is simulated). */
typedef struct {
  strv types;   /* each series' dash type, "1" or "2" */
  bool any;     /* a series is simulated */
  char *dashes, *note;
} dash_layers;

static int dash_add(dash_layers *d, const char *label) {
  bool simulated = label && strstr(label, "simulated:");
  d->any |= simulated;
  return strv_push(&d->types, simulated ? "2" : "1");
}

/* After every series was added: the texts the templates take. */
static int dash_finish(dash_layers *d) {
  d->dashes = d->types.count ? strv_join(&d->types, ",") : strdup("1");
  d->note = strdup(d->any ? "set label 997 'dashed: simulated (SimGrid SMPI): a prediction, not a measurement' "
                            "at screen 0.99, screen 0.06 right font ',8' front"
                          : "");
  return d->dashes && d->note ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

static void dash_free(dash_layers *d) {
  strv_free(&d->types);
  free(d->dashes);
  free(d->note);
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
  gnuplot_target target; /* plots/, the formats, the images drawn, the PDF footer */
  const char *sweep_name;
  const model_set *models; /* RESULTS/models.json (mapp model), or empty */
} render_context;

/* ---------------------------------------------------------------- models */

/* The series' model of its timed seconds (mapp model), for the figures
 * that are ratios of those times: weak efficiency and strong speedup, both
 * T(n0) / T(n) with n0 the series' first rank count. */
static const scaling_model *series_model(const render_context *ctx, const plot_set *set, const plot_series *s) {
  if (!ctx->models->count || !s->first || s->npoints == 0 ||
      (set->kind != PLOT_WEAK_EFFICIENCY && set->kind != PLOT_STRONG_SPEEDUP))
    return NULL;
  char *name = s->first->timed ? export_series_name(s->first->records[0]) : NULL;
  const scaling_model *m = name ? model_find(ctx->models, name, "timed") : NULL;
  free(name);
  return m;
}

/* Each modelled series as a dotted line in its colour, T(n0)/T(x) of the
 * model, and a key entry and note saying what the lines are; both empty
 * when no series has a model. */
static int model_layers(const render_context *ctx, const plot_set *set, char **overlay, char **note) {
  *overlay = strdup("");
  *note = strdup("");
  bool any = false;
  for (size_t i = 0; *overlay && i < set->nseries; ++i) {
    const scaling_model *m = series_model(ctx, set, &set->series[i]);
    if (!m) continue;
    char *expr = model_gnuplot(m);
    double base = model_eval(m, (double)set->series[i].points[0].ranks);
    char *longer = expr ? str_printf("%s, \\\n     %.9g / %s with lines lt %zu dt 3 lw 1.5 notitle", *overlay, base,
                                     expr, i + 1)
                        : NULL;
    free(expr);
    free(*overlay);
    *overlay = longer;
    any = true;
  }
  if (any && *overlay) {
    char *keyed = str_printf("%s, \\\n     NaN with lines lc rgb '#404040' dt 3 lw 1.5 title 'model (Extra-P)'", *overlay);
    free(*overlay);
    *overlay = keyed;
    free(*note);
    *note = ctx->models->fit_max_ranks > 0
                ? str_printf("set label 996 'dotted: Extra-P model of the timed phase, fitted to <= %ld ranks (mapp "
                             "model)' at screen 0.99, screen 0.09 right font ',8' front",
                             ctx->models->fit_max_ranks)
                : strdup("set label 996 'dotted: Extra-P model of the timed phase (mapp model)' at screen 0.99, "
                         "screen 0.09 right font ',8' front");
  }
  return *overlay && *note ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* The script: for each format its terminal and output, then the figure. */
static int build_script(const render_context *ctx, const plot_set *set, const char *stem, const char *data_name,
                        char **script) {
  char *common = NULL, *body = NULL;
  MAPP_TRY(gnuplot_template("common.gp", &common));
  char name[64], xmin[32], xmax[32], xtics[512], ymax[32], nseries[32], base[32], what[192], title[320];
  char reference[128];
  snprintf(name, sizeof name, "%s.gp", plot_kind_slug(set->kind));
  int status = gnuplot_template(name, &body);
  snprintf(xmin, sizeof xmin, "%g", set->min_ranks / 1.4);
  long right = set->max_ranks;
  if (ctx->models->predict_to > right && (set->kind == PLOT_WEAK_EFFICIENCY || set->kind == PLOT_STRONG_SPEEDUP))
    right = ctx->models->predict_to;
  snprintf(xmax, sizeof xmax, "%g", right * 1.4);
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
  dash_layers dash = {0};
  char *model = NULL, *model_note = NULL;
  if (status == MAPP_OK) status = model_layers(ctx, set, &model, &model_note);
  if (status == MAPP_OK) status = hollow_make(set_oversubscribed(set), nseries, q_data, &hollow);
  for (size_t i = 0; status == MAPP_OK && i < set->nseries; ++i) status = dash_add(&dash, set->series[i].label);
  if (status == MAPP_OK) status = dash_finish(&dash);
  gnuplot_sub subs[] = {{"DASHES", dash.dashes ? dash.dashes : "1"}, {"DASH_NOTE", dash.note ? dash.note : ""},
                        {"XMIN", xmin}, {"XMAX", xmax}, {"XTICS", xtics}, {"YMAX", ymax},
                        {"NSERIES", nseries}, {"BASE_RANKS", base}, {"TITLE", q_title ? q_title : ""},
                        {"DATA", q_data ? q_data : ""}, {"FOM", q_fom ? q_fom : ""},
                        {"REFERENCE", q_reference ? q_reference : ""}, {"HOLLOW_NOTE", hollow.note ? hollow.note : ""},
                        {"HOLLOW", hollow.overlay ? hollow.overlay : ""}, {"MODEL", model ? model : ""},
                        {"MODEL_NOTE", model_note ? model_note : ""}, {"COMMON", ""}};
  size_t nsubs = sizeof subs / sizeof subs[0];
  char *look = status == MAPP_OK ? gnuplot_fill(common, subs, nsubs - 1) : NULL;
  subs[nsubs - 1].value = look ? look : "";
  char *figure = look ? gnuplot_fill(body, subs, nsubs) : NULL;
  if (figure && status == MAPP_OK) status = gnuplot_script(&ctx->target, stem, figure, script);
  free(q_title);
  free(q_data);
  free(q_fom);
  free(q_reference);
  hollow_free(&hollow);
  dash_free(&dash);
  free(model);
  free(model_note);
  if (status == MAPP_OK && !figure) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(figure);
  free(look);
  free(body);
  free(common);
  return status;
}

static int write_set_data(const void *set, const char *path) { return write_data(set, path); }
static int set_script(const void *ctx, const void *set, const char *stem, const char *data_name, char **script) {
  return build_script(ctx, set, stem, data_name, script);
}

static int render(const render_context *ctx, const plot_set *set) {
  char stem[256], app[200];
  plot_file_stem(set->app, app, sizeof app);
  snprintf(stem, sizeof stem, "%s-%s", app, plot_kind_slug(set->kind));
  return gnuplot_render(&ctx->target, stem, write_set_data, set_script, ctx, set);
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
    gnuplot_data_label(d->series[k].label, f);
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
  MAPP_TRY(gnuplot_template("common.gp", &common));
  int status = gnuplot_template("figure.gp", &body);
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
  dash_layers dash = {0};
  if (status == MAPP_OK) status = hollow_make(data_oversubscribed(d), nseries, q_data, &hollow);
  for (size_t i = 0; status == MAPP_OK && i < d->count; ++i) status = dash_add(&dash, d->series[i].label);
  if (status == MAPP_OK) status = dash_finish(&dash);
  gnuplot_sub subs[] = {{"DASHES", dash.dashes ? dash.dashes : "1"}, {"DASH_NOTE", dash.note ? dash.note : ""},
                        {"XMIN", "*"}, {"XMAX", "*"}, {"XTICS", "'' 1"}, {"XAXIS", xaxis ? xaxis : ""},
                        {"YAXIS", yaxis}, {"TITLE", q_title ? q_title : ""}, {"XLABEL", q_x ? q_x : ""},
                        {"YLABEL", q_y ? q_y : ""}, {"NSERIES", nseries}, {"DATA", q_data ? q_data : ""},
                        {"HOLLOW_NOTE", hollow.note ? hollow.note : ""}, {"HOLLOW", hollow.overlay ? hollow.overlay : ""},
                        {"COMMON", ""}};
  size_t nsubs = sizeof subs / sizeof subs[0];
  char *look = status == MAPP_OK ? gnuplot_fill(common, subs, nsubs - 1) : NULL;
  subs[nsubs - 1].value = look ? look : "";
  char *figure = look ? gnuplot_fill(body, subs, nsubs) : NULL;
  if (status == MAPP_OK && !figure) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = gnuplot_script(&ctx->target, stem, figure, script);
  free(figure);
  free(look);
  free(q_title);
  free(q_data);
  free(q_x);
  free(q_y);
  hollow_free(&hollow);
  dash_free(&dash);
  free(xaxis);
  free(body);
  free(common);
  return status;
}

/* A spec figure as gnuplot_render draws it: its spec, app and data together. */
typedef struct {
  const figure_spec *f;
  const char *app;
  const figure_data *d;
} spec_figure;

static int write_spec_data(const void *what, const char *path) {
  return write_figure_data(((const spec_figure *)what)->d, path);
}
static int spec_script(const void *ctx, const void *what, const char *stem, const char *data_name, char **script) {
  const spec_figure *sf = what;
  return figure_script(ctx, sf->f, sf->app, sf->d, stem, data_name, script);
}

static int render_figure(const render_context *ctx, const figure_spec *f, const char *app, const figure_data *d) {
  char stem[272], app_stem[200], name_stem[64];
  plot_file_stem(app, app_stem, sizeof app_stem);
  plot_file_stem(f->name, name_stem, sizeof name_stem);
  snprintf(stem, sizeof stem, "%s-%s", app_stem, name_stem);
  spec_figure sf = {f, app, d};
  return gnuplot_render(&ctx->target, stem, write_spec_data, spec_script, ctx, &sf);
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
  int status = index ? strv_write_lines(written, index) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
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
    if (!gnuplot_terminal(formats->items[i]))
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
  model_set models = {0};
  bool have_models = false;
  if (status == MAPP_OK) status = model_set_load(dir, &models, &have_models);
  render_context ctx = {.target = {.dir = plots_dir, .formats = formats, .written = written, .footer = footer},
                        .sweep_name = sweep_name, .models = &models};
  if (status == MAPP_OK) status = draw(&ctx, records, &refs, &spec);
  model_set_free(&models);
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
