/* JUnit XML for CI servers: the runs of a sweep (or of collect) and the
 * comparisons of compare and history check as test cases that Jenkins and
 * GitLab show, one file per verb.
 *
 * A file is <testsuites> holding one <testsuite>, valid against the Apache
 * Ant schema those tools read (harness/tests/data/junit/junit.xsd). That schema
 * gives a <testcase> no <properties>, so a case's properties are written
 * as the suite's, each named "CLASSNAME/NAME/PROPERTY", and repeated in
 * the text of a failure, error or skip. Any text is accepted: what XML 1.0
 * cannot hold (control characters, bytes that are not UTF-8) becomes
 * U+FFFD. */
#ifndef HARNESS_JUNIT_H
#define HARNESS_JUNIT_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "strv.h"

typedef enum {
  JUNIT_PASS,
  JUNIT_FAILURE, /* a wrong answer, a missing required baseline, a timeout, a slowdown */
  JUNIT_ERROR,   /* the run itself failed: the launcher or the app exited with an error */
  JUNIT_SKIPPED  /* not run: a backend this build lacks, no device here */
} junit_status;

typedef struct {
  const char *name, *value;
} junit_property;

/* One test case; junit_add_case copies every string. */
typedef struct {
  const char *classname; /* "mapp.heat.mpi.serial" (junit_names_of_key) */
  const char *name;      /* "tiny weak n4 t1 r0" */
  double time_s;         /* seconds; negative or not finite is written as 0 */
  junit_status status;
  const char *type;      /* failure or error kind ("verification", "baseline", "missing-baseline",
                            "consistency", "timeout", "slowdown", "exit"); NULL: "failure" or "error" */
  const char *message;   /* one line: what went wrong, or why it was skipped (may be NULL) */
  const char *details;   /* the text under it: log path, reproduce command, log tail (may be NULL) */
  const junit_property *properties;
  size_t property_count;
} junit_case;

typedef struct {
  size_t tests, failures, errors, skipped;
} junit_counts;

typedef struct junit_suite junit_suite;

/* A suite named `name` (a sweep's name, "compare", "history"), stamped
 * with the current time; an empty name is an input error. */
int junit_suite_new(const char *name, junit_suite **out);
/* A property of the whole suite (sweep, revision, environment). */
int junit_suite_property(junit_suite *s, const char *name, const char *value);
/* The suite's time attribute; without it, the sum of its cases' times. */
void junit_suite_set_time(junit_suite *s, double seconds);
/* The suite's timestamp (written in UTC). */
void junit_suite_set_timestamp(junit_suite *s, time_t when);
/* A case without a classname or a name is an input error. */
int junit_add_case(junit_suite *s, const junit_case *c);
/* One case for a run's record as job_judge writes it (results.jsonl),
 * named from its key (else its fields), timed by its elapsed_s:
 *   skipped  "skipped": true or "status": "skipped" (message: "reason")
 *   error    type "exit": the launch or the app failed (its "mapp-APP:
 *            error:" line from the log in the message)
 *   failure  type "timeout" ("timeout": true or {limit_s, elapsed_s},
 *            "status": "timeout", Slurm's TIMEOUT), "verification",
 *            "baseline", "missing-baseline" (check: required; the text
 *            gives the bless command), "consistency"
 * The record's "outcome" decides where it names one; older records are
 * judged from their fields as job_judge does. A failure's text: the
 * message, "log: PATH", "reproduce: LAUNCH" and the log's last 40 lines.
 * Properties: fom, fom_unit, verdict (a string, or an object's "kind"),
 * repetitions, attempts (a count, or the length of a list). A record that
 * cannot be named (no key, no app/variant/...) is an input error. */
int junit_add_record(junit_suite *s, const json_t *record);
/* One case per configuration (the records' keys without the repetition,
 * in the order they first appear): the first failed run of it, else its
 * last, named without a repetition, with "repetitions" (its runs), the
 * median figure of merit of its passed runs, the statistics' verdict on
 * them (verdict.h) and the sum of their times. */
int junit_add_configurations(junit_suite *s, const json_t *records);
/* A skipped case for a job key (a backend this build lacks, no device). */
int junit_add_skipped(junit_suite *s, const char *key, const char *reason);
/* The JUnit file of a sweep's (or collect's) results.jsonl: one case per
 * configuration (junit_add_configurations), then the skipped jobs'
 * configurations (keys and reasons, may be NULL), written to path. */
int junit_write_results(const char *path, const char *suite_name, const char *results_file,
                        const strv *skipped_keys, const strv *skip_reasons);
/* Refuses, before any work, a path junit_write could not write: a folder,
 * or a file in a folder that is missing or not writable (input error). */
int junit_check_path(const char *path);
/* Names a case from a job key ("heat|mpi|serial|n4|t1|tiny|weak|r0|snap5",
 * with or without its repetition): classname "mapp.heat.mpi.serial", name
 * "tiny weak n4 t1 r0 [snap5]". Skipped jobs, which leave no record, are
 * named with this from job_key. Both malloc'd; a key of fewer than seven
 * fields is an input error naming it. */
int junit_names_of_key(const char *key, char **classname, char **name);
void junit_suite_counts(const junit_suite *s, junit_counts *out);
/* The document (malloc'd). */
int junit_render(const junit_suite *s, char **xml);
/* Writes the document through a temporary file and rename; a path that
 * cannot be written is an input error naming it and why. */
int junit_write(const junit_suite *s, const char *path);
void junit_suite_free(junit_suite *s);

#endif
