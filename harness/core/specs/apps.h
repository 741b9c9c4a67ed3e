/* The mini-apps this build has, the programs on the app path (apppath.h),
 * and what each says of itself through `mapp-APP --list`: its variants
 * and, per variant, the backends written and whether each was built. */
#ifndef HARNESS_APPS_H
#define HARNESS_APPS_H

#include <stdbool.h>
#include <stddef.h>

#include "env.h"
#include "strv.h"

typedef struct {
  char *name;
  bool built;
  bool usable; /* built, and its device present here (--list's "usable"; built when absent) */
} app_backend;

typedef struct {
  char *name, *description;
  bool alone; /* runs by itself and writes an answer (--list's "alone"; default true): stencil's
                 build writes none and its run needs build's cache first */
  app_backend *backends;
  size_t nbackends;
} app_variant;

/* The app's headline pair as its --list declares it ("headline"): the
 * technique's variant/backend over the one it replaces, from min_ranks
 * ranks on, at the sizes named (none: every size). The report's section
 * "What each technique buys here" (headline.h) has one row per app that
 * declares one. */
typedef struct {
  bool declared;
  char *technique;
  char *variant, *backend;         /* the technique */
  char *ref_variant, *ref_backend; /* what it replaces */
  long min_ranks;
  strv sizes;
} app_headline;

typedef struct {
  char *name;
  char *exe;             /* the executable the app path found (absolute) */
  char *baselines;       /* whose baselines/APP/ its answers are checked against (--list's
                            "baselines"; default: its own name) */
  app_variant *variants; /* the first is the app's reference variant */
  size_t nvariants;
  char *reference;       /* "VARIANT/BACKEND": the first variant on its first backend (speedup's default) */
  bool bitwise_ranks;    /* one global problem's answer is the same bit for bit on any rank count */
  char *peer_of;         /* the mini-app this program is a peer of (--list's "peer_of"), or NULL */
  app_headline headline; /* --list's "headline"; declared false without one */
} app_info;

/* Whether a variant/backend pair can run in this build. */
typedef enum {
  COMBO_RUNNABLE,
  COMBO_NOT_BUILT,      /* written, but not compiled into this build (e.g. cuda without nvcc) */
  COMBO_NO_DEVICE,      /* built, but its device is not on this machine (cuda without a GPU) */
  COMBO_NOT_WRITTEN,    /* the variant has no such backend */
  COMBO_UNKNOWN_VARIANT /* the app has no such variant */
} combo_status;

/* The apps `mapp list` shows without being named, sorted by name: in the
 * build's bin dir every executable mapp-NAME whose NAME has no '-' (so
 * mapp-heat-bench, a Google Benchmark that --list would run whole, and test
 * tools are never started); in the app path's other folders every
 * executable mapp-NAME. A name is listed once, from the first folder. An
 * app named explicitly (app_query) may have a '-' (snapshots-devito). */
int apps_discover(const harness_env *env, strv *names);
/* Finds mapp-APP on the app path, runs its --list (with the env's
 * variables, which Open MPI needs even for a singleton as root) and parses
 * what it prints. An app found nowhere, a --list that fails, and JSON that
 * breaks the contract (contract.h) are input errors of one line. */
int app_query(const char *app, const harness_env *env, app_info *info);
/* As app_query, for the executable exe (which mapp contract names by path). */
int app_query_program(const char *app, const char *exe, const harness_env *env, app_info *info);
/* Parses the --list JSON (exposed for tests), checked against the contract. */
int app_info_parse(const char *json_text, const char *app, app_info *info);
combo_status app_combo(const app_info *info, const char *variant, const char *backend);
const app_variant *app_find_variant(const app_info *info, const char *variant);
void app_info_free(app_info *info);

#endif
