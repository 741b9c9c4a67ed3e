#include "mapp_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

bool mapp_choice_valid(const char *choices, const char *choice) {
  size_t len = strlen(choice);
  for (const char *p = choices; p && *p;) {
    const char *bar = strchr(p, '|');
    size_t word = bar ? (size_t)(bar - p) : strlen(p);
    if (word == len && strncmp(p, choice, len) == 0) return true;
    p = bar ? bar + 1 : NULL;
  }
  return false;
}

mapp_opt_value mapp_opt_value_get(const mapp_option *o) {
  mapp_opt_value v = {0};
  switch (o->kind) {
  case MAPP_OPT_LONG: v.l = *(const long *)o->dest; break;
  case MAPP_OPT_DOUBLE: v.d = *(const double *)o->dest; break;
  case MAPP_OPT_STRING:
  case MAPP_OPT_CHOICE: v.s = *(const char *const *)o->dest; break;
  case MAPP_OPT_FLAG: v.b = *(const bool *)o->dest; break;
  default: break; /* a callback's destination is the app's own */
  }
  return v;
}

void mapp_opt_value_set(const mapp_option *o, mapp_opt_value value) {
  switch (o->kind) {
  case MAPP_OPT_LONG: *(long *)o->dest = value.l; break;
  case MAPP_OPT_DOUBLE: *(double *)o->dest = value.d; break;
  case MAPP_OPT_STRING:
  case MAPP_OPT_CHOICE: *(const char **)o->dest = value.s; break;
  case MAPP_OPT_FLAG: *(bool *)o->dest = value.b; break;
  default: break;
  }
}

static bool same_string(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

bool mapp_opt_changes_problem(const mapp_option *o, mapp_opt_value reference) {
  if (o->changes == MAPP_CHANGES_NOTHING) return false;
  mapp_opt_value now = mapp_opt_value_get(o);
  if (o->kind == MAPP_OPT_CHOICE && o->changing_choices) return mapp_choice_valid(o->changing_choices, now.s);
  /* A default derived elsewhere cannot be compared: any value given counts. */
  if (o->default_text && !o->preset_field) return true;
  switch (o->kind) {
  case MAPP_OPT_LONG: return now.l != reference.l;
  case MAPP_OPT_DOUBLE: return now.d != reference.d;
  case MAPP_OPT_STRING:
  case MAPP_OPT_CHOICE: return !same_string(now.s, reference.s);
  case MAPP_OPT_FLAG: return now.b != reference.b;
  default: return true; /* a callback was given */
  }
}

static const mapp_option *find_option(const mapp_option *opts, const char *name, size_t len) {
  for (const mapp_option *o = opts; o->kind != MAPP_OPT_END; ++o)
    if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
  return NULL;
}

static int parse_long(const mapp_option *o, const char *value) {
  char *end;
  errno = 0;
  long v = strtol(value, &end, 10);
  if (errno || end == value || *end != '\0')
    return mapp_fail(MAPP_ERR_INPUT, "--%s: expected an integer, got '%s'", o->name, value);
  if (v < o->min || v > o->max)
    return mapp_fail(MAPP_ERR_INPUT, "--%s: %ld is outside [%ld, %ld]", o->name, v, o->min, o->max);
  *(long *)o->dest = v;
  return MAPP_OK;
}

static int parse_double(const mapp_option *o, const char *value) {
  char *end;
  errno = 0;
  double v = strtod(value, &end);
  if (errno || end == value || *end != '\0' || !isfinite(v))
    return mapp_fail(MAPP_ERR_INPUT, "--%s: expected a finite number, got '%s'", o->name, value);
  if (v < o->dmin || v > o->dmax)
    return mapp_fail(MAPP_ERR_INPUT, "--%s: %g is outside [%g, %g]", o->name, v, o->dmin, o->dmax);
  *(double *)o->dest = v;
  return MAPP_OK;
}

static int apply_value(const mapp_option *o, const char *value) {
  switch (o->kind) {
  case MAPP_OPT_LONG: return parse_long(o, value);
  case MAPP_OPT_DOUBLE: return parse_double(o, value);
  case MAPP_OPT_STRING:
    if (value[0] == '\0') return mapp_fail(MAPP_ERR_INPUT, "--%s: empty value", o->name);
    *(const char **)o->dest = value;
    return MAPP_OK;
  case MAPP_OPT_CHOICE:
    if (!mapp_choice_valid(o->choices, value))
      return mapp_fail(MAPP_ERR_INPUT, "--%s: unknown value '%s' (choose one of %s)", o->name,
                       value, o->choices);
    *(const char **)o->dest = value;
    return MAPP_OK;
  case MAPP_OPT_CALLBACK: {
    int status = o->parse(value, o->dest);
    if (status != MAPP_OK)
      return mapp_fail(status, "--%s: invalid value '%s' (expected %s)", o->name, value,
                       o->choices ? o->choices : "a valid value");
    return MAPP_OK;
  }
  default: return mapp_fail(MAPP_ERR_INPUT, "--%s takes no value", o->name);
  }
}

/* What --help says an option changes, so users and the option test see
 * the declaration the driver uses. */
static void print_changes(const mapp_option *o) {
  if (o->changes == MAPP_CHANGES_NOTHING) return;
  printf(" [changes the %s%s%s]", o->changes == MAPP_CHANGES_SIZE ? "size" : "answer",
         o->changing_choices ? ": " : "", o->changing_choices ? o->changing_choices : "");
}

static void print_default(const mapp_option *o) {
  if (o->default_text) {
    printf(" (default %s)", o->default_text);
    return;
  }
  switch (o->kind) {
  case MAPP_OPT_LONG: printf(" (default %ld)", *(long *)o->dest); break;
  case MAPP_OPT_DOUBLE: printf(" (default %g)", *(double *)o->dest); break;
  case MAPP_OPT_STRING:
  case MAPP_OPT_CHOICE: {
    const char *v = *(const char **)o->dest;
    printf(" (default %s)", v ? v : "none");
    break;
  }
  default: break;
  }
}

void mapp_cli_print_help(const char *prog, const char *summary, const mapp_option *opts) {
  printf("usage: %s [options]\n%s\n\noptions:\n", prog, summary);
  for (const mapp_option *o = opts; o->kind != MAPP_OPT_END; ++o) {
    char head[96];
    const char *meta = o->kind == MAPP_OPT_FLAG     ? ""
                       : o->kind == MAPP_OPT_CHOICE ? o->choices
                       : o->kind == MAPP_OPT_LONG   ? "N"
                       : o->kind == MAPP_OPT_DOUBLE ? "X"
                       : o->choices                 ? o->choices
                                                    : "VALUE";
    snprintf(head, sizeof head, "--%s%s%s", o->name, *meta ? " " : "", meta);
    printf("  %-34s %s", head, o->help);
    print_default(o);
    print_changes(o);
    printf("\n");
  }
  printf("  %-34s %s\n", "--help", "print this help and exit");
}

int mapp_cli_parse(const char *prog, const char *summary, const mapp_option *opts,
                   bool allow_positional, int argc, char **argv, mapp_cli_result *result) {
  *result = (mapp_cli_result){0};
  while (opts[result->noptions].kind != MAPP_OPT_END) ++result->noptions;
  result->positional = calloc((size_t)argc + 1, sizeof(char *));
  result->given = calloc((size_t)result->noptions + 1, sizeof *result->given);
  result->defaults = calloc((size_t)result->noptions + 1, sizeof *result->defaults);
  if (!result->positional || !result->given || !result->defaults)
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory parsing arguments");
  for (int k = 0; k < result->noptions; ++k) result->defaults[k] = mapp_opt_value_get(&opts[k]);
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (options_done || strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
      if (!options_done && strcmp(arg, "--") == 0) {
        options_done = true;
        continue;
      }
      if (!allow_positional)
        return mapp_fail(MAPP_ERR_INPUT, "unexpected argument '%s' (see --help)", arg);
      result->positional[result->positional_count++] = argv[i];
      continue;
    }
    if (strcmp(arg, "--help") == 0) {
      mapp_cli_print_help(prog, summary, opts);
      result->help_shown = true;
      return MAPP_OK;
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const mapp_option *o = find_option(opts, name, len);
    if (!o) return mapp_fail(MAPP_ERR_INPUT, "unknown option '%.*s' (see --help)", (int)len + 2, arg);
    result->given[o - opts] = true;
    if (o->kind == MAPP_OPT_FLAG) {
      if (eq) return mapp_fail(MAPP_ERR_INPUT, "--%s takes no value", o->name);
      *(bool *)o->dest = true;
      continue;
    }
    const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
    if (!value) return mapp_fail(MAPP_ERR_INPUT, "--%s needs a value", o->name);
    MAPP_TRY(apply_value(o, value));
  }
  return MAPP_OK;
}

void mapp_cli_free(mapp_cli_result *result) {
  free(result->positional);
  free(result->given);
  free(result->defaults);
  *result = (mapp_cli_result){0};
}
