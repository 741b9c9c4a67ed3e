/* What `sweep` and `submit` share: the spec, the environment, each app's
 * --list, the expanded jobs, and the results folder OUT/<name>/. */
#ifndef HARNESS_SWEEP_SETUP_H
#define HARNESS_SWEEP_SETUP_H

#include <jansson.h>
#include <stdbool.h>

#include "apps.h"
#include "env.h"
#include "spec.h"

typedef struct {
  sweep_spec spec;
  harness_env env;
  app_info *apps; /* one per distinct app of the spec */
  size_t napps;
  sweep_jobs jobs;
} sweep_setup;

/* Loads and expands; an app the build lacks is an input error before anything runs. */
int sweep_setup_open(const char *spec_path, const char *env_path, sweep_setup *s);
void sweep_setup_close(sweep_setup *s);

typedef struct {
  char *dir;          /* OUT/<name> */
  char *results_file; /* OUT/<name>/results.jsonl */
  char *runs_dir;     /* OUT/<name>/runs: answers, records and logs of each run */
  char *jobs_dir;     /* OUT/<name>/jobs: batch scripts (submit) */
  int lock_fd;        /* the folder's lock (prepare takes it, free drops it); -1 none */
  bool locked;
} sweep_paths;

/* Only the names (nothing is created). */
int sweep_paths_make(const sweep_spec *spec, const char *out, sweep_paths *p);
/* The names, and the folders made with a copy of the spec as spec.yaml,
 * under an exclusive lock of OUT/<name> (another sweep, submit or collect
 * of the same folder is refused, naming its pid) held until
 * sweep_paths_free. A
 * fresh sweep moves an earlier results.jsonl aside (results-<time>.jsonl)
 * rather than mixing two sweeps' records; a resumed one drops a torn last
 * line so its appends start clean. */
int sweep_paths_prepare(const sweep_spec *spec, const char *spec_path, const char *out, bool resume,
                        const char *verb, sweep_paths *p);
void sweep_paths_free(sweep_paths *p);
/* The keys of the records already in results_file when resuming, else an
 * empty set. */
int sweep_done_keys(const char *results_file, bool resume, json_t **keys);
/* A record of a run that failed: its "outcome" is not "ok" (records older
 * than that field: a nonzero exit, or a failed verification or baseline). */
bool sweep_record_failed(const json_t *record);
/* --resume --retry-failed: the failed runs' records leave results_file for
 * results-retried-<time>.jsonl beside it (nothing is lost, and the report
 * reads results.jsonl alone), so the resumed sweep runs them again;
 * *moved says how many. */
int sweep_set_failed_aside(const char *results_file, size_t *moved);

#endif
