#include "apps.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apppath.h"
#include "contract.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "proc.h"

/* In the build's bin dir (first of the app path) a name with '-' is a
 * tool of an app (mapp-heat-bench, mapp-heat-animate), never started
 * unasked; in the app path's own folders every mapp-NAME is an app. */
static bool is_app_executable(const char *dir, const char *entry, bool build_dir) {
  if (strncmp(entry, "mapp-", 5) != 0 || !app_name_plain(entry + 5)) return false;
  if (build_dir && strchr(entry + 5, '-')) return false;
  char *path = path_join(dir, entry);
  bool ok = path && access(path, X_OK) == 0 && !path_is_dir(path);
  free(path);
  return ok;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder of the app path that does not exist is skipped, not an error
 * (an environment names folders of every machine it describes), except
 * the build's own. */
static int discover_in(const char *dir, bool build_dir, strv *names) {
  DIR *d = opendir(dir);
  if (!d) return build_dir ? mapp_fail(MAPP_ERR_INPUT, "cannot read the executables directory %s", dir) : MAPP_OK;
  int status = MAPP_OK;
  for (struct dirent *e; status == MAPP_OK && (e = readdir(d));)
    if (is_app_executable(dir, e->d_name, build_dir) && !strv_contains(names, e->d_name + 5))
      status = strv_push(names, e->d_name + 5);
  closedir(d);
  return status;
}

int apps_discover(const harness_env *env, strv *names) {
  strv dirs = {0};
  int status = app_path_dirs(env, &dirs);
  for (size_t i = 0; status == MAPP_OK && i < dirs.count; ++i) status = discover_in(dirs.items[i], i == 0, names);
  strv_free(&dirs);
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
  info->nvariants = json_array_size(list);
  info->variants = calloc(info->nvariants, sizeof *info->variants);
  if (!info->variants) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < info->nvariants; ++i) {
    const json_t *v = json_array_get(list, i);
    info->variants[i].name = json_string_copy(v, "name");
    info->variants[i].description = json_string_copy(v, "description");
    info->variants[i].alone = !json_is_false(json_object_get(v, "alone"));
    MAPP_TRY(parse_backends(json_object_get(v, "backends"), app, &info->variants[i]));
  }
  const app_variant *first = &info->variants[0];
  info->reference = str_printf("%s/%s", first->name, first->nbackends ? first->backends[0].name : "serial");
  return info->reference ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* The one line naming what --list broke, pointing at the contract. */
static int check_contract(const json_t *root, const char *app) {
  char program[128], *violation = NULL;
  snprintf(program, sizeof program, "mapp-%s", app);
  MAPP_TRY(contract_check_list(program, root, &violation));
  if (!violation) return MAPP_OK;
  int status = mapp_fail(MAPP_ERR_INPUT, "%s (the mapp contract: docs/contract.md)", violation);
  free(violation);
  return status;
}

static int copy_text(const json_t *obj, const char *key, char **out) {
  *out = json_string_copy(obj, key);
  return *out ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* "headline" (the contract checked its form, contract.h). */
static int parse_headline(const json_t *obj, app_headline *h) {
  if (!obj) return MAPP_OK;
  const json_t *ref = json_object_get(obj, "reference");
  h->declared = true;
  json_int_t min_ranks = json_integer_value(json_object_get(obj, "min_ranks"));
  h->min_ranks = min_ranks > 0 ? (long)min_ranks : 1;
  MAPP_TRY(copy_text(obj, "technique", &h->technique));
  MAPP_TRY(copy_text(obj, "variant", &h->variant));
  MAPP_TRY(copy_text(obj, "backend", &h->backend));
  MAPP_TRY(copy_text(ref, "variant", &h->ref_variant));
  MAPP_TRY(copy_text(ref, "backend", &h->ref_backend));
  size_t i;
  const json_t *size;
  json_array_foreach(json_object_get(obj, "sizes"), i, size) MAPP_TRY(strv_push(&h->sizes, json_string_value(size)));
  return MAPP_OK;
}

static int parse_list(const json_t *root, const char *app, app_info *info) {
  MAPP_TRY(check_contract(root, app));
  info->bitwise_ranks = json_is_true(json_object_get(root, "bitwise_ranks"));
  const char *baselines = json_string_value(json_object_get(root, "baselines"));
  if (!(info->baselines = strdup(baselines ? baselines : app))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  const char *peer_of = json_string_value(json_object_get(root, "peer_of"));
  if (peer_of && !(info->peer_of = strdup(peer_of))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  MAPP_TRY(parse_headline(json_object_get(root, "headline"), &info->headline));
  return parse_variants(root, app, info);
}

int app_info_parse(const char *json_text, const char *app, app_info *info) {
  *info = (app_info){.name = strdup(app)};
  json_error_t err;
  json_t *root = json_loads(json_text, 0, &err);
  int status = root ? parse_list(root, app, info)
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

/* " (LINE)": the first line a failed --list printed on its stderr, so the
 * refusal stays one line and carries the program's own words. */
static char *stderr_words(const char *err_path) {
  char *text = NULL;
  if (read_text_file(err_path, &text) != MAPP_OK) {
    mapp_error_clear();
    return strdup("");
  }
  const char *line = text + strspn(text, " \t\r\n");
  char *words = line[0] ? str_printf(" (%.*s)", (int)strcspn(line, "\r\n"), line) : strdup("");
  free(text);
  return words;
}

static int list_failed(const char *app, const proc_outcome *outcome, const char *err_path) {
  char *words = stderr_words(err_path);
  int status = mapp_fail(MAPP_ERR_INPUT, "mapp-%s --list failed with exit code %d%s: a mapp program prints its "
                                         "variants and backends as JSON and exits 0 (the mapp contract: "
                                         "docs/contract.md)",
                         app, outcome->exit_code, words ? words : "");
  free(words);
  return status;
}

/* --list's stderr goes to a file of its own: a program that fails it says
 * why there, and the harness's refusal quotes it in its one line. */
static int run_list(const harness_env *env, const char *exe, char **text, proc_outcome *outcome, char *err_path) {
  strv argv = {0};
  int fd = mkstemp(err_path);
  if (fd < 0) return mapp_fail(MAPP_ERR_SYSTEM, "cannot create a temporary file for --list's stderr");
  close(fd);
  int status = push_list_command(env, exe, &argv);
  proc_request req = {.argv = &argv, .env_names = &env->env_names, .env_values = &env->env_values,
                      .err_path = err_path};
  if (status == MAPP_OK) status = proc_capture(&req, text, outcome);
  strv_free(&argv);
  return status;
}

int app_query_program(const char *app, const char *exe, const harness_env *env, app_info *info) {
  *info = (app_info){0}; /* freeable whatever fails below */
  char *text = NULL, err_path[] = "/tmp/mapp-list-XXXXXX";
  proc_outcome outcome;
  int status = run_list(env, exe, &text, &outcome, err_path);
  if (status == MAPP_OK && outcome.exit_code != 0) status = list_failed(app, &outcome, err_path);
  if (status == MAPP_OK) status = app_info_parse(text, app, info);
  if (status == MAPP_OK && !(info->exe = strdup(exe))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status != MAPP_OK) app_info_free(info);
  if (strcmp(err_path, "/tmp/mapp-list-XXXXXX") != 0) unlink(err_path);
  free(text);
  return status;
}

int app_query(const char *app, const harness_env *env, app_info *info) {
  *info = (app_info){0};
  char *exe = NULL;
  MAPP_TRY(app_path_find(env, app, &exe));
  int status = app_query_program(app, exe, env, info);
  free(exe);
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
  free(info->exe);
  free(info->baselines);
  free(info->reference);
  free(info->peer_of);
  app_headline *h = &info->headline;
  free(h->technique), free(h->variant), free(h->backend), free(h->ref_variant), free(h->ref_backend);
  strv_free(&h->sizes);
  *info = (app_info){0};
}
