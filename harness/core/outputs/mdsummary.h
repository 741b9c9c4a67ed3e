/* A summary for CI in GitHub-flavoured Markdown: what `mapp report`,
 * `mapp compare` and `mapp history check` print with --format markdown, for
 * a GitHub step summary ($GITHUB_STEP_SUMMARY) or a GitLab merge-request
 * note. Each verb writes its own content (a table of totals, the
 * configurations slower or faster with their intervals and verdicts, what
 * was unchecked or failed) from what it already computed; this module
 * writes it down and keeps it short.
 *
 * Whatever the results' size, the summary stays under its limit
 * (MD_SUMMARY_LIMIT characters, counted as bytes): the first heading,
 * paragraph or table row that would pass it is left out with everything
 * after it, and the summary ends with one line saying how many table rows
 * and other lines were left out, then its link line (the HTML report's
 * address), which is always there. A table's header is written with its
 * first row, so a table cut before any row leaves no empty header.
 *
 * Text is escaped for a table cell or a line of its own: control
 * characters blanked, '|' as "\|", '<' as "&lt;" (no string from a record
 * starts markup); the two marks the verbs use, `code` and **strong**, are
 * kept. Writing never fails on the spot: the first failure (out of
 * memory) is kept and md_summary_finish returns it. */
#ifndef HARNESS_MDSUMMARY_H
#define HARNESS_MDSUMMARY_H

#include <stdbool.h>
#include <stddef.h>

/* The two options of a verb that writes a summary (mapp_cli.h's
 * mapp_option; an unknown --format is one line and exit 2). */
#define MD_FORMAT_OPTION(target)                                                                                \
  {.name = "format", .kind = MAPP_OPT_CHOICE, .dest = (target), .choices = "text|markdown",                    \
   .help = "text: as the terminal shows it; markdown: a summary for CI (GitHub-flavoured Markdown, under "     \
           "60,000 characters)"}
#define MD_REPORT_URL_OPTION(target, default_address)                                                           \
  {.name = "report-url", .kind = MAPP_OPT_STRING, .dest = (target), .default_text = (default_address),         \
   .help = "with --format markdown: the address of the HTML report in the summary's link line"}

/* The summary's bound in characters (GitHub shows a step summary of up to
 * 1 MiB; 60,000 is a page that is read, and fits a GitLab note). */
#define MD_SUMMARY_LIMIT 60000
/* The longest link line a summary takes. */
#define MD_SUMMARY_MAX_LINK 2000

typedef struct {
  char *s;
  size_t len, cap;
} md_buffer;

typedef struct {
  md_buffer text;        /* the summary so far */
  size_t limit;          /* the whole summary stays under it */
  size_t body_limit;     /* text stays within it; the rest of the limit is the cut line's and the link line's */
  char *link;            /* the link line */
  md_buffer header;      /* the open table's header, written with its first row */
  bool header_written;
  size_t columns, cells; /* the open table's columns; cells of the row being filled */
  md_buffer row;         /* the row being filled */
  size_t rows_written;   /* rows of every table kept */
  size_t rows_left_out;  /* rows of every table left out */
  size_t lines_left_out; /* headings and paragraphs left out */
  bool full;             /* something did not fit: all that follows is left out */
  int status;            /* the first failure */
} md_summary;

/* A summary under `limit` characters (MD_SUMMARY_LIMIT; less in tests)
 * that ends with link_line (md_link_line). A link line longer than
 * MD_SUMMARY_MAX_LINK, or a quarter of the limit, is an input error. */
int md_summary_open(md_summary *m, size_t limit, const char *link_line);
/* The summary, its cut line (when something was left out) and its link
 * line, into *text (malloc'd, the caller's); the first failure, if any.
 * The summary is freed either way. */
int md_summary_finish(md_summary *m, char **text);
void md_summary_free(md_summary *m);

/* "## TEXT" (level 1-4). */
void md_heading(md_summary *m, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A paragraph on one line. */
void md_para(md_summary *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Markdown written elsewhere (doc.h's Markdown rendering), verbatim, its
 * headings `demote` levels deeper; kept whole or left out whole (counted
 * as one line). */
void md_block(md_summary *m, const char *markdown, int demote);

/* A table: aligns holds a column's 'l' or 'r' each, columns[] their
 * names. Cells left to right, md_row_end ends a row (kept when it fits,
 * else counted as left out), md_table_end the table. */
void md_table(md_summary *m, const char *aligns, const char *const *columns);
void md_cell(md_summary *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void md_row_end(md_summary *m);
void md_table_end(md_summary *m);

/* "WHAT: [LABEL](ADDRESS)" with the address's spaces, parentheses and
 * other bytes a link cannot hold percent-encoded (malloc'd; NULL when out
 * of memory). */
char *md_link_line(const char *what, const char *label, const char *address);

/* Appends text to the file a GitHub step summary is read from (the
 * environment's GITHUB_STEP_SUMMARY), never replacing what earlier steps
 * wrote there; nothing when the variable is unset or empty. A file that
 * cannot be appended to is an input error naming it. */
int md_summary_append_step(const char *text);

#endif
