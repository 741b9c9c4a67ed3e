/* The command line every verb parses the same way: its options, the app's
 * flags after "--", and help. Declared in core, where it is defined, so
 * that core never includes verbs/. */
#ifndef HARNESS_VERBARGS_H
#define HARNESS_VERBARGS_H

#include <stdbool.h>

#include "mapp_cli.h"
#include "strv.h"

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
