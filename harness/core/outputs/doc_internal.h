/* What the pieces of doc (doc.h) share, not part of its API, all in
 * doc.c: the first failure kept, a format's text, and text as each
 * rendering writes it (escaped HTML, the inline marks, hrefs, Markdown,
 * links). doc_table.c (tables, trends) and doc_figure.c (figures) use them. */
#ifndef HARNESS_DOC_INTERNAL_H
#define HARNESS_DOC_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "doc.h"

/* Keeps status when it is the first failure (doc_close returns it). */
void doc_fail_once(doc *d, int status);
/* The text of fmt (malloc'd); NULL (and the failure kept) when out of memory. */
char *doc_formatted(doc *d, const char *fmt, va_list ap);

/* HTML: text escaped; text with its inline marks (`code`, **strong**); a
 * path as an href. */
void doc_html_text(FILE *f, const char *s);
void doc_html_inline(FILE *f, const char *s);
void doc_html_href(FILE *f, const char *path);
/* Markdown text on one line (in a cell, '|' escaped). */
void doc_md_text(FILE *f, const char *s, bool cell);
/* [text](href) or <a href>text</a>. */
void doc_write_link(FILE *f, doc_format format, const char *href, const char *text, bool cell);

#endif
