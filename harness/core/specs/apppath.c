#include "apppath.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "paths.h"

bool app_name_plain(const char *name) {
  static const char allowed[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
  return name[0] && name[0] != '.' && name[0] != '-' && strspn(name, allowed) == strlen(name);
}

/* Relative entries of MAPP_APP_PATH are the caller's (its working
 * directory); the launch and batch scripts may run elsewhere. */
static int push_dir(strv *dirs, const char *dir) {
  if (!dir[0]) return MAPP_OK;
  char *absolute = path_absolute(dir);
  if (!absolute) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = strv_contains(dirs, absolute) ? MAPP_OK : strv_push(dirs, absolute);
  free(absolute);
  return status;
}

static int push_colon_list(strv *dirs, const char *list) {
  char *copy = strdup(list);
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); status == MAPP_OK && dir; dir = strtok_r(NULL, ":", &save))
    status = push_dir(dirs, dir);
  free(copy);
  return status;
}

int app_path_dirs(const harness_env *env, strv *dirs) {
  char *bin = env->bin_dir ? strdup(env->bin_dir) : paths_bin_dir();
  int status = bin ? push_dir(dirs, bin) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(bin);
  const char *user = getenv("MAPP_APP_PATH");
  if (status == MAPP_OK && user) status = push_colon_list(dirs, user);
  for (size_t i = 0; status == MAPP_OK && i < env->app_path.count; ++i) status = push_dir(dirs, env->app_path.items[i]);
  return status;
}

static bool is_program(const char *path) { return access(path, X_OK) == 0 && !path_is_dir(path); }

static int not_found(const char *app, const strv *dirs) {
  char *searched = strv_join(dirs, ", ");
  int status = mapp_fail(MAPP_ERR_INPUT, "no mini-app '%s' in this build or on the app path (no executable mapp-%s "
                                         "in %s; see MAPP_APP_PATH and the environment's app_path)",
                         app, app, searched ? searched : "?");
  free(searched);
  return status;
}

int app_path_find(const harness_env *env, const char *app, char **exe) {
  *exe = NULL;
  if (!app_name_plain(app))
    return mapp_fail(MAPP_ERR_INPUT, "no mini-app '%s': an app's name is letters, digits, '.', '_' and '-'", app);
  strv dirs = {0};
  int status = app_path_dirs(env, &dirs);
  for (size_t i = 0; status == MAPP_OK && !*exe && i < dirs.count; ++i) {
    char *path = str_printf("%s/mapp-%s", dirs.items[i], app);
    if (!path) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    else if (is_program(path)) *exe = path;
    else free(path);
  }
  if (status == MAPP_OK && !*exe) status = not_found(app, &dirs);
  strv_free(&dirs);
  return status;
}
