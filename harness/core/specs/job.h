/* One run of one configuration: the unit that sweeps repeat, resume skips,
 * run and bless launch and submit turns into a batch script. */
#ifndef HARNESS_JOB_H
#define HARNESS_JOB_H

#include <jansson.h>

#include "strv.h"

/* How a job's answer must be checked against its baseline (a spec's
 * `check:`). Optional is the zero value: one-off runs check what exists. */
typedef enum {
  CHECK_OPTIONAL, /* checked when the baseline exists; "missing" is no failure */
  CHECK_REQUIRED, /* a missing baseline (or a problem that names none) fails the run */
  CHECK_NONE      /* not compared with a baseline at all */
} check_mode;

/* "required" | "optional" | "none"; anything else is an input error. */
int check_mode_parse(const char *text, check_mode *mode);
const char *check_mode_name(check_mode mode);

typedef struct {
  const char *app, *variant, *backend, *size, *scaling;
  long ranks, threads;
  long gpus;              /* per rank (batch jobs ask for them) */
  long repetition;        /* -1: a one-off run (mapp run, mapp bless) */
  const strv *extra_args; /* appended to the app's flags (may be NULL) */
  const char *label;      /* the sweep entry's label (may be NULL) */
  const json_t *params;   /* the matrix values of this job, recorded as `params` (may be NULL) */
  const char *params_text; /* the same as "name=value ..." (NULL without a matrix) */
  const char *reference;  /* the app's default speedup reference "VARIANT/BACKEND" (may be NULL) */
  const char *bin_dir;    /* the build whose mapp-APP runs; NULL: this mapp's (paths_bin_dir) */
  const char *exe;        /* the executable the app path found (app_info.exe); NULL: bin_dir's mapp-APP */
  const char *baselines;  /* whose baselines/APP/ the answer is checked against; NULL: the app's own */
  check_mode check;
  const char *baseline_case; /* the baseline of a custom problem (a spec entry's `case:`; may be NULL) */
  double min_time;        /* --min-time of the app (0: none); how it is measured, not what */
  double time_limit;      /* seconds the launch may take (0: none) */
  const char *simulated_on; /* a simulated environment's name: its runs are predictions, a setting
                               "simulated:NAME" of their own, never a measured series (NULL: measured) */
} job;

/* The files a job writes, all named after its stem in one directory. */
typedef struct {
  char *output; /* STEM.h5: the answer fields */
  char *result; /* STEM.json: the app's result record */
  char *log;    /* STEM.log: the launcher's and app's stdout and stderr */
} job_files;

/* What sets a job apart beyond its configuration: its entry's label, else
 * its extra flags joined by spaces; NULL for neither (malloc'd); with a
 * matrix, the label and the combination ("label instances=64"); on a
 * simulated environment " simulated:NAME" after it (alone: "simulated:NAME"). Entries of
 * one sweep that differ only in flags (heat with and without snapshots)
 * are different jobs, with their own files, keys and report rows. */
char *job_setting(const job *j);
/* File-name stem: "heat-mpi-serial-tiny-weak-n4-t1-r0" (no -rK for one-offs). */
char *job_stem(const job *j);
/* Progress label: "heat mpi/serial n=4 t=1 tiny" (plus " strong" for strong scaling). */
char *job_label(const job *j);
/* The identity resume compares: app, variant, backend, ranks, threads, size,
 * scaling, repetition. Records and jobs give the same key for the same run. */
char *job_key(const job *j);
/* A key without its repetition ("heat|mpi|serial|n1|t1|tiny|weak|snap5"):
 * the configuration every repetition of a job shares (malloc'd). */
char *job_configuration_key(const char *key);
/* The key of a record: its "key" field, which the harness writes because
 * an app may record what it actually ran (a serial backend reports 1
 * thread whatever was asked), else one made of the record's fields; NULL
 * when a field is missing. */
char *job_key_of_record(const json_t *record);
/* The baseline case the job's answer is checked against: the entry's
 * `case:` ("-weakN" appended under weak scaling on N > 1 ranks, as the apps
 * name their presets' cases), else the case the app's record names; NULL
 * for neither. Without a record (before the run) the preset's case stands
 * in for the record's. *name is malloc'd. */
int job_baseline_case(const job *j, const json_t *record, char **name);
/* The app whose baselines/ folder holds j's baselines: a peer's "baselines"
 * (--list), else j's own app. */
const char *job_baseline_app(const job *j);
/* The `mapp bless` command that writes the baseline of j's case (malloc'd,
 * shell-quoted). */
char *job_bless_command(const job *j, const char *case_name);
int job_files_make(const char *dir, const job *j, job_files *files);
void job_files_free(job_files *files);

#endif
