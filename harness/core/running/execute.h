/* Running one job and judging it: launch through the environment, read the
 * app's record, check the baseline, and return the record with the
 * harness's fields added. `run`, `sweep` and `bless` execute jobs here;
 * `collect` judges the jobs a batch system ran with job_judge. */
#ifndef HARNESS_EXECUTE_H
#define HARNESS_EXECUTE_H

#include <stdbool.h>
#include <jansson.h>

#include "tolerance.h"
#include "env.h"
#include "job.h"
#include "proc.h"

typedef enum {
  OUTCOME_OK,
  OUTCOME_FAIL_EXIT,    /* the launch or the app failed (bad input, crash, ...) */
  OUTCOME_FAIL_VERIFY,  /* the app's own verification failed */
  OUTCOME_FAIL_BASELINE, /* the answer disagrees with the baseline */
  OUTCOME_FAIL_UNCHECKED, /* check: required, and no baseline to check the answer against */
  OUTCOME_FAIL_CONSISTENCY, /* the answer differs from the same sweep's 1-rank answer (consistency.h) */
  OUTCOME_FAIL_TIMEOUT, /* stopped at its time limit */
  OUTCOME_FAIL_CONTRACT /* the program broke the mapp contract (docs/contract.md): it answered (exit 0
                           or 1) without a record, or with one the schema refuses or of another run */
} job_outcome;

typedef struct {
  const char *sweep;   /* recorded as "sweep" (NULL: null) */
  bool check_baseline; /* false for bless, which makes the baseline */
  bool keep_output;    /* false: remove the answer file of a passing run */
} execute_options;

typedef struct {
  json_t *record;          /* the app's record plus the harness fields (owned) */
  compare_report baseline; /* per-field results when a baseline was compared */
  job_outcome outcome;
  int exit_code;
  double elapsed_s;
  bool app_wrote_record; /* the record is the app's, not the harness's stand-in */
  char *contract_error;  /* what the program broke, one line (malloc'd; NULL: kept the contract) */
} job_result;

/* Launches j writing `files` (whose folder must exist) and judges it. */
int job_execute(const harness_env *env, const job *j, const job_files *files, const execute_options *opt,
                job_result *res);
/* Judges a finished launch: its record (or a stand-in when the app wrote
 * none, or one that breaks the contract: then "contract": {"status":
 * "fail", "error": LINE, "record": FILE} says what it broke and the
 * answer is not compared), the harness fields "key", "sweep", "repetition", "launch",
 * "elapsed_s", "exit_code", "check", "baseline" and "outcome" ("timeout":
 * {"limit_s", "elapsed_s", "killed"} when the launch was stopped), and the outcome. Under
 * check: required a baseline that is missing fails the run, and its
 * "baseline" object names the `mapp bless` command ("bless") that makes it. */
int job_judge(const job *j, const job_files *files, const char *launch, const proc_outcome *proc,
              const execute_options *opt, job_result *res);
/* Sets the record's "system", the machine it is recorded on: `system` (the
 * environment's `system:`) when given, else the host the record names (the
 * app's rank 0), else this machine's host name. */
int job_record_system(json_t *record, const char *system);
/* An answer that passed needs no keeping in a sweep (sweeps of large sizes
 * would fill the disk with answers nobody reads): removes it, and the
 * record's "output" becomes null. A failed run keeps its answer. */
void job_drop_passed_output(job_result *res, const job_files *files);
/* "ok", "FAIL (exit 2)", "FAIL (verify)", "FAIL (baseline)", "FAIL (no baseline)", "FAIL (consistency)",
 * "FAIL (timeout after 5.0 s)", "FAIL (contract)". */
void job_outcome_text(const job_result *res, char *buf, size_t len);
/* The record's "outcome": "ok", "exit", "verify", "baseline", "unchecked",
 * "consistency", "timeout" or "contract". */
const char *job_outcome_name(job_outcome outcome);
/* Sets res->outcome and the record's "outcome" field together. */
void job_set_outcome(job_result *res, job_outcome outcome);
/* A failure outside the app's own verdict, which launching again may
 * mend: a timeout, a signal, an exit other than 0, 1 (a wrong answer) and
 * 2 (bad input), or an exit 1 from a launch whose app wrote no record (the
 * launcher's own failure: the app writes its record before it exits 1).
 * Never a failed verification, baseline or consistency check. */
bool job_failed_outside_app(const job_result *res);
/* The exit status a one-off run reports: 0 ok, 1 verification or baseline
 * failed or the program broke the contract, 2 the app rejected its input,
 * 3 anything else went wrong. */
int job_exit_status(const job_result *res);
void job_result_free(job_result *res);

#endif
