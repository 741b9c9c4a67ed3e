#include <stdio.h>
#include <string.h>

#include "mapp_error.h"
#include "verbargs.h"

/* -n is the one short flag, because every MPI user types `-n 4`. */
static int split_argv(int argc, char **argv, verb_args *args) {
  int i = 0;
  for (; i < argc && strcmp(argv[i], "--") != 0; ++i)
    MAPP_TRY(strv_push(&args->options, strcmp(argv[i], "-n") == 0 && i > 0 ? "--ranks" : argv[i]));
  for (++i; i < argc; ++i) MAPP_TRY(strv_push(&args->passthrough, argv[i]));
  return MAPP_OK;
}

int verb_parse(const char *verb, const char *usage, const char *summary, const mapp_option *opts,
               int min_positional, int max_positional, bool allow_passthrough, int argc, char **argv,
               verb_args *args) {
  *args = (verb_args){0};
  MAPP_TRY(split_argv(argc, argv, args));
  char prog[128];
  snprintf(prog, sizeof prog, "mapp %s%s%s", verb, usage[0] ? " " : "", usage);
  strv_argv(&args->options);
  MAPP_TRY(mapp_cli_parse(prog, summary, opts, max_positional > 0, (int)args->options.count,
                          args->options.items, &args->cli));
  args->help_shown = args->cli.help_shown;
  if (args->help_shown) return MAPP_OK;
  if (args->passthrough.count && !allow_passthrough)
    return mapp_fail(MAPP_ERR_INPUT, "mapp %s takes no app flags after '--'", verb);
  int n = args->cli.positional_count;
  if (n < min_positional || n > max_positional)
    return mapp_fail(MAPP_ERR_INPUT, "usage: %s [options] (see mapp %s --help)", prog, verb);
  return MAPP_OK;
}

void verb_args_free(verb_args *args) {
  mapp_cli_free(&args->cli);
  strv_free(&args->options);
  strv_free(&args->passthrough);
}

char *verb_command_line(int argc, char **argv) {
  strv words = {0};
  char *line = NULL;
  int status = strv_push(&words, "mapp");
  for (int i = 0; status == MAPP_OK && i < argc; ++i) status = strv_push(&words, argv[i]);
  if (status == MAPP_OK) line = strv_join_shell(&words);
  strv_free(&words);
  return line;
}
