/* JUnit XML (junit.h), the document: text and attribute values escaped
 * for XML 1.0 (what it cannot hold as U+FFFD), the suite with its
 * properties and cases, and the file written. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "junit.h"
#include "junit_internal.h"
#include "mapp_error.h"

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
