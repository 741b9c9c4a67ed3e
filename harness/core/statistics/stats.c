#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double stats_median(double *values, size_t n) {
  qsort(values, n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double weak_efficiency(double fom, long ranks, double base_fom, long base_ranks) {
  return (fom / (double)ranks) / (base_fom / (double)base_ranks);
}

static const char *text_field(const json_t *r, const char *key) {
  const char *text = json_string_value(json_object_get(r, key));
  return text ? text : "?";
}

static long integer_field(const json_t *r, const char *key) {
  return (long)json_integer_value(json_object_get(r, key));
}

static bool same_text(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* A record's setting (its sweep entry's label or flags); "" for none. */
static const char *setting_field(const json_t *r) {
  const char *text = json_string_value(json_object_get(r, "setting"));
  return text ? text : "";
}

bool group_same_series(const result_group *a, const result_group *b) {
  return same_text(a->app, b->app) && same_text(a->variant, b->variant) && same_text(a->backend, b->backend) &&
         same_text(a->size, b->size) && same_text(a->scaling, b->scaling) && same_text(a->setting, b->setting) &&
         a->threads == b->threads;
}

static bool record_matches(const result_group *g, const json_t *r) {
  return same_text(g->app, text_field(r, "app")) && same_text(g->variant, text_field(r, "variant")) &&
         same_text(g->backend, text_field(r, "backend")) && same_text(g->size, text_field(r, "size")) &&
         same_text(g->scaling, text_field(r, "scaling")) && same_text(g->setting, setting_field(r)) &&
         g->ranks == integer_field(r, "ranks") &&
         g->threads == integer_field(r, "threads");
}

static result_group *find_or_add(group_table *t, size_t *capacity, const json_t *r) {
  for (size_t i = 0; i < t->count; ++i)
    if (record_matches(&t->items[i], r)) return &t->items[i];
  if (t->count == *capacity) {
    size_t grown = *capacity ? *capacity * 2 : 16;
    result_group *items = realloc(t->items, grown * sizeof *items);
    if (!items) return NULL;
    t->items = items;
    *capacity = grown;
  }
  result_group *g = &t->items[t->count++];
  *g = (result_group){.app = text_field(r, "app"), .variant = text_field(r, "variant"),
                      .backend = text_field(r, "backend"), .size = text_field(r, "size"),
                      .scaling = text_field(r, "scaling"), .setting = setting_field(r),
                      .ranks = integer_field(r, "ranks"),
                      .threads = integer_field(r, "threads"), .baseline = "none", .fom_name = "FOM",
                      .peer_of = "", .peer_variant = NULL};
  return g;
}

/* Baseline statuses from least to most alarming; a group shows its worst. */
static int baseline_rank(const char *status) {
  static const char *const order[] = {"none", "pass", "missing", "fail"};
  for (int i = 3; i >= 0; --i)
    if (strcmp(status, order[i]) == 0) return i;
  return 0;
}

/* Grows a group's sample arrays to hold one more timed run. */
static int grow_samples(result_group *g) {
  size_t grown = g->capacity ? g->capacity * 2 : 4;
  double *foms = realloc(g->foms, grown * sizeof *foms);
  if (foms) g->foms = foms;
  double *walls = foms ? realloc(g->walls, grown * sizeof *walls) : NULL;
  if (walls) g->walls = walls;
  double *timed = walls ? realloc(g->timed_s, grown * sizeof *timed) : NULL;
  if (timed) g->timed_s = timed;
  bool *disturbed = timed ? realloc(g->disturbed, grown * sizeof *disturbed) : NULL;
  if (disturbed) g->disturbed = disturbed;
  bool *over = disturbed ? realloc(g->self_oversubscribed, grown * sizeof *over) : NULL;
  if (over) g->self_oversubscribed = over;
  const json_t **records = over ? realloc(g->records, grown * sizeof *records) : NULL;
  if (!records) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory grouping results");
  g->records = records;
  g->capacity = grown;
  return MAPP_OK;
}

static int add_sample(result_group *g, const json_t *r) {
  if (g->timed == g->capacity) MAPP_TRY(grow_samples(g));
  verdict_record_info info;
  verdict_record(r, &info);
  g->foms[g->timed] = json_number_value(json_object_get(json_object_get(r, "fom"), "value"));
  g->walls[g->timed] = json_number_value(json_object_get(r, "wall_s"));
  g->timed_s[g->timed] = info.timed_s;
  g->records[g->timed] = r;
  g->self_oversubscribed[g->timed] = info.oversubscribed;
  g->disturbed[g->timed++] = info.disturbed;
  return MAPP_OK;
}

static int add_record(result_group *g, const json_t *r) {
  ++g->runs;
  const json_t *fom = json_object_get(r, "fom");
  const char *verification = json_string_value(json_object_get(json_object_get(r, "verification"), "status"));
  const char *base = json_string_value(json_object_get(json_object_get(r, "baseline"), "status"));
  if (verification && strcmp(verification, "fail") == 0) ++g->verify_failed;
  const char *outcome = json_string_value(json_object_get(r, "outcome"));
  if (outcome && strcmp(outcome, "timeout") == 0) ++g->timed_out;
  if (json_is_true(json_object_get(r, "oversubscribed"))) g->oversubscribed = true;
  if (base && baseline_rank(base) > baseline_rank(g->baseline)) g->baseline = base;
  if (json_is_string(json_object_get(fom, "name"))) g->fom_name = json_string_value(json_object_get(fom, "name"));
  if (json_is_string(json_object_get(r, "peer_of"))) g->peer_of = json_string_value(json_object_get(r, "peer_of"));
  if (json_is_string(json_object_get(r, "peer_variant")))
    g->peer_variant = json_string_value(json_object_get(r, "peer_variant"));
  bool exited_ok = integer_field(r, "exit_code") == 0;
  if (!exited_ok || !json_is_number(json_object_get(fom, "value"))) return MAPP_OK;
  return add_sample(g, r);
}

/* Median, spread and verdict of a group's timed runs. */
static int summarise(result_group *g, double precision) {
  MAPP_TRY(verdict_judge(g->foms, g->timed_s, g->disturbed, g->self_oversubscribed, g->timed, precision, &g->verdict));
  if (!g->timed) return MAPP_OK;
  g->fom_min = g->fom_max = g->foms[0];
  for (size_t i = 1; i < g->timed; ++i) {
    if (g->foms[i] < g->fom_min) g->fom_min = g->foms[i];
    if (g->foms[i] > g->fom_max) g->fom_max = g->foms[i];
  }
  g->fom_median = stats_median(g->foms, g->timed);
  g->wall_median = stats_median(g->walls, g->timed);
  return MAPP_OK;
}

static int compare_groups(const void *pa, const void *pb) {
  const result_group *a = pa, *b = pb;
  const char *fa[] = {a->app, a->scaling, a->size, a->variant, a->backend, a->setting};
  const char *fb[] = {b->app, b->scaling, b->size, b->variant, b->backend, b->setting};
  for (int i = 0; i < 6; ++i) {
    int c = strcmp(fa[i], fb[i]);
    if (c) return c;
  }
  if (a->threads != b->threads) return a->threads < b->threads ? -1 : 1;
  return (a->ranks > b->ranks) - (a->ranks < b->ranks);
}

int stats_group_at(const json_t *records, double precision, group_table *t) {
  *t = (group_table){0};
  size_t capacity = 0, i;
  const json_t *r;
  int status = MAPP_OK;
  json_array_foreach(records, i, r) {
    result_group *g = find_or_add(t, &capacity, r);
    status = g ? add_record(g, r) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory grouping results");
    if (status != MAPP_OK) break;
  }
  for (size_t k = 0; status == MAPP_OK && k < t->count; ++k) status = summarise(&t->items[k], precision);
  if (status == MAPP_OK && t->count) qsort(t->items, t->count, sizeof *t->items, compare_groups);
  if (status != MAPP_OK) group_table_free(t);
  return status;
}

int stats_group(const json_t *records, group_table *t) {
  return stats_group_at(records, VERDICT_DEFAULT_PRECISION, t);
}

void group_table_free(group_table *t) {
  for (size_t i = 0; i < t->count; ++i) {
    free(t->items[i].foms);
    free(t->items[i].walls);
    free(t->items[i].timed_s);
    free(t->items[i].disturbed);
    free(t->items[i].self_oversubscribed);
    free(t->items[i].records);
  }
  free(t->items);
  *t = (group_table){0};
}

/* The timed group of g's series with the fewest ranks. */
static const result_group *series_base(const group_table *t, const result_group *g) {
  const result_group *base = NULL;
  for (size_t i = 0; i < t->count; ++i) {
    const result_group *c = &t->items[i];
    if (c->timed && group_same_series(c, g) && (!base || c->ranks < base->ranks)) base = c;
  }
  return base;
}

static ratio scaled(const result_group *g, double factor) {
  return (ratio){g->fom_median * factor, g->fom_min * factor, g->fom_max * factor};
}

bool stats_weak_efficiency(const group_table *t, const result_group *g, ratio *out) {
  if (!g->timed || strcmp(g->scaling, "weak") != 0) return false;
  const result_group *base = series_base(t, g);
  if (!base || !(base->fom_median > 0)) return false;
  *out = scaled(g, weak_efficiency(1.0, g->ranks, base->fom_median, base->ranks));
  return true;
}

bool stats_strong_speedup(const group_table *t, const result_group *g, ratio *out) {
  if (!g->timed || strcmp(g->scaling, "strong") != 0) return false;
  const result_group *base = series_base(t, g);
  if (!base || !(base->fom_median > 0)) return false;
  *out = scaled(g, 1.0 / base->fom_median);
  return true;
}

static bool is_reference(const result_group *g, const speedup_ref *ref) {
  return same_text(g->variant, ref->variant) && same_text(g->backend, ref->backend);
}

const speedup_ref *stats_app_reference(const group_table *t, const char *app, const speedup_refs *refs) {
  for (size_t r = 0; r < refs->count; ++r)
    for (size_t i = 0; i < t->count; ++i)
      if (same_text(t->items[i].app, app) && is_reference(&t->items[i], &refs->items[r])) return &refs->items[r];
  return NULL;
}

bool stats_speedup(const group_table *t, const result_group *g, const speedup_refs *refs, ratio *out) {
  const speedup_ref *want = g->timed ? stats_app_reference(t, g->app, refs) : NULL;
  if (!want) return false;
  const result_group *ref = NULL;
  for (size_t i = 0; i < t->count; ++i) {
    const result_group *c = &t->items[i];
    bool match = c->timed && same_text(c->app, g->app) && same_text(c->size, g->size) &&
                 same_text(c->scaling, g->scaling) && same_text(c->setting, g->setting) && c->ranks == g->ranks && is_reference(c, want);
    if (match && (!ref || c->threads < ref->threads)) ref = c;
  }
  if (!ref || !(ref->fom_median > 0)) return false;
  *out = scaled(g, 1.0 / ref->fom_median);
  return true;
}
