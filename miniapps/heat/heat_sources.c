/* Heat sources from a file in the original BSC Heat's format:
 *
 *   2
 *   0.0 0.0 1.0 2.5
 *   1.0 0.5 1.0 2.5
 *
 * a count, then one "row col range temperature" line per source. As the
 * original, only a line's leading numbers are read: what follows them (the
 * original's files carry "# comments" there) is ignored, unless it is one
 * more number, which says the line is not what it seems. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heat.h"

/* The numbers of one line into values; n of them expected. */
static int parse_numbers(const char *path, long lineno, char *line, double *values, int n) {
  char *p = line, *end;
  for (int k = 0; k < n; ++k) {
    errno = 0;
    values[k] = strtod(p, &end);
    if (end == p || errno)
      return mapp_fail(MAPP_ERR_INPUT, "%s:%ld: expected %d numbers, value %d is not a number", path, lineno, n,
                       k + 1);
    if (!isfinite(values[k]))
      return mapp_fail(MAPP_ERR_INPUT, "%s:%ld: value %d is not finite", path, lineno, k + 1);
    p = end;
  }
  double extra = strtod(p, &end);
  (void)extra;
  if (end != p) return mapp_fail(MAPP_ERR_INPUT, "%s:%ld: more than %d values", path, lineno, n);
  return MAPP_OK;
}

static bool blank(const char *line) { return line[strspn(line, " \t\r\n")] == '\0'; }

/* The next non-blank line into buf (false at the end of the file). */
static bool next_line(FILE *f, char *buf, size_t len, long *lineno) {
  while (fgets(buf, (int)len, f)) {
    ++*lineno;
    if (!blank(buf)) return true;
  }
  return false;
}

static int read_sources(FILE *f, const char *path, heat_source *sources, int *count) {
  char line[512];
  long lineno = 0;
  double n;
  if (!next_line(f, line, sizeof line, &lineno))
    return mapp_fail(MAPP_ERR_INPUT, "%s:1: missing the count of sources", path);
  MAPP_TRY(parse_numbers(path, lineno, line, &n, 1));
  if (n < 1 || n > HEAT_MAX_SOURCES || n != floor(n))
    return mapp_fail(MAPP_ERR_INPUT, "%s:%ld: the count must be a whole number in [1, %d], got %g", path, lineno,
                     HEAT_MAX_SOURCES, n);
  int want = (int)n, got = 0;
  while (next_line(f, line, sizeof line, &lineno)) {
    if (got == want)
      return mapp_fail(MAPP_ERR_INPUT, "%s:%ld: the count says %d sources but there are more lines", path, lineno,
                       want);
    double v[4];
    MAPP_TRY(parse_numbers(path, lineno, line, v, 4));
    if (!(v[2] > 0)) return mapp_fail(MAPP_ERR_INPUT, "%s:%ld: the range must be positive, got %g", path, lineno, v[2]);
    sources[got++] = (heat_source){.row = v[0], .col = v[1], .range = v[2], .temperature = v[3]};
  }
  if (got < want)
    return mapp_fail(MAPP_ERR_INPUT, "%s:%ld: the count says %d sources but the file has %d", path, lineno, want, got);
  *count = got;
  return MAPP_OK;
}

int heat_read_sources_file(const char *path, heat_source sources[HEAT_MAX_SOURCES], int *count) {
  FILE *f = fopen(path, "r");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot open the sources file '%s': %s", path, strerror(errno));
  int status = read_sources(f, path, sources, count);
  fclose(f);
  return status;
}
