#include "apps.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "paths.h"
#include "proc.h"

static bool is_app_executable(const char *dir, const char *entry) {
  if (strncmp(entry, "mapp-", 5) != 0 || entry[5] == '\0' || strchr(entry + 5, '-')) return false;
  char *path = path_join(dir, entry);
  bool ok = path && access(path, X_OK) == 0 && !path_is_dir(path);
  free(path);
  return ok;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int apps_discover(strv *names) {
  char *bin = paths_bin_dir();
  if (!bin) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  DIR *dir = opendir(bin);
  if (!dir) {
    int status = mapp_fail(MAPP_ERR_INPUT, "cannot read the executables directory %s", bin);
    free(bin);
    return status;
  }
  int status = MAPP_OK;
  for (struct dirent *e; status == MAPP_OK && (e = readdir(dir));)
    if (is_app_executable(bin, e->d_name)) status = strv_push(names, e->d_name + 5);
  closedir(dir);
  free(bin);
  if (names->count) qsort(names->items, names->count, sizeof *names->items, compare_names);
  return status;
}

static char *json_string_copy(const json_t *obj, const char *key) {
  const char *text = json_string_value(json_object_get(obj, key));
  return strdup(text ? text : "");
}

static int parse_backends(const json_t *list, const char *app, app_variant *v) {
  v->nbackends = json_array_size(list);
  v->backends = calloc(v->nbackends ? v->nbackends : 1, sizeof *v->backends);
  if (!v->backends) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < v->nbackends; ++i) {
    const json_t *b = json_array_get(list, i);
    if (!json_is_string(json_object_get(b, "name")))
      return mapp_fail(MAPP_ERR_INPUT, "mapp-%s --list: a backend of variant %s has no name", app, v->name);
    v->backends[i].name = json_string_copy(b, "name");
    v->backends[i].built = json_is_true(json_object_get(b, "built"));
    const json_t *usable = json_object_get(b, "usable");
    v->backends[i].usable = usable ? json_is_true(usable) : v->backends[i].built;
  }
  return MAPP_OK;
}

static int parse_variants(const json_t *root, const char *app, app_info *info) {
  const json_t *list = json_object_get(root, "variants");
  if (!json_is_array(list) || json_array_size(list) == 0)
    return mapp_fail(MAPP_ERR_INPUT, "mapp-%s --list printed no variants", app);
  info->nvariants = json_array_size(list);
  info->variants = calloc(info->nvariants, sizeof *info->variants);
  if (!info->variants) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < info->nvariants; ++i) {
    const json_t *v = json_array_get(list, i);
    if (!json_is_string(json_object_get(v, "name")))
      return mapp_fail(MAPP_ERR_INPUT, "mapp-%s --list: variant %zu has no name", app, i);
    info->variants[i].name = json_string_copy(v, "name");
    info->variants[i].description = json_string_copy(v, "description");
    MAPP_TRY(parse_backends(json_object_get(v, "backends"), app, &info->variants[i]));
  }
  const app_variant *first = &info->variants[0];
  info->reference = str_printf("%s/%s", first->name, first->nbackends ? first->backends[0].name : "serial");
  return info->reference ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

int app_info_parse(const char *json_text, const char *app, app_info *info) {
  *info = (app_info){.name = strdup(app)};
  json_error_t err;
  json_t *root = json_loads(json_text, 0, &err);
  if (root) info->bitwise_ranks = json_is_true(json_object_get(root, "bitwise_ranks"));
  int status = root ? parse_variants(root, app, info)
                    : mapp_fail(MAPP_ERR_INPUT, "mapp-%s --list did not print JSON (line %d: %s)", app, err.line,
                                err.text);
  json_decref(root);
  if (status != MAPP_OK) app_info_free(info);
  return status;
}

/* A simulated build's programs start only under its launcher (smpicc
 * makes them shared objects smpirun loads): --list goes through it, on 1 rank. */
static int push_list_command(const harness_env *env, const char *exe, strv *argv) {
  if (env->simulated) {
    MAPP_TRY(strv_push(argv, env->launcher));
    MAPP_TRY(strv_push(argv, env->np_flag));
    MAPP_TRY(strv_push(argv, "1"));
    MAPP_TRY(strv_extend(argv, &env->launcher_args));
  }
  MAPP_TRY(strv_push(argv, exe));
  return strv_push(argv, "--list");
}

int app_query(const char *app, const harness_env *env, app_info *info) {
  *info = (app_info){0}; /* freeable whatever fails below */
  char *exe = paths_app_executable(env->bin_dir, app);
  if (!exe) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (access(exe, X_OK) != 0) {
    int status = mapp_fail(MAPP_ERR_INPUT, "no mini-app '%s' in this build (%s is missing)", app, exe);
    free(exe);
    return status;
  }
  strv argv = {0};
  int status = push_list_command(env, exe, &argv);
  free(exe);
  char *text = NULL;
  proc_outcome outcome;
  proc_request req = {.argv = &argv, .env_names = &env->env_names, .env_values = &env->env_values};
  if (status == MAPP_OK) status = proc_capture(&req, &text, &outcome);
  if (status == MAPP_OK && outcome.exit_code != 0)
    status = mapp_fail(MAPP_ERR_INPUT, "mapp-%s --list failed with exit code %d", app, outcome.exit_code);
  if (status == MAPP_OK) status = app_info_parse(text, app, info);
  free(text);
  strv_free(&argv);
  return status;
}

const app_variant *app_find_variant(const app_info *info, const char *variant) {
  for (size_t i = 0; i < info->nvariants; ++i)
    if (strcmp(info->variants[i].name, variant) == 0) return &info->variants[i];
  return NULL;
}

combo_status app_combo(const app_info *info, const char *variant, const char *backend) {
  const app_variant *v = app_find_variant(info, variant);
  if (!v) return COMBO_UNKNOWN_VARIANT;
  for (size_t i = 0; i < v->nbackends; ++i)
    if (strcmp(v->backends[i].name, backend) == 0)
      return !v->backends[i].built ? COMBO_NOT_BUILT : v->backends[i].usable ? COMBO_RUNNABLE : COMBO_NO_DEVICE;
  return COMBO_NOT_WRITTEN;
}

void app_info_free(app_info *info) {
  for (size_t i = 0; i < info->nvariants; ++i) {
    app_variant *v = &info->variants[i];
    for (size_t j = 0; j < v->nbackends; ++j) free(v->backends[j].name);
    free(v->backends);
    free(v->name);
    free(v->description);
  }
  free(info->variants);
  free(info->name);
  free(info->reference);
  *info = (app_info){0};
}
