#include "launch.h"

#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "paths.h"

/* Extra app flags may name files of their own run: "{run}" stands for the
 * job's path stem (its .h5/.json without the extension), so a sweep entry
 * can ask for `--nam {run}.nam --gif {run}.gif` and every repetition gets
 * its own files beside its record. */
static int push_expanded(strv *argv, const char *arg, const char *stem, size_t stem_len) {
  const char *mark = strstr(arg, "{run}");
  if (!mark) return strv_push(argv, arg);
  return strv_pushf(argv, "%.*s%.*s%s", (int)(mark - arg), arg, (int)stem_len, stem, mark + strlen("{run}"));
}

static int push_extra_args(strv *argv, const strv *extra, const char *output) {
  const char *dot = strrchr(output, '.');
  size_t stem_len = dot ? (size_t)(dot - output) : strlen(output);
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < extra->count; ++i)
    status = push_expanded(argv, extra->items[i], output, stem_len);
  return status;
}

int launch_app_argv(const job *j, const job_files *files, strv *argv) {
  char *exe = j->exe ? strdup(j->exe) : paths_app_executable(j->bin_dir, j->app);
  if (!exe) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = strv_push(argv, exe);
  free(exe);
  const char *flags[][2] = {{"--variant", j->variant}, {"--backend", j->backend}, {"--size", j->size},
                            {"--scaling", j->scaling}, {"--output", files->output},
                            {"--result", files->result}};
  for (size_t i = 0; status == MAPP_OK && i < sizeof flags / sizeof flags[0]; ++i) {
    status = strv_push(argv, flags[i][0]);
    if (status == MAPP_OK) status = strv_push(argv, flags[i][1]);
  }
  if (status == MAPP_OK) status = strv_push(argv, "--threads");
  if (status == MAPP_OK) status = strv_pushf(argv, "%ld", j->threads);
  if (status == MAPP_OK && j->min_time > 0) status = strv_push(argv, "--min-time");
  if (status == MAPP_OK && j->min_time > 0) status = strv_pushf(argv, "%g", j->min_time);
  if (status == MAPP_OK && j->extra_args) status = push_extra_args(argv, j->extra_args, files->output);
  return status;
}

int launch_command(const harness_env *env, const job *j, const job_files *files, strv *argv) {
  MAPP_TRY(strv_push(argv, env->launcher));
  MAPP_TRY(strv_push(argv, env->np_flag));
  MAPP_TRY(strv_pushf(argv, "%ld", j->ranks));
  MAPP_TRY(strv_extend(argv, &env->launcher_args));
  return launch_app_argv(j, files, argv);
}

int launch_variables(const harness_env *env, const job *j, strv *names, strv *values) {
  MAPP_TRY(strv_extend(names, &env->env_names));
  MAPP_TRY(strv_extend(values, &env->env_values));
  MAPP_TRY(strv_push(names, "OMP_NUM_THREADS"));
  return strv_pushf(values, "%ld", j->threads);
}
