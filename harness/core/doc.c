/* One document, two renderings (doc.h): Markdown and a self-contained HTML page. */
#include "doc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"
#include "mapp_error.h"

/* Figures larger than this are linked, not inlined: the page should open
 * quickly, and a long animation belongs beside it. */
enum { INLINE_MAX_BYTES = 4 << 20 };

/* Nothing may load but the page's own style and data: images, and no script
 * may run; a browser refuses anything else and says so on its console. */
static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
    "img-src data:\">\n"
    "<meta name=\"generator\" content=\"mapp\">\n";

static const char html_style[] =
    "<style>\n"
    "body{margin:0;background:#fff;color:#1f2328;font:15px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,"
    "\"Liberation Sans\",\"DejaVu Sans\",Arial,sans-serif}\n"
    "main{max-width:1280px;margin:0 auto;padding:20px 28px 48px}\n"
    "h1{font-size:1.75em;margin:.4em 0 .6em;padding-bottom:.3em;border-bottom:2px solid #1f6feb}\n"
    "h2{font-size:1.35em;margin:1.8em 0 .6em;padding-bottom:.2em;border-bottom:1px solid #d0d7de}\n"
    "h3{font-size:1.1em;margin:1.4em 0 .5em}\n"
    "h4{font-size:1em;margin:1.2em 0 .4em}\n"
    "p{margin:.5em 0 1em;max-width:110ch}\n"
    "a{color:#0969da}\n"
    "code{font:.88em ui-monospace,SFMono-Regular,Menlo,Consolas,\"Liberation Mono\",\"DejaVu Sans Mono\",monospace;"
    "background:#eff1f3;padding:.1em .35em;border-radius:4px;overflow-wrap:anywhere}\n"
    "pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:10px 12px;overflow:auto;"
    "max-height:30em;line-height:1.4;white-space:pre-wrap;overflow-wrap:anywhere}\n"
    "pre code{background:none;padding:0;font-size:.85em;overflow-wrap:normal}\n"
    ".table{overflow-x:auto;margin:.5em 0 1em}\n"
    "table{border-collapse:collapse;font-size:.88em}\n"
    "th,td{border:1px solid #d0d7de;padding:4px 9px;text-align:left;vertical-align:top}\n"
    "th{background:#f0f3f6;font-weight:600}\n"
    "td{white-space:nowrap}\n"
    "td.long{white-space:normal;min-width:12em}\n"
    "td code{overflow-wrap:normal}\n"
    "tbody tr:nth-child(even){background:#f8f9fa}\n"
    "tbody tr:hover{background:#eef4fd}\n"
    ".num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.trend{padding:2px 6px;vertical-align:middle}\n"
    "td.trend svg{display:block}\n"
    "figure{margin:1em 0 2em}\n"
    "figure svg,figure img{display:block;height:auto;border:1px solid #d0d7de;border-radius:6px}\n"
    "figure svg{width:100%;max-width:900px}\n"
    "figure img{max-width:100%}\n"
    "figcaption{color:#57606a;font-size:.9em;margin-top:.35em}\n"
    ".missing{color:#b42318;font-weight:600}\n"
    "</style>\n</head>\n<body>\n<main>\n";

static void fail_once(doc *d, int status) {
  if (d->status == MAPP_OK) d->status = status;
}

/* ---------------------------------------------------------------- escaping */

/* Text as HTML character data or an attribute value: the five characters
 * that can start or end markup as entities, control characters blanked. */
static void html_escaped(FILE *f, const char *s, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default: fputc(c < 0x20 && c != '\n' && c != '\t' ? ' ' : c, f);
    }
  }
}

static void html_text(FILE *f, const char *s) { html_escaped(f, s, strlen(s)); }

/* The inline marks as HTML: `code` and **strong**; an unmatched mark is text. */
static void html_inline(FILE *f, const char *s) {
  bool strong = false;
  while (*s) {
    const char *close = *s == '`' ? strchr(s + 1, '`') : NULL;
    if (close) {
      fputs("<code>", f);
      html_escaped(f, s + 1, (size_t)(close - s - 1));
      fputs("</code>", f);
      s = close + 1;
    } else if (s[0] == '*' && s[1] == '*' && (strong || strstr(s + 2, "**"))) {
      fputs(strong ? "</strong>" : "<strong>", f);
      strong = !strong;
      s += 2;
    } else {
      size_t n = strcspn(s + 1, "`*") + 1;
      html_escaped(f, s, n);
      s += n;
    }
  }
  if (strong) fputs("</strong>", f);
}

/* A path as an href: bytes a URL cannot carry as they are percent-encoded. */
static void html_href(FILE *f, const char *path) {
  for (const unsigned char *p = (const unsigned char *)path; *p; ++p) {
    if (isalnum(*p) || strchr("/._-~+,=:@", *p)) fputc(*p, f);
    else fprintf(f, "%%%02X", *p);
  }
}

/* Markdown text on one line: control characters blanked; in a cell, '|' escaped. */
static void md_text(FILE *f, const char *s, bool cell) {
  for (; *s; ++s) {
    if (cell && *s == '|') fputs("\\|", f);
    else fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
  }
}

/* ---------------------------------------------------------------- open, close */

static int open_sink(doc *d, doc_format format, const char *path, const char *title) {
  doc_sink *s = &d->sinks[d->nsinks];
  if (!(s->path = strdup(path))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (!(s->f = fopen(path, "w"))) {
    int status = mapp_fail(MAPP_ERR_INPUT, "cannot write %s: %s", path, strerror(errno));
    free(s->path);
    return status;
  }
  s->format = format;
  ++d->nsinks;
  if (format == DOC_HTML) {
    fputs(html_head, s->f);
    fputs("<title>", s->f);
    html_text(s->f, title);
    fputs("</title>\n", s->f);
    fputs(html_style, s->f);
  }
  return MAPP_OK;
}

int doc_open(doc *d, const char *dir, const char *title, const char *md_path, const char *html_path) {
  *d = (doc){0};
  if (!(d->dir = strdup(dir))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = md_path ? open_sink(d, DOC_MARKDOWN, md_path, title) : MAPP_OK;
  if (status == MAPP_OK && html_path) status = open_sink(d, DOC_HTML, html_path, title);
  if (status != MAPP_OK) {
    d->status = status;
    doc_close(d);
  }
  return status;
}

int doc_close(doc *d) {
  for (size_t i = 0; i < d->nsinks; ++i) {
    doc_sink *s = &d->sinks[i];
    if (s->format == DOC_HTML) fputs("</main>\n</body>\n</html>\n", s->f);
    bool failed = ferror(s->f) != 0;
    if (fclose(s->f) != 0 || failed) fail_once(d, mapp_fail(MAPP_ERR_INPUT, "cannot write %s", s->path));
    free(s->path);
  }
  free(d->dir);
  int status = d->status;
  *d = (doc){0};
  return status;
}

/* ---------------------------------------------------------------- blocks */

/* The text of fmt (malloc'd); NULL (and the failure kept) when out of memory. */
static char *formatted(doc *d, const char *fmt, va_list ap) {
  char *text = str_vprintf(fmt, ap);
  if (!text) fail_once(d, mapp_fail(MAPP_ERR_SYSTEM, "out of memory writing %s", d->nsinks ? d->sinks[0].path : "a document"));
  return text;
}

void doc_heading(doc *d, int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = formatted(d, fmt, ap);
  va_end(ap);
  if (!text) return;
  level = level < 1 ? 1 : level > 4 ? 4 : level;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_MARKDOWN) {
      fprintf(f, "%.*s ", level, "####");
      md_text(f, text, false);
      fputs("\n\n", f);
    } else {
      fprintf(f, "<h%d>", level);
      html_inline(f, text);
      fprintf(f, "</h%d>\n", level);
    }
  }
  free(text);
}

void doc_para(doc *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = formatted(d, fmt, ap);
  va_end(ap);
  if (!text) return;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_MARKDOWN) {
      fprintf(f, "%s\n\n", text);
    } else {
      fputs("<p>", f);
      html_inline(f, text);
      fputs("</p>\n", f);
    }
  }
  free(text);
}

/* [text](href) or <a href>text</a>; in a cell, Markdown escapes its '|'. */
static void write_link(FILE *f, doc_format format, const char *href, const char *text, bool cell) {
  if (format == DOC_MARKDOWN) {
    fputc('[', f);
    md_text(f, text, cell);
    fputs("](", f);
    html_href(f, href);
    fputc(')', f);
  } else {
    fputs("<a href=\"", f);
    html_href(f, href);
    fputs("\">", f);
    html_inline(f, text);
    fputs("</a>", f);
  }
}

void doc_link(doc *d, const char *href, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = formatted(d, fmt, ap);
  va_end(ap);
  if (!text) return;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    bool md = d->sinks[i].format == DOC_MARKDOWN;
    fputs(md ? "" : "<p>", f);
    write_link(f, d->sinks[i].format, href, text, false);
    fputs(md ? "\n\n" : "</p>\n", f);
  }
  free(text);
}

/* ---------------------------------------------------------------- tables */

static void table_begin(doc *d, const char *aligns, bool header) {
  size_t n = strlen(aligns);
  if (n == 0 || n > DOC_MAX_COLUMNS) {
    fail_once(d, mapp_fail(MAPP_ERR_SYSTEM, "a table of %zu columns (1 to %d)", n, DOC_MAX_COLUMNS));
    n = 0;
  }
  memcpy(d->aligns, aligns, n);
  d->aligns[n] = '\0';
  d->header = header;
  d->rows = d->cells = 0;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_HTML) {
      fputs("<div class=\"table\"><table>\n", f);
      continue;
    }
    if (header) continue;
    /* Markdown has no table without a header row: an empty one */
    for (size_t c = 0; c < n; ++c) fputs("| ", f);
    fputs("|\n", f);
    for (size_t c = 0; c < n; ++c) fputs(aligns[c] == 'r' ? "|--:" : "|---", f);
    fputs("|\n", f);
  }
}

void doc_table(doc *d, const char *aligns) { table_begin(d, aligns, true); }
void doc_table_plain(doc *d, const char *aligns) { table_begin(d, aligns, false); }

static bool in_header(const doc *d) { return d->header && d->rows == 0; }

/* <tr> (and <thead> or <tbody> where one begins) before a row's first cell. */
static void html_row_start(const doc *d, FILE *f) {
  if (in_header(d)) fputs("<thead>", f);
  else if (d->rows == (d->header ? 1u : 0u)) fputs("<tbody>", f);
  fputs("<tr>", f);
}

/* Cells of more than this many characters may wrap; shorter ones keep to
 * one line, so a narrow window scrolls the table instead of breaking
 * "cell-updates/s" or a revision in two. */
enum { CELL_WRAP_CHARS = 32 };

static void write_cell(doc *d, const char *href, const char *text) {
  bool number = d->cells < strlen(d->aligns) && d->aligns[d->cells] == 'r';
  const char *cls = number ? " class=\"num\"" : strlen(text) > CELL_WRAP_CHARS ? " class=\"long\"" : "";
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_MARKDOWN) {
      fputs(text[0] ? "| " : "|", f);
      if (href) write_link(f, DOC_MARKDOWN, href, text, true);
      else md_text(f, text, true);
      fputc(' ', f);
      continue;
    }
    if (d->cells == 0) html_row_start(d, f);
    const char *tag = in_header(d) ? "th" : "td";
    fprintf(f, "<%s%s>", tag, cls);
    if (href) write_link(f, DOC_HTML, href, text, true);
    else html_inline(f, text);
    fprintf(f, "</%s>", tag);
  }
  ++d->cells;
}

void doc_cell(doc *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = formatted(d, fmt, ap);
  va_end(ap);
  if (text) write_cell(d, NULL, text);
  free(text);
}

void doc_cell_link(doc *d, const char *href, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = formatted(d, fmt, ap);
  va_end(ap);
  if (text) write_cell(d, href, text);
  free(text);
}

/* ---------------------------------------------------------------- trends */

enum { TREND_WIDTH = 120, TREND_HEIGHT = 28, TREND_PAD = 3 };
#define TREND_MIN_RANGE 0.10

/* A value's height in [0, 1] between lo and hi (0.5 on a flat series). */
static double trend_level(double v, double lo, double hi) { return hi > lo ? (v - lo) / (hi - lo) : 0.5; }

static void md_trend(FILE *f, const double *v, size_t n, double lo, double hi) {
  static const char *const blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  fputs("| ", f);
  for (size_t i = 0; i < n; ++i) fputs(blocks[(int)(trend_level(v[i], lo, hi) * 7.0 + 0.5)], f);
  fputc(' ', f);
}

static void html_trend(FILE *f, const double *v, size_t n, size_t first, double lo, double hi, const size_t *marks,
                       size_t nmarks) {
  double step = n > 1 ? (double)(TREND_WIDTH - 2 * TREND_PAD) / (double)(n - 1) : 0.0;
  double x0 = n > 1 ? TREND_PAD : TREND_WIDTH / 2.0, span = TREND_HEIGHT - 2 * TREND_PAD;
  fprintf(f, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"trend of %zu "
             "revisions\">", TREND_WIDTH, TREND_HEIGHT, TREND_WIDTH, TREND_HEIGHT, n);
  for (size_t k = 0; k < nmarks; ++k) {
    if (marks[k] <= first || marks[k] >= first + n) continue;
    double x = x0 + step * ((double)(marks[k] - first) - 0.5);
    fprintf(f, "<line x1=\"%.1f\" y1=\"1\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d62728\" stroke-dasharray=\"2,2\"/>", x, x,
            TREND_HEIGHT - 1);
  }
  fputs("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"", f);
  for (size_t i = 0; i < n; ++i)
    fprintf(f, "%s%.1f,%.1f", i ? " " : "", x0 + step * (double)i,
            TREND_PAD + span * (1.0 - trend_level(v[i], lo, hi)));
  fprintf(f, "\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"#1f77b4\"/></svg>", x0 + step * (double)(n - 1),
          TREND_PAD + span * (1.0 - trend_level(v[n - 1], lo, hi)));
}

void doc_cell_trend(doc *d, const double *values, size_t n, const size_t *marks, size_t nmarks) {
  size_t first = n > DOC_TREND_POINTS ? n - DOC_TREND_POINTS : 0;
  const double *v = values + first;
  size_t shown = n - first;
  double lo = shown ? v[0] : 0, hi = lo;
  for (size_t i = 1; i < shown; ++i) {
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  /* a scale no finer than TREND_MIN_RANGE of the values: noise of a
   * fraction of a percent is not drawn as a trend */
  double mid = (lo + hi) / 2, least = TREND_MIN_RANGE * fmax(fabs(lo), fabs(hi));
  if (hi - lo < least) lo = mid - least / 2, hi = mid + least / 2;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_MARKDOWN) {
      md_trend(f, v, shown, lo, hi);
      continue;
    }
    if (d->cells == 0) html_row_start(d, f);
    fputs("<td class=\"trend\">", f);
    if (shown) html_trend(f, v, shown, first, lo, hi, marks, nmarks);
    fputs("</td>", f);
  }
  ++d->cells;
}

void doc_row_end(doc *d) {
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_HTML) {
      fputs(in_header(d) ? "</tr></thead>\n" : "</tr>\n", f);
      continue;
    }
    fputs("|\n", f);
    if (!in_header(d)) continue;
    for (const char *a = d->aligns; *a; ++a) fputs(*a == 'r' ? "|--:" : "|---", f);
    fputs("|\n", f);
  }
  ++d->rows;
  d->cells = 0;
}

void doc_table_end(doc *d) {
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_MARKDOWN) fputc('\n', f);
    else fputs(d->rows > (d->header ? 1u : 0u) ? "</tbody></table></div>\n" : "</table></div>\n", f);
  }
  d->aligns[0] = '\0';
}

/* ---------------------------------------------------------------- code */

/* The longest run of backticks in text: a Markdown fence must be longer. */
static size_t longest_backticks(const char *text) {
  size_t longest = 0, run = 0;
  for (; *text; ++text) {
    run = *text == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

void doc_code(doc *d, const char *lang, const char *text) {
  size_t len = strlen(text);
  while (len && text[len - 1] == '\n') --len;
  size_t fence = longest_backticks(text) + 1;
  if (fence < 3) fence = 3;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_HTML) {
      fputs("<pre><code>", f);
      html_escaped(f, text, len);
      fputs("</code></pre>\n", f);
      continue;
    }
    for (size_t k = 0; k < fence; ++k) fputc('`', f);
    fprintf(f, "%s\n%.*s\n", lang, (int)len, text);
    for (size_t k = 0; k < fence; ++k) fputc('`', f);
    fputs("\n\n", f);
  }
}

/* ---------------------------------------------------------------- figures */

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

static const char *find_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; ++hay)
    if (strncasecmp(hay, needle, n) == 0) return hay;
  return NULL;
}

/* Whether SVG text holds anything that could run or load inside the page:
 * a script, an embedded document, a javascript: URL, an event attribute
 * (onload=...). gnuplot writes none of these; a figure that has one is
 * shown as an image instead, where nothing in it runs. */
static bool svg_may_run(const char *svg) {
  static const char *const active[] = {"<script", "<foreignobject", "<iframe", "<embed", "<object", "javascript:"};
  for (size_t i = 0; i < sizeof active / sizeof active[0]; ++i)
    if (find_nocase(svg, active[i])) return true;
  for (const char *p = svg; (p = find_nocase(p, "on")); p += 2) {
    if (p == svg || !isspace((unsigned char)p[-1])) continue;
    const char *q = p + 2;
    while (isalpha((unsigned char)*q)) ++q;
    while (isspace((unsigned char)*q)) ++q;
    if (q > p + 2 && *q == '=') return true;
  }
  return false;
}

/* The references to ids in gnuplot's SVG: each gets the figure's prefix,
 * since every figure names its canvas and markers alike and an id must be
 * unique in a page. */
static size_t id_reference(const char *p, const char *start) {
  static const char *const refs[] = {"id=\"", "id='", "href=\"#", "href='#", "url(#"};
  for (size_t i = 0; i < sizeof refs / sizeof refs[0]; ++i) {
    size_t n = strlen(refs[i]);
    bool attribute = refs[i][0] != 'u';
    if (strncmp(p, refs[i], n) == 0 && (!attribute || (p > start && (isspace((unsigned char)p[-1]) || p[-1] == ':'))))
      return n;
  }
  return 0;
}

/* An SVG document as an element of the page: from its <svg on (the XML
 * prolog dropped), labelled for screen readers, ids prefixed "fN-". */
static void html_svg(FILE *f, const char *svg, unsigned number, const char *caption) {
  const char *start = strstr(svg, "<svg");
  fputs("<svg class=\"plot\" role=\"img\" aria-label=\"", f);
  html_text(f, caption);
  fputc('"', f);
  for (const char *p = start + 4; *p;) {
    size_t n = id_reference(p, start);
    if (n) {
      fprintf(f, "%.*sf%u-", (int)n, p, number);
      p += n;
    } else {
      fputc(*p++, f);
    }
  }
  fputc('\n', f);
}

/* The whole file (NUL-terminated, *len bytes) when it has at most max bytes;
 * *too_large when it has more. */
static int read_bytes(const char *path, size_t max, char **buf, size_t *len, bool *too_large) {
  *buf = NULL;
  *len = 0;
  *too_large = false;
  FILE *f = fopen(path, "rb");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot read %s: %s", path, strerror(errno));
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  int status = MAPP_OK;
  if (size < 0) status = mapp_fail(MAPP_ERR_INPUT, "cannot read %s: %s", path, strerror(errno));
  else if ((size_t)size > max) *too_large = true;
  else if (!(*buf = malloc((size_t)size + 1))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading %s", path);
  else if (fseek(f, 0, SEEK_SET) != 0 || fread(*buf, 1, (size_t)size, f) != (size_t)size)
    status = mapp_fail(MAPP_ERR_INPUT, "cannot read %s", path);
  fclose(f);
  if (status == MAPP_OK && *buf) {
    (*buf)[size] = '\0';
    *len = (size_t)size;
  } else if (status != MAPP_OK) {
    free(*buf);
    *buf = NULL;
  }
  return status;
}

static void base64(FILE *f, const unsigned char *bytes, size_t len) {
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < len; i += 3) {
    unsigned long v = (unsigned long)bytes[i] << 16;
    if (i + 1 < len) v |= (unsigned long)bytes[i + 1] << 8;
    if (i + 2 < len) v |= bytes[i + 2];
    char out[4] = {digits[(v >> 18) & 63], digits[(v >> 12) & 63], i + 1 < len ? digits[(v >> 6) & 63] : '=',
                   i + 2 < len ? digits[v & 63] : '='};
    fwrite(out, 1, 4, f);
  }
}

static const char *image_type(const char *path) {
  static const char *const types[][2] = {{".png", "image/png"}, {".gif", "image/gif"}, {".jpg", "image/jpeg"},
                                         {".jpeg", "image/jpeg"}, {".svg", "image/svg+xml"}, {".webp", "image/webp"}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
    if (ends_with(path, types[i][0])) return types[i][1];
  return NULL;
}

static void figcaption(FILE *f, const char *caption) {
  fputs("<figcaption>", f);
  html_inline(f, caption);
  fputs("</figcaption></figure>\n", f);
}

/* The SVG at path inlined; false when it is missing, damaged (no </svg>:
 * a truncated drawing) or could run something. */
static bool try_svg(doc *d, FILE *f, const char *path, const char *caption) {
  char *svg = NULL;
  size_t len;
  bool too_large;
  if (!path_exists(path) || read_bytes(path, INLINE_MAX_BYTES, &svg, &len, &too_large) != MAPP_OK) {
    mapp_error_clear();
    return false;
  }
  bool usable = svg && strstr(svg, "<svg") && strstr(svg, "</svg>") && !svg_may_run(svg);
  if (usable) {
    fputs("<figure>", f);
    html_svg(f, svg, ++d->figures, caption);
    figcaption(f, caption);
  }
  free(svg);
  return usable;
}

/* Any other image as a data: URI; too large, or of a type no browser
 * shows, as a link; missing, as a note. */
static void image_or_note(FILE *f, const char *path, const char *shown_path, const char *caption) {
  char *bytes = NULL;
  size_t len = 0;
  bool too_large = false;
  const char *type = image_type(path);
  bool readable = path_exists(path) && read_bytes(path, INLINE_MAX_BYTES, &bytes, &len, &too_large) == MAPP_OK;
  mapp_error_clear();
  if (readable && bytes && type) {
    fprintf(f, "<figure><img alt=\"");
    html_text(f, caption);
    fprintf(f, "\" src=\"data:%s;base64,", type);
    base64(f, (const unsigned char *)bytes, len);
    fputs("\">", f);
    figcaption(f, caption);
  } else if (readable) {
    fputs("<p><a href=\"", f);
    html_href(f, shown_path);
    fputs("\">", f);
    html_inline(f, caption);
    fprintf(f, "</a> (%s, not inlined)</p>\n", too_large ? "too large" : "not an image");
  } else {
    fputs("<p class=\"missing\">Figure missing: ", f);
    html_inline(f, caption);
    fputs(" (<code>", f);
    html_text(f, shown_path);
    fputs("</code>)</p>\n", f);
  }
  free(bytes);
}

static void html_figure(doc *d, FILE *f, const char *caption, const char *path) {
  char *full = path_join(d->dir, path);
  char *svg = full && ends_with(full, ".png") ? str_printf("%.*s.svg", (int)(strlen(full) - 4), full)
              : full                          ? strdup(full)
                                              : NULL;
  if (!full || !svg) fail_once(d, mapp_fail(MAPP_ERR_SYSTEM, "out of memory"));
  else if (!ends_with(svg, ".svg") || !try_svg(d, f, svg, caption)) image_or_note(f, full, path, caption);
  free(svg);
  free(full);
}

void doc_figure(doc *d, const char *caption, const char *path) {
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_HTML) {
      html_figure(d, f, caption, path);
      continue;
    }
    fputs("![", f);
    md_text(f, caption, false);
    fprintf(f, "](%s)\n\n", path);
  }
}
