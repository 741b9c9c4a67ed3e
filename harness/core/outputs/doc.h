/* A document written once and rendered as Markdown and as HTML in the same
 * pass: `mapp report` writes report.md and report.html from one walk over
 * its content, so the two say the same thing and what the walk makes on
 * its way (trend figures, the spec tables' CSV) is made once; `mapp
 * history publish` writes HTML pages alone.
 *
 * Text (headings, paragraphs, cells) takes the two inline marks the report
 * uses, written as Markdown writes them: `code` and **strong**. Markdown
 * gets the text as it is (in a table cell '|' escaped and control
 * characters blanked); HTML escapes every character that could start
 * markup (& < > " ') and turns only those two marks into <code> and
 * <strong>, so no string from a record can add a tag or an attribute.
 *
 * The HTML page stands alone: its style is inline, gnuplot's SVG figures
 * are inlined as <svg>, other images as data: URIs, and its
 * Content-Security-Policy allows nothing else to load and no script to
 * run; a browser reports anything that tries as a console error
 * (harness/tests/e2e/html.sh looks for them).
 *
 * Writing never fails on the spot: like stdio's error flag, the first
 * failure (a write, out of memory) is kept and doc_close returns it. */
#ifndef HARNESS_DOC_H
#define HARNESS_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { DOC_MARKDOWN, DOC_HTML } doc_format;

typedef struct {
  FILE *f;
  doc_format format;
  char *path;
} doc_sink;

enum { DOC_MAX_COLUMNS = 64 };

typedef struct {
  doc_sink sinks[2];
  size_t nsinks;
  char *dir;                         /* the documents' folder: relative figure paths start there */
  char aligns[DOC_MAX_COLUMNS + 1];  /* the open table's columns: 'l' or 'r' each; "" outside a table */
  bool header;                       /* the open table's first row is its header */
  size_t rows, cells;                /* rows ended and cells of the current row, in the open table */
  unsigned figures;                  /* SVGs inlined so far (their ids are prefixed with the count) */
  int status;                        /* the first failure */
  char *text;                        /* doc_open_text's rendering (open_memstream's buffer) */
  size_t text_len;
} doc;

/* Opens the renderings of one document in folder dir: Markdown at md_path
 * and HTML at html_path (either may be NULL), the HTML's <title> title. A
 * path that cannot be written is an input error naming it. */
int doc_open(doc *d, const char *dir, const char *title, const char *md_path, const char *html_path);
/* Ends the HTML page, closes the files; returns the first failure. */
int doc_close(doc *d);
/* A Markdown rendering into memory, for a part of a document that goes
 * into another text (the CI summary, mdsummary.h, takes the report's
 * headline so); doc_close_text closes it and hands its text over
 * (malloc'd, the caller's; NULL on a failure, which it returns). */
int doc_open_text(doc *d, const char *dir);
int doc_close_text(doc *d, char **text);

/* # TEXT (level 1-4). */
void doc_heading(doc *d, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void doc_para(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A paragraph that is one link. */
void doc_link(doc *d, const char *href, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A table of strlen(aligns) columns, 'l' (text) or 'r' (numbers) each. With
 * doc_table its first row is the header; doc_table_plain has none (HTML:
 * no header; Markdown, which needs one, gets an empty one). Cells are added
 * left to right, doc_row_end ends each row, doc_table_end the table. */
void doc_table(doc *d, const char *aligns);
void doc_table_plain(doc *d, const char *aligns);
void doc_cell(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doc_cell_link(doc *d, const char *href, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A cell with the trend of values[n] (oldest first; the last
 * DOC_TREND_POINTS of them), on a scale no finer than 10 % of the values
 * (so that noise is not drawn as a trend): HTML draws a small line, each
 * marks[k] (the first index of a new level) a dashed red line before it;
 * Markdown a row of block characters. */
enum { DOC_TREND_POINTS = 60 };
void doc_cell_trend(doc *d, const double *values, size_t n, const size_t *marks, size_t nmarks);
void doc_row_end(doc *d);
void doc_table_end(doc *d);

/* A figure: Markdown links path (relative to the document's folder, or
 * absolute) as an image; HTML inlines it: the SVG beside a PNG (or the SVG
 * itself) as <svg>, another image as a data: URI, one too large to inline
 * as a link; a missing one as a visible note. */
void doc_figure(doc *d, const char *caption, const char *path);
/* A block of verbatim text (a command, a log), lang the Markdown fence's
 * info string ("sh", or "" for none). */
void doc_code(doc *d, const char *lang, const char *text);

#endif
