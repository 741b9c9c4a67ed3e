/* Child processes: the launcher running an app, gnuplot, sbatch, an app's
 * --list. The harness waits for each; a SIGINT or SIGTERM that stops the
 * harness is passed on to the running child first, so an interrupted sweep
 * leaves no orphaned mpirun behind. */
#ifndef HARNESS_PROC_H
#define HARNESS_PROC_H

#include <stdio.h>

#include "strv.h"

typedef struct {
  strv *argv;                       /* argv->items[0] is looked up in PATH */
  const strv *env_names, *env_values; /* set in the child (may be NULL) */
  const char *log_path;             /* stdout and stderr go here (NULL: inherited) */
  const char *cwd;                  /* working directory of the child (NULL: ours) */
} proc_request;

typedef struct {
  int exit_code;    /* the child's exit status, or 128 + signal */
  double elapsed_s; /* wall-clock, monotonic */
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
