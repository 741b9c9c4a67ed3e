/* The verbs of the `mapp` command. Each takes its own argv (argv[0] is the
 * verb) and returns the exit status: 0 ok, 1 a verification or baseline
 * failed, 2 bad input, 3 a system failure; errors leave one message for
 * main to print. */
#ifndef HARNESS_VERBS_H
#define HARNESS_VERBS_H

#include <jansson.h>

#include "selection.h"
#include "verbargs.h"

/* verb_NAME of every line of verbs.def */
#define MAPP_VERB(name, summary) int verb_##name(int argc, char **argv);
#include "verbs.def"
#undef MAPP_VERB

/* The records of RESULTS (a results folder or a .jsonl file) that select
 * keeps (NULL: all), as a JSON array (new reference in *records). */
int verb_load_records(const char *results, const selection *select, json_t **records);

#endif
