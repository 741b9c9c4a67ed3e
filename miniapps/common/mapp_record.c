#include "mapp_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mapp_build_info.h"
#include "mapp_error.h"

const char *mapp_record_verdict(const mapp_record *rec) {
  if (rec->nchecks == 0) return "none";
  for (int i = 0; i < rec->nchecks; ++i)
    if (!rec->checks[i].passed) return "fail";
  return "pass";
}

void mapp_utc_now(char *buf, size_t len) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

char *mapp_command_line(int argc, char **argv) {
  size_t len = 1;
  for (int i = 0; i < argc; ++i) len += strlen(argv[i]) + 1;
  char *line = malloc(len);
  if (!line) return NULL;
  line[0] = '\0';
  for (int i = 0; i < argc; ++i) {
    if (i) strcat(line, " ");
    strcat(line, argv[i]);
  }
  return line;
}

/* json_string(NULL) is NULL; keep absent strings as JSON null. */
static json_t *string_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *phases_json(const mapp_record *rec) {
  json_t *phases = json_object();
  for (int p = 0; p < MAPP_PHASE_COUNT; ++p)
    json_object_set_new(phases, mapp_phase_name((mapp_phase)p),
                        json_pack("{s:f,s:f,s:f}", "max", rec->phases[p].max, "min",
                                  rec->phases[p].min, "mean", rec->phases[p].mean));
  return phases;
}

static json_t *problem_json(const mapp_record *rec) {
  json_t *problem = json_object();
  for (int i = 0; i < rec->ndims; ++i)
    json_object_set_new(problem, rec->dims[i].name,
                        json_pack("{s:I,s:I}", "global", (json_int_t)rec->dims[i].global,
                                  "per_rank", (json_int_t)rec->dims[i].per_rank));
  return problem;
}

static json_t *verification_json(const mapp_record *rec) {
  json_t *checks = json_array();
  double worst = 0.0;
  for (int i = 0; i < rec->nchecks; ++i) {
    const mapp_check *c = &rec->checks[i];
    json_array_append_new(checks, json_pack("{s:s,s:b,s:f,s:f}", "name", c->name, "passed",
                                            c->passed, "value", c->value, "bound", c->bound));
    if (c->value > worst) worst = c->value;
  }
  return json_pack("{s:s,s:f,s:o}", "status", mapp_record_verdict(rec), "worst_error", worst,
                   "checks", checks);
}

/* The GPU, the driver and runtime, and what nvcc compiled for. */
static json_t *gpu_json(const mapp_gpu_info *g) {
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
  return json_pack("{s:s,s:i,s:s,s:f,s:s,s:s,s:s,s:s}", "name", g->name, "device", g->device,
                   "compute_capability", cc, "memory_bytes", g->memory_bytes, "driver", g->driver, "runtime",
                   g->runtime, "nvcc", mapp_cuda_compiler(), "architectures", mapp_cuda_architectures());
}

/* "timing": the iterations of the timed phase (--min-time repeats it). */
static json_t *timing_json(const mapp_iterations *it) {
  json_t *seconds = json_array();
  for (int i = 0; seconds && i < it->count; ++i) json_array_append_new(seconds, json_real(it->seconds[i]));
  int timed = mapp_iterations_timed(it);
  return json_pack("{s:f,s:i,s:b,s:i,s:f,s:f,s:f,s:f,s:o}", "min_time_s", it->min_time, "iterations", it->count,
                   "warmup", it->warmup, "timed_iterations", timed, "timed_s", mapp_iterations_timed_s(it),
                   "fastest_s", mapp_iterations_fastest_s(it), "mean_s",
                   timed > 0 ? mapp_iterations_timed_s(it) / timed : 0.0, "reset_s", it->reset_s, "seconds",
                   seconds ? seconds : json_null());
}

static json_t *known_or_null(double value) { return value >= 0 ? json_real(value) : json_null(); }

/* "disturbance": what took CPU time from the run while it was timed. */
static json_t *disturbance_json(const mapp_disturbance *d) {
  return json_pack("{s:f,s:o,s:I,s:I,s:o,s:f,s:I,s:o,s:o,s:o}", "interval_s", d->interval_s, "steal_fraction",
                   known_or_null(d->steal_fraction), "steal_ticks", (json_int_t)d->steal_ticks, "cpu_ticks",
                   (json_int_t)d->all_ticks, "run_delay_fraction", known_or_null(d->run_delay_fraction),
                   "run_delay_s", d->run_delay_s, "involuntary_switches", (json_int_t)d->involuntary_switches,
                   "migrations", d->migrations >= 0 ? json_integer(d->migrations) : json_null(), "load_before",
                   known_or_null(d->load_before), "load_after", known_or_null(d->load_after));
}

json_t *mapp_record_to_json(const mapp_record *rec) {
  char host[256] = "unknown", when[32];
  gethostname(host, sizeof host - 1);
  mapp_utc_now(when, sizeof when);
  char *command = rec->argc > 0 ? mapp_command_line(rec->argc, rec->argv) : NULL;
  json_t *o = json_object();
  json_object_set_new(o, "schema", json_string(MAPP_RECORD_SCHEMA));
  json_object_set_new(o, "app", string_or_null(rec->app));
  json_object_set_new(o, "variant", string_or_null(rec->variant));
  json_object_set_new(o, "backend", string_or_null(rec->backend));
  json_object_set_new(o, "size", string_or_null(rec->size));
  json_object_set_new(o, "scaling", string_or_null(rec->scaling));
  json_object_set_new(o, "case", string_or_null(rec->case_name));
  json_object_set_new(o, "ranks", json_integer(rec->ranks));
  json_object_set_new(o, "threads", json_integer(rec->threads));
  json_object_set_new(o, "gpus", json_integer(rec->gpus));
  json_object_set_new(o, "helper_threads", json_integer(rec->helper_threads));
  if (rec->answer_ranks > 0) json_object_set_new(o, "answer_ranks", json_integer(rec->answer_ranks));
  json_object_set_new(o, "steps", json_integer(rec->steps));
  json_object_set_new(o, "problem", problem_json(rec));
  json_object_set_new(o, "phases", phases_json(rec));
  json_object_set_new(o, "wall_s", json_real(rec->wall_s));
  json_object_set_new(o, "fom", json_pack("{s:s,s:f}", "name", rec->fom_name ? rec->fom_name : "",
                                          "value", rec->fom));
  json_object_set_new(o, "bytes_moved", rec->bytes_moved >= 0 ? json_real(rec->bytes_moved) : json_null());
  json_object_set_new(o, "verification", verification_json(rec));
  json_object_set_new(o, "output", string_or_null(rec->output));
  json_object_set_new(o, "host", json_string(host));
  json_object_set_new(o, "compiler", json_string(MAPP_C_COMPILER));
  json_object_set_new(o, "flags", json_string(MAPP_C_FLAGS));
  json_object_set_new(o, "build_type", json_string(MAPP_BUILD_TYPE));
  json_object_set_new(o, "git_revision", json_string(mapp_git_revision));
  json_object_set_new(o, "time", json_string(when));
  json_object_set_new(o, "command", string_or_null(command));
  json_object_set_new(o, "app_data", rec->extra ? json_incref(rec->extra) : json_object());
  if (rec->gpu) json_object_set_new(o, "gpu", gpu_json(rec->gpu));
  if (rec->iterations) json_object_set_new(o, "timing", timing_json(rec->iterations));
  if (rec->disturbance && rec->disturbance->measured)
    json_object_set_new(o, "disturbance", disturbance_json(rec->disturbance));
  if (rec->machine) json_object_set(o, "machine", rec->machine);
  free(command);
  return o;
}

int mapp_record_write(const mapp_record *rec, const char *path) {
  json_t *o = mapp_record_to_json(rec);
  if (!o) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory building the result record");
  FILE *f = fopen(path, "w");
  if (!f) {
    json_decref(o);
    return mapp_fail(MAPP_ERR_INPUT, "cannot write result record '%s'", path);
  }
  int bad = json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(17)) != 0;
  bad |= fputc('\n', f) == EOF;
  bad |= fclose(f) != 0;
  json_decref(o);
  return bad ? mapp_fail(MAPP_ERR_SYSTEM, "writing result record '%s' failed", path) : MAPP_OK;
}

void mapp_record_summary(const mapp_record *rec, FILE *out) {
  fprintf(out, "%s %s/%s n=%d t=%d %s: %.4g %s, compute %.4g s, wall %.4g s, verify %s\n",
          rec->app, rec->variant, rec->backend, rec->ranks, rec->threads, rec->size, rec->fom,
          rec->fom_name ? rec->fom_name : "", rec->phases[MAPP_PHASE_COMPUTE].max, rec->wall_s,
          mapp_record_verdict(rec));
  if (rec->iterations && rec->iterations->count > 1)
    fprintf(out,
            "  timed phase run %d times (--min-time %g s): the figure is the fastest of the last %d (%.4g s), "
            "their mean %.4g s, %.4g s in all\n",
            rec->iterations->count, rec->iterations->min_time, mapp_iterations_timed(rec->iterations),
            mapp_iterations_fastest_s(rec->iterations),
            mapp_iterations_timed_s(rec->iterations) / mapp_iterations_timed(rec->iterations),
            mapp_iterations_timed_s(rec->iterations));
}
