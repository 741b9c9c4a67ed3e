/* Child processes: the launcher running an app, gnuplot, sbatch, an app's
 * --list. The harness waits for each; a SIGINT or SIGTERM that stops the
 * harness is passed on to the running child first, so an interrupted sweep
 * leaves no orphaned mpirun behind.
 *
 * A child may have a time limit. It runs in a process group of its own,
 * and the harness is a child subreaper (prctl), so every process the
 * launch starts stays the harness's descendant even when its parent dies
 * (the ranks of an mpirun that was killed). At the limit the whole tree
 * gets SIGTERM, and SIGKILL after the grace period: a launcher that does
 * not forward signals, or ranks that ignore SIGTERM, leave nothing
 * behind. */
#ifndef HARNESS_PROC_H
#define HARNESS_PROC_H

#include <stdbool.h>
#include <stdio.h>

#include "strv.h"

typedef struct {
  strv *argv;                       /* argv->items[0] is looked up in PATH */
  const strv *env_names, *env_values; /* set in the child (may be NULL) */
  const char *log_path;             /* stdout and stderr go here (NULL: inherited) */
  const char *err_path;             /* stderr alone goes here instead (NULL: as log_path says) */
  const char *cwd;                  /* working directory of the child (NULL: ours) */
  double time_limit_s;              /* > 0: stop the child's whole tree after this long */
  double grace_s;                   /* SIGTERM to SIGKILL at the limit (0: PROC_DEFAULT_GRACE_S) */
} proc_request;

#define PROC_DEFAULT_GRACE_S 5.0

typedef struct {
  int exit_code;    /* the child's exit status, or 128 + signal */
  double elapsed_s; /* wall-clock, monotonic */
  bool timed_out;   /* stopped at its time limit */
  bool killed;      /* still there after the grace period: SIGKILL */
} proc_outcome;

/* Runs the child to completion. Failing to start it (no such program) is an
 * input error naming the program; its own exit code is in *out. */
int proc_run(const proc_request *req, proc_outcome *out);
/* As proc_run, with the child's stdout captured into *text (malloc'd);
 * stderr goes to log_path or is inherited. */
int proc_capture(const proc_request *req, char **text, proc_outcome *out);
/* The message of the first "PROG: error: MESSAGE" line of a log (the
 * mini-apps' one-line error), malloc'd; NULL when there is none. */
char *proc_log_error(const char *log_path, const char *prog);
/* The last `lines` lines of a log file, indented, on stream (for failures). */
void proc_print_log_tail(const char *log_path, int lines, FILE *stream);

#endif
