/* The verbs of the `mapp` command. Each takes its own argv (argv[0] is the
 * verb) and returns the exit status: 0 ok, 1 a verification or baseline
 * failed, 2 bad input, 3 a system failure; errors leave one message for
 * main to print. */
#ifndef HARNESS_VERBS_H
#define HARNESS_VERBS_H

#include <jansson.h>

#include "selection.h"
#include "verbargs.h"

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
int verb_contract(int argc, char **argv);
int verb_export(int argc, char **argv);
int verb_model(int argc, char **argv);

/* The records of RESULTS (a results folder or a .jsonl file) that select
 * keeps (NULL: all), as a JSON array (new reference in *records). */
int verb_load_records(const char *results, const selection *select, json_t **records);

#endif
