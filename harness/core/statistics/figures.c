#include "figures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "stats.h"

void figure_spec_free(figure_spec *f) {
  free(f->name);
  free(f->app);
  free(f->x);
  free(f->y);
  free(f->title);
  strv_free(&f->series);
  strv_free(&f->where_fields);
  strv_free(&f->where_values);
  *f = (figure_spec){0};
}

/* ------------------------------------------------------------ record fields */

/* The value at a dotted path ("app_data.metg_us", "fom.value"), or NULL. */
static const json_t *field_at(const json_t *record, const char *path) {
  const json_t *node = record;
  char key[128];
  while (node && *path) {
    size_t n = strcspn(path, ".");
    if (n >= sizeof key) return NULL;
    memcpy(key, path, n);
    key[n] = '\0';
    node = json_object_get(node, key);
    path += n + (path[n] == '.');
  }
  return node;
}

static const char *text_of(const json_t *record, const char *field) {
  const json_t *v = field_at(record, field);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A record field or field path first (ranks, size, app_data.granularity_us),
 * else a matrix parameter. */
const json_t *figure_field(const json_t *record, const char *path) {
  const json_t *v = field_at(record, path);
  return v ? v : json_object_get(json_object_get(record, "params"), path);
}

const char *figure_value_text(const json_t *v, char *buf, size_t len) {
  if (json_is_string(v)) return json_string_value(v);
  if (json_is_integer(v)) snprintf(buf, len, "%lld", (long long)json_integer_value(v));
  else if (json_is_real(v)) snprintf(buf, len, "%g", json_real_value(v));
  else if (json_is_boolean(v)) snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
  else return NULL;
  return buf;
}

bool figure_path_valid(const char *path) {
  const char *name = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
  for (const char *p = path;; ++p) {
    size_t n = strspn(p, name);
    if (n == 0 || n >= 128) return false; /* an empty name (a stray dot), or longer than field_at reads */
    p += n;
    if (*p == '\0') return true;
    if (*p != '.') return false;
  }
}

/* The raw y of a record: fom, efficiency and speedup start from the figure
 * of merit; anything else is a field path. */
static const json_t *y_node(const json_t *record, const char *y) {
  bool from_fom = !strcmp(y, "fom") || !strcmp(y, "efficiency") || !strcmp(y, "speedup");
  return field_at(record, from_fom ? "fom.value" : y);
}

/* The series a record belongs to: its values of the series fields. */
static char *series_label(const json_t *record, const strv *fields) {
  strv parts = {0};
  for (size_t i = 0; i < fields->count; ++i) {
    char number[32];
    const char *text = figure_value_text(figure_field(record, fields->items[i]), number, sizeof number);
    if (strv_push(&parts, text && *text ? text : "-") != MAPP_OK) {
      strv_free(&parts);
      return NULL;
    }
  }
  char *label = strv_join(&parts, "/");
  strv_free(&parts);
  return label;
}

/* ------------------------------------------------------------ samples */

typedef struct {
  char *series;
  double x;
  double *ys;
  size_t n, cap;
  bool oversubscribed;
} sample_set;

typedef struct {
  sample_set *items;
  size_t count, cap;
} samples;

static void samples_free(samples *s) {
  for (size_t i = 0; i < s->count; ++i) {
    free(s->items[i].series);
    free(s->items[i].ys);
  }
  free(s->items);
}

static int add_sample(samples *s, const char *series, double x, double y, bool oversubscribed) {
  sample_set *set = NULL;
  for (size_t i = 0; i < s->count && !set; ++i)
    if (s->items[i].x == x && !strcmp(s->items[i].series, series)) set = &s->items[i];
  if (!set) {
    if (s->count == s->cap) {
      size_t cap = s->cap ? 2 * s->cap : 32;
      sample_set *items = realloc(s->items, cap * sizeof *items);
      if (!items) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a figure");
      s->items = items;
      s->cap = cap;
    }
    set = &s->items[s->count];
    *set = (sample_set){.series = strdup(series), .x = x};
    if (!set->series) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a figure");
    ++s->count;
  }
  if (set->n == set->cap) {
    size_t cap = set->cap ? 2 * set->cap : 4;
    double *ys = realloc(set->ys, cap * sizeof *ys);
    if (!ys) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a figure");
    set->ys = ys;
    set->cap = cap;
  }
  set->ys[set->n++] = y;
  set->oversubscribed |= oversubscribed;
  return MAPP_OK;
}

static double category_of(strv *categories, const char *text, int *status) {
  for (size_t i = 0; i < categories->count; ++i)
    if (!strcmp(categories->items[i], text)) return (double)i;
  *status = strv_push(categories, text);
  return (double)(categories->count - 1);
}

/* The record's value at `field` as text equals `value`. */
static bool field_is(const json_t *r, const char *field, const char *value) {
  char number[32];
  const char *text = figure_value_text(figure_field(r, field), number, sizeof number);
  return text && !strcmp(text, value);
}

/* A field given several times matches when any of its values does. */
static bool where_holds(const json_t *r, const strv *fields, const strv *values, const char *field) {
  for (size_t j = 0; j < fields->count; ++j)
    if (!strcmp(fields->items[j], field) && field_is(r, field, values->items[j])) return true;
  return false;
}

bool figure_selected(const json_t *r, const char *app, const strv *where_fields, const strv *where_values) {
  const char *its_app = text_of(r, "app");
  if (!its_app || strcmp(its_app, app) || json_integer_value(json_object_get(r, "exit_code")) != 0) return false;
  for (size_t k = 0; k < where_fields->count; ++k)
    if (!where_holds(r, where_fields, where_values, where_fields->items[k])) return false;
  return true;
}

/* Every usable record of the app into samples keyed by series and x. */
static int gather(const json_t *records, const figure_spec *f, const char *app, figure_data *d, samples *s) {
  size_t i, considered = 0, without_x = 0, without_y = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    if (!figure_selected(r, app, &f->where_fields, &f->where_values)) continue;
    ++considered;
    const json_t *x = figure_field(r, f->x), *y = y_node(r, f->y);
    if (!x) ++without_x;
    else if (!json_is_number(y)) ++without_y;
    if (!x || !json_is_number(y)) continue; /* another kind of run of the same app */
    int status = MAPP_OK;
    double xv = json_is_number(x) ? json_number_value(x) : 0.0;
    if (!json_is_number(x)) {
      if (!json_is_string(x)) return mapp_fail(MAPP_ERR_INPUT, "figure '%s': x '%s' is neither a number nor text", f->name, f->x);
      d->categorical = true;
      xv = category_of(&d->categories, json_string_value(x), &status);
    }
    char *label = series_label(r, &f->series);
    if (status == MAPP_OK) status = label ? add_sample(s, label, xv, json_number_value(y),
                                                      json_is_true(json_object_get(r, "oversubscribed")))
                                          : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(label);
    MAPP_TRY(status);
  }
  if (considered && without_x == considered)
    return mapp_fail(MAPP_ERR_INPUT, "figure '%s': no %s record has x '%s' (a field or a matrix parameter)", f->name,
                     app, f->x);
  if (considered && without_x + without_y == considered)
    return mapp_fail(MAPP_ERR_INPUT, "figure '%s': no %s record has a number at y '%s'", f->name, app, f->y);
  return MAPP_OK;
}

/* ------------------------------------------------------------ series */

static int compare_points(const void *a, const void *b) {
  double x = ((const figure_point *)a)->x, y = ((const figure_point *)b)->x;
  return (x > y) - (x < y);
}

static figure_series *find_series(figure_data *d, const char *label) {
  for (size_t i = 0; i < d->count; ++i)
    if (!strcmp(d->series[i].label, label)) return &d->series[i];
  return NULL;
}

/* Median, min and max of each sample set as the points of its series. */
static int summarise(samples *s, figure_data *d) {
  for (size_t i = 0; i < s->count; ++i) {
    sample_set *set = &s->items[i];
    figure_series *series = find_series(d, set->series);
    if (!series) {
      figure_series *grown = realloc(d->series, (d->count + 1) * sizeof *grown);
      if (!grown) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a figure");
      d->series = grown;
      series = &d->series[d->count++];
      *series = (figure_series){.label = strdup(set->series)};
      if (!series->label) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a figure");
    }
    figure_point *points = realloc(series->points, (series->count + 1) * sizeof *points);
    if (!points) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a figure");
    series->points = points;
    double median = stats_median(set->ys, set->n); /* sorts them */
    points[series->count++] = (figure_point){set->x, median, set->ys[0], set->ys[set->n - 1], set->oversubscribed};
  }
  for (size_t k = 0; k < d->count; ++k)
    qsort(d->series[k].points, d->series[k].count, sizeof *d->series[k].points, compare_points);
  return MAPP_OK;
}

/* Weak-scaling efficiency along ranks: (fom(n)/n) / (fom(n0)/n0). */
static int to_efficiency(const figure_spec *f, figure_data *d) {
  if (strcmp(f->x, "ranks") != 0)
    return mapp_fail(MAPP_ERR_INPUT, "figure '%s': y 'efficiency' is weak-scaling efficiency over ranks: x must be "
                                     "ranks, not '%s' (a recorded efficiency is a field: app_data.efficiency)",
                     f->name, f->x);
  for (size_t k = 0; k < d->count; ++k) {
    figure_series *s = &d->series[k];
    double base = s->points[0].y / s->points[0].x;
    for (size_t i = 0; i < s->count; ++i) {
      double n = s->points[i].x;
      s->points[i] = (figure_point){n, s->points[i].y / n / base, s->points[i].low / n / base,
                                    s->points[i].high / n / base, s->points[i].oversubscribed};
    }
  }
  return MAPP_OK;
}

/* The label of the reference series for speedup: the first of refs whose
 * "variant/backend" begins a series label, else the first series. */
static const figure_series *reference_series(const figure_data *d, const speedup_refs *refs) {
  for (size_t r = 0; refs && r < refs->count; ++r) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, "%s/%s", refs->items[r].variant, refs->items[r].backend);
    for (size_t k = 0; k < d->count; ++k)
      if (!strncmp(d->series[k].label, prefix, strlen(prefix))) return &d->series[k];
  }
  return d->count ? &d->series[0] : NULL;
}

/* Speedup: each point over the reference series' point at the same x. */
static int to_speedup(const figure_spec *f, const speedup_refs *refs, figure_data *d) {
  if (f->series.count < 2 || strcmp(f->series.items[0], "variant") || strcmp(f->series.items[1], "backend"))
    return mapp_fail(MAPP_ERR_INPUT, "figure '%s': y 'speedup' needs series beginning [variant, backend]", f->name);
  const figure_series *ref = reference_series(d, refs);
  if (!ref) return MAPP_OK;
  if (!(d->reference = strdup(ref->label))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  figure_point *base = malloc((ref->count ? ref->count : 1) * sizeof *base);
  if (!base) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  memcpy(base, ref->points, ref->count * sizeof *base);
  size_t nbase = ref->count;
  for (size_t k = 0; k < d->count; ++k) {
    figure_series *s = &d->series[k];
    size_t kept = 0;
    for (size_t i = 0; i < s->count; ++i) {
      const figure_point *b = NULL;
      for (size_t j = 0; j < nbase && !b; ++j)
        if (base[j].x == s->points[i].x) b = &base[j];
      if (!b || b->y <= 0) continue; /* no reference at this x */
      figure_point p = s->points[i];
      s->points[kept++] = (figure_point){p.x, p.y / b->y, p.low / b->y, p.high / b->y, p.oversubscribed || b->oversubscribed};
    }
    s->count = kept;
  }
  free(base);
  return MAPP_OK;
}

int figure_collect(const json_t *records, const figure_spec *f, const char *app, const speedup_refs *refs,
                   figure_data *out) {
  *out = (figure_data){0};
  samples s = {0};
  int status = gather(records, f, app, out, &s);
  if (status == MAPP_OK) status = summarise(&s, out);
  samples_free(&s);
  if (status == MAPP_OK && !strcmp(f->y, "efficiency")) status = to_efficiency(f, out);
  if (status == MAPP_OK && !strcmp(f->y, "speedup")) status = to_speedup(f, refs, out);
  if (status != MAPP_OK) figure_data_free(out);
  return status;
}

void figure_data_free(figure_data *d) {
  for (size_t k = 0; k < d->count; ++k) {
    free(d->series[k].label);
    free(d->series[k].points);
  }
  free(d->series);
  strv_free(&d->categories);
  free(d->reference);
  *d = (figure_data){0};
}
