#include "sweep_setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "results.h"

static bool already_queried(const sweep_setup *s, const char *app) {
  for (size_t i = 0; i < s->napps; ++i)
    if (strcmp(s->apps[i].name, app) == 0) return true;
  return false;
}

static int query_apps(sweep_setup *s) {
  s->apps = calloc(s->spec.nruns, sizeof *s->apps);
  if (!s->apps) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < s->spec.nruns; ++i) {
    const char *app = s->spec.runs[i].app;
    if (already_queried(s, app)) continue;
    MAPP_TRY(app_query(app, &s->env, &s->apps[s->napps]));
    ++s->napps;
  }
  return MAPP_OK;
}

int sweep_setup_open(const char *spec_path, const char *env_path, sweep_setup *s) {
  *s = (sweep_setup){0};
  int status = spec_load(spec_path, &s->spec);
  if (status == MAPP_OK) status = env_load(env_path, &s->env);
  if (status == MAPP_OK) status = query_apps(s);
  if (status == MAPP_OK) status = spec_expand(&s->spec, s->apps, s->napps, &s->jobs);
  for (size_t i = 0; status == MAPP_OK && i < s->jobs.count; ++i) env_apply_to_job(&s->env, &s->jobs.items[i].job);
  if (status != MAPP_OK) sweep_setup_close(s);
  return status;
}

void sweep_setup_close(sweep_setup *s) {
  sweep_jobs_free(&s->jobs);
  for (size_t i = 0; i < s->napps; ++i) app_info_free(&s->apps[i]);
  free(s->apps);
  env_free(&s->env);
  spec_free(&s->spec);
  *s = (sweep_setup){0};
}

int sweep_paths_make(const sweep_spec *spec, const char *out, sweep_paths *p) {
  *p = (sweep_paths){0};
  p->dir = path_join(out, spec->name);
  if (p->dir) {
    p->results_file = path_join(p->dir, "results.jsonl");
    p->runs_dir = path_join(p->dir, "runs");
    p->jobs_dir = path_join(p->dir, "jobs");
  }
  if (p->results_file && p->runs_dir && p->jobs_dir) return MAPP_OK;
  sweep_paths_free(p);
  return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

static int move_aside(const char *results_file, const char *dir) {
  if (!path_exists(results_file)) return MAPP_OK;
  char stamp[32];
  time_t now = time(NULL);
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&now));
  char *aside = str_printf("%s/results-%s.jsonl", dir, stamp);
  if (!aside) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = rename(results_file, aside) == 0
                   ? MAPP_OK
                   : mapp_fail(MAPP_ERR_INPUT, "cannot move %s aside", results_file);
  if (status == MAPP_OK) printf("earlier results moved to %s (use --resume to continue them)\n", aside);
  free(aside);
  return status;
}

static int repair(const char *results_file) {
  bool dropped;
  MAPP_TRY(results_repair_tail(results_file, &dropped));
  if (dropped) printf("dropped an incomplete last record of %s (an interrupted run)\n", results_file);
  return MAPP_OK;
}

int sweep_paths_prepare(const sweep_spec *spec, const char *spec_path, const char *out, bool resume,
                        const char *verb, sweep_paths *p) {
  MAPP_TRY(sweep_paths_make(spec, out, p));
  char *spec_copy = path_join(p->dir, "spec.yaml");
  int status = spec_copy ? make_dirs(p->runs_dir) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = dir_lock(p->dir, verb, &p->lock_fd);
  if (status == MAPP_OK) p->locked = true;
  if (status == MAPP_OK) status = resume ? repair(p->results_file) : move_aside(p->results_file, p->dir);
  if (status == MAPP_OK) status = copy_text_file(spec_path, spec_copy);
  free(spec_copy);
  if (status != MAPP_OK) sweep_paths_free(p);
  return status;
}

void sweep_paths_free(sweep_paths *p) {
  if (p->locked) dir_unlock(&p->lock_fd);
  free(p->dir);
  free(p->results_file);
  free(p->runs_dir);
  free(p->jobs_dir);
  *p = (sweep_paths){0};
}

int sweep_done_keys(const char *results_file, bool resume, json_t **keys) {
  *keys = NULL;
  if (!resume || !path_exists(results_file)) {
    *keys = json_object();
    return *keys ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  json_t *records;
  MAPP_TRY(results_load(results_file, &records));
  *keys = results_key_set(records);
  json_decref(records);
  return *keys ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

bool sweep_record_failed(const json_t *record) {
  const char *outcome = json_string_value(json_object_get(record, "outcome"));
  if (outcome) return strcmp(outcome, "ok") != 0;
  const char *verify = json_string_value(json_object_get(json_object_get(record, "verification"), "status"));
  const char *base = json_string_value(json_object_get(json_object_get(record, "baseline"), "status"));
  return json_integer_value(json_object_get(record, "exit_code")) != 0 || (verify && strcmp(verify, "fail") == 0) ||
         (base && strcmp(base, "fail") == 0);
}

/* The records as JSON lines (malloc'd). */
static char *jsonl_text(const json_t *records) {
  size_t len = 0, i;
  char *text = strdup("");
  const json_t *r;
  json_array_foreach(records, i, r) {
    char *line = json_dumps(r, JSON_COMPACT);
    char *grown = line && text ? realloc(text, len + strlen(line) + 2) : NULL;
    if (!grown) {
      free(line);
      free(text);
      return NULL;
    }
    text = grown;
    len += (size_t)sprintf(text + len, "%s\n", line);
    free(line);
  }
  return text;
}

int sweep_set_failed_aside(const char *results_file, size_t *moved) {
  *moved = 0;
  if (!path_exists(results_file)) return MAPP_OK;
  json_t *records, *kept = json_array(), *failed = json_array();
  MAPP_TRY(results_load(results_file, &records));
  size_t i;
  json_t *r;
  json_array_foreach(records, i, r) json_array_append(sweep_record_failed(r) ? failed : kept, r);
  int status = MAPP_OK;
  *moved = json_array_size(failed);
  if (*moved) {
    char stamp[32], *dir = path_dirname(results_file), *aside = NULL, *failed_text = jsonl_text(failed),
                    *kept_text = jsonl_text(kept);
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&now));
    aside = dir ? str_printf("%s/results-retried-%s.jsonl", dir, stamp) : NULL;
    if (!aside || !failed_text || !kept_text) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    /* The failed records are written aside before they leave results.jsonl. */
    if (status == MAPP_OK) status = write_text_file(aside, failed_text);
    if (status == MAPP_OK) status = write_text_file(results_file, kept_text);
    free(dir);
    free(aside);
    free(failed_text);
    free(kept_text);
  }
  json_decref(records);
  json_decref(kept);
  json_decref(failed);
  return status;
}
