/* The rounds of `repetitions: auto` (rounds.h). */
#include "rounds.h"

#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "results.h"
#include "verdict.h"

/* What the records say of one configuration so far. */
typedef struct {
  size_t runs, failed;
  long last_repetition;
  double seconds;
  double *foms;
  size_t nfoms;
} configuration_runs;

static void add_record(const json_t *r, configuration_runs *c) {
  ++c->runs;
  long rep = (long)json_integer_value(json_object_get(r, "repetition"));
  if (rep > c->last_repetition) c->last_repetition = rep;
  c->seconds += json_number_value(json_object_get(r, "elapsed_s"));
  const json_t *fom = json_object_get(json_object_get(r, "fom"), "value");
  if (json_integer_value(json_object_get(r, "exit_code")) != 0 || !json_is_number(fom)) {
    ++c->failed;
    return;
  }
  c->foms[c->nfoms++] = json_number_value(fom);
}

/* The records whose configuration key is `config`. */
static int gather(const json_t *records, const char *config, configuration_runs *c) {
  *c = (configuration_runs){.last_repetition = -1};
  c->foms = malloc((json_array_size(records) + 1) * sizeof *c->foms);
  if (!c->foms) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory judging repetitions");
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    char *key = job_key_of_record(r), *of = key ? job_configuration_key(key) : NULL;
    bool same = of && strcmp(of, config) == 0;
    free(key);
    free(of);
    if (same) add_record(r, c);
  }
  return MAPP_OK;
}

/* Whether the configuration of sj needs another run; counts why not. */
static int needs_more(const sweep_job *sj, const json_t *records, rounds_tally *tally, long *next_repetition) {
  *next_repetition = -1;
  char *key = job_key(&sj->job), *config = key ? job_configuration_key(key) : NULL;
  free(key);
  if (!config) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  configuration_runs c;
  int status = gather(records, config, &c);
  bool precise = false;
  if (status == MAPP_OK) status = verdict_precise(c.foms, c.nfoms, sj->measure->precision, &precise);
  if (status == MAPP_OK) {
    if (c.failed) ++tally->failed;
    else if (precise) ++tally->precise;
    else if ((long)c.runs >= sj->measure->max_repetitions || c.seconds >= sj->measure->max_seconds)
      ++tally->out_of_budget;
    else *next_repetition = c.last_repetition + 1;
  }
  free(c.foms);
  free(config);
  return status;
}

int rounds_next(const sweep_jobs *jobs, const char *results_file, sweep_jobs *next, rounds_tally *tally) {
  *next = (sweep_jobs){0};
  *tally = (rounds_tally){0};
  json_t *records = NULL;
  int status = results_load(results_file, &records);
  for (size_t i = 0; status == MAPP_OK && i < jobs->count; ++i) {
    const sweep_job *sj = &jobs->items[i];
    if (!sj->measure->auto_repetitions || sj->job.repetition != 0 || sj->combo != COMBO_RUNNABLE) continue;
    long repetition;
    status = needs_more(sj, records, tally, &repetition);
    if (status != MAPP_OK || repetition < 0) continue;
    sweep_job *grown = realloc(next->items, (next->count + 1) * sizeof *grown);
    if (!grown) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory planning the next round");
    else {
      next->items = grown;
      next->items[next->count] = *sj;
      next->items[next->count++].job.repetition = repetition;
    }
  }
  json_decref(records);
  if (status != MAPP_OK) sweep_jobs_free(next);
  return status;
}
