#include "job.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_error.h"

int check_mode_parse(const char *text, check_mode *mode) {
  static const char *const names[] = {[CHECK_OPTIONAL] = "optional", [CHECK_REQUIRED] = "required",
                                      [CHECK_NONE] = "none"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (strcmp(text, names[i]) == 0) {
      *mode = (check_mode)i;
      return MAPP_OK;
    }
  return mapp_fail(MAPP_ERR_INPUT, "check must be required, optional or none, got '%s'", text);
}

const char *check_mode_name(check_mode mode) {
  switch (mode) {
  case CHECK_REQUIRED: return "required";
  case CHECK_NONE: return "none";
  case CHECK_OPTIONAL: break;
  }
  return "optional";
}

int job_baseline_case(const job *j, const json_t *record, char **name) {
  *name = NULL;
  const char *recorded = json_string_value(json_object_get(record, "case"));
  if (record && !j->baseline_case && !recorded) return MAPP_OK;
  if (record && !j->baseline_case) {
    *name = strdup(recorded);
  } else {
    const char *base = j->baseline_case ? j->baseline_case : j->size;
    bool weak = strcmp(j->scaling, "weak") == 0 && j->ranks > 1;
    *name = weak ? str_printf("%s-weak%ld", base, j->ranks) : strdup(base);
  }
  return *name ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

const char *job_baseline_app(const job *j) { return j->baselines ? j->baselines : j->app; }

char *job_bless_command(const job *j, const char *case_name) {
  char ranks[32], threads[32];
  snprintf(ranks, sizeof ranks, "%ld", j->ranks);
  snprintf(threads, sizeof threads, "%ld", j->threads);
  const char *words[] = {"mapp", "bless", j->app, "--size", j->size, "--scaling", j->scaling, "-n", ranks,
                         "--variant", j->variant, "--backend", j->backend, "--threads", threads, "--case", case_name,
                         "--reason", "first baseline of this case"};
  strv argv = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < sizeof words / sizeof words[0]; ++i) status = strv_push(&argv, words[i]);
  if (status == MAPP_OK && j->extra_args && j->extra_args->count) {
    status = strv_push(&argv, "--");
    for (size_t i = 0; status == MAPP_OK && i < j->extra_args->count; ++i) status = strv_push(&argv, j->extra_args->items[i]);
  }
  char *text = status == MAPP_OK ? strv_join_shell(&argv) : NULL;
  strv_free(&argv);
  return text;
}

static char *measured_setting(const job *j) {
  if (j->label && j->params_text) return str_printf("%s %s", j->label, j->params_text);
  if (j->label) return strdup(j->label);
  return j->extra_args && j->extra_args->count ? strv_join(j->extra_args, " ") : NULL;
}

char *job_setting(const job *j) {
  char *setting = measured_setting(j);
  if (!j->simulated_on) return setting;
  char *marked = setting ? str_printf("%s simulated:%s", setting, j->simulated_on)
                         : str_printf("simulated:%s", j->simulated_on);
  free(setting);
  return marked;
}

/* "-label" plus the combination as a file-name part ("-instances=64"). */
static void stem_setting(const job *j, char *buf, size_t len) {
  int used = snprintf(buf, len, "-%s", j->label);
  if (!j->params_text || used < 0 || (size_t)used >= len) return;
  snprintf(buf + used, len - (size_t)used, "-%s", j->params_text);
  for (char *c = buf; *c; ++c)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._=-", *c)) *c = '_';
}

/* FNV-1a: a short, stable name for a setting without a label in file names. */
static unsigned long setting_hash(const char *text) {
  unsigned long h = 2166136261u;
  for (; *text; ++text) h = (h ^ (unsigned char)*text) * 16777619u & 0xffffffffu;
  return h;
}

char *job_stem(const job *j) {
  char rep[32] = "", setting[160] = "";
  if (j->repetition >= 0) snprintf(rep, sizeof rep, "-r%ld", j->repetition);
  char *text = job_setting(j);
  if (j->label && !j->simulated_on) stem_setting(j, setting, sizeof setting);
  else if (text) snprintf(setting, sizeof setting, "-a%08lx", setting_hash(text));
  free(text);
  return str_printf("%s-%s-%s-%s-%s-n%ld-t%ld%s%s", j->app, j->variant, j->backend, j->size, j->scaling,
                    j->ranks, j->threads, setting, rep);
}

char *job_label(const job *j) {
  bool strong = strcmp(j->scaling, "strong") == 0;
  char *setting = job_setting(j);
  char *label = str_printf("%s %s/%s n=%ld t=%ld %s%s%s%s%s", j->app, j->variant, j->backend, j->ranks,
                           j->threads, j->size, strong ? " strong" : "", setting ? " [" : "",
                           setting ? setting : "", setting ? "]" : "");
  free(setting);
  return label;
}

static char *key_format(const char *app, const char *variant, const char *backend, long ranks,
                        long threads, const char *size, const char *scaling, long repetition) {
  return str_printf("%s|%s|%s|n%ld|t%ld|%s|%s|r%ld", app, variant, backend, ranks, threads, size,
                    scaling, repetition);
}

char *job_configuration_key(const char *key) {
  char *config = strdup(key);
  if (!config) return NULL;
  for (char *bar = strstr(config, "|r"); bar; bar = strstr(bar + 1, "|r")) {
    size_t digits = strspn(bar + 2, "0123456789");
    if (digits && (bar[2 + digits] == '|' || bar[2 + digits] == '\0')) {
      memmove(bar, bar + 2 + digits, strlen(bar + 2 + digits) + 1);
      break;
    }
  }
  return config;
}

char *job_key(const job *j) {
  char *key = key_format(j->app, j->variant, j->backend, j->ranks, j->threads, j->size, j->scaling,
                         j->repetition);
  char *setting = job_setting(j);
  if (key && setting) {
    char *longer = str_printf("%s|%s", key, setting);
    free(key);
    key = longer;
  }
  free(setting);
  return key;
}

char *job_key_of_record(const json_t *r) {
  const char *stored = json_string_value(json_object_get(r, "key"));
  if (stored) return strdup(stored);
  const char *text[5];
  const char *fields[5] = {"app", "variant", "backend", "size", "scaling"};
  for (int i = 0; i < 5; ++i)
    if (!(text[i] = json_string_value(json_object_get(r, fields[i])))) return NULL;
  const json_t *ranks = json_object_get(r, "ranks"), *threads = json_object_get(r, "threads");
  const json_t *rep = json_object_get(r, "repetition");
  if (!json_is_integer(ranks) || !json_is_integer(threads)) return NULL;
  return key_format(text[0], text[1], text[2], (long)json_integer_value(ranks),
                    (long)json_integer_value(threads), text[3], text[4],
                    json_is_integer(rep) ? (long)json_integer_value(rep) : -1);
}

int job_files_make(const char *dir, const job *j, job_files *files) {
  *files = (job_files){0};
  char *stem = job_stem(j);
  if (stem) {
    files->output = str_printf("%s/%s.h5", dir, stem);
    files->result = str_printf("%s/%s.json", dir, stem);
    files->log = str_printf("%s/%s.log", dir, stem);
  }
  free(stem);
  if (files->output && files->result && files->log) return MAPP_OK;
  job_files_free(files);
  return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

void job_files_free(job_files *files) {
  free(files->output);
  free(files->result);
  free(files->log);
  *files = (job_files){0};
}
