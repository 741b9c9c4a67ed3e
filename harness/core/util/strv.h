/* A growable, NULL-terminated vector of owned strings: argument vectors for
 * the processes the harness launches, lists read from YAML, lines of text. */
#ifndef HARNESS_STRV_H
#define HARNESS_STRV_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  char **items; /* items[count] is always NULL once anything was pushed */
  size_t count, capacity;
} strv;

int strv_push(strv *v, const char *s);
int strv_pushf(strv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int strv_extend(strv *v, const strv *more);
bool strv_contains(const strv *v, const char *s);
/* A NULL-terminated argv view for execvp (valid until the next push). */
char *const *strv_argv(strv *v);
/* The items joined by sep (malloc'd); NULL when out of memory. */
char *strv_join(const strv *v, const char *sep);
/* The items as one shell command line, each quoted where the shell would
 * split or expand it (malloc'd): what the batch scripts run and what the
 * records show as "launch". */
char *strv_join_shell(const strv *v);
/* One word quoted for a POSIX shell (malloc'd). */
char *shell_quote(const char *word);
/* The items into the file at path, one a line (each ending in a newline). */
int strv_write_lines(const strv *v, const char *path);
void strv_free(strv *v);

#endif
