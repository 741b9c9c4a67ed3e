/* mapp list: what each mini-app of this build says it has (--list). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"
#include "env.h"
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

static void print_app(const app_info *info) {
  for (size_t i = 0; i < info->nvariants; ++i) {
    const app_variant *v = &info->variants[i];
    printf("%-10s %-12s ", i == 0 ? info->name : "", v->name);
    print_backends(v, 30);
    printf(" %s\n", v->description);
  }
}

int verb_list(int argc, char **argv) {
  const char *env_path = NULL;
  const mapp_option opts[] = {
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &env_path,
       .help = "environment whose variables the apps start with", .default_text = "envs/local.yaml"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("list", "", "List the mini-apps of this build, their variants and backends.", opts,
                          0, 0, false, argc, argv, &args);
  harness_env env = {0};
  strv apps = {0};
  if (status == MAPP_OK && !args.help_shown) status = env_load(env_path, &env);
  if (status == MAPP_OK && !args.help_shown) status = apps_discover(&apps);
  if (status == MAPP_OK && !args.help_shown) {
    if (apps.count == 0) {
      char *bin = paths_bin_dir();
      printf("no mini-apps (mapp-*) in %s\n", bin ? bin : "?");
      free(bin);
    } else {
      printf("%-10s %-12s %-30s %s\n", "app", "variant", "backends", "description");
    }
  }
  for (size_t i = 0; status == MAPP_OK && !args.help_shown && i < apps.count; ++i) {
    app_info info;
    status = app_query(apps.items[i], &env, &info);
    if (status == MAPP_OK) print_app(&info);
    app_info_free(&info);
  }
  strv_free(&apps);
  env_free(&env);
  verb_args_free(&args);
  return status;
}
