/* Real noise for the statistics tests: the relative residuals of real
 * records (fom-residuals.txt, written by fom-residuals.sh from a `mapp
 * sweep` on this project's 2-core VM), resampled with a fixed seed, so a
 * synthetic series has the skew, clusters and tails of real timings rather
 * than a textbook distribution's. The file's path comes from CMake
 * (MAPP_NOISE_FILE). */
#ifndef HARNESS_TESTS_NOISE_H
#define HARNESS_TESTS_NOISE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MAPP_NOISE_FILE
#error "MAPP_NOISE_FILE must name harness/tests/data/fom-residuals.txt"
#endif

typedef struct {
  double values[512]; /* residuals: fom / median - 1, recentred on their own median */
  size_t n;
} noise_set;

/* splitmix64: the same stream on every machine. */
static inline uint64_t noise_next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static inline int noise_ascending(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Residuals are recentred on the median of the ones kept, so a subset
 * (the undisturbed records) is noise around 0 as the whole set is. */
static inline void noise_recentre(noise_set *s) {
  double sorted[512];
  memcpy(sorted, s->values, s->n * sizeof *sorted);
  qsort(sorted, s->n, sizeof *sorted, noise_ascending);
  double m = s->n % 2 ? sorted[s->n / 2] : 0.5 * (sorted[s->n / 2 - 1] + sorted[s->n / 2]);
  for (size_t i = 0; i < s->n; ++i) s->values[i] = (1.0 + s->values[i]) / (1.0 + m) - 1.0;
}

/* Whether set is one of the comma-separated names ("*": every set). */
static inline bool noise_named(const char *names, const char *set) {
  if (!strcmp(names, "*")) return true;
  size_t len = strlen(set);
  for (const char *p = names; *p;) {
    size_t n = strcspn(p, ",");
    if (n == len && !strncmp(p, set, n)) return true;
    p += n + (p[n] == ',');
  }
  return false;
}

/* The residuals of records of the sets `names` ("heat-small,stencil-small";
 * "*" for all), only those whose run delay is at most max_run_delay (1.0:
 * all); false when the file cannot be read or no record is kept. */
static inline bool noise_load(const char *names, double max_run_delay, noise_set *out) {
  out->n = 0;
  FILE *f = fopen(MAPP_NOISE_FILE, "r");
  if (!f) return false;
  char line[256], set[64], delay[32];
  double residual;
  while (fgets(line, sizeof line, f) && out->n < sizeof out->values / sizeof out->values[0]) {
    if (line[0] == '#' || sscanf(line, "%63s %lf %31s", set, &residual, delay) != 3) continue;
    bool wanted = noise_named(names, set);
    double d = strcmp(delay, "-") ? atof(delay) : 0.0;
    if (wanted && d <= max_run_delay) out->values[out->n++] = residual;
  }
  fclose(f);
  if (out->n) noise_recentre(out);
  return out->n > 0;
}

static inline double noise_sd(const noise_set *s) {
  double mean = 0.0, sum = 0.0;
  for (size_t i = 0; i < s->n; ++i) mean += s->values[i];
  mean /= (double)s->n;
  for (size_t i = 0; i < s->n; ++i) sum += (s->values[i] - mean) * (s->values[i] - mean);
  return sqrt(sum / (double)s->n);
}

static inline double noise_max_abs(const noise_set *s) {
  double m = 0.0;
  for (size_t i = 0; i < s->n; ++i) m = fmax(m, fabs(s->values[i]));
  return m;
}

static inline void noise_scale(noise_set *s, double factor) {
  for (size_t i = 0; i < s->n; ++i) s->values[i] *= factor;
}

/* One residual drawn with replacement. */
static inline double noise_draw(const noise_set *s, uint64_t *rng) { return s->values[noise_next(rng) % s->n]; }

/* n figures of merit: level times (1 + a drawn residual). */
static inline void noise_sample(const noise_set *s, double level, size_t n, uint64_t *rng, double *out) {
  for (size_t i = 0; i < n; ++i) out[i] = level * (1.0 + noise_draw(s, rng));
}

#endif
