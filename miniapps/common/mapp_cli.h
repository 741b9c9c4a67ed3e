/* Declarative command-line parsing shared by every mini-app and tool.
 *
 * An app lists its options in a table; the parser fills the destinations,
 * checks ranges and choices, answers --help with every flag and its default
 * (read from the destination before parsing), and reports bad input as one
 * message with status MAPP_ERR_INPUT. */
#ifndef MAPP_CLI_H
#define MAPP_CLI_H

#include <stdbool.h>
#include <stddef.h>
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

/* What giving an option changes. The driver derives from these declarations
 * whether a run is its size preset's baseline case (mapp_app.h), so a flag
 * that changes the problem cannot be compared with the preset's answer by
 * mistake; --help shows each declaration. */
typedef enum {
  MAPP_CHANGES_NOTHING = 0, /* how the problem runs or reports (threads, files, debug passes) */
  MAPP_CHANGES_ANSWER,      /* the answer: a value other than the default leaves the preset's case */
  MAPP_CHANGES_SIZE,        /* the problem's dimensions: as ANSWER, and the record's size is "custom" */
} mapp_opt_changes;

typedef struct mapp_option {
  const char *name; /* without the leading "--" */
  mapp_opt_kind kind;
  void *dest;
  const char *help;
  const char *choices; /* MAPP_OPT_CHOICE: "a|b|c"; CALLBACK: metavar */
  long min, max;       /* MAPP_OPT_LONG */
  double dmin, dmax;   /* MAPP_OPT_DOUBLE */
  int (*parse)(const char *value, void *dest);
  const char *default_text; /* shown in --help instead of the destination's value; for an option
                               that changes the answer, its default is derived elsewhere, so any
                               value given counts as a change */
  mapp_opt_changes changes;
  /* MAPP_OPT_CHOICE that changes the answer: the values that do ("zfp"), as
   * "a|b"; NULL: every value but the default. */
  const char *changing_choices;
  /* Where the app's size preset holds this option's default (see
   * MAPP_PRESET_LONG): the driver fills the destination from the chosen
   * preset when the option is not given, and compares a given value with
   * the preset's. 0: the default is the destination's value. */
  size_t preset_field;
} mapp_option;

/* The offset of a preset's field for mapp_option.preset_field; the field's
 * type must be long (or double), as the option's destination. */
#define MAPP_PRESET_LONG(type, field) (offsetof(type, field) + 0 * sizeof(_Generic(((type *)0)->field, long: 1)))
#define MAPP_PRESET_DOUBLE(type, field) (offsetof(type, field) + 0 * sizeof(_Generic(((type *)0)->field, double: 1)))

/* An option's value, as its kind stores it. */
typedef union {
  long l;
  double d;
  const char *s;
  bool b;
} mapp_opt_value;

#define MAPP_OPTION_END {.name = NULL, .kind = MAPP_OPT_END}

typedef struct {
  bool help_shown; /* --help was given: the caller exits 0 */
  int positional_count;
  char **positional; /* non-option arguments, in order (points into argv) */
  /* Per row of the option table, in order: whether the line gave it, and
   * its destination's value before parsing (its default). */
  int noptions;
  bool *given;
  mapp_opt_value *defaults;
} mapp_cli_result;

/* Parse argv[1..] against opts. "--name value" and "--name=value" both work;
 * "--" ends options. Positional arguments are collected only when
 * allow_positional is set, otherwise they are an input error. */
int mapp_cli_parse(const char *prog, const char *summary, const mapp_option *opts,
                   bool allow_positional, int argc, char **argv, mapp_cli_result *result);
void mapp_cli_free(mapp_cli_result *result);
void mapp_cli_print_help(const char *prog, const char *summary, const mapp_option *opts);

/* The option's destination's value now. */
mapp_opt_value mapp_opt_value_get(const mapp_option *o);
/* Writes value to the option's destination (LONG, DOUBLE, STRING, CHOICE, FLAG). */
void mapp_opt_value_set(const mapp_option *o, mapp_opt_value value);
/* Whether the option, given on the line with its destination's present
 * value, changes the problem against reference (its default or its
 * preset's value), as its declaration says. */
bool mapp_opt_changes_problem(const mapp_option *o, mapp_opt_value reference);

/* True when choice is one of the '|'-separated words of choices. */
bool mapp_choice_valid(const char *choices, const char *choice);

/* Options every mini-app takes (the contract in DESIGN.md). */
typedef struct {
  const char *backend;  /* a name of MAPP_BACKEND_LIST */
  const char *variant;  /* app-specific */
  const char *size;     /* a preset of the app (MAPP_SIZE_NAMES and its own) */
  const char *scaling;  /* weak|strong */
  long steps;           /* the size's default unless given */
  long threads;         /* 0: OMP_NUM_THREADS or the runtime default */
  const char *output;   /* HDF5 answer file, optional */
  const char *result;   /* JSON result record, optional */
  bool list;            /* print variants and backends as JSON and exit */
  bool quiet;           /* no summary line on stdout */
  double min_time;      /* seconds the timed iterations must last together (0: one run of compute) */
  bool print_case;      /* print the baseline case and size the options make, and exit */
  long weak_ranks;      /* --scaling weak: the rank count whose problem is solved (0: the ranks that run) */
} mapp_common_args;

#endif
