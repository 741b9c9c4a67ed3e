#include "jsonschema.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_error.h"

/* Keywords that describe and check nothing. */
static const char *const annotations[] = {"$schema", "$id", "$comment", "title", "description", "examples",
                                          "default", NULL};
static const char *const type_names[] = {"object", "array", "string", "integer", "number", "boolean", "null",
                                         NULL};

static bool among(const char *name, const char *const list[]) {
  for (size_t i = 0; list[i]; ++i)
    if (strcmp(name, list[i]) == 0) return true;
  return false;
}

/* ---- the schema itself ---- */

static int check_node(const json_t *schema, const char *origin);

static int bad_keyword(const char *origin, const char *key, const char *why) {
  return mapp_fail(MAPP_ERR_INPUT, "%s: schema keyword '%s' %s", origin, key, why);
}

static int check_type_keyword(const json_t *value, const char *origin) {
  if (json_is_string(value))
    return among(json_string_value(value), type_names) ? MAPP_OK
                                                       : bad_keyword(origin, "type", "names an unknown type");
  if (!json_is_array(value) || json_array_size(value) == 0)
    return bad_keyword(origin, "type", "must be a type name or a list of them");
  size_t i;
  const json_t *t;
  json_array_foreach(value, i, t) if (!json_is_string(t) || !among(json_string_value(t), type_names))
      return bad_keyword(origin, "type", "lists something that is not a type name");
  return MAPP_OK;
}

static int check_required_keyword(const json_t *value, const char *origin) {
  if (!json_is_array(value)) return bad_keyword(origin, "required", "must be a list of field names");
  size_t i;
  const json_t *name;
  json_array_foreach(value, i, name) if (!json_is_string(name))
      return bad_keyword(origin, "required", "must be a list of field names");
  return MAPP_OK;
}

static int check_properties_keyword(const json_t *value, const char *origin) {
  if (!json_is_object(value)) return bad_keyword(origin, "properties", "must be an object of schemas");
  const char *key;
  const json_t *sub;
  json_object_foreach((json_t *)value, key, sub) MAPP_TRY(check_node(sub, origin));
  return MAPP_OK;
}

static int check_keyword(const char *key, const json_t *value, const char *origin) {
  if (among(key, annotations)) return MAPP_OK;
  if (strcmp(key, "type") == 0) return check_type_keyword(value, origin);
  if (strcmp(key, "required") == 0) return check_required_keyword(value, origin);
  if (strcmp(key, "properties") == 0) return check_properties_keyword(value, origin);
  if (strcmp(key, "additionalProperties") == 0 || strcmp(key, "items") == 0) return check_node(value, origin);
  if (strcmp(key, "enum") == 0)
    return json_is_array(value) ? MAPP_OK : bad_keyword(origin, key, "must be a list of values");
  if (strcmp(key, "minimum") == 0)
    return json_is_number(value) ? MAPP_OK : bad_keyword(origin, key, "must be a number");
  return bad_keyword(origin, key,
                     "is not one mapp's validator implements (type, required, properties, additionalProperties, "
                     "enum, items, minimum): it would check nothing");
}

/* A schema is an object of keywords, or true (anything) or false (nothing). */
static int check_node(const json_t *schema, const char *origin) {
  if (json_is_boolean(schema)) return MAPP_OK;
  if (!json_is_object(schema)) return mapp_fail(MAPP_ERR_INPUT, "%s: a schema must be an object or a boolean", origin);
  const char *key;
  const json_t *value;
  json_object_foreach((json_t *)schema, key, value) MAPP_TRY(check_keyword(key, value, origin));
  return MAPP_OK;
}

int jsonschema_check_schema(const json_t *schema, const char *origin) { return check_node(schema, origin); }

/* ---- an instance against it ---- */

typedef struct {
  const char *what; /* "record" */
  char path[512];   /* "verification.checks[0].passed"; "" at the root */
  char *violation;  /* the first one, malloc'd */
} walk;

static int validate_node(const json_t *schema, const json_t *instance, walk *w);

/* Records the first violation: "<what> field '<path>' <text>" ("<what> <text>" at the root). */
__attribute__((format(printf, 2, 3))) static int violate(walk *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = str_vprintf(fmt, ap);
  va_end(ap);
  if (text) w->violation = w->path[0] ? str_printf("%s field '%s' %s", w->what, w->path, text)
                                      : str_printf("%s %s", w->what, text);
  free(text);
  return w->violation ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* A short rendering of a value for messages: strings quoted, long ones cut. */
static void value_text(const json_t *v, char *buf, size_t len) {
  char *dump = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
  snprintf(buf, len, "%s", dump ? dump : "?");
  if (dump && strlen(dump) >= len && len > 4) strcpy(buf + len - 4, "...");
  free(dump);
}

/* "a string (\"1\")", "an object", "null": what the instance is, for messages. */
static void kind_text(const json_t *v, char *buf, size_t len) {
  char value[64];
  value_text(v, value, sizeof value);
  switch (json_typeof(v)) {
  case JSON_OBJECT: snprintf(buf, len, "an object"); break;
  case JSON_ARRAY: snprintf(buf, len, "an array"); break;
  case JSON_STRING: snprintf(buf, len, "a string (%s)", value); break;
  case JSON_INTEGER: snprintf(buf, len, "an integer (%s)", value); break;
  case JSON_REAL: snprintf(buf, len, "a number (%s)", value); break;
  case JSON_TRUE:
  case JSON_FALSE: snprintf(buf, len, "a boolean (%s)", value); break;
  case JSON_NULL: snprintf(buf, len, "null"); break;
  }
}

static bool type_matches(const char *name, const json_t *v) {
  if (strcmp(name, "object") == 0) return json_is_object(v);
  if (strcmp(name, "array") == 0) return json_is_array(v);
  if (strcmp(name, "string") == 0) return json_is_string(v);
  if (strcmp(name, "integer") == 0) return json_is_integer(v);
  if (strcmp(name, "number") == 0) return json_is_number(v);
  if (strcmp(name, "boolean") == 0) return json_is_boolean(v);
  return strcmp(name, "null") == 0 && json_is_null(v);
}

/* "an integer", "a string or null" */
static void type_phrase(const json_t *type, char *buf, size_t len) {
  size_t n = json_is_array(type) ? json_array_size(type) : 1, used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used < len; ++i) {
    const char *name = json_string_value(json_is_array(type) ? json_array_get(type, i) : type);
    const char *article = strcmp(name, "null") == 0 ? "" : strchr("aeiou", name[0]) ? "an " : "a ";
    used += (size_t)snprintf(buf + used, len - used, "%s%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", article,
                             name);
  }
}

static int validate_type(const json_t *type, const json_t *v, walk *w) {
  size_t n = json_is_array(type) ? json_array_size(type) : 1;
  for (size_t i = 0; i < n; ++i)
    if (type_matches(json_string_value(json_is_array(type) ? json_array_get(type, i) : type), v)) return MAPP_OK;
  char want[128], got[96];
  type_phrase(type, want, sizeof want);
  kind_text(v, got, sizeof got);
  return violate(w, "must be %s, got %s", want, got);
}

static int validate_enum(const json_t *choices, const json_t *v, walk *w) {
  size_t i;
  const json_t *c;
  json_array_foreach(choices, i, c) if (json_equal((json_t *)c, (json_t *)v)) return MAPP_OK;
  char got[64], list[256] = "";
  size_t used = 0;
  value_text(v, got, sizeof got);
  json_array_foreach(choices, i, c) {
    char one[64];
    value_text(c, one, sizeof one);
    if (used < sizeof list) used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", one);
  }
  return violate(w, "is %s, not one of %s", got, list);
}

/* Appends ".key" (or "key" at the root) or "[i]" to the path for the
 * duration of one child's check; the previous length restores it. */
static size_t path_push(walk *w, const char *key, size_t index) {
  size_t before = strlen(w->path);
  if (key) snprintf(w->path + before, sizeof w->path - before, "%s%s", before ? "." : "", key);
  else snprintf(w->path + before, sizeof w->path - before, "[%zu]", index);
  return before;
}

static int validate_child(const json_t *schema, const json_t *child, const char *key, size_t index, walk *w) {
  size_t before = path_push(w, key, index);
  int status = validate_node(schema, child, w);
  if (!w->violation) w->path[before] = '\0'; /* a violation keeps its path for the message */
  return status;
}

static int validate_required(const json_t *required, const json_t *v, walk *w) {
  size_t i;
  const json_t *name;
  json_array_foreach(required, i, name) {
    if (json_object_get(v, json_string_value(name))) continue;
    size_t before = strlen(w->path);
    char *field = before ? str_printf("%s.%s", w->path, json_string_value(name)) : strdup(json_string_value(name));
    if (!field) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    w->violation = str_printf("%s lacks required field '%s'", w->what, field);
    free(field);
    return w->violation ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  return MAPP_OK;
}

/* properties for the fields they name, additionalProperties for the rest. */
static int validate_fields(const json_t *schema, const json_t *v, walk *w) {
  const json_t *properties = json_object_get(schema, "properties");
  const json_t *additional = json_object_get(schema, "additionalProperties");
  const char *key;
  const json_t *child;
  json_object_foreach((json_t *)v, key, child) {
    const json_t *sub = json_object_get(properties, key);
    if (!sub) sub = additional;
    if (sub) MAPP_TRY(validate_child(sub, child, key, 0, w));
    if (w->violation) return MAPP_OK;
  }
  return MAPP_OK;
}

static int validate_items(const json_t *items, const json_t *v, walk *w) {
  size_t i;
  const json_t *child;
  json_array_foreach(v, i, child) {
    MAPP_TRY(validate_child(items, child, NULL, i, w));
    if (w->violation) return MAPP_OK;
  }
  return MAPP_OK;
}

static int validate_minimum(const json_t *minimum, const json_t *v, walk *w) {
  if (!json_is_number(v) || json_number_value(v) >= json_number_value(minimum)) return MAPP_OK;
  char got[64], bound[64];
  value_text(v, got, sizeof got);
  value_text(minimum, bound, sizeof bound);
  return violate(w, "is %s, below its minimum %s", got, bound);
}

/* The keywords in a fixed order, so the first violation reported is the
 * most telling: the type before the fields, a missing field before a bad one. */
static int validate_node(const json_t *schema, const json_t *v, walk *w) {
  if (json_is_true(schema)) return MAPP_OK;
  if (json_is_false(schema)) return violate(w, "is not allowed here");
  const json_t *k;
  if ((k = json_object_get(schema, "type"))) MAPP_TRY(validate_type(k, v, w));
  if (!w->violation && (k = json_object_get(schema, "enum"))) MAPP_TRY(validate_enum(k, v, w));
  if (!w->violation && (k = json_object_get(schema, "minimum"))) MAPP_TRY(validate_minimum(k, v, w));
  if (!w->violation && json_is_object(v) && (k = json_object_get(schema, "required")))
    MAPP_TRY(validate_required(k, v, w));
  if (!w->violation && json_is_object(v)) MAPP_TRY(validate_fields(schema, v, w));
  if (!w->violation && json_is_array(v) && (k = json_object_get(schema, "items"))) MAPP_TRY(validate_items(k, v, w));
  return MAPP_OK;
}

int jsonschema_validate(const json_t *schema, const json_t *instance, const char *what, char **violation) {
  *violation = NULL;
  /* Checked every time: validate_node trusts the keywords' types. */
  char origin[96];
  snprintf(origin, sizeof origin, "the schema of the %s", what);
  MAPP_TRY(jsonschema_check_schema(schema, origin));
  walk w = {.what = what};
  int status = validate_node(schema, instance, &w);
  if (status != MAPP_OK) {
    free(w.violation);
    return status;
  }
  *violation = w.violation;
  return MAPP_OK;
}
