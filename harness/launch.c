#include "launch.h"

#include <stdlib.h>

#include "mapp_error.h"
#include "paths.h"

int launch_app_argv(const job *j, const job_files *files, strv *argv) {
  char *exe = paths_app_executable(j->bin_dir, j->app);
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
  if (status == MAPP_OK && j->extra_args) status = strv_extend(argv, j->extra_args);
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
