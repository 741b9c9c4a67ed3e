/* mapp report, the failed runs (report_internal.h): a table of every run
 * that did not pass and what failed, then, for the first FAILURES_SHOWN, the
 * command that reproduces it and the end of its log. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "fsutil.h"
#include "report_internal.h"

/* ---------------------------------------------------------------- failures */

/* Runs whose log tail and command the report shows (the table lists them all). */
enum { FAILURES_SHOWN = 20, LOG_TAIL_LINES = 20, LOG_TAIL_BYTES = 16384 };

static bool status_is(const json_t *r, const char *field, const char *status) {
  const char *text = json_string_value(json_object_get(json_object_get(r, field), "status"));
  return text && strcmp(text, status) == 0;
}

/* What failed in a run, or NULL when it passed: its exit code, its own
 * verification, its baseline, a baseline check: required could not make,
 * or its agreement with the sweep's 1-rank answer. */
const char *report_failure_of(const json_t *r) {
  if (status_is(r, "contract", "fail")) return "mapp contract";
  if (status_is(r, "verification", "fail")) return "verification";
  if (status_is(r, "baseline", "fail")) return "baseline";
  if (json_integer_value(json_object_get(r, "exit_code")) != 0) return "exit code";
  if (status_is(r, "consistency", "fail"))
    return json_object_get(json_object_get(r, "consistency"), "peer_of") ? "agreement with its mini-app"
                                                                          : "consistency with 1 rank";
  if (json_object_get(json_object_get(r, "baseline"), "bless") ||
      (json_object_get(json_object_get(r, "baseline"), "error") && !status_is(r, "baseline", "fail")))
    return "no baseline (required)";
  return NULL;
}

/* The last LOG_TAIL_LINES lines of the file (malloc'd); NULL when it cannot
 * be read. Only its last LOG_TAIL_BYTES are read: a log may be huge. */
static char *file_tail(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = malloc(LOG_TAIL_BYTES + 1);
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  long from = size > LOG_TAIL_BYTES ? size - LOG_TAIL_BYTES : 0;
  size_t got = text && size >= 0 && fseek(f, from, SEEK_SET) == 0 ? fread(text, 1, LOG_TAIL_BYTES, f) : 0;
  bool ok = text && size >= 0 && !ferror(f);
  fclose(f);
  if (!ok) {
    free(text);
    return NULL;
  }
  while (got && text[got - 1] == '\n') --got;
  text[got] = '\0';
  size_t start = got, lines = 0;
  while (start > 0 && !(text[start - 1] == '\n' && ++lines == LOG_TAIL_LINES)) --start;
  /* read from the middle of a line: start after its end (unless it is the only line) */
  if (start == 0 && from > 0 && strchr(text, '\n')) start = strcspn(text, "\n") + 1;
  memmove(text, text + start, got - start + 1);
  return text;
}

/* The tail of a run's log: where its record says, else in runs/ of the
 * results folder (a folder moved since, or combined from others). */
static char *log_tail(const char *log, const char *dir, char **found) {
  char *tail = file_tail(log);
  *found = tail ? strdup(log) : NULL;
  if (tail) return tail;
  const char *slash = strrchr(log, '/');
  char *runs = path_join(dir, "runs"), *beside = runs ? path_join(runs, slash ? slash + 1 : log) : NULL;
  tail = beside ? file_tail(beside) : NULL;
  if (tail) *found = beside;
  else free(beside);
  free(runs);
  return tail;
}

/* A failed run's command and the end of its log. */
static void write_failure_detail(doc *d, const json_t *r, const char *failure, const char *dir) {
  const char *setting = json_string_value(json_object_get(r, "setting"));
  doc_heading(
      d, 3, "%s %s/%s n=%lld t=%lld %s%s%s rep %lld: %s", json_text_or(r, "app", "-"), json_text_or(r, "variant", "-"),
      json_text_or(r, "backend", "-"), (long long)json_integer_value(json_object_get(r, "ranks")),
      (long long)json_integer_value(json_object_get(r, "threads")), json_text_or(r, "size", "-"), setting ? " " : "",
      setting ? setting : "", (long long)json_integer_value(json_object_get(r, "repetition")), failure);
  const char *launch = json_string_value(json_object_get(r, "launch"));
  if (!launch) launch = json_string_value(json_object_get(r, "command"));
  if (launch) {
    doc_para(d, "To reproduce it, from the folder the sweep ran in:");
    doc_code(d, "sh", launch);
  }
  const char *log = json_string_value(json_object_get(r, "log"));
  char *found = NULL, *tail = log ? log_tail(log, dir, &found) : NULL;
  if (tail) {
    size_t lines = tail[0] != '\0';
    for (const char *c = tail; *c; ++c) lines += *c == '\n';
    doc_para(d, "The last %zu line%s of `%s`:", lines, lines == 1 ? "" : "s", found ? found : log);
    doc_code(d, "", tail[0] ? tail : "(empty)");
  } else if (log) {
    doc_para(d, "Its log `%s` cannot be read.", log);
  } else {
    doc_para(d, "Its record names no log.");
  }
  free(tail);
  free(found);
}

static void write_failure_row(doc *d, const json_t *r, const char *failure) {
  const char *setting = json_string_value(json_object_get(r, "setting"));
  const char *log = json_string_value(json_object_get(r, "log"));
  doc_cell(d, "%s", json_text_or(r, "app", "-"));
  doc_cell(d, "%s/%s", json_text_or(r, "variant", "-"), json_text_or(r, "backend", "-"));
  doc_cell(d, "%lld", (long long)json_integer_value(json_object_get(r, "ranks")));
  doc_cell(d, "%s", json_text_or(r, "size", "-"));
  doc_cell(d, "%s", setting ? setting : "-");
  doc_cell(d, "%lld", (long long)json_integer_value(json_object_get(r, "repetition")));
  doc_cell(d, "%s", failure);
  doc_cell(d, log ? "`%s`" : "-%s", log ? log : "");
  doc_row_end(d);
}

/* Every run that did not pass: its configuration, what failed and its log;
 * then, for the first FAILURES_SHOWN, the command that reproduces it and the
 * end of its log. */
void report_write_failures(doc *d, const json_t *records, const char *dir) {
  static const char *const columns[] = {"app", "variant/backend", "ranks", "size", "setting", "rep", "what failed", "log"};
  size_t i, failed = 0;
  const json_t *r;
  doc_heading(d, 2, "Failed runs");
  json_array_foreach(records, i, r) {
    const char *failure = report_failure_of(r);
    if (!failure) continue;
    if (failed++ == 0) {
      doc_table(d, "llllllll");
      for (size_t c = 0; c < sizeof columns / sizeof columns[0]; ++c) doc_cell(d, "%s", columns[c]);
      doc_row_end(d);
    }
    write_failure_row(d, r, failure);
  }
  if (!failed) {
    doc_para(d, "None: every run exited 0 and passed its verification, its baseline and its consistency checks.");
    return;
  }
  doc_table_end(d);
  size_t shown = 0;
  json_array_foreach(records, i, r) {
    const char *failure = report_failure_of(r);
    if (failure && shown++ < FAILURES_SHOWN) write_failure_detail(d, r, failure, dir);
  }
  if (failed > FAILURES_SHOWN)
    doc_para(d, "The other %zu failed runs: their logs are in the table above.", failed - FAILURES_SHOWN);
}
