#include "ratios.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "mapp_error.h"
#include "stats.h"
#include "fsutil.h"

void ratio_spec_free(ratio_spec *r) {
  free(r->name);
  free(r->app);
  free(r->title);
  free(r->note);
  strv_free(&r->num_fields);
  strv_free(&r->num_values);
  strv_free(&r->den_fields);
  strv_free(&r->den_values);
  strv_free(&r->same);
  *r = (ratio_spec){0};
}

/* One configuration's figures of merit while gathering. */
typedef struct {
  char *key, *config;
  bool numerator;
  double *fom;
  size_t count;
} config_samples;

typedef struct {
  config_samples *items;
  size_t count, capacity;
} gathering;

static const char *field_text(const json_t *r, const char *path, char *buf, size_t len) {
  const char *text = figure_value_text(figure_field(r, path), buf, len);
  return text && *text ? text : "-";
}

/* "host=n1, instances=133": the record's `same` fields. */
static char *same_key(const json_t *r, const ratio_spec *s) {
  strv parts = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < s->same.count; ++i) {
    char number[32];
    status = strv_pushf(&parts, "%s=%s", s->same.items[i], field_text(r, s->same.items[i], number, sizeof number));
  }
  char *key = status == MAPP_OK ? strv_join(&parts, ", ") : NULL;
  strv_free(&parts);
  return key;
}

/* "batched/omp 2 x 1 cpu": what sets a configuration apart within a side. */
static char *config_of(const json_t *r) {
  char a[32], b[32], c[32], d[32], e[32];
  const char *label = field_text(r, "label", e, sizeof e);
  bool labelled = strcmp(label, "-") != 0;
  return str_printf("%s/%s %s x %s%s%s", field_text(r, "variant", a, sizeof a), field_text(r, "backend", b, sizeof b),
                    field_text(r, "ranks", c, sizeof c), field_text(r, "threads", d, sizeof d), labelled ? " " : "",
                    labelled ? label : "");
}

static config_samples *find_config(gathering *g, const char *key, const char *config, bool numerator) {
  for (size_t i = 0; i < g->count; ++i)
    if (g->items[i].numerator == numerator && !strcmp(g->items[i].key, key) && !strcmp(g->items[i].config, config))
      return &g->items[i];
  return NULL;
}

/* The record's figure of merit into its configuration (made when new; key
 * and config taken over). */
static int add_sample(gathering *g, char *key, char *config, bool numerator, double fom) {
  config_samples *c = find_config(g, key, config, numerator);
  if (c) free(key), free(config);
  else {
    if (g->count == g->capacity) {
      size_t cap = g->capacity ? 2 * g->capacity : 8;
      config_samples *grown = realloc(g->items, cap * sizeof *grown);
      if (!grown) return free(key), free(config), mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a ratio");
      g->items = grown, g->capacity = cap;
    }
    c = &g->items[g->count++];
    *c = (config_samples){.key = key, .config = config, .numerator = numerator};
  }
  double *grown = realloc(c->fom, (c->count + 1) * sizeof *grown);
  if (!grown) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a ratio");
  c->fom = grown;
  grown[c->count++] = fom;
  return MAPP_OK;
}

static int gather(const json_t *records, const ratio_spec *s, const char *app, gathering *g) {
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    bool num = figure_selected(r, app, &s->num_fields, &s->num_values);
    bool den = !num && figure_selected(r, app, &s->den_fields, &s->den_values);
    const json_t *fom = json_object_get(json_object_get(r, "fom"), "value");
    if ((!num && !den) || !json_is_number(fom)) continue;
    char *key = same_key(r, s), *config = key ? config_of(r) : NULL;
    if (!config) return free(key), mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting ratio '%s'", s->name);
    MAPP_TRY(add_sample(g, key, config, num, json_number_value(fom)));
  }
  return MAPP_OK;
}

/* The side's best configuration of `key`: the highest median. */
static int best_side(const gathering *g, const char *key, bool numerator, ratio_side *side) {
  *side = (ratio_side){0};
  const config_samples *best = NULL;
  for (size_t i = 0; i < g->count; ++i) {
    config_samples *c = &g->items[i];
    if (c->numerator != numerator || strcmp(c->key, key)) continue;
    double median = stats_median(c->fom, c->count); /* sorts them */
    if (best && median <= side->median) continue;
    best = c;
    *side = (ratio_side){.median = median, .low = c->fom[0], .high = c->fom[c->count - 1], .runs = c->count};
  }
  if (best && !(side->config = strdup(best->config))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  return MAPP_OK;
}

static bool has_row(const ratio_data *d, const char *key) {
  for (size_t i = 0; i < d->count; ++i)
    if (!strcmp(d->rows[i].key, key)) return true;
  return false;
}

int ratio_collect(const json_t *records, const ratio_spec *s, const char *app, ratio_data *out) {
  *out = (ratio_data){0};
  gathering g = {0};
  int status = gather(records, s, app, &g);
  if (status == MAPP_OK && g.count && !(out->rows = calloc(g.count, sizeof *out->rows)))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; status == MAPP_OK && i < g.count; ++i) {
    if (has_row(out, g.items[i].key)) continue;
    ratio_row *row = &out->rows[out->count++];
    if (!(row->key = strdup(g.items[i].key))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    if (status == MAPP_OK) status = best_side(&g, row->key, true, &row->num);
    if (status == MAPP_OK) status = best_side(&g, row->key, false, &row->den);
  }
  for (size_t i = 0; i < g.count; ++i) free(g.items[i].key), free(g.items[i].config), free(g.items[i].fom);
  free(g.items);
  if (status != MAPP_OK) ratio_data_free(out);
  return status;
}

void ratio_data_free(ratio_data *d) {
  for (size_t i = 0; i < d->count; ++i) {
    free(d->rows[i].key);
    free(d->rows[i].num.config);
    free(d->rows[i].den.config);
  }
  free(d->rows);
  *d = (ratio_data){0};
}
