/* Declarative command-line parsing shared by every mini-app and tool.
 *
 * An app lists its options in a table; the parser fills the destinations,
 * checks ranges and choices, answers --help with every flag and its default
 * (read from the destination before parsing), and reports bad input as one
 * message with status MAPP_ERR_INPUT. */
#ifndef MAPP_CLI_H
#define MAPP_CLI_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
  MAPP_OPT_LONG,     /* long, range [min, max] */
  MAPP_OPT_DOUBLE,   /* double, range [dmin, dmax] */
  MAPP_OPT_STRING,   /* const char * (points into argv) */
  MAPP_OPT_CHOICE,   /* const char *, one of "a|b|c" in choices */
  MAPP_OPT_FLAG,     /* bool, no value */
  MAPP_OPT_CALLBACK, /* parse(value, dest) returns a status; may repeat */
  MAPP_OPT_END,
} mapp_opt_kind;

typedef struct mapp_option {
  const char *name; /* without the leading "--" */
  mapp_opt_kind kind;
  void *dest;
  const char *help;
  const char *choices; /* MAPP_OPT_CHOICE: "a|b|c"; CALLBACK: metavar */
  long min, max;       /* MAPP_OPT_LONG */
  double dmin, dmax;   /* MAPP_OPT_DOUBLE */
  int (*parse)(const char *value, void *dest);
  const char *default_text; /* shown in --help instead of the destination's value */
} mapp_option;

#define MAPP_OPTION_END {.name = NULL, .kind = MAPP_OPT_END}

typedef struct {
  bool help_shown; /* --help was given: the caller exits 0 */
  int positional_count;
  char **positional; /* non-option arguments, in order (points into argv) */
} mapp_cli_result;

/* Parse argv[1..] against opts. "--name value" and "--name=value" both work;
 * "--" ends options. Positional arguments are collected only when
 * allow_positional is set, otherwise they are an input error. */
int mapp_cli_parse(const char *prog, const char *summary, const mapp_option *opts,
                   bool allow_positional, int argc, char **argv, mapp_cli_result *result);
void mapp_cli_free(mapp_cli_result *result);
void mapp_cli_print_help(const char *prog, const char *summary, const mapp_option *opts);

/* True when choice is one of the '|'-separated words of choices. */
bool mapp_choice_valid(const char *choices, const char *choice);

/* Options every mini-app takes (the contract in DESIGN.md). */
typedef struct {
  const char *backend;  /* a name of MAPP_BACKEND_LIST */
  const char *variant;  /* app-specific */
  const char *size;     /* a preset of the app (MAPP_SIZE_NAMES and its own) */
  const char *scaling;  /* weak|strong */
  long steps;           /* 0: the size's default */
  long threads;         /* 0: OMP_NUM_THREADS or the runtime default */
  const char *output;   /* HDF5 answer file, optional */
  const char *result;   /* JSON result record, optional */
  bool list;            /* print variants and backends as JSON and exit */
  bool quiet;           /* no summary line on stdout */
  double min_time;      /* seconds the timed iterations must last together (0: one run of compute) */
} mapp_common_args;

#endif
