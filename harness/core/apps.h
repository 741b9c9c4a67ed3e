/* The mini-apps this build has, and what each says of itself through
 * `mapp-APP --list`: its variants and, per variant, the backends written
 * and whether each was built. */
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
  app_backend *backends;
  size_t nbackends;
} app_variant;

typedef struct {
  char *name;
  app_variant *variants; /* the first is the app's reference variant */
  size_t nvariants;
  char *reference;       /* "VARIANT/BACKEND": the first variant on its first backend (speedup's default) */
  bool bitwise_ranks;    /* one global problem's answer is the same bit for bit on any rank count */
} app_info;

/* Whether a variant/backend pair can run in this build. */
typedef enum {
  COMBO_RUNNABLE,
  COMBO_NOT_BUILT,      /* written, but not compiled into this build (e.g. cuda without nvcc) */
  COMBO_NO_DEVICE,      /* built, but its device is not on this machine (cuda without a GPU) */
  COMBO_NOT_WRITTEN,    /* the variant has no such backend */
  COMBO_UNKNOWN_VARIANT /* the app has no such variant */
} combo_status;

/* Apps in the bin dir: every executable mapp-NAME whose NAME has no '-'
 * (so mapp-heat-bench and test tools are not apps), sorted by name. */
int apps_discover(strv *names);
/* Runs `mapp-APP --list` (with the env's variables, which Open MPI needs
 * even for a singleton as root) and parses what it prints. A missing
 * executable is an input error naming it. */
int app_query(const char *app, const harness_env *env, app_info *info);
/* Parses the --list JSON (exposed for tests). */
int app_info_parse(const char *json_text, const char *app, app_info *info);
combo_status app_combo(const app_info *info, const char *variant, const char *backend);
const app_variant *app_find_variant(const app_info *info, const char *variant);
void app_info_free(app_info *info);

#endif
