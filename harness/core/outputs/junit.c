/* JUnit XML (junit.h): the suite and the cases added to it, the names of
 * cases from job keys, skipped jobs, and the file of a sweep's (or
 * collect's) results.jsonl. The document is written by junit_xml.c; a run's
 * record is judged by junit_judge.c and made a case by junit_record.c. */
#include "junit.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "job.h"
#include "junit_internal.h"
#include "mapp_error.h"
#include "results.h"
#include "strv.h"

/* ------------------------------------------------------------ suite */

int junit_suite_new(const char *name, junit_suite **out) {
  *out = NULL;
  if (!name || !name[0]) return mapp_fail(MAPP_ERR_INPUT, "a JUnit test suite needs a name, got an empty one");
  junit_suite *s = calloc(1, sizeof *s);
  if (s) s->name = strdup(name);
  if (!s || !s->name) {
    free(s);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory making JUnit suite %s", name);
  }
  s->timestamp = time(NULL);
  s->time_s = NAN;
  *out = s;
  return MAPP_OK;
}

int junit_suite_property(junit_suite *s, const char *name, const char *value) {
  if (!name || !name[0]) return mapp_fail(MAPP_ERR_INPUT, "a JUnit property needs a name, got an empty one");
  return push_property(&s->prop_names, &s->prop_values, name, value);
}

void junit_suite_set_time(junit_suite *s, double seconds) { s->time_s = seconds; }

void junit_suite_set_timestamp(junit_suite *s, time_t when) { s->timestamp = when; }

static void stored_case_free(stored_case *c) {
  free(c->classname);
  free(c->name);
  free(c->type);
  free(c->message);
  free(c->details);
  strv_free(&c->prop_names);
  strv_free(&c->prop_values);
}

static char *copy_or_null(const char *text, bool *failed) {
  char *copy = text ? strdup(text) : NULL;
  if (text && !copy) *failed = true;
  return copy;
}

static int store_case(const junit_case *c, stored_case *out) {
  bool failed = false;
  *out = (stored_case){.classname = copy_or_null(c->classname, &failed), .name = copy_or_null(c->name, &failed),
                       .type = copy_or_null(c->type, &failed), .message = copy_or_null(c->message, &failed),
                       .details = copy_or_null(c->details, &failed), .time_s = c->time_s, .status = c->status};
  int status = failed ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory storing JUnit case %s", c->name) : MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < c->property_count; ++i) {
    const junit_property *p = &c->properties[i];
    status = p->name && p->name[0] ? push_property(&out->prop_names, &out->prop_values, p->name, p->value)
                                   : mapp_fail(MAPP_ERR_INPUT, "JUnit case %s: a property without a name", c->name);
  }
  if (status != MAPP_OK) stored_case_free(out);
  return status;
}

static int grow_cases(junit_suite *s) {
  if (s->count < s->capacity) return MAPP_OK;
  size_t grown = s->capacity ? 2 * s->capacity : 64;
  stored_case *cases = realloc(s->cases, grown * sizeof *cases);
  if (!cases) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory adding JUnit case %zu", s->count + 1);
  s->cases = cases;
  s->capacity = grown;
  return MAPP_OK;
}

int junit_add_case(junit_suite *s, const junit_case *c) {
  if (!c->classname || !c->classname[0] || !c->name || !c->name[0])
    return mapp_fail(MAPP_ERR_INPUT, "a JUnit case needs a classname and a name, got '%s' and '%s'",
                     c->classname ? c->classname : "", c->name ? c->name : "");
  if (c->status < JUNIT_PASS || c->status > JUNIT_SKIPPED)
    return mapp_fail(MAPP_ERR_INPUT, "JUnit case %s: unknown status %d", c->name, (int)c->status);
  MAPP_TRY(grow_cases(s));
  MAPP_TRY(store_case(c, &s->cases[s->count]));
  ++s->count;
  return MAPP_OK;
}

void junit_suite_counts(const junit_suite *s, junit_counts *out) {
  *out = (junit_counts){.tests = s->count};
  for (size_t i = 0; i < s->count; ++i) {
    out->failures += s->cases[i].status == JUNIT_FAILURE;
    out->errors += s->cases[i].status == JUNIT_ERROR;
    out->skipped += s->cases[i].status == JUNIT_SKIPPED;
  }
}

void junit_suite_free(junit_suite *s) {
  if (!s) return;
  for (size_t i = 0; i < s->count; ++i) stored_case_free(&s->cases[i]);
  free(s->cases);
  free(s->name);
  strv_free(&s->prop_names);
  strv_free(&s->prop_values);
  free(s);
}

/* ------------------------------------------------------------ names */

/* The key's fields; a setting may itself hold '|', so the fields after the
 * repetition are one. */
static int split_key(const char *key, strv *fields) {
  const char *at = key;
  for (int i = 0; i < 8; ++i) {
    const char *bar = strchr(at, '|');
    if (!bar) break;
    MAPP_TRY(strv_pushf(fields, "%.*s", (int)(bar - at), at));
    at = bar + 1;
  }
  return strv_push(fields, at);
}

/* "r0": the field is a repetition, "r-1" a one-off run's. */
static bool is_repetition(const char *field) {
  const char *digits = field[0] == 'r' ? field + 1 : "";
  if (*digits == '-') ++digits;
  return *digits && strspn(digits, "0123456789") == strlen(digits);
}

static int name_of_fields(const strv *f, char **name) {
  const char *rest = f->count > 7 ? f->items[7] : NULL;
  char *tail = NULL;
  if (rest && is_repetition(rest)) {
    bool one_off = strcmp(rest, "r-1") == 0;
    tail = f->count > 8 ? str_printf("%s%s[%s]", one_off ? "" : rest, one_off ? "" : " ", f->items[8])
                        : strdup(one_off ? "" : rest);
  } else if (rest) {
    /* a configuration key: what follows the scaling is the setting */
    char *joined = strv_join(&(strv){.items = f->items + 7, .count = f->count - 7}, "|");
    tail = joined ? str_printf("[%s]", joined) : NULL;
    free(joined);
  }
  if (rest && !tail) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory naming a JUnit case");
  *name = str_printf("%s %s %s %s%s%s", f->items[5], f->items[6], f->items[3], f->items[4], tail && tail[0] ? " " : "",
                     tail ? tail : "");
  free(tail);
  return *name ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory naming a JUnit case");
}

int junit_names_of_key(const char *key, char **classname, char **name) {
  *classname = *name = NULL;
  strv f = {0};
  int status = split_key(key, &f);
  if (status == MAPP_OK && f.count < 7)
    status = mapp_fail(MAPP_ERR_INPUT, "job key '%s' has %zu fields, expected APP|VARIANT|BACKEND|nN|tT|SIZE|SCALING",
                       key, f.count);
  if (status == MAPP_OK && !(*classname = str_printf("mapp.%s.%s.%s", f.items[0], f.items[1], f.items[2])))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory naming a JUnit case");
  if (status == MAPP_OK) status = name_of_fields(&f, name);
  if (status != MAPP_OK) {
    free(*classname);
    *classname = NULL;
  }
  strv_free(&f);
  return status;
}
/* ------------------------------------------------------------ skipped jobs, a sweep's file */

int junit_add_skipped(junit_suite *s, const char *key, const char *reason) {
  char *classname = NULL, *name = NULL;
  MAPP_TRY(junit_names_of_key(key, &classname, &name));
  junit_case c = {.classname = classname, .name = name, .status = JUNIT_SKIPPED, .message = reason};
  int status = junit_add_case(s, &c);
  free(classname);
  free(name);
  return status;
}

int junit_check_path(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return mapp_fail(MAPP_ERR_INPUT, "--junit %s is a folder: give a file name", path);
  char *dir = path_dirname(path);
  if (!dir) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = access(dir, W_OK) == 0 ? MAPP_OK
                                      : mapp_fail(MAPP_ERR_INPUT, "--junit %s cannot be written: %s: %s", path, dir,
                                                  strerror(errno));
  free(dir);
  return status;
}

int junit_write_results(const char *path, const char *suite_name, const char *results_file,
                        const strv *skipped_keys, const strv *skip_reasons) {
  json_t *records = NULL, *seen = json_object();
  junit_suite *suite = NULL;
  int status = seen ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && path_exists(results_file)) status = results_load(results_file, &records);
  if (status == MAPP_OK) status = junit_suite_new(suite_name, &suite);
  if (status == MAPP_OK && records) status = junit_add_configurations(suite, records);
  for (size_t i = 0; status == MAPP_OK && skipped_keys && i < skipped_keys->count; ++i) {
    char *config = job_configuration_key(skipped_keys->items[i]);
    if (!config) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    else if (!json_object_get(seen, config)) {
      json_object_set_new(seen, config, json_true());
      status = junit_add_skipped(suite, config, skip_reasons ? skip_reasons->items[i] : "not run");
    }
    free(config);
  }
  if (status == MAPP_OK) status = junit_write(suite, path);
  junit_suite_free(suite);
  json_decref(records);
  json_decref(seen);
  return status;
}
