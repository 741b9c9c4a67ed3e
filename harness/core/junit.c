#include "junit.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "job.h"
#include "mapp_error.h"
#include "proc.h"
#include "results.h"
#include "stats.h"
#include "verdict.h"
#include "strv.h"

/* Enough of a failed run's log to see why without opening it. */
enum { LOG_TAIL_LINES = 40, LOG_TAIL_BYTES = 16384 };

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

/* ------------------------------------------------------------ text */

typedef struct {
  char *data;
  size_t len, capacity;
} text_buf;

static int text_append(text_buf *t, const char *bytes, size_t n) {
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

static int text_puts(text_buf *t, const char *s) { return text_append(t, s, strlen(s)); }

static int text_printf(text_buf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int text_printf(text_buf *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = str_vprintf(fmt, ap);
  va_end(ap);
  if (!s) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory writing JUnit XML");
  int status = text_puts(t, s);
  free(s);
  return status;
}

/* ------------------------------------------------------------ escaping */

static bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF) and its code
 * point, or 0 when s does not start one. */
static size_t utf8_sequence(const unsigned char *s, uint32_t *cp) {
  unsigned char c = s[0];
  if (c < 0x80) return *cp = c, 1;
  if (c >= 0xC2 && c <= 0xDF && is_continuation(s[1])) return *cp = (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F), 2;
  unsigned char low = 0x80, high = 0xBF;
  if (c == 0xE0) low = 0xA0;
  if (c == 0xED) high = 0x9F;
  if (c >= 0xE0 && c <= 0xEF && s[1] >= low && s[1] <= high && is_continuation(s[2]))
    return *cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F), 3;
  low = c == 0xF0 ? 0x90 : 0x80;
  high = c == 0xF4 ? 0x8F : 0xBF;
  if (c >= 0xF0 && c <= 0xF4 && s[1] >= low && s[1] <= high && is_continuation(s[2]) && is_continuation(s[3]))
    return *cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 |
                 (s[3] & 0x3F),
           4;
  return 0;
}

/* XML 1.0's Char production. */
static bool xml_allows(uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* The markup for an ASCII character, or NULL when it stands for itself.
 * In attributes, tabs and line breaks are written as references: a parser
 * would turn them into spaces. A text's \r too, which would become \n. */
static const char *markup_of(uint32_t cp, bool attribute) {
  switch (cp) {
  case '&': return "&amp;";
  case '<': return "&lt;";
  case '>': return "&gt;"; /* "]]>" may not appear in text */
  case '"': return "&quot;";
  case '\'': return "&apos;";
  case '\r': return "&#13;";
  case '\n': return attribute ? "&#10;" : NULL;
  case '\t': return attribute ? "&#9;" : NULL;
  default: return NULL;
  }
}

/* Text or an attribute value as XML: markup escaped, and what XML 1.0
 * cannot hold (control characters, bytes that are not UTF-8) as U+FFFD,
 * so a log tail of any bytes keeps the document well-formed. */
static int append_escaped(text_buf *t, const char *text, bool attribute) {
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  while (*s) {
    uint32_t cp = 0;
    size_t n = utf8_sequence(s, &cp);
    const char *markup = n ? markup_of(cp, attribute) : NULL;
    if (n == 0 || !xml_allows(cp)) MAPP_TRY(text_puts(t, "\xEF\xBF\xBD"));
    else if (markup) MAPP_TRY(text_puts(t, markup));
    else MAPP_TRY(text_append(t, (const char *)s, n));
    s += n ? n : 1;
  }
  return MAPP_OK;
}

static int append_attribute(text_buf *t, const char *name, const char *value) {
  MAPP_TRY(text_printf(t, " %s=\"", name));
  MAPP_TRY(append_escaped(t, value, true));
  return text_puts(t, "\"");
}

/* xs:decimal: no exponent, no NaN. */
static int append_seconds(text_buf *t, const char *name, double seconds) {
  if (!isfinite(seconds) || seconds < 0) seconds = 0;
  return text_printf(t, " %s=\"%.3f\"", name, seconds);
}

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

static int push_property(strv *names, strv *values, const char *name, const char *value) {
  MAPP_TRY(strv_push(names, name));
  return strv_push(values, value ? value : "");
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

/* ------------------------------------------------------------ rendering */

static double suite_time(const junit_suite *s) {
  if (!isnan(s->time_s)) return s->time_s;
  double sum = 0;
  for (size_t i = 0; i < s->count; ++i)
    if (isfinite(s->cases[i].time_s) && s->cases[i].time_s > 0) sum += s->cases[i].time_s;
  return sum;
}

/* The schema's timestamp: local-less ISO 8601 to the second; ours is UTC. */
static void format_timestamp(time_t when, char *buf, size_t len) {
  struct tm tm;
  if (!gmtime_r(&when, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
    snprintf(buf, len, "1970-01-01T00:00:00");
}

static void host_name(char *buf, size_t len) {
  if (gethostname(buf, len) != 0) buf[0] = '\0';
  buf[len - 1] = '\0';
  if (!buf[0]) snprintf(buf, len, "localhost");
}

static int append_suite_open(text_buf *t, const junit_suite *s) {
  junit_counts n;
  junit_suite_counts(s, &n);
  char stamp[32], host[256];
  format_timestamp(s->timestamp, stamp, sizeof stamp);
  host_name(host, sizeof host);
  MAPP_TRY(text_puts(t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite"));
  MAPP_TRY(append_attribute(t, "name", s->name));
  MAPP_TRY(append_attribute(t, "package", s->name));
  MAPP_TRY(text_printf(t, " id=\"0\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\"", n.tests,
                       n.failures, n.errors, n.skipped));
  MAPP_TRY(append_seconds(t, "time", suite_time(s)));
  MAPP_TRY(append_attribute(t, "timestamp", stamp));
  MAPP_TRY(append_attribute(t, "hostname", host));
  return text_puts(t, ">\n");
}

static int append_property(text_buf *t, const char *name, const char *value) {
  MAPP_TRY(text_puts(t, "      <property"));
  MAPP_TRY(append_attribute(t, "name", name));
  MAPP_TRY(append_attribute(t, "value", value));
  return text_puts(t, "/>\n");
}

/* A case's own properties under the suite, "CLASSNAME/NAME/PROPERTY":
 * the schema has no <properties> in a <testcase>. */
static int append_case_properties(text_buf *t, const stored_case *c) {
  for (size_t i = 0; i < c->prop_names.count; ++i) {
    char *name = str_printf("%s/%s/%s", c->classname, c->name, c->prop_names.items[i]);
    if (!name) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory writing JUnit properties");
    int status = append_property(t, name, c->prop_values.items[i]);
    free(name);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

static int append_properties(text_buf *t, const junit_suite *s) {
  MAPP_TRY(text_puts(t, "    <properties>\n"));
  for (size_t i = 0; i < s->prop_names.count; ++i)
    MAPP_TRY(append_property(t, s->prop_names.items[i], s->prop_values.items[i]));
  for (size_t i = 0; i < s->count; ++i) MAPP_TRY(append_case_properties(t, &s->cases[i]));
  return text_puts(t, "    </properties>\n");
}

/* The text of a failure, error or skip: the details, then the properties
 * (CI pages show this text, rarely the suite's properties). */
static int append_case_body(text_buf *t, const stored_case *c) {
  if (c->details) MAPP_TRY(append_escaped(t, c->details, false));
  if (c->details && c->prop_names.count && c->details[0] && c->details[strlen(c->details) - 1] != '\n')
    MAPP_TRY(text_puts(t, "\n"));
  if (c->prop_names.count) MAPP_TRY(text_puts(t, "properties:\n"));
  for (size_t i = 0; i < c->prop_names.count; ++i) {
    MAPP_TRY(text_puts(t, "  "));
    MAPP_TRY(append_escaped(t, c->prop_names.items[i], false));
    MAPP_TRY(text_puts(t, ": "));
    MAPP_TRY(append_escaped(t, c->prop_values.items[i], false));
    MAPP_TRY(text_puts(t, "\n"));
  }
  return MAPP_OK;
}

static const char *element_of(junit_status status) {
  switch (status) {
  case JUNIT_FAILURE: return "failure";
  case JUNIT_ERROR: return "error";
  case JUNIT_SKIPPED: return "skipped";
  case JUNIT_PASS: break;
  }
  return NULL;
}

static int append_outcome(text_buf *t, const stored_case *c) {
  const char *element = element_of(c->status);
  MAPP_TRY(text_printf(t, "      <%s", element));
  /* the schema requires a type on failures and errors, and allows none on skips */
  if (c->status != JUNIT_SKIPPED) MAPP_TRY(append_attribute(t, "type", c->type ? c->type : element));
  if (c->message) MAPP_TRY(append_attribute(t, "message", c->message));
  MAPP_TRY(text_puts(t, ">"));
  MAPP_TRY(append_case_body(t, c));
  return text_printf(t, "</%s>\n", element);
}

static int append_case(text_buf *t, const stored_case *c) {
  MAPP_TRY(text_puts(t, "    <testcase"));
  MAPP_TRY(append_attribute(t, "classname", c->classname));
  MAPP_TRY(append_attribute(t, "name", c->name));
  MAPP_TRY(append_seconds(t, "time", c->time_s));
  if (c->status == JUNIT_PASS) return text_puts(t, "/>\n");
  MAPP_TRY(text_puts(t, ">\n"));
  MAPP_TRY(append_outcome(t, c));
  return text_puts(t, "    </testcase>\n");
}

static int append_document(text_buf *t, const junit_suite *s) {
  MAPP_TRY(append_suite_open(t, s));
  MAPP_TRY(append_properties(t, s));
  for (size_t i = 0; i < s->count; ++i) MAPP_TRY(append_case(t, &s->cases[i]));
  /* required by the schema, even empty */
  return text_puts(t, "    <system-out/>\n    <system-err/>\n  </testsuite>\n</testsuites>\n");
}

int junit_render(const junit_suite *s, char **xml) {
  text_buf t = {0};
  int status = append_document(&t, s);
  if (status != MAPP_OK) free(t.data);
  *xml = status == MAPP_OK ? t.data : NULL;
  return status;
}

int junit_write(const junit_suite *s, const char *path) {
  char *xml;
  MAPP_TRY(junit_render(s, &xml));
  int status = write_text_file(path, xml);
  free(xml);
  return status;
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

/* ------------------------------------------------------------ records */

/* A run's case as junit_add_record builds it. */
typedef struct {
  junit_status status;
  const char *type;
  char *message, *classname, *name;
  strv prop_names, prop_values;
} record_case;

static const char *text_at(const json_t *record, const char *object, const char *field) {
  const json_t *o = object ? json_object_get(record, object) : record;
  return json_string_value(json_object_get(o, field));
}

static bool text_is(const char *text, const char *expected) { return text && strcmp(text, expected) == 0; }

static double number_at(const json_t *record, const char *field, double otherwise) {
  const json_t *v = json_object_get(record, field);
  return json_is_number(v) ? json_number_value(v) : otherwise;
}

static char *one_line(char *text) {
  if (text) text[strcspn(text, "\n")] = '\0';
  return text;
}

/* "FIELD (MODEL, bound B): worst abs A, V values out of bounds" for the
 * first failing field of a comparison, else its error, else NULL. */
static char *first_failing_field(const json_t *comparison) {
  const char *error = json_string_value(json_object_get(comparison, "error"));
  if (error) return strdup(error);
  size_t i;
  const json_t *f;
  json_array_foreach(json_object_get(comparison, "fields"), i, f) {
    if (!json_is_false(json_object_get(f, "passed"))) continue;
    return str_printf("%s (%s, bound %g): worst abs %g, rel %g, %lld values out of bounds",
                      text_at(f, NULL, "name") ? text_at(f, NULL, "name") : "?",
                      text_at(f, NULL, "model") ? text_at(f, NULL, "model") : "?", number_at(f, "bound", NAN),
                      number_at(f, "worst_abs", NAN), number_at(f, "worst_rel", NAN),
                      (long long)json_integer_value(json_object_get(f, "violations")));
  }
  return NULL;
}

static char *comparison_message(const json_t *record, const char *object, const char *what) {
  const json_t *comparison = json_object_get(record, object);
  char *why = first_failing_field(comparison);
  const char *file = text_at(record, object, "file");
  char *message = str_printf("answer differs from %s%s%s%s%s", what, file ? " " : "", file ? file : "",
                             why ? ": " : "", why ? why : "");
  free(why);
  return one_line(message);
}

/* The names of the failed invariant checks, ", "-joined (malloc'd). */
static char *failed_checks(const json_t *record) {
  strv names = {0};
  size_t i;
  const json_t *c;
  json_array_foreach(json_object_get(json_object_get(record, "verification"), "checks"), i, c) {
    const char *name = text_at(c, NULL, "name");
    if (json_is_false(json_object_get(c, "passed")) && name && strv_push(&names, name) != MAPP_OK) break;
  }
  char *text = strv_join(&names, ", ");
  strv_free(&names);
  return text;
}

static char *verification_message(const json_t *record) {
  char *checks = failed_checks(record);
  double worst = number_at(json_object_get(record, "verification"), "worst_error", NAN);
  char worst_text[64] = "";
  if (!isnan(worst)) snprintf(worst_text, sizeof worst_text, " (worst error %g)", worst);
  char *message = str_printf("verification failed%s%s%s", worst_text, checks && checks[0] ? ": " : "",
                             checks ? checks : "");
  free(checks);
  return message;
}

static char *exit_message(const json_t *record, long exit_code) {
  const char *state = text_at(record, NULL, "scheduler_state");
  if (exit_code == -1 && state) return str_printf("the batch job ended without this run's status (Slurm: %s)", state);
  const char *app = text_at(record, NULL, "app"), *log = text_at(record, NULL, "log");
  char *prog = app ? str_printf("mapp-%s", app) : NULL;
  char *said = prog && log ? proc_log_error(log, prog) : NULL;
  char signal_text[48] = "";
  if (exit_code > 128 && exit_code < 128 + 65) snprintf(signal_text, sizeof signal_text, " (signal %ld)", exit_code - 128);
  char *message = str_printf("exit code %ld%s%s%s", exit_code, signal_text, said ? ": " : "", said ? said : "");
  free(prog);
  free(said);
  return one_line(message);
}

static char *timeout_message(const json_t *record) {
  if (text_is(text_at(record, NULL, "scheduler_state"), "TIMEOUT"))
    return strdup("timed out: the batch job ran past its time limit (Slurm: TIMEOUT)");
  const json_t *timeout = json_object_get(record, "timeout");
  double limit = number_at(timeout, "limit_s", number_at(record, "time_limit_s", NAN));
  double elapsed = number_at(timeout, "elapsed_s", number_at(record, "elapsed_s", 0));
  char limit_text[64] = "";
  if (!isnan(limit)) snprintf(limit_text, sizeof limit_text, " (limit %g s)", limit);
  return str_printf("timed out after %.2f s%s", elapsed, limit_text);
}

static char *missing_baseline_message(const json_t *record) {
  const char *error = text_at(record, "baseline", "error"), *file = text_at(record, "baseline", "file");
  if (error) return one_line(str_printf("no baseline to check the answer against: %s", error));
  return str_printf("no baseline to check the answer against (check: required)%s%s", file ? ": missing " : "",
                    file ? file : "");
}

static bool is_skipped(const json_t *record) {
  return json_is_true(json_object_get(record, "skipped")) || text_is(text_at(record, NULL, "status"), "skipped");
}

/* "timeout": true or {limit_s, elapsed_s, killed} (job_judge), a "status"
 * of "timeout", or a batch job Slurm stopped at its limit. */
static bool is_timeout(const json_t *record) {
  const json_t *timeout = json_object_get(record, "timeout");
  return json_is_true(timeout) || json_is_object(timeout) || text_is(text_at(record, NULL, "status"), "timeout") ||
         text_is(text_at(record, NULL, "scheduler_state"), "TIMEOUT");
}

static bool verification_failed(const json_t *record, long exit_code) {
  return exit_code == MAPP_ERR_VERIFY || text_is(text_at(record, "verification", "status"), "fail");
}

/* Required and neither passed nor failed: nothing was compared. */
static bool baseline_missing(const json_t *record) {
  const char *status = text_at(record, "baseline", "status");
  return text_is(text_at(record, NULL, "check"), "required") && !text_is(status, "pass") && !text_is(status, "fail");
}

/* The failure kinds, by the names of job_judge's "outcome". */
static const char *const outcome_types[][2] = {
    {"timeout", "timeout"},     {"exit", "exit"},
    {"verify", "verification"}, {"baseline", "baseline"},
    {"unchecked", "missing-baseline"}, {"consistency", "consistency"},
};

/* The kind of failure of a run, NULL when it passed: the record's
 * "outcome" where it names one, else judged from its fields in the order
 * job_judge does (a run that did not finish, its own verification, the
 * baseline, a required baseline missing, the sweep's 1-rank answer), for
 * records written before the outcome was. */
static const char *failure_type(const json_t *record) {
  const char *outcome = text_at(record, NULL, "outcome");
  for (size_t i = 0; outcome && i < sizeof outcome_types / sizeof outcome_types[0]; ++i)
    if (strcmp(outcome, outcome_types[i][0]) == 0) return outcome_types[i][1];
  long exit_code = (long)json_integer_value(json_object_get(record, "exit_code"));
  if (is_timeout(record)) return "timeout";
  if (exit_code != 0 && exit_code != MAPP_ERR_VERIFY) return "exit";
  if (verification_failed(record, exit_code)) return "verification";
  if (text_is(text_at(record, "baseline", "status"), "fail")) return "baseline";
  if (baseline_missing(record)) return "missing-baseline";
  if (text_is(text_at(record, "consistency", "status"), "fail")) return "consistency";
  return NULL;
}

static char *failure_message(const json_t *record, const char *type) {
  long exit_code = (long)json_integer_value(json_object_get(record, "exit_code"));
  if (strcmp(type, "timeout") == 0) return timeout_message(record);
  if (strcmp(type, "exit") == 0) return exit_message(record, exit_code);
  if (strcmp(type, "verification") == 0) return verification_message(record);
  if (strcmp(type, "baseline") == 0) return comparison_message(record, "baseline", "baseline");
  if (strcmp(type, "missing-baseline") == 0) return missing_baseline_message(record);
  return comparison_message(record, "consistency", "the sweep's 1-rank answer");
}

static char *skip_message(const json_t *record) {
  const char *reason = text_at(record, NULL, "reason");
  if (!reason) reason = text_at(record, NULL, "skip_reason");
  return strdup(reason ? reason : "not run");
}

/* A failed launch is an error (the run itself broke), any other failure a
 * failure (it ran, and a check said no). */
static void judge_record(const json_t *record, record_case *rc) {
  if (is_skipped(record)) {
    rc->status = JUNIT_SKIPPED;
    rc->message = skip_message(record);
    return;
  }
  rc->type = failure_type(record);
  rc->status = !rc->type ? JUNIT_PASS : strcmp(rc->type, "exit") == 0 ? JUNIT_ERROR : JUNIT_FAILURE;
  if (rc->type) rc->message = failure_message(record, rc->type);
}

static int push_record_property(record_case *rc, const char *name, char *value) {
  if (!value) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory listing the properties of a record");
  int status = push_property(&rc->prop_names, &rc->prop_values, name, value);
  free(value);
  return status;
}

static int push_integer_property(record_case *rc, const json_t *record, const char *field) {
  const json_t *v = json_object_get(record, field);
  if (!json_is_integer(v)) return MAPP_OK;
  return push_record_property(rc, field, str_printf("%lld", (long long)json_integer_value(v)));
}

/* The statistics' verdict: a string, or an object naming it ("kind"). */
static const char *verdict_of(const json_t *record) {
  const json_t *v = json_object_get(record, "verdict");
  if (!v) v = json_object_get(json_object_get(record, "timing"), "verdict");
  if (json_is_string(v)) return json_string_value(v);
  const char *fields[] = {"kind", "verdict", "name", "status"};
  for (size_t i = 0; json_is_object(v) && i < sizeof fields / sizeof fields[0]; ++i)
    if (json_is_string(json_object_get(v, fields[i]))) return json_string_value(json_object_get(v, fields[i]));
  return NULL;
}

/* The figure of merit and its unit, the verdict, repetitions and attempts,
 * each when the record has it. */
static int record_properties(const json_t *record, record_case *rc) {
  const json_t *fom = json_object_get(record, "fom");
  const json_t *value = json_object_get(fom, "value");
  if (json_is_number(value)) MAPP_TRY(push_record_property(rc, "fom", str_printf("%.6g", json_number_value(value))));
  const char *unit = text_at(fom, NULL, "name");
  if (unit) MAPP_TRY(push_record_property(rc, "fom_unit", strdup(unit)));
  const char *verdict = verdict_of(record);
  if (verdict) MAPP_TRY(push_record_property(rc, "verdict", strdup(verdict)));
  MAPP_TRY(push_integer_property(rc, record, "repetitions"));
  const json_t *attempts = json_object_get(record, "attempts");
  if (json_is_array(attempts)) /* one entry per launch (retries) */
    return push_record_property(rc, "attempts", str_printf("%zu", json_array_size(attempts)));
  return push_integer_property(rc, record, "attempts");
}

/* Where the last LOG_TAIL_LINES lines of text begin. */
static size_t tail_start(const char *text, size_t n) {
  size_t from = n > 0 && text[n - 1] == '\n' ? n - 1 : n;
  for (int lines = 0; from > 0; --from)
    if (text[from - 1] == '\n' && ++lines == LOG_TAIL_LINES) break;
  return from;
}

/* The last lines of a log (from its last LOG_TAIL_BYTES), or why it cannot
 * be read: a log that is gone never stops the report. */
static int append_log_tail(text_buf *t, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return text_printf(t, "(no log to show: %s)\n", strerror(errno));
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  bool cut = size > LOG_TAIL_BYTES;
  char buf[LOG_TAIL_BYTES + 1];
  size_t n = fseek(f, cut ? size - LOG_TAIL_BYTES : 0, SEEK_SET) == 0 ? fread(buf, 1, LOG_TAIL_BYTES, f) : 0;
  fclose(f);
  buf[n] = '\0';
  for (size_t i = 0; i < n; ++i)
    if (buf[i] == '\0') buf[i] = '\x01'; /* XML cannot hold NUL either: shown as U+FFFD like other controls */
  if (n == 0) return text_puts(t, "(the log is empty)\n");
  size_t from = tail_start(buf, n);
  if (cut && from == 0) from = strcspn(buf, "\n") + (buf[strcspn(buf, "\n")] == '\n'); /* drop the cut line */
  MAPP_TRY(text_puts(t, "--- the end of the log ---\n"));
  MAPP_TRY(text_puts(t, buf + from));
  return n > 0 && buf[n - 1] != '\n' ? text_puts(t, "\n") : MAPP_OK;
}

/* What a reader needs to act on a failed run: the message, the log, the
 * command that reproduces the run, the bless command of a missing
 * baseline, and the log's tail. */
static int record_details(const json_t *record, const record_case *rc, char **details) {
  text_buf t = {0};
  const char *log = text_at(record, NULL, "log"), *launch = text_at(record, NULL, "launch");
  const char *bless = text_at(record, "baseline", "bless");
  int status = text_printf(&t, "%s\n", rc->message ? rc->message : "");
  if (status == MAPP_OK && log) status = text_printf(&t, "log: %s\n", log);
  if (status == MAPP_OK && launch) status = text_printf(&t, "reproduce: %s\n", launch);
  if (status == MAPP_OK && bless && rc->type && strcmp(rc->type, "missing-baseline") == 0)
    status = text_printf(&t, "bless: %s\n", bless);
  if (status == MAPP_OK && log && rc->status != JUNIT_SKIPPED) status = append_log_tail(&t, log);
  if (status != MAPP_OK) free(t.data);
  *details = status == MAPP_OK ? t.data : NULL;
  return status;
}

static int record_names(const json_t *record, record_case *rc) {
  char *key = job_key_of_record(record);
  if (!key)
    return mapp_fail(MAPP_ERR_INPUT, "a record without a key or app, variant, backend, size, scaling, ranks and "
                                     "threads cannot be named as a JUnit case");
  int status = junit_names_of_key(key, &rc->classname, &rc->name);
  free(key);
  return status;
}

static void record_case_free(record_case *rc) {
  free(rc->message);
  free(rc->classname);
  free(rc->name);
  strv_free(&rc->prop_names);
  strv_free(&rc->prop_values);
}

static int add_record_case(junit_suite *s, const json_t *record, record_case *rc) {
  MAPP_TRY(record_names(record, rc));
  judge_record(record, rc);
  if (rc->status != JUNIT_PASS && !rc->message) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory judging a record");
  MAPP_TRY(record_properties(record, rc));
  char *details = NULL;
  if (rc->status != JUNIT_PASS) MAPP_TRY(record_details(record, rc, &details));
  junit_property *props = calloc(rc->prop_names.count + 1, sizeof *props);
  if (!props) {
    free(details);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory listing the properties of a record");
  }
  for (size_t i = 0; i < rc->prop_names.count; ++i)
    props[i] = (junit_property){rc->prop_names.items[i], rc->prop_values.items[i]};
  junit_case c = {.classname = rc->classname, .name = rc->name, .time_s = number_at(record, "elapsed_s", 0),
                  .status = rc->status, .type = rc->type, .message = rc->message, .details = details,
                  .properties = props, .property_count = rc->prop_names.count};
  int status = junit_add_case(s, &c);
  free(props);
  free(details);
  return status;
}

int junit_add_record(junit_suite *s, const json_t *record) {
  if (!json_is_object(record)) return mapp_fail(MAPP_ERR_INPUT, "a JUnit case needs a record (a JSON object)");
  record_case rc = {0};
  int status = add_record_case(s, record, &rc);
  record_case_free(&rc);
  return status;
}

/* ---------------------------------------------------------------- configurations */

/* The record that stands for a configuration's runs (a new reference):
 * its first failed run, else its last; the median figure of merit of its
 * passed runs (stats_median) and the sum of their seconds. */
static json_t *configuration_record(const char *config, const json_t *runs) {
  size_t n = json_array_size(runs), passed = 0, i;
  const json_t *first_failed = NULL, *r;
  double seconds = 0.0, *foms = malloc((n + 1) * sizeof *foms);
  if (!foms) return NULL;
  json_array_foreach(runs, i, r) {
    record_case rc = {0};
    judge_record(r, &rc);
    const json_t *value = json_object_get(json_object_get(r, "fom"), "value");
    if (rc.status != JUNIT_PASS && !first_failed) first_failed = r;
    if (rc.status == JUNIT_PASS && json_is_number(value)) foms[passed++] = json_number_value(value);
    record_case_free(&rc);
    seconds += number_at(r, "elapsed_s", 0);
  }
  double median = passed ? stats_median(foms, passed) : NAN;
  free(foms);
  json_t *out = json_deep_copy(first_failed ? first_failed : json_array_get(runs, n - 1));
  if (!out) return NULL;
  json_object_set_new(out, "key", json_string(config));
  json_object_set_new(out, "repetitions", json_integer((json_int_t)n));
  json_object_set_new(out, "elapsed_s", json_real(seconds));
  json_t *fom = json_object_get(out, "fom");
  if (json_is_object(fom) && !isnan(median)) json_object_set_new(fom, "value", json_real(median));
  /* The statistics' verdict on the runs (stable, noisy, too-short, disturbed). */
  verdict_summary verdict;
  if (verdict_of_records(runs, 0.0, &verdict) == MAPP_OK)
    json_object_set_new(out, "verdict", json_string(verdict_name(verdict.kind)));
  else
    mapp_error_clear();
  return out;
}

int junit_add_configurations(junit_suite *s, const json_t *records) {
  json_t *groups = json_object(); /* configuration key -> its runs, in first-seen order */
  if (!groups) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    char *key = job_key_of_record(r), *config = key ? job_configuration_key(key) : NULL;
    if (!config) status = mapp_fail(MAPP_ERR_INPUT, "record %zu has no key to name its JUnit case", i + 1);
    json_t *runs = config ? json_object_get(groups, config) : NULL;
    if (config && !runs) json_object_set_new(groups, config, runs = json_array());
    if (runs) json_array_append(runs, (json_t *)r);
    free(config);
    free(key);
    if (status != MAPP_OK) break;
  }
  const char *config;
  json_t *runs;
  json_object_foreach(groups, config, runs) {
    if (status != MAPP_OK) break;
    json_t *record = configuration_record(config, runs);
    status = record ? junit_add_record(s, record) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    json_decref(record);
  }
  json_decref(groups);
  return status;
}

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
