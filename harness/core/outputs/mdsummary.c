/* A CI summary in GitHub-flavoured Markdown under a size limit (mdsummary.h). */
#include "mdsummary.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_error.h"

/* What the cut line can take (its text with the largest counts); the rest
 * of the limit past the body. */
enum { CUT_LINE_MAX = 256 };

/* ---------------------------------------------------------------- buffers */

static void fail_once(md_summary *m, int status) {
  if (m->status == MAPP_OK) m->status = status;
}

static void put(md_summary *m, md_buffer *b, const char *s, size_t n) {
  if (m->status != MAPP_OK) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *grown = realloc(b->s, cap);
    if (!grown) {
      fail_once(m, mapp_fail(MAPP_ERR_SYSTEM, "out of memory writing the summary (%zu bytes)", cap));
      return;
    }
    b->s = grown;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void puts_(md_summary *m, md_buffer *b, const char *s) { put(m, b, s, strlen(s)); }

/* Text on one line: control characters blanked, '<' as "&lt;" outside a
 * `code` span (inside one it is shown as it is), in a cell '|' as "\|". */
static void put_text(md_summary *m, md_buffer *b, const char *s, bool cell) {
  bool code = false;
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '`') code = code ? false : strchr(s + 1, '`') != NULL;
    if (c < 0x20 || c == 0x7f) puts_(m, b, " ");
    else if (cell && c == '|') puts_(m, b, "\\|");
    else if (c == '<' && !code) puts_(m, b, "&lt;");
    else put(m, b, s, 1);
  }
}

static char *formatted(md_summary *m, const char *fmt, va_list ap) {
  char *text = str_vprintf(fmt, ap);
  if (!text) fail_once(m, mapp_fail(MAPP_ERR_SYSTEM, "out of memory writing the summary"));
  return text;
}

/* Whether n more bytes (and a table's closing blank line) keep the body
 * within its limit; false from the first thing that did not. */
static bool fits(md_summary *m, size_t n) {
  if (!m->full && m->text.len + n + 1 <= m->body_limit) return true;
  m->full = true;
  return false;
}

/* A heading or paragraph: kept when it fits, else counted. */
static void add_line(md_summary *m, const md_buffer *line) {
  if (m->status != MAPP_OK) return;
  if (fits(m, line->len)) put(m, &m->text, line->s, line->len);
  else ++m->lines_left_out;
}

/* ---------------------------------------------------------------- open, finish */

int md_summary_open(md_summary *m, size_t limit, const char *link_line) {
  *m = (md_summary){.limit = limit};
  size_t n = strlen(link_line);
  if (n > MD_SUMMARY_MAX_LINK || n > limit / 4)
    return mapp_fail(MAPP_ERR_INPUT, "the summary's link line is %zu characters, more than %zu", n,
                     limit / 4 < MD_SUMMARY_MAX_LINK ? limit / 4 : (size_t)MD_SUMMARY_MAX_LINK);
  if (!(m->link = strdup(link_line))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  /* the body, the cut line and the link line with its newline stay under the limit */
  m->body_limit = limit - 1 - CUT_LINE_MAX - n - 1;
  return MAPP_OK;
}

void md_summary_free(md_summary *m) {
  free(m->text.s);
  free(m->header.s);
  free(m->row.s);
  free(m->link);
  *m = (md_summary){0};
}

/* 60000 as "60,000". */
static void thousands(size_t n, char *text, size_t len) {
  if (n < 1000) snprintf(text, len, "%zu", n);
  else if (n < 1000000) snprintf(text, len, "%zu,%03zu", n / 1000, n % 1000);
  else snprintf(text, len, "%zu,%03zu,%03zu", n / 1000000, n / 1000 % 1000, n % 1000);
}

int md_summary_finish(md_summary *m, char **text) {
  *text = NULL;
  if (m->rows_left_out || m->lines_left_out) {
    char cut[CUT_LINE_MAX], limit[32];
    thousands(m->limit, limit, sizeof limit);
    snprintf(cut, sizeof cut,
             "**Cut to stay under %s characters:** %zu table row%s (of %zu) and %zu other line%s left out; the "
             "full report has them all.\n\n",
             limit, m->rows_left_out, m->rows_left_out == 1 ? "" : "s", m->rows_written + m->rows_left_out,
             m->lines_left_out, m->lines_left_out == 1 ? "" : "s");
    puts_(m, &m->text, cut);
  }
  puts_(m, &m->text, m->link);
  puts_(m, &m->text, "\n");
  int status = m->status;
  if (status == MAPP_OK && m->text.len >= m->limit)
    status = mapp_fail(MAPP_ERR_SYSTEM, "the summary came to %zu characters, over its %zu", m->text.len, m->limit);
  if (status == MAPP_OK) {
    *text = m->text.s;
    m->text = (md_buffer){0};
  }
  md_summary_free(m);
  return status;
}

/* ---------------------------------------------------------------- headings, paragraphs, blocks */

void md_heading(md_summary *m, int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = formatted(m, fmt, ap);
  va_end(ap);
  if (!text) return;
  level = level < 1 ? 1 : level > 4 ? 4 : level;
  md_buffer line = {0};
  put(m, &line, "####", (size_t)level);
  puts_(m, &line, " ");
  put_text(m, &line, text, false);
  puts_(m, &line, "\n\n");
  add_line(m, &line);
  free(line.s);
  free(text);
}

void md_para(md_summary *m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = formatted(m, fmt, ap);
  va_end(ap);
  if (!text) return;
  md_buffer line = {0};
  put_text(m, &line, text, false);
  puts_(m, &line, "\n\n");
  add_line(m, &line);
  free(line.s);
  free(text);
}

/* Whether line opens or closes a fenced code block. */
static bool is_fence(const char *line) {
  while (*line == ' ') ++line;
  return strncmp(line, "```", 3) == 0 || strncmp(line, "~~~", 3) == 0;
}

void md_block(md_summary *m, const char *markdown, int demote) {
  md_buffer block = {0};
  bool fenced = false;
  for (const char *line = markdown; *line;) {
    size_t n = strcspn(line, "\n");
    if (is_fence(line)) fenced = !fenced;
    else if (!fenced && line[0] == '#')
      for (int k = 0; k < demote; ++k) puts_(m, &block, "#");
    put(m, &block, line, n);
    puts_(m, &block, "\n");
    line += n + (line[n] == '\n');
  }
  if (block.len) add_line(m, &block);
  free(block.s);
}

/* ---------------------------------------------------------------- tables */

void md_table(md_summary *m, const char *aligns, const char *const *columns) {
  m->header.len = 0;
  m->header_written = false;
  m->columns = strlen(aligns);
  m->cells = 0;
  m->row.len = 0;
  for (size_t c = 0; c < m->columns; ++c) {
    puts_(m, &m->header, "| ");
    put_text(m, &m->header, columns[c], true);
    puts_(m, &m->header, " ");
  }
  puts_(m, &m->header, "|\n");
  for (size_t c = 0; c < m->columns; ++c) puts_(m, &m->header, aligns[c] == 'r' ? "|---:" : "|---");
  puts_(m, &m->header, "|\n");
}

void md_cell(md_summary *m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = formatted(m, fmt, ap);
  va_end(ap);
  if (!text) return;
  puts_(m, &m->row, "| ");
  put_text(m, &m->row, text, true);
  puts_(m, &m->row, " ");
  ++m->cells;
  free(text);
}

void md_row_end(md_summary *m) {
  for (; m->cells < m->columns; ++m->cells) puts_(m, &m->row, "| ");
  puts_(m, &m->row, "|\n");
  if (m->status == MAPP_OK) {
    size_t need = m->row.len + (m->header_written ? 0 : m->header.len);
    if (fits(m, need)) {
      if (!m->header_written) put(m, &m->text, m->header.s, m->header.len);
      m->header_written = true;
      put(m, &m->text, m->row.s, m->row.len);
      ++m->rows_written;
    } else {
      ++m->rows_left_out;
    }
  }
  m->row.len = 0;
  m->cells = 0;
}

void md_table_end(md_summary *m) {
  if (m->header_written) puts_(m, &m->text, "\n"); /* fits() kept a byte for it */
  m->header_written = false;
  m->columns = m->cells = 0;
}

/* ---------------------------------------------------------------- links, step summaries */

char *md_link_line(const char *what, const char *label, const char *address) {
  md_summary scratch = {0};
  md_buffer b = {0};
  puts_(&scratch, &b, what);
  puts_(&scratch, &b, ": [");
  for (const char *s = label; *s; ++s) {
    if (*s == '[' || *s == ']' || *s == '\\') puts_(&scratch, &b, "\\");
    put_text(&scratch, &b, (char[]){*s, '\0'}, false);
  }
  puts_(&scratch, &b, "](");
  for (const unsigned char *p = (const unsigned char *)address; *p; ++p) {
    char hex[4];
    snprintf(hex, sizeof hex, "%%%02X", *p);
    if (isalnum(*p) || strchr("/._-~+,=:@?&#%!$*;", *p)) put(&scratch, &b, (const char *)p, 1);
    else puts_(&scratch, &b, hex);
  }
  puts_(&scratch, &b, ")");
  if (scratch.status != MAPP_OK) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

int md_summary_append_step(const char *text) {
  const char *path = getenv("GITHUB_STEP_SUMMARY");
  if (!path || !*path) return MAPP_OK;
  FILE *f = fopen(path, "a");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot append the summary to GITHUB_STEP_SUMMARY=%s: %s", path,
                           strerror(errno));
  /* after what an earlier step wrote, a blank line so the two stay apart */
  long end = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (end > 0) fputc('\n', f);
  fputs(text, f);
  bool failed = ferror(f) != 0 || end < 0;
  if (fclose(f) != 0 || failed)
    return mapp_fail(MAPP_ERR_INPUT, "cannot append the summary to GITHUB_STEP_SUMMARY=%s", path);
  return MAPP_OK;
}
