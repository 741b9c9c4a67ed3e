#include "selection.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_error.h"

static const char *const standard_fields[] = {"app", "variant", "backend", "size", "scaling", "ranks",
                                              "threads", "gpus", "label", NULL};

static bool is_standard(const char *field) {
  for (size_t i = 0; standard_fields[i]; ++i)
    if (strcmp(field, standard_fields[i]) == 0) return true;
  return false;
}

static int add_filter(const char *text, strv *fields, strv *globs) {
  const char *eq = strchr(text, '=');
  if (!eq || !eq[1]) return MAPP_ERR_INPUT;
  const char *field = text + strspn(text, "-"); /* a matrix flag as the spec writes it */
  if (field >= eq) return MAPP_ERR_INPUT;
  char *name = strndup(field, (size_t)(eq - field));
  int status = name ? strv_push(fields, name) : MAPP_ERR_SYSTEM;
  free(name);
  if (status == MAPP_OK) status = strv_push(globs, eq + 1);
  return status;
}

int selection_parse_only(const char *text, void *sel) {
  selection *s = sel;
  return add_filter(text, &s->only_fields, &s->only_globs);
}

int selection_parse_exclude(const char *text, void *sel) {
  selection *s = sel;
  return add_filter(text, &s->exclude_fields, &s->exclude_globs);
}

bool selection_empty(const selection *sel) { return sel->only_fields.count == 0 && sel->exclude_fields.count == 0; }

/* ---------------------------------------------------------------- values */

typedef selection_value_of value_getter;

static const char *param_text(const json_t *params, const char *field, char *buf, size_t len, bool *known) {
  const json_t *v = json_object_get(params, field);
  *known = v != NULL;
  if (json_is_string(v)) return json_string_value(v);
  if (json_is_integer(v)) snprintf(buf, len, "%lld", (long long)json_integer_value(v));
  else if (json_is_real(v)) snprintf(buf, len, "%g", json_real_value(v));
  else buf[0] = '\0';
  return buf;
}

static const char *job_value(const void *item, const char *field, char *buf, size_t len, bool *known) {
  const job *j = &((const sweep_job *)item)->job;
  *known = true;
  if (strcmp(field, "app") == 0) return j->app;
  if (strcmp(field, "variant") == 0) return j->variant;
  if (strcmp(field, "backend") == 0) return j->backend;
  if (strcmp(field, "size") == 0) return j->size;
  if (strcmp(field, "scaling") == 0) return j->scaling;
  if (strcmp(field, "label") == 0) return j->label ? j->label : "";
  long number = strcmp(field, "ranks") == 0 ? j->ranks : strcmp(field, "threads") == 0 ? j->threads
              : strcmp(field, "gpus") == 0  ? j->gpus
                                            : -1;
  if (number < 0) return param_text(j->params, field, buf, len, known);
  snprintf(buf, len, "%ld", number);
  return buf;
}

static const char *record_value(const void *item, const char *field, char *buf, size_t len, bool *known) {
  const json_t *r = item;
  if (!is_standard(field)) return param_text(json_object_get(r, "params"), field, buf, len, known);
  *known = true;
  const json_t *v = json_object_get(r, field);
  if (json_is_string(v)) return json_string_value(v);
  if (json_is_integer(v)) {
    snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    return buf;
  }
  return "";
}

/* ---------------------------------------------------------------- matching */

typedef struct {
  const void *items;
  size_t count, stride; /* items as an array of stride-byte elements (jobs) */
  bool json;            /* items is a JSON array (records) */
  value_getter value;
  const char *noun;     /* "job", "record" */
} item_set;

static const void *item_at(const item_set *s, size_t i) {
  return s->json ? (const void *)json_array_get(s->items, i) : (const char *)s->items + i * s->stride;
}

static bool matches(const item_set *s, const void *item, const char *field, const char *glob) {
  char buf[64];
  bool known;
  const char *value = s->value(item, field, buf, sizeof buf, &known);
  return fnmatch(glob, known ? value : "", 0) == 0;
}

static bool selected(const selection *sel, const item_set *s, const void *item) {
  for (size_t i = 0; i < sel->only_fields.count; ++i) {
    const char *field = sel->only_fields.items[i];
    bool first_of_field = true;
    for (size_t k = 0; k < i && first_of_field; ++k) first_of_field = strcmp(sel->only_fields.items[k], field) != 0;
    if (!first_of_field) continue;
    bool any = false;
    for (size_t k = i; k < sel->only_fields.count && !any; ++k)
      any = strcmp(sel->only_fields.items[k], field) == 0 && matches(s, item, field, sel->only_globs.items[k]);
    if (!any) return false;
  }
  for (size_t i = 0; i < sel->exclude_fields.count; ++i)
    if (matches(s, item, sel->exclude_fields.items[i], sel->exclude_globs.items[i])) return false;
  return true;
}

/* Every field a filter names is a standard one or a parameter some item has. */
static int check_fields(const strv *fields, const char *flag, const strv *globs, const item_set *s) {
  for (size_t i = 0; i < fields->count; ++i) {
    if (is_standard(fields->items[i])) continue;
    bool known = false;
    char buf[64];
    for (size_t k = 0; k < s->count && !known; ++k) s->value(item_at(s, k), fields->items[i], buf, sizeof buf, &known);
    if (!known)
      return mapp_fail(MAPP_ERR_INPUT, "%s %s=%s: no %s has a field '%s' (app, variant, backend, size, scaling, ranks, "
                       "threads, gpus, label, or a matrix parameter)", flag, fields->items[i], globs->items[i], s->noun,
                       fields->items[i]);
  }
  return MAPP_OK;
}

/* Nothing selected: name an --only filter that alone matches nothing, else all of them. */
static int nothing_selected(const selection *sel, const item_set *s) {
  for (size_t i = 0; i < sel->only_fields.count; ++i) {
    size_t hits = 0;
    for (size_t k = 0; k < s->count; ++k)
      hits += matches(s, item_at(s, k), sel->only_fields.items[i], sel->only_globs.items[i]);
    if (hits == 0)
      return mapp_fail(MAPP_ERR_INPUT, "--only %s=%s matches no %s", sel->only_fields.items[i], sel->only_globs.items[i],
                       s->noun);
  }
  char *text = selection_text(sel);
  int status = mapp_fail(MAPP_ERR_INPUT, "the filters %s select no %s of %zu", text ? text : "given", s->noun, s->count);
  free(text);
  return status;
}

/* Marks in keep[] what the selection keeps; an input error when nothing. */
static int select_items(const selection *sel, const item_set *s, bool *keep) {
  MAPP_TRY(check_fields(&sel->only_fields, "--only", &sel->only_globs, s));
  MAPP_TRY(check_fields(&sel->exclude_fields, "--exclude", &sel->exclude_globs, s));
  size_t kept = 0;
  for (size_t i = 0; i < s->count; ++i) kept += keep[i] = selected(sel, s, item_at(s, i));
  return kept ? MAPP_OK : nothing_selected(sel, s);
}

int selection_mark(const selection *sel, const void *items, size_t count, size_t stride, selection_value_of value,
                   const char *noun, bool *keep) {
  item_set s = {.items = items, .count = count, .stride = stride, .value = value, .noun = noun};
  if (!selection_empty(sel)) return select_items(sel, &s, keep);
  for (size_t i = 0; i < count; ++i) keep[i] = true;
  return MAPP_OK;
}

int selection_filter_jobs(const selection *sel, sweep_jobs *jobs) {
  if (selection_empty(sel)) return MAPP_OK;
  item_set s = {.items = jobs->items, .count = jobs->count, .stride = sizeof *jobs->items, .value = job_value,
                .noun = "job"};
  bool *keep = calloc(jobs->count ? jobs->count : 1, sizeof *keep);
  if (!keep) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = select_items(sel, &s, keep);
  size_t n = 0;
  for (size_t i = 0; status == MAPP_OK && i < jobs->count; ++i)
    if (keep[i]) jobs->items[n++] = jobs->items[i];
  if (status == MAPP_OK) jobs->count = n;
  free(keep);
  return status;
}

int selection_filter_records(const selection *sel, json_t *records) {
  if (!sel || selection_empty(sel)) return MAPP_OK;
  size_t count = json_array_size(records);
  item_set s = {.items = records, .count = count, .json = true, .value = record_value, .noun = "record"};
  bool *keep = calloc(count ? count : 1, sizeof *keep);
  if (!keep) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = select_items(sel, &s, keep);
  /* from the end, so the indices still to visit do not move */
  for (size_t i = count; status == MAPP_OK && i-- > 0;)
    if (!keep[i]) json_array_remove(records, i);
  free(keep);
  return status;
}

char *selection_text(const selection *sel) {
  strv words = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < sel->only_fields.count; ++i) {
    char *w = str_printf("--only %s=%s", sel->only_fields.items[i], sel->only_globs.items[i]);
    status = w ? strv_push(&words, w) : MAPP_ERR_SYSTEM;
    free(w);
  }
  for (size_t i = 0; status == MAPP_OK && i < sel->exclude_fields.count; ++i) {
    char *w = str_printf("--exclude %s=%s", sel->exclude_fields.items[i], sel->exclude_globs.items[i]);
    status = w ? strv_push(&words, w) : MAPP_ERR_SYSTEM;
    free(w);
  }
  char *text = status == MAPP_OK ? strv_join(&words, " ") : NULL;
  strv_free(&words);
  return text;
}

void selection_free(selection *sel) {
  strv_free(&sel->only_fields);
  strv_free(&sel->only_globs);
  strv_free(&sel->exclude_fields);
  strv_free(&sel->exclude_globs);
}
