/* Tables of a document (doc.h), in Markdown and HTML: header and plain
 * tables, text and link cells, and the trend cell (a small line in HTML,
 * block characters in Markdown). */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "doc_internal.h"
#include "mapp_error.h"

/* ---------------------------------------------------------------- tables */

static void table_begin(doc *d, const char *aligns, bool header) {
  size_t n = strlen(aligns);
  if (n == 0 || n > DOC_MAX_COLUMNS) {
    doc_fail_once(d, mapp_fail(MAPP_ERR_SYSTEM, "a table of %zu columns (1 to %d)", n, DOC_MAX_COLUMNS));
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
      if (href) doc_write_link(f, DOC_MARKDOWN, href, text, true);
      else doc_md_text(f, text, true);
      fputc(' ', f);
      continue;
    }
    if (d->cells == 0) html_row_start(d, f);
    const char *tag = in_header(d) ? "th" : "td";
    fprintf(f, "<%s%s>", tag, cls);
    if (href) doc_write_link(f, DOC_HTML, href, text, true);
    else doc_html_inline(f, text);
    fprintf(f, "</%s>", tag);
  }
  ++d->cells;
}

void doc_cell(doc *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = doc_formatted(d, fmt, ap);
  va_end(ap);
  if (text) write_cell(d, NULL, text);
  free(text);
}

void doc_cell_link(doc *d, const char *href, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = doc_formatted(d, fmt, ap);
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
