#include "dryrun.h"

#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "earlier.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "stats.h"

typedef struct {
  size_t jobs, runnable, baseline_ok, baseline_missing, baseline_missing_required, unchecked, estimated;
  long max_nodes;
  double core_seconds;
} dry_totals;

/* ---------------------------------------------------------------- estimates */

/* Median core-seconds of the job's configuration; false without records. */
static bool estimate_of(const json_t *by_config, const char *key, double *seconds) {
  char *config = job_configuration_key(key);
  const json_t *list = config ? json_object_get(by_config, config) : NULL;
  free(config);
  size_t n = json_array_size(list);
  double *values = n ? malloc(n * sizeof *values) : NULL;
  if (!values) return false;
  for (size_t i = 0; i < n; ++i) {
    const json_t *run = json_array_get(list, i); /* [elapsed_s, cores] */
    double cores = json_number_value(json_array_get(run, 1));
    values[i] = json_number_value(json_array_get(run, 0)) * (cores > 0 ? cores : 1.0);
  }
  *seconds = stats_median(values, n);
  free(values);
  return true;
}

/* ---------------------------------------------------------------- baselines */

static int baseline_cell(const job *j, char *buf, size_t len, dry_totals *t) {
  if (j->check == CHECK_NONE) {
    snprintf(buf, len, "not checked");
    ++t->unchecked;
    return MAPP_OK;
  }
  /* uncertain where the entry's flags may make the problem a custom one
   * (the app decides at run time) and the entry names no case: */
  bool certain = j->baseline_case || !j->extra_args || j->extra_args->count == 0;
  char *name = NULL;
  MAPP_TRY(job_baseline_case(j, NULL, &name));
  char *file = name ? baseline_path(job_baseline_app(j), name) : NULL;
  if (!file) {
    free(name);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  bool exists = path_exists(file), required = j->check == CHECK_REQUIRED;
  snprintf(buf, len, "%s%s %s", name, certain ? "" : "?", exists ? "ok" : required ? "MISSING" : "missing");
  t->baseline_ok += exists;
  t->baseline_missing += !exists;
  t->baseline_missing_required += !exists && required;
  free(file);
  free(name);
  return MAPP_OK;
}

/* ---------------------------------------------------------------- the table */

static const char *combo_text(combo_status combo) {
  switch (combo) {
  case COMBO_RUNNABLE: return "";
  case COMBO_NOT_BUILT: return " (skip: not built)";
  case COMBO_NO_DEVICE: return " (skip: no device here)";
  default: return " (skip)";
  }
}

static int print_row(FILE *out, const harness_env *env, const json_t *estimates, const sweep_job *sj, size_t index,
                     dry_totals *t) {
  const job *j = &sj->job;
  long nodes = 1; /* without a scheduler: this one machine */
  if (env->scheduler != SCHEDULER_NONE) MAPP_TRY(env_node_count(env, j, &nodes));
  char baseline[160], seconds[32] = "-";
  MAPP_TRY(baseline_cell(j, baseline, sizeof baseline, t));
  char *key = job_key(j);
  if (!key) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  double estimate;
  if (estimate_of(estimates, key, &estimate)) {
    snprintf(seconds, sizeof seconds, "%.3g", estimate);
    t->core_seconds += estimate;
    ++t->estimated;
  }
  fprintf(out, "%4zu  %-9s %-13s %-7s %5ld %7ld %4ld  %-9s %-6s %-24s %3ld %5ld  %-22s %8s  %s%s\n", index + 1, j->app,
          j->variant, j->backend, j->ranks, j->threads, j->gpus, j->size, j->scaling,
          j->params_text ? j->params_text : "-", j->repetition, nodes, baseline, seconds, key, combo_text(sj->combo));
  free(key);
  ++t->jobs;
  t->runnable += sj->combo == COMBO_RUNNABLE;
  if (nodes > t->max_nodes) t->max_nodes = nodes;
  return MAPP_OK;
}

/* How many entries repeat other than the spec says, and how many until precise. */
static void count_own_repetitions(const sweep_spec *spec, size_t *own, size_t *automatic) {
  *own = *automatic = 0;
  for (size_t i = 0; i < spec->nruns; ++i) {
    *automatic += spec->runs[i].measure.auto_repetitions;
    *own += !spec->runs[i].measure.auto_repetitions && spec->runs[i].measure.repetitions != spec->repetitions;
  }
}

static void print_totals(FILE *out, const sweep_setup *setup, const dry_totals *t) {
  size_t own, automatic;
  count_own_repetitions(&setup->spec, &own, &automatic);
  fprintf(out, "\n%zu jobs (%zu runnable here, %zu skipped), %ld repetition%s each configuration", t->jobs, t->runnable,
          t->jobs - t->runnable, setup->spec.repetitions, setup->spec.repetitions == 1 ? "" : "s");
  if (own) fprintf(out, " (%zu entr%s say their own)", own, own == 1 ? "y" : "ies");
  if (automatic)
    fprintf(out, "; %zu entr%s repeat until precise (repetitions: auto; the first round listed, later rounds as "
                 "their figures ask)", automatic, automatic == 1 ? "y" : "ies");
  fprintf(out, ", at most %ld node%s a job (env %s, %ld cores and %ld GPUs a node)\n",
          t->max_nodes, t->max_nodes == 1 ? "" : "s", setup->env.name ? setup->env.name : "?", setup->env.cores_per_node,
          setup->env.gpus_per_node);
  fprintf(out, "estimated core-seconds: %.4g for %zu jobs with earlier records; %zu jobs without an estimate\n",
          t->core_seconds, t->estimated, t->jobs - t->estimated);
  fprintf(out, "baselines: %zu exist, %zu missing (%zu of them required: the run would fail), %zu jobs not checked\n",
          t->baseline_ok, t->baseline_missing, t->baseline_missing_required, t->unchecked);
  fprintf(out, "dry run: nothing was run or written (\"?\": the entry's flags may make the problem a custom one, "
               "which names no case)\n");
}

int dry_run_print(const sweep_setup *setup, const char *results_dir, FILE *out) {
  json_t *estimates = NULL;
  int status = earlier_runs_load(results_dir, setup, &estimates);
  dry_totals totals = {0};
  if (status == MAPP_OK)
    fprintf(out, "%4s  %-9s %-13s %-7s %5s %7s %4s  %-9s %-6s %-24s %3s %5s  %-22s %8s  %s\n", "#", "app", "variant",
            "backend", "ranks", "threads", "gpus", "size", "scale", "params", "rep", "nodes", "baseline", "core-s",
            "key");
  for (size_t i = 0; status == MAPP_OK && i < setup->jobs.count; ++i)
    status = print_row(out, &setup->env, estimates, &setup->jobs.items[i], i, &totals);
  if (status == MAPP_OK) print_totals(out, setup, &totals);
  json_decref(estimates);
  return status;
}
