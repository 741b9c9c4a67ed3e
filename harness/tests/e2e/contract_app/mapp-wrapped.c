/* mapp-wrapped: a program from outside the build that keeps the mapp
 * contract (docs/contract.md), as a user would wrap their own code. It
 * knows nothing of libmapp: plain C, the HDF5 C API, and the record and
 * --list written by hand. The computation is real and tiny: explicit 1-D
 * heat diffusion, u += nu (u[i-1] - 2 u[i] + u[i+1]), with insulated ends,
 * so the total heat is conserved (its own verification).
 *
 * The harness's tests build it into folders outside build/bin and reach it
 * through MAPP_APP_PATH. Built with -DWRAPPED_BREAK=N it breaks the
 * contract on purpose, once each way the harness must refuse:
 *   1  a record field of the wrong type ("ranks": "1")
 *   2  a record without a required field (no "fom")
 *   3  no --list (an unknown flag: exit 2)
 * and with -DWRAPPED_PEER it is a peer: mapp-wrapped-peer, whose answers
 * are checked against baselines/wrapped/ ("baselines" in --list) and, in
 * a sweep, against mapp-wrapped's answer of the same configuration
 * ("peer_of"). For the tests that show those checks fail, the peer adds
 * $WRAPPED_PEER_SHIFT to its answer's fourth value.
 *
 * Two variants: explicit swaps its two arrays after each step, copy copies
 * the new values back (the same answer, bit for bit, more memory traffic).
 * Like a mini-app, mapp-wrapped declares its headline pair in --list
 * (explicit over copy, in words "pointer swap over a copy each step"),
 * which mapp report shows with nothing outside this folder naming it;
 * $WRAPPED_HEADLINE_SIZES ("small|large") limits the sizes it declares it
 * for. The peer declares none. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef WRAPPED_BREAK
#define WRAPPED_BREAK 0
#endif
#ifndef WRAPPED_COMPILER
#define WRAPPED_COMPILER "cc " __VERSION__
#endif
#ifndef WRAPPED_FLAGS
#define WRAPPED_FLAGS "unknown"
#endif
#define WRAPPED_BREAK_NO_LIST (WRAPPED_BREAK == 3)
#ifdef WRAPPED_PEER
#define APP "wrapped-peer"
#else
#define APP "wrapped"
#endif

/* The exit codes of the contract. */
enum { EXIT_OK = 0, EXIT_VERIFY = 1, EXIT_INPUT = 2, EXIT_SYSTEM = 3 };

typedef struct {
  const char *size, *scaling, *variant, *backend, *output, *result;
  long points, steps, threads;
  int custom_size, custom_answer; /* --points / --steps took the run off its preset's case */
  double min_time;
  int list, print_case, help;
} options;

typedef struct {
  double setup_s, compute_s, io_s, wall_s;
  double conserved_error, initial_heat;
  long iterations;
  int finite;
} outcome;

/* Bad input: one line on stderr, exit 2. */
static int refuse(const char *fmt, const char *value) {
  fprintf(stderr, "mapp-" APP ": error: ");
  fprintf(stderr, fmt, value);
  fprintf(stderr, "\n");
  return EXIT_INPUT;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int parse_long(const char *flag, const char *text, long min, long *out) {
  char *end;
  long v = strtol(text, &end, 10);
  if (!*text || *end || v < min) return refuse("%s needs a whole number in its range", flag);
  *out = v;
  return EXIT_OK;
}

static int apply_size(options *o) {
  if (strcmp(o->size, "tiny") == 0) o->points = 64, o->steps = 50;
  else if (strcmp(o->size, "small") == 0) o->points = 4096, o->steps = 2000;
  else return refuse("--size: unknown value '%s' (choose one of tiny|small)", o->size);
  return EXIT_OK;
}

/* Every flag takes its value as the next argument; --list, --print-case and --help none. */
static int parse_args(int argc, char **argv, options *o) {
  long points = 0, steps = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int st = EXIT_OK;
    if (strcmp(a, "--list") == 0 && !WRAPPED_BREAK_NO_LIST) { o->list = 1; continue; }
    if (strcmp(a, "--print-case") == 0) { o->print_case = 1; continue; }
    if (strcmp(a, "--help") == 0) { o->help = 1; continue; }
    const char *valued[] = {"--size", "--scaling", "--variant", "--backend", "--output", "--result",
                            "--threads", "--steps", "--points", "--min-time", NULL};
    int known = 0;
    for (int k = 0; valued[k]; ++k) known |= strcmp(a, valued[k]) == 0;
    if (!known) return refuse("unknown option '%s' (see --help)", a);
    if (!v) return refuse("%s needs a value", a);
    ++i;
    if (strcmp(a, "--size") == 0) o->size = v;
    else if (strcmp(a, "--scaling") == 0) o->scaling = v;
    else if (strcmp(a, "--variant") == 0) o->variant = v;
    else if (strcmp(a, "--backend") == 0) o->backend = v;
    else if (strcmp(a, "--output") == 0) o->output = v;
    else if (strcmp(a, "--result") == 0) o->result = v;
    else if (strcmp(a, "--threads") == 0) st = parse_long(a, v, 0, &o->threads);
    else if (strcmp(a, "--steps") == 0) st = parse_long(a, v, 1, &steps);
    else if (strcmp(a, "--points") == 0) st = parse_long(a, v, 3, &points);
    else {
      char *end;
      o->min_time = strtod(v, &end);
      if (*end || !(o->min_time >= 0)) return refuse("--min-time needs seconds >= 0, got '%s'", v);
    }
    if (st != EXIT_OK) return st;
  }
  if (o->list || o->help) return EXIT_OK;
  int st = apply_size(o);
  if (st != EXIT_OK) return st;
  if (strcmp(o->scaling, "weak") != 0 && strcmp(o->scaling, "strong") != 0)
    return refuse("--scaling: unknown value '%s' (choose weak or strong)", o->scaling);
  if (strcmp(o->variant, "explicit") != 0 && strcmp(o->variant, "copy") != 0)
    return refuse("--variant: unknown value '%s' (choose explicit or copy)", o->variant);
  if (strcmp(o->backend, "serial") != 0) return refuse("--backend: unknown value '%s' (choose serial)", o->backend);
  if (points) o->points = points, o->custom_size = o->custom_answer = 1;
  if (steps) o->steps = steps, o->custom_answer = 1;
  /* No MPI here: several ranks would each write the same files. */
  const char *ranks = getenv("OMPI_COMM_WORLD_SIZE");
  if (ranks && atoi(ranks) > 1) return refuse("runs on one rank (got %s)", ranks);
  return EXIT_OK;
}

/* The answer: a smooth bump in a cold rod, diffused for `steps` steps;
 * copy moves each step's values back into u instead of swapping. */
static void diffuse(double *u, double *next, long n, long steps, int copy) {
  const double nu = 0.25;
  for (long s = 0; s < steps; ++s) {
    next[0] = u[0] + nu * (u[1] - u[0]); /* insulated ends: no flux out */
    for (long i = 1; i < n - 1; ++i) next[i] = u[i] + nu * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
    next[n - 1] = u[n - 1] + nu * (u[n - 2] - u[n - 1]);
    if (copy) {
      memcpy(u, next, (size_t)n * sizeof *u);
      continue;
    }
    double *t = u;
    u = next;
    next = t;
  }
  if (!copy && steps % 2) memcpy(next, u, (size_t)n * sizeof *u); /* the result in the caller's first array */
}

static void initial(double *u, long n) {
  for (long i = 0; i < n; ++i) {
    double x = (i + 0.5) / (double)n - 0.5;
    u[i] = exp(-40.0 * x * x);
  }
}

static double total(const double *u, long n) {
  double sum = 0.0;
  for (long i = 0; i < n; ++i) sum += u[i];
  return sum;
}

/* One dataset per answer field; mapp check compares them by name. */
static int write_answer(const char *path, const double *u, long n) {
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return refuse("cannot create the answer file %s", path);
  hsize_t dims[1] = {(hsize_t)n};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t set = H5Dcreate2(file, "u", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t wrote = set >= 0 ? H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, u) : -1;
  if (set >= 0) H5Dclose(set);
  H5Sclose(space);
  H5Fclose(file);
  return wrote < 0 ? refuse("cannot write dataset u to %s", path) : EXIT_OK;
}

/* Runs the steps (again until --min-time is reached, from the same start),
 * checks conservation, writes the answer. */
static int run(const options *o, outcome *r) {
  double t0 = now_s();
  double *u = malloc((size_t)o->points * sizeof *u), *next = malloc((size_t)o->points * sizeof *u);
  if (!u || !next) {
    fprintf(stderr, "mapp-" APP ": error: out of memory\n");
    return EXIT_SYSTEM;
  }
  double t1 = now_s();
  r->setup_s = t1 - t0;
  do {
    initial(u, o->points);
    r->initial_heat = total(u, o->points);
    diffuse(u, next, o->points, o->steps, strcmp(o->variant, "copy") == 0);
    ++r->iterations;
  } while (now_s() - t1 < o->min_time);
  double t2 = now_s();
  r->compute_s = (t2 - t1) / (double)r->iterations;
  double heat = total(u, o->points);
  r->finite = isfinite(heat);
  r->conserved_error = fabs(heat - r->initial_heat) / r->initial_heat;
#ifdef WRAPPED_PEER
  const char *shift = getenv("WRAPPED_PEER_SHIFT");
  if (shift && o->points > 3) u[3] += atof(shift);
#endif
  int st = o->output ? write_answer(o->output, u, o->points) : EXIT_OK;
  r->io_s = now_s() - t2;
  r->wall_s = now_s() - t0;
  free(u);
  free(next);
  return st;
}

static void print_phase(FILE *f, const char *name, double s, const char *sep) {
  fprintf(f, "\"%s\":{\"max\":%.9g,\"min\":%.9g,\"mean\":%.9g}%s", name, s, s, s, sep);
}

/* The record (docs/schema/record.schema.json): one JSON object, written
 * by hand (the harness's paths need no JSON escaping). */
static int write_record(const options *o, const outcome *r, const char *verdict, int argc, char **argv) {
  FILE *f = fopen(o->result, "w");
  if (!f) return refuse("cannot write the record %s", o->result);
  char host[256] = "unknown", when[32];
  gethostname(host, sizeof host - 1);
  time_t t = time(NULL);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
  double updates = (double)o->points * (double)o->steps;
  fprintf(f, "{\"schema\":\"mapp-result/1\",\"app\":\"%s\",\"variant\":\"%s\",\"backend\":\"%s\",", APP,
          o->variant, o->backend);
  fprintf(f, "\"size\":\"%s\",\"scaling\":\"%s\",", o->custom_size ? "custom" : o->size, o->scaling);
  if (o->custom_answer) fprintf(f, "\"case\":null,");
  else fprintf(f, "\"case\":\"%s\",", o->size);
  fprintf(f, WRAPPED_BREAK == 1 ? "\"ranks\":\"1\"," : "\"ranks\":1,");
  fprintf(f, "\"threads\":1,\"gpus\":0,\"steps\":%ld,", o->steps);
  fprintf(f, "\"problem\":{\"points\":{\"global\":%ld,\"per_rank\":%ld}},\"phases\":{", o->points, o->points);
  print_phase(f, "setup", r->setup_s, ",");
  print_phase(f, "compute", r->compute_s, ",");
  print_phase(f, "communication", 0.0, ",");
  print_phase(f, "io", r->io_s, "},");
  fprintf(f, "\"wall_s\":%.9g,", r->wall_s);
  if (WRAPPED_BREAK != 2)
    fprintf(f, "\"fom\":{\"name\":\"point-updates/s\",\"value\":%.9g},", updates / (r->compute_s > 0 ? r->compute_s : 1e-9));
  fprintf(f, "\"bytes_moved\":%.9g,", 16.0 * updates);
  fprintf(f, "\"verification\":{\"status\":\"%s\",\"worst_error\":%.9g,\"checks\":["
             "{\"name\":\"finite\",\"passed\":%s,\"value\":0,\"bound\":0},"
             "{\"name\":\"heat-conserved\",\"passed\":%s,\"value\":%.9g,\"bound\":1e-10}]},",
          verdict, r->conserved_error, r->finite ? "true" : "false", r->conserved_error <= 1e-10 ? "true" : "false",
          r->conserved_error);
  fprintf(f, "\"output\":");
  if (o->output) fprintf(f, "\"%s\",", o->output);
  else fprintf(f, "null,");
  fprintf(f, "\"host\":\"%s\",\"compiler\":\"%s\",\"flags\":\"%s\",\"git_revision\":\"%s\",\"time\":\"%s\",",
          host, WRAPPED_COMPILER, WRAPPED_FLAGS, "unknown", when);
  fprintf(f, "\"command\":null,\"app_data\":{\"argc\":%d,\"iterations\":%ld}}\n", argc, r->iterations);
  (void)argv;
  return fclose(f) == 0 ? EXIT_OK : refuse("cannot write the record %s", o->result);
}

#ifndef WRAPPED_PEER
/* "headline": its technique (explicit) over what it replaces (copy), at
 * every size or those $WRAPPED_HEADLINE_SIZES names ("small|large"). */
static void print_headline(void) {
  const char *sizes = getenv("WRAPPED_HEADLINE_SIZES");
  printf(",\"headline\":{\"technique\":\"pointer swap over a copy each step\",\"variant\":\"explicit\","
         "\"backend\":\"serial\",\"reference\":{\"variant\":\"copy\",\"backend\":\"serial\"},\"min_ranks\":1");
  if (sizes) {
    printf(",\"sizes\":[");
    for (const char *s = sizes; *s;) {
      int n = (int)strcspn(s, "|");
      printf("%s\"%.*s\"", s == sizes ? "" : ",", n, s);
      s += n + (s[n] == '|');
    }
    printf("]");
  }
  printf("}");
}
#endif

static void print_list(void) {
  const char *serial = "\"backends\":[{\"name\":\"serial\",\"built\":true,\"usable\":true,\"cpu\":true}]";
  printf("{\"app\":\"%s\",", APP);
#ifdef WRAPPED_PEER
  printf("\"baselines\":\"wrapped\",\"peer_of\":\"wrapped\",");
#endif
  printf("\"bitwise_variants\":true,\"bitwise_ranks\":false,\"repeatable\":true,\"variants\":["
         "{\"name\":\"explicit\",\"description\":\"explicit 1-D diffusion, insulated ends\",\"alone\":true,%s},"
         "{\"name\":\"copy\",\"description\":\"the same, each step copied back\",\"alone\":true,%s}]",
         serial, serial);
#ifndef WRAPPED_PEER
  print_headline();
#endif
  printf("}\n");
}

static void print_help(void) {
  printf("usage: mapp-" APP " [options]\n"
         "Explicit 1-D heat diffusion with insulated ends (a program that keeps the mapp contract).\n\n"
         "options:\n"
         "  --size tiny|small          problem size preset (default tiny)\n"
         "  --scaling weak|strong      one rank: the same problem (default strong)\n"
         "  --variant explicit|copy    implementation variant (default explicit)\n"
         "  --backend serial           backend (default serial)\n"
         "  --threads N                accepted; the serial backend runs 1\n"
         "  --steps N                  time steps (default from --size) [changes the answer]\n"
         "  --points N                 grid points (default from --size) [changes the size]\n"
         "  --min-time X               repeat the steps from the start until X seconds (default 0)\n"
         "  --output FILE.h5           write the answer (dataset u)\n"
         "  --result FILE.json         write the result record\n"
         "%s"
         "  --print-case               print the case and size these options make, and exit\n"
         "  --help                     print this help and exit\n",
         WRAPPED_BREAK_NO_LIST ? "" : "  --list                     print the variants and backends as JSON and exit\n");
}

int main(int argc, char **argv) {
  options o = {.size = "tiny", .scaling = "strong", .variant = "explicit", .backend = "serial", .threads = 1};
  int st = parse_args(argc, argv, &o);
  if (st != EXIT_OK) return st;
  if (o.help) print_help();
  else if (o.list) print_list();
  else if (o.print_case) printf("case=%s size=%s\n", o.custom_answer ? "none" : o.size, o.custom_size ? "custom" : o.size);
  if (o.help || o.list || o.print_case) return EXIT_OK;
  outcome r = {0};
  st = run(&o, &r);
  if (st != EXIT_OK) return st;
  const char *verdict = r.finite && r.conserved_error <= 1e-10 ? "pass" : "fail";
  if (o.result) st = write_record(&o, &r, verdict, argc, argv);
  if (st != EXIT_OK) return st;
  printf(APP " %s/serial n=1 %s: %.3g point-updates/s, verify %s\n", o.variant, o.size,
         (double)o.points * (double)o.steps / (r.compute_s > 0 ? r.compute_s : 1e-9), verdict);
  return strcmp(verdict, "pass") == 0 ? EXIT_OK : EXIT_VERIFY;
}
