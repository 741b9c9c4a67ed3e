/* The one place a launch command is built, so `run`, `sweep` and the batch
 * scripts of `submit` start an app exactly the same way:
 *   LAUNCHER NP_FLAG RANKS LAUNCHER_ARGS... BIN/mapp-APP --variant V --backend B
 *     --size S --scaling W --threads T --output F.h5 --result F.json EXTRA... */
#ifndef HARNESS_LAUNCH_H
#define HARNESS_LAUNCH_H

#include "env.h"
#include "job.h"
#include "strv.h"

/* The app's own command line (argv[0] is the executable's absolute path). */
int launch_app_argv(const job *j, const job_files *files, strv *argv);
/* The app's command line behind the environment's launcher. */
int launch_command(const harness_env *env, const job *j, const job_files *files, strv *argv);
/* Variables the launch needs: the environment's, then OMP_NUM_THREADS. */
int launch_variables(const harness_env *env, const job *j, strv *names, strv *values);

#endif
