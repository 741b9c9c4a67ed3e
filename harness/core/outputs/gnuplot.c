#include "gnuplot.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_build_info.h"
#include "mapp_error.h"
#include "paths.h"
#include "proc.h"

/* The terminal line of each format: 900x600 pixels for the screen formats,
 * the same aspect for print. */
static const char *const terminals[][2] = {
    {"png", "set terminal pngcairo size 900,600 noenhanced font 'Sans,11'"},
    {"svg", "set terminal svg size 900,600 dynamic noenhanced font 'Sans,11' background '#ffffff'"},
    {"pdf", "set terminal pdfcairo size 6in,4in noenhanced font 'Sans,10'"},
};
#define FORMAT_COUNT (sizeof terminals / sizeof terminals[0])

const char *gnuplot_terminal(const char *format) {
  for (size_t i = 0; i < FORMAT_COUNT; ++i)
    if (strcmp(terminals[i][0], format) == 0) return terminals[i][1];
  return NULL;
}

int gnuplot_formats_parse(const char *text, strv *formats) {
  char *copy = strdup(text), *save = NULL;
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  for (char *word = strtok_r(copy, ",", &save); word && status == MAPP_OK; word = strtok_r(NULL, ",", &save))
    status = gnuplot_terminal(word) ? strv_push(formats, word)
                                    : mapp_fail(MAPP_ERR_INPUT, "unknown plot format '%s' (choose png, svg, pdf)", word);
  free(copy);
  if (status == MAPP_OK && formats->count == 0) status = mapp_fail(MAPP_ERR_INPUT, "--format names no format");
  return status;
}

/* A string for the inside of a single-quoted gnuplot string: gnuplot's
 * only escape there is '' for a quote, and a line break would end the
 * command. Strings from results.jsonl (app, variant, FOM name, the folder's
 * name) are anyone's to write, and unescaped they could close the quote and
 * call system(); so every one goes through here. */
char *plot_gnuplot_quoted(const char *text) {
  char *out = malloc(2 * strlen(text) + 1), *o = out;
  for (const char *c = text; out && *c; ++c) {
    unsigned char ch = (unsigned char)*c;
    if (ch == '\'') *o++ = '\'';
    *o++ = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
  }
  if (out) *o = '\0';
  return out;
}

/* A record's string as a file-name stem: letters, digits and ._+- kept,
 * anything else (a slash, a quote, a blank) '_', so a figure stays in
 * plots/ and its name needs no quoting anywhere. */
void plot_file_stem(const char *text, char *buf, size_t len) {
  size_t n = 0;
  for (const char *c = text; *c && n + 1 < len; ++c) {
    unsigned char ch = (unsigned char)*c;
    bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == '+' || ch == '-';
    buf[n++] = plain ? (char)ch : '_';
  }
  buf[n] = '\0';
  if (n == 0 || buf[0] == '.') snprintf(buf, len, "app%s", n ? buf : "");
}

/* A series label inside the data file's double quotes (columnheader):
 * quotes, backslashes and line breaks would end it or start a new line. */
void gnuplot_data_label(const char *text, FILE *f) {
  for (const char *c = text; *c; ++c) {
    unsigned char ch = (unsigned char)*c;
    fputc(ch == '"' ? '\'' : ch == '\\' || ch < 0x20 || ch == 0x7f ? ' ' : (int)ch, f);
  }
}

char *gnuplot_fill(const char *text, const gnuplot_sub *subs, size_t nsubs) {
  size_t cap = strlen(text) + 1;
  for (size_t i = 0; i < nsubs; ++i) cap += 8 * strlen(subs[i].value); /* a few uses of each */
  char *out = malloc(cap), *o = out;
  for (const char *p = text; out && *p;) {
    const gnuplot_sub *hit = NULL;
    for (size_t i = 0; *p == '@' && i < nsubs && !hit; ++i) {
      size_t len = strlen(subs[i].name);
      if (strncmp(p + 1, subs[i].name, len) == 0 && p[len + 1] == '@') hit = &subs[i];
    }
    const char *piece = hit ? hit->value : p;
    size_t len = hit ? strlen(hit->value) : 1;
    if ((size_t)(o - out) + len + 1 > cap) {
      size_t used = (size_t)(o - out);
      char *grown = realloc(out, cap = 2 * cap + len);
      if (!grown) free(out);
      out = grown;
      o = out + used;
      if (!out) break;
    }
    memcpy(o, piece, len);
    o += len;
    p += hit ? strlen(hit->name) + 2 : 1;
  }
  if (out) *o = '\0';
  return out;
}

int gnuplot_template(const char *name, char **text) {
  char *dir = paths_source_file("plots");
  char *path = dir ? path_join(dir, name) : NULL;
  int status = path ? read_text_file(path, text) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(path);
  free(dir);
  return status;
}

/* For each format its terminal and output, the figure, and on PDF (the
 * report's print copy) a footer line saying where the numbers came from. */
int gnuplot_script(const gnuplot_target *t, const char *stem, const char *figure, char **script) {
  char *q_stem = plot_gnuplot_quoted(stem);
  if (!q_stem) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  strv lines = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < t->formats->count; ++i) {
    const char *format = t->formats->items[i];
    bool pdf = strcmp(format, "pdf") == 0;
    status = strv_pushf(&lines, "%s\nset output '%s.%s'\n%s%s%s%s\nunset output\nreset\n", gnuplot_terminal(format),
                        q_stem, format, pdf && t->footer ? "set label 999 '" : "", pdf && t->footer ? t->footer : "",
                        pdf && t->footer ? "' at screen 0.01, screen 0.015 font ',6' front\n" : "", figure);
  }
  free(q_stem);
  *script = status == MAPP_OK ? strv_join(&lines, "\n") : NULL;
  strv_free(&lines);
  return status == MAPP_OK && !*script ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory") : status;
}

static int run_gnuplot(const char *plots_dir, const char *script_name) {
  strv argv = {0};
  char *log = path_join(plots_dir, "gnuplot.log");
  int status = log ? strv_push(&argv, MAPP_GNUPLOT) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = strv_push(&argv, script_name);
  proc_outcome outcome;
  proc_request req = {.argv = &argv, .log_path = log, .cwd = plots_dir};
  if (status == MAPP_OK) status = proc_run(&req, &outcome);
  if (status == MAPP_OK && outcome.exit_code != 0) {
    proc_print_log_tail(log, 8, stderr);
    status = mapp_fail(MAPP_ERR_SYSTEM, "gnuplot failed on %s/%s (exit %d; see %s)", plots_dir, script_name,
                       outcome.exit_code, log);
  }
  free(log);
  strv_free(&argv);
  return status;
}

/* The images of one figure must exist after gnuplot; list them. */
static int collect_images(const gnuplot_target *t, const char *stem) {
  for (size_t i = 0; i < t->formats->count; ++i) {
    char *image = str_printf("%s/%s.%s", t->dir, stem, t->formats->items[i]);
    int status = !image ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory")
                 : path_exists(image) ? strv_push(t->written, image)
                                      : mapp_fail(MAPP_ERR_SYSTEM, "gnuplot did not write %s", image);
    free(image);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

int gnuplot_render(const gnuplot_target *t, const char *stem, gnuplot_data_writer write_data,
                   gnuplot_script_maker make_script, const void *ctx, const void *what) {
  char data_name[300], script_name[300];
  snprintf(data_name, sizeof data_name, "%s.dat", stem);
  snprintf(script_name, sizeof script_name, "%s.gp", stem);
  char *data_path = path_join(t->dir, data_name), *script_path = path_join(t->dir, script_name);
  char *script = NULL;
  int status = data_path && script_path ? write_data(what, data_path) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = make_script(ctx, what, stem, data_name, &script);
  if (status == MAPP_OK) status = write_text_file(script_path, script);
  if (status == MAPP_OK) status = run_gnuplot(t->dir, script_name);
  if (status == MAPP_OK) status = collect_images(t, stem);
  free(script);
  free(script_path);
  free(data_path);
  return status;
}
