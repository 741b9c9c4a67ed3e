/* One document, two renderings (doc.h): Markdown and a self-contained HTML
 * page. Here: the page's head and style, text escaped for each rendering,
 * opening and closing the files, headings, paragraphs, links and code
 * blocks; tables and trends are in doc_table.c, figures in doc_figure.c. */
#include "doc.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doc_internal.h"
#include "fsutil.h"
#include "mapp_error.h"

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

void doc_fail_once(doc *d, int status) {
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

void doc_html_text(FILE *f, const char *s) { html_escaped(f, s, strlen(s)); }

/* The inline marks as HTML: `code` and **strong**; an unmatched mark is text. */
void doc_html_inline(FILE *f, const char *s) {
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
void doc_html_href(FILE *f, const char *path) {
  for (const unsigned char *p = (const unsigned char *)path; *p; ++p) {
    if (isalnum(*p) || strchr("/._-~+,=:@", *p)) fputc(*p, f);
    else fprintf(f, "%%%02X", *p);
  }
}

/* Markdown text on one line: control characters blanked; in a cell, '|' escaped. */
void doc_md_text(FILE *f, const char *s, bool cell) {
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
    doc_html_text(s->f, title);
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

int doc_open_text(doc *d, const char *dir) {
  *d = (doc){0};
  doc_sink *s = &d->sinks[0];
  if (!(d->dir = strdup(dir)) || !(s->path = strdup("the summary's Markdown")) ||
      !(s->f = open_memstream(&d->text, &d->text_len))) {
    free(d->dir);
    free(s->path);
    *d = (doc){0};
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory opening a Markdown text");
  }
  s->format = DOC_MARKDOWN;
  d->nsinks = 1;
  return MAPP_OK;
}

/* Ends the HTML pages and closes every sink (a memory one leaves d->text). */
static void close_sinks(doc *d) {
  for (size_t i = 0; i < d->nsinks; ++i) {
    doc_sink *s = &d->sinks[i];
    if (s->format == DOC_HTML) fputs("</main>\n</body>\n</html>\n", s->f);
    bool failed = ferror(s->f) != 0;
    if (fclose(s->f) != 0 || failed) doc_fail_once(d, mapp_fail(MAPP_ERR_INPUT, "cannot write %s", s->path));
    free(s->path);
  }
  free(d->dir);
}

int doc_close(doc *d) {
  close_sinks(d);
  free(d->text);
  int status = d->status;
  *d = (doc){0};
  return status;
}

int doc_close_text(doc *d, char **text) {
  close_sinks(d);
  int status = d->status;
  *text = status == MAPP_OK ? d->text : NULL;
  if (status != MAPP_OK) free(d->text);
  *d = (doc){0};
  return status;
}

/* ---------------------------------------------------------------- blocks */

/* The text of fmt (malloc'd); NULL (and the failure kept) when out of memory. */
char *doc_formatted(doc *d, const char *fmt, va_list ap) {
  char *text = str_vprintf(fmt, ap);
  if (!text) doc_fail_once(d, mapp_fail(MAPP_ERR_SYSTEM, "out of memory writing %s", d->nsinks ? d->sinks[0].path : "a document"));
  return text;
}

void doc_heading(doc *d, int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = doc_formatted(d, fmt, ap);
  va_end(ap);
  if (!text) return;
  level = level < 1 ? 1 : level > 4 ? 4 : level;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_MARKDOWN) {
      fprintf(f, "%.*s ", level, "####");
      doc_md_text(f, text, false);
      fputs("\n\n", f);
    } else {
      fprintf(f, "<h%d>", level);
      doc_html_inline(f, text);
      fprintf(f, "</h%d>\n", level);
    }
  }
  free(text);
}

void doc_para(doc *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = doc_formatted(d, fmt, ap);
  va_end(ap);
  if (!text) return;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    if (d->sinks[i].format == DOC_MARKDOWN) {
      fprintf(f, "%s\n\n", text);
    } else {
      fputs("<p>", f);
      doc_html_inline(f, text);
      fputs("</p>\n", f);
    }
  }
  free(text);
}

/* [text](href) or <a href>text</a>; in a cell, Markdown escapes its '|'. */
void doc_write_link(FILE *f, doc_format format, const char *href, const char *text, bool cell) {
  if (format == DOC_MARKDOWN) {
    fputc('[', f);
    doc_md_text(f, text, cell);
    fputs("](", f);
    doc_html_href(f, href);
    fputc(')', f);
  } else {
    fputs("<a href=\"", f);
    doc_html_href(f, href);
    fputs("\">", f);
    doc_html_inline(f, text);
    fputs("</a>", f);
  }
}

void doc_link(doc *d, const char *href, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = doc_formatted(d, fmt, ap);
  va_end(ap);
  if (!text) return;
  for (size_t i = 0; i < d->nsinks; ++i) {
    FILE *f = d->sinks[i].f;
    bool md = d->sinks[i].format == DOC_MARKDOWN;
    fputs(md ? "" : "<p>", f);
    doc_write_link(f, d->sinks[i].format, href, text, false);
    fputs(md ? "\n\n" : "</p>\n", f);
  }
  free(text);
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
