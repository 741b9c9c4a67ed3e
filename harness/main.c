/* mapp: the benchmark and regression harness of the mini-apps. This file
 * only dispatches to the verbs. */
#include <stdio.h>
#include <string.h>

#include "mapp_build_info.h"
#include "mapp_error.h"
#include "verbs.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} verb;

static const verb verbs[] = {
#define MAPP_VERB(name, summary) {#name, verb_##name, summary},
#include "verbs.def"
#undef MAPP_VERB
};
#define VERB_COUNT (sizeof verbs / sizeof verbs[0])

static void print_usage(FILE *out) {
  fprintf(out, "usage: mapp VERB [options]   (mapp VERB --help for a verb's options)\n\n"
               "mapp %s, the harness of the mapp mini-apps (revision %s)\n\nverbs:\n",
          MAPP_VERSION, mapp_git_revision);
  for (size_t i = 0; i < VERB_COUNT; ++i) fprintf(out, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
  fprintf(out, "\nexit status: 0 ok, 1 a verification or baseline check failed, 2 bad input, 3 system failure\n");
}

static const verb *find_verb(const char *name) {
  for (size_t i = 0; i < VERB_COUNT; ++i)
    if (strcmp(verbs[i].name, name) == 0) return &verbs[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    /* Bad input is one line; the usage is a --help away. */
    fprintf(stderr, "mapp: error: no verb given (verbs:");
    for (size_t i = 0; i < VERB_COUNT; ++i) fprintf(stderr, " %s", verbs[i].name);
    fprintf(stderr, "; see mapp --help)\n");
    return MAPP_ERR_INPUT;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
    print_usage(stdout);
    return MAPP_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("mapp %s (%s)\n", MAPP_VERSION, mapp_git_revision);
    return MAPP_OK;
  }
  const verb *v = find_verb(argv[1]);
  if (!v) {
    fprintf(stderr, "mapp: error: unknown verb '%s' (verbs:", argv[1]);
    for (size_t i = 0; i < VERB_COUNT; ++i) fprintf(stderr, " %s", verbs[i].name);
    fprintf(stderr, "; see mapp --help)\n");
    return MAPP_ERR_INPUT;
  }
  int status = v->run(argc - 1, argv + 1);
  /* A failed check has already said so; only errors carry a message. */
  if (status != MAPP_OK && mapp_error_message()[0]) {
    char prog[64];
    snprintf(prog, sizeof prog, "mapp %s", v->name);
    mapp_report_error(prog, status);
  }
  return status;
}
