/* mapp list [APP...]: what each mini-app of this build and each program on
 * the app path says it has (--list); named apps may be any on the path
 * (a peer such as snapshots-devito, which discovery leaves alone). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apppath.h"
#include "apps.h"
#include "env.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "paths.h"
#include "verbs.h"

/* "serial omp cuda(not built)" */
static void print_backends(const app_variant *v, int width) {
  char text[256] = "";
  size_t used = 0;
  for (size_t i = 0; i < v->nbackends && used < sizeof text; ++i)
    used += (size_t)snprintf(text + used, sizeof text - used, "%s%s%s", i ? " " : "", v->backends[i].name,
                             v->backends[i].built ? "" : "(not built)");
  printf("%-*s", width, text);
}

/* An app from outside the build says where it lives and, for a peer,
 * whose baselines it answers to. */
static int print_app(const app_info *info, const char *build_bin) {
  for (size_t i = 0; i < info->nvariants; ++i) {
    const app_variant *v = &info->variants[i];
    printf("%-10s %-12s ", i == 0 ? info->name : "", v->name);
    print_backends(v, 30);
    printf(" %s\n", v->description);
  }
  char *dir = path_dirname(info->exe);
  if (!dir) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (strcmp(dir, build_bin) != 0) printf("%-10s from %s\n", "", info->exe);
  if (strcmp(info->baselines, info->name) != 0)
    printf("%-10s answers checked against baselines/%s/\n", "", info->baselines);
  free(dir);
  return MAPP_OK;
}

static int print_apps(const harness_env *env, const strv *apps) {
  strv dirs = {0};
  MAPP_TRY(app_path_dirs(env, &dirs));
  if (apps->count == 0) {
    char *searched = strv_join(&dirs, ", ");
    printf("no mini-apps (mapp-*) in %s\n", searched ? searched : "?");
    free(searched);
  } else {
    printf("%-10s %-12s %-30s %s\n", "app", "variant", "backends", "description");
  }
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < apps->count; ++i) {
    app_info info;
    status = app_query(apps->items[i], env, &info);
    if (status == MAPP_OK) status = print_app(&info, dirs.items[0]);
    app_info_free(&info);
  }
  strv_free(&dirs);
  return status;
}

int verb_list(int argc, char **argv) {
  const char *env_path = NULL;
  const mapp_option opts[] = {
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &env_path,
       .help = "environment whose variables the apps start with (and whose app_path is searched)",
       .default_text = "envs/local.yaml"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("list", "[APP...]",
                          "List the mini-apps of this build and the programs on the app path (MAPP_APP_PATH, the\n"
                          "environment's app_path), their variants and backends; or only the APPs named (which may\n"
                          "be any mapp-APP on the path, e.g. a peer such as snapshots-devito). Check a program\n"
                          "against the contract with mapp contract.",
                          opts, 0, 64, false, argc, argv, &args);
  harness_env env = {0};
  strv apps = {0};
  if (status == MAPP_OK && !args.help_shown) status = env_load(env_path, &env);
  for (int i = 0; status == MAPP_OK && !args.help_shown && i < args.cli.positional_count; ++i)
    status = strv_push(&apps, args.cli.positional[i]);
  if (status == MAPP_OK && !args.help_shown && apps.count == 0) status = apps_discover(&env, &apps);
  if (status == MAPP_OK && !args.help_shown) status = print_apps(&env, &apps);
  strv_free(&apps);
  env_free(&env);
  verb_args_free(&args);
  return status;
}
