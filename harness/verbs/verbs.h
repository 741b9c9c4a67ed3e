/* The verbs of the `mapp` command. Each takes its own argv (argv[0] is the
 * verb) and returns the exit status: 0 ok, 1 a verification or baseline
 * failed, 2 bad input, 3 a system failure; errors leave one message for
 * main to print. */
#ifndef HARNESS_VERBS_H
#define HARNESS_VERBS_H

#include <stdbool.h>

#include "mapp_cli.h"
#include "strv.h"

int verb_list(int argc, char **argv);
int verb_run(int argc, char **argv);
int verb_sweep(int argc, char **argv);
int verb_check(int argc, char **argv);
int verb_bless(int argc, char **argv);
int verb_plot(int argc, char **argv);
int verb_report(int argc, char **argv);
int verb_submit(int argc, char **argv);
int verb_collect(int argc, char **argv);
int verb_compare(int argc, char **argv);
int verb_history(int argc, char **argv);
int verb_bisect(int argc, char **argv);

/* A verb's command line, split where the app's own flags begin. */
typedef struct {
  strv options;     /* argv before "--", with "-n N" rewritten as "--ranks N" */
  strv passthrough; /* after "--": flags for the app */
  mapp_cli_result cli;
  bool help_shown;
} verb_args;

/* Parses a verb's argv against opts, with between min_positional and
 * max_positional positional arguments (`usage` names them, e.g. "APP").
 * Passthrough flags after "--" are an input error unless allowed. */
int verb_parse(const char *verb, const char *usage, const char *summary, const mapp_option *opts,
               int min_positional, int max_positional, bool allow_passthrough, int argc, char **argv,
               verb_args *args);
void verb_args_free(verb_args *args);
/* "mapp VERB ARGS..." shell-quoted (malloc'd), for provenance. */
char *verb_command_line(int argc, char **argv);

#endif
