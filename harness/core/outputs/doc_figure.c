/* Figures of a document (doc.h): Markdown links the image; HTML inlines
 * it, an SVG as an element of the page (unless it could run something),
 * another image as a data: URI, one too large as a link, a missing one as
 * a note. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doc.h"
#include "doc_internal.h"
#include "fsutil.h"
#include "mapp_error.h"

/* Figures larger than this are linked, not inlined: the page should open
 * quickly, and a long animation belongs beside it. */
enum { INLINE_MAX_BYTES = 4 << 20 };

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
  doc_html_text(f, caption);
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
  doc_html_inline(f, caption);
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
    doc_html_text(f, caption);
    fprintf(f, "\" src=\"data:%s;base64,", type);
    base64(f, (const unsigned char *)bytes, len);
    fputs("\">", f);
    figcaption(f, caption);
  } else if (readable) {
    fputs("<p><a href=\"", f);
    doc_html_href(f, shown_path);
    fputs("\">", f);
    doc_html_inline(f, caption);
    fprintf(f, "</a> (%s, not inlined)</p>\n", too_large ? "too large" : "not an image");
  } else {
    fputs("<p class=\"missing\">Figure missing: ", f);
    doc_html_inline(f, caption);
    fputs(" (<code>", f);
    doc_html_text(f, shown_path);
    fputs("</code>)</p>\n", f);
  }
  free(bytes);
}

static void html_figure(doc *d, FILE *f, const char *caption, const char *path) {
  char *full = path_join(d->dir, path);
  char *svg = full && ends_with(full, ".png") ? str_printf("%.*s.svg", (int)(strlen(full) - 4), full)
              : full                          ? strdup(full)
                                              : NULL;
  if (!full || !svg) doc_fail_once(d, mapp_fail(MAPP_ERR_SYSTEM, "out of memory"));
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
    doc_md_text(f, caption, false);
    fprintf(f, "](%s)\n\n", path);
  }
}
