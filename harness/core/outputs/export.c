/* Records as Caliper json-split profiles and Extra-P text files (export.h). */
#include "export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "gnuplot.h"
#include "jsonutil.h"
#include "mapp_error.h"

/* The run's identity, copied as they are. */
static const char *const export_fields[] = {
    "app",      "variant", "backend", "ranks",   "threads", "gpus",       "helper_threads", "size",
    "scaling",  "case",    "steps",   "git_revision", "compiler", "flags", "build_type", "host",
    "env",      "simulated", "outcome", "check",  "sweep",   "key",        "label",          "setting",
    "repetition", "time",  "wall_s",  "oversubscribed", "peer_of"};
/* Objects whose scalar fields are copied as "object.field". */
static const char *const export_objects[] = {"verification", "baseline", "consistency", "disturbance", "fom",
                                             "placement", "simulation", "timing"};
static const char *const standard_phases[] = {"setup", "compute", "communication", "io"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool is_standard_phase(const char *name) {
  for (size_t i = 0; i < COUNT(standard_phases); ++i)
    if (!strcmp(name, standard_phases[i])) return true;
  return false;
}

/* ---------------------------------------------------------------- caliper-json */

typedef struct {
  json_t *nodes, *data;
} call_tree;

static json_t *number_or_null(const json_t *v) { return json_is_number(v) ? json_real(json_number_value(v)) : json_null(); }

/* Appends a node and its row (Node order, path, min, max, avg); its index. */
static size_t add_node(call_tree *t, const char *label, long parent, json_t *min, json_t *max, json_t *avg) {
  size_t index = json_array_size(t->nodes);
  json_t *node = json_pack("{s:s, s:s}", "label", label, "column", "path");
  if (parent >= 0) json_object_set_new(node, "parent", json_integer(parent));
  json_array_append_new(t->nodes, node);
  json_array_append_new(t->data, json_pack("[I, I, o, o, o]", (json_int_t)index, (json_int_t)index, min, max, avg));
  return index;
}

static void add_phase(call_tree *t, const char *name, const json_t *stats, long parent) {
  add_node(t, name, parent, number_or_null(json_object_get(stats, "min")), number_or_null(json_object_get(stats, "max")),
           number_or_null(json_object_get(stats, "mean")));
}

/* app_data's timed parts: numbers named *_s but not rates (*_per_s). */
static bool is_timed_part(const char *key, const json_t *value) {
  size_t n = strlen(key);
  return json_is_number(value) && n > 2 && !strcmp(key + n - 2, "_s") && !(n > 6 && !strcmp(key + n - 6, "_per_s"));
}

static int build_tree(const json_t *record, call_tree *t) {
  const json_t *phases = json_object_get(record, "phases");
  size_t root = add_node(t, "main", -1, json_null(), number_or_null(json_object_get(record, "wall_s")), json_null());
  long compute = -1;
  for (size_t i = 0; i < COUNT(standard_phases); ++i) {
    const json_t *stats = json_object_get(phases, standard_phases[i]);
    if (!stats) continue;
    if (!strcmp(standard_phases[i], "compute")) compute = (long)json_array_size(t->nodes);
    add_phase(t, standard_phases[i], stats, (long)root);
  }
  long below = compute >= 0 ? compute : (long)root;
  const char *name;
  const json_t *stats;
  json_object_foreach((json_t *)phases, name, stats) {
    if (!is_standard_phase(name)) add_phase(t, name, stats, below);
  }
  const json_t *value;
  json_object_foreach(json_object_get(record, "app_data"), name, value) {
    if (!is_timed_part(name, value)) continue;
    char *label = strndup(name, strlen(name) - 2);
    if (!label) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory exporting a profile");
    if (!json_object_get(phases, label)) add_node(t, label, below, json_null(), json_real(json_number_value(value)), json_null());
    free(label);
  }
  return MAPP_OK;
}

static void copy_metadata(const json_t *record, json_t *profile) {
  for (size_t i = 0; i < COUNT(export_fields); ++i) {
    json_t *v = json_object_get(record, export_fields[i]);
    if (v && !json_is_object(v) && !json_is_array(v)) json_object_set(profile, export_fields[i], v);
  }
  for (size_t i = 0; i < COUNT(export_objects); ++i) {
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(record, export_objects[i]), key, v) {
      if (json_is_object(v) || json_is_array(v)) continue;
      char name[256];
      snprintf(name, sizeof name, "%s.%s", export_objects[i], key);
      json_object_set(profile, name, v);
    }
  }
}

static json_t *column_metadata(void) {
  return json_pack("[{s:b, s:s}, {s:b}, {s:b, s:s}, {s:b, s:s}, {s:b, s:s}]", "is_value", 1, "attribute.alias",
                   "Node order", "is_value", 0, "is_value", 1, "attribute.unit", "sec", "is_value", 1,
                   "attribute.unit", "sec", "is_value", 1, "attribute.unit", "sec");
}

static int profile_of(const json_t *record, json_t **profile) {
  call_tree t = {json_array(), json_array()};
  *profile = json_object();
  int status = t.nodes && t.data && *profile ? build_tree(record, &t) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) {
    json_object_set_new(*profile, "data", t.data);
    json_object_set_new(*profile, "columns", json_pack("[s, s, s, s, s]", "Node order", "path", "Min time/rank (inc)",
                                                       "Max time/rank (inc)", "Avg time/rank (inc)"));
    json_object_set_new(*profile, "column_metadata", column_metadata());
    json_object_set_new(*profile, "nodes", t.nodes);
    copy_metadata(record, *profile);
    return MAPP_OK;
  }
  json_decref(t.nodes);
  json_decref(t.data);
  json_decref(*profile);
  *profile = NULL;
  return status;
}

/* A file name from the record's key ("heat|mpi|serial|n1|..." ->
 * "heat_mpi_serial_n1_....json"), else its position; unique in dir. */
static char *profile_path(const char *dir, const json_t *record, size_t index) {
  const char *key = json_string_value(json_object_get(record, "key"));
  char name[200], stem[200];
  if (key) snprintf(name, sizeof name, "%s", key);
  else snprintf(name, sizeof name, "record-%zu", index);
  plot_file_stem(name, stem, sizeof stem);
  char *path = str_printf("%s/%s.json", dir, stem);
  for (int n = 2; path && path_exists(path); ++n) {
    free(path);
    path = str_printf("%s/%s-%d.json", dir, stem, n);
  }
  return path;
}

int export_caliper_json(const json_t *records, const char *dir, strv *written) {
  MAPP_TRY(make_dirs(dir));
  size_t i, exported = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    if (!json_is_object(json_object_get(r, "phases"))) continue;
    json_t *profile;
    MAPP_TRY(profile_of(r, &profile));
    char *path = profile_path(dir, r, i);
    int status = path ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    if (status == MAPP_OK && json_dump_file(profile, path, JSON_REAL_PRECISION(17) | JSON_COMPACT) != 0)
      status = mapp_fail(MAPP_ERR_SYSTEM, "cannot write %s", path);
    if (status == MAPP_OK) status = strv_push(written, path);
    free(path);
    json_decref(profile);
    MAPP_TRY(status);
    ++exported;
  }
  if (!exported) return mapp_fail(MAPP_ERR_INPUT, "no record has phases: nothing to export");
  return MAPP_OK;
}

/* ---------------------------------------------------------------- extrap */

double export_timed_seconds(const json_t *record) {
  const json_t *fastest = json_object_get(json_object_get(record, "timing"), "fastest_s");
  if (json_is_number(fastest)) return json_number_value(fastest);
  const json_t *compute = json_object_get(json_object_get(json_object_get(record, "phases"), "compute"), "max");
  return json_is_number(compute) ? json_number_value(compute) : NAN;
}

bool export_usable(const json_t *r) {
  return json_integer_value(json_object_get(r, "exit_code")) == 0 && json_is_number(json_object_get(r, "ranks")) &&
         !isnan(export_timed_seconds(r));
}

/* "app variant/backend size scaling tTHREADS[ setting]": what a series is. */
char *export_series_name(const json_t *r) {
  const char *setting = json_text_or(r, "setting", "");
  return str_printf("%s %s/%s %s %s t%lld%s%s", json_text_or(r, "app", "?"), json_text_or(r, "variant", "?"),
                    json_text_or(r, "backend", "?"), json_text_or(r, "size", "?"), json_text_or(r, "scaling", "?"),
                    (long long)json_integer_value(json_object_get(r, "threads")), setting[0] ? " " : "", setting);
}

/* {series name: {ranks as text: [records]}} of the usable records. */
static int group_series(const json_t *records, long max_ranks, json_t **series) {
  *series = json_object();
  if (!*series) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    long ranks = (long)json_integer_value(json_object_get(r, "ranks"));
    if (!export_usable(r) || (max_ranks > 0 && ranks > max_ranks)) continue;
    char *name = export_series_name(r), rank_text[32];
    if (!name) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    snprintf(rank_text, sizeof rank_text, "%ld", ranks);
    json_t *points = json_object_get(*series, name);
    if (!points) json_object_set_new(*series, name, points = json_object());
    json_t *runs = json_object_get(points, rank_text);
    if (!runs) json_object_set_new(points, rank_text, runs = json_array());
    json_array_append(runs, (json_t *)r);
    free(name);
  }
  return MAPP_OK;
}

static int by_number(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* The rank counts of a series' points, ascending. */
static long *sorted_ranks(const json_t *points, size_t *n) {
  *n = json_object_size(points);
  long *ranks = malloc((*n ? *n : 1) * sizeof *ranks);
  if (!ranks) return NULL;
  size_t k = 0;
  const char *text;
  const json_t *runs;
  json_object_foreach((json_t *)points, text, runs) ranks[k++] = strtol(text, NULL, 10);
  qsort(ranks, *n, sizeof *ranks, by_number);
  return ranks;
}

/* The phases every run of the series has, in the first run's order. */
static int common_phases(const json_t *points, strv *names) {
  const char *text, *name;
  const json_t *runs, *first = NULL, *stats;
  json_object_foreach((json_t *)points, text, runs) {
    if (!first) first = json_array_get(runs, 0);
  }
  json_object_foreach(json_object_get(first, "phases"), name, stats) {
    bool everywhere = true;
    json_object_foreach((json_t *)points, text, runs) {
      size_t i;
      const json_t *r;
      json_array_foreach(runs, i, r) everywhere &= json_is_number(
          json_object_get(json_object_get(json_object_get(r, "phases"), name), "max"));
    }
    if (everywhere) MAPP_TRY(strv_push(names, name));
  }
  return MAPP_OK;
}

/* One REGION: a DATA line per rank count with each repetition's value. */
static void write_region(FILE *f, const char *region, const char *phase, const json_t *points, const long *ranks,
                         size_t n) {
  fprintf(f, "REGION %s\n", region);
  for (size_t k = 0; k < n; ++k) {
    char text[32];
    snprintf(text, sizeof text, "%ld", ranks[k]);
    const json_t *runs = json_object_get(points, text), *r;
    size_t i;
    fputs("DATA", f);
    json_array_foreach(runs, i, r) {
      double v = phase ? json_number_value(json_object_get(json_object_get(json_object_get(r, "phases"), phase), "max"))
                       : export_timed_seconds(r);
      fprintf(f, " %.17g", v);
    }
    fputc('\n', f);
  }
}

static int write_extrap_file(const char *path, const char *name, const json_t *points, const long *ranks, size_t n) {
  strv phases = {0};
  MAPP_TRY(common_phases(points, &phases));
  FILE *f = fopen(path, "w");
  if (!f) {
    strv_free(&phases);
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot write %s", path);
  }
  fprintf(f, "# mapp export --format extrap: %s\n# time in seconds against the rank count p; "
             "'timed' is what the figure of merit is over, the others each phase's max over ranks\n",
          name);
  fputs("PARAMETER p\nPOINTS", f);
  for (size_t k = 0; k < n; ++k) fprintf(f, " %ld", ranks[k]);
  fputs("\nMETRIC time\n", f);
  write_region(f, "timed", NULL, points, ranks, n);
  for (size_t i = 0; i < phases.count; ++i) {
    char region[128];
    snprintf(region, sizeof region, "main->%s", phases.items[i]);
    write_region(f, region, phases.items[i], points, ranks, n);
  }
  strv_free(&phases);
  if (fclose(f) != 0) return mapp_fail(MAPP_ERR_SYSTEM, "cannot write %s", path);
  return MAPP_OK;
}

static char *extrap_path(const char *dir, const char *name) {
  char stem[200];
  plot_file_stem(name, stem, sizeof stem);
  return str_printf("%s/%s.txt", dir, stem);
}

int export_extrap(const json_t *records, const char *dir, size_t min_points, long max_ranks, strv *written,
                  strv *series_names, strv *skipped) {
  json_t *series;
  MAPP_TRY(group_series(records, max_ranks, &series));
  int status = make_dirs(dir);
  const char *name;
  const json_t *points;
  json_object_foreach(series, name, points) {
    if (status != MAPP_OK) break;
    size_t n;
    long *ranks = sorted_ranks(points, &n);
    char *path = ranks ? extrap_path(dir, name) : NULL;
    if (!path) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    else if (n < min_points) {
      char *why = str_printf("%s: %zu rank count%s", name, n, n == 1 ? "" : "s");
      status = why ? strv_push(skipped, why) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
      free(why);
    } else {
      status = write_extrap_file(path, name, points, ranks, n);
      if (status == MAPP_OK) status = strv_push(written, path);
      if (status == MAPP_OK) status = strv_push(series_names, name);
    }
    free(path);
    free(ranks);
  }
  json_decref(series);
  return status;
}

char *export_skipped_text(const strv *skipped) {
  strv first = {0};
  for (size_t i = 0; i < skipped->count && i < 3; ++i)
    if (strv_push(&first, skipped->items[i]) != MAPP_OK) break;
  char *text = first.count ? strv_join(&first, "; ") : strdup("no usable record");
  strv_free(&first);
  if (text && skipped->count > 3) {
    char *more = str_printf("%s; and %zu more", text, skipped->count - 3);
    free(text);
    text = more;
  }
  return text;
}
