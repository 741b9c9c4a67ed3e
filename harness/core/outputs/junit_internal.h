/* What the pieces of junit (junit.h) share, not part of its API: the
 * suite as junit.c stores it and junit_xml.c writes it, the text buffer
 * the XML and a failed run's details are written into, and a run's case as
 * junit_judge.c judges it and junit_record.c adds it. */
#ifndef HARNESS_JUNIT_INTERNAL_H
#define HARNESS_JUNIT_INTERNAL_H

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "junit.h"
#include "mapp_error.h"
#include "strv.h"

typedef struct {
  char *classname, *name, *type, *message, *details;
  double time_s;
  junit_status status;
  strv prop_names, prop_values;
} stored_case;

struct junit_suite {
  char *name;
  time_t timestamp;
  double time_s; /* NAN: the sum of the cases' times */
  strv prop_names, prop_values;
  stored_case *cases;
  size_t count, capacity;
};

static inline int push_property(strv *names, strv *values, const char *name, const char *value) {
  MAPP_TRY(strv_push(names, name));
  return strv_push(values, value ? value : "");
}

/* ------------------------------------------------------------ text */

typedef struct {
  char *data;
  size_t len, capacity;
} text_buf;

static inline int text_append(text_buf *t, const char *bytes, size_t n) {
  if (t->len + n + 1 > t->capacity) {
    size_t grown = t->capacity ? t->capacity : 4096;
    while (grown < t->len + n + 1) grown *= 2;
    char *data = realloc(t->data, grown);
    if (!data) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory writing JUnit XML (%zu bytes)", grown);
    t->data = data;
    t->capacity = grown;
  }
  memcpy(t->data + t->len, bytes, n);
  t->len += n;
  t->data[t->len] = '\0';
  return MAPP_OK;
}

static inline int text_puts(text_buf *t, const char *s) { return text_append(t, s, strlen(s)); }

static inline int text_printf(text_buf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int text_printf(text_buf *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = str_vprintf(fmt, ap);
  va_end(ap);
  if (!s) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory writing JUnit XML");
  int status = text_puts(t, s);
  free(s);
  return status;
}

/* ------------------------------------------------------------ records */

/* A run's case as junit_add_record builds it. */
typedef struct {
  junit_status status;
  const char *type;
  char *message, *classname, *name;
  strv prop_names, prop_values;
} record_case;

static inline const char *text_at(const json_t *record, const char *object, const char *field) {
  const json_t *o = object ? json_object_get(record, object) : record;
  return json_string_value(json_object_get(o, field));
}

static inline double number_at(const json_t *record, const char *field, double otherwise) {
  const json_t *v = json_object_get(record, field);
  return json_is_number(v) ? json_number_value(v) : otherwise;
}

/* Whether a record was skipped, passed or failed, and how (junit_judge.c):
 * rc's status, type and message. */
void junit_judge_record(const json_t *record, record_case *rc);

#endif
