/* An environment (envs/NAME.yaml): how to launch ranks on a machine and,
 * for clusters, how to ask its scheduler for them. */
#ifndef HARNESS_ENV_H
#define HARNESS_ENV_H

#include <stdbool.h>

#include "job.h"
#include "strv.h"

typedef enum { SCHEDULER_NONE, SCHEDULER_SLURM } scheduler_kind;

typedef struct {
  char *name, *description;
  /* The machine its runs are recorded on (`system:`; NULL: each record's
   * host): part of every history key, so two machines are two series. */
  char *system;
  char *origin;       /* the file it came from, or "embedded envs/local.yaml" */
  char *launcher;     /* mpirun, srun */
  char *np_flag;      /* the launcher's rank-count flag: -np, -n */
  strv launcher_args; /* after the rank count, before the executable */
  scheduler_kind scheduler;
  long cores_per_node, gpus_per_node;
  char *gpu_bind;     /* Slurm --gpu-bind value for GPU jobs ("closest"), or NULL */
  char *perf_references; /* this machine's reference results (mapp check --perf), or NULL */
  long max_ranks; /* most ranks one launch may ask for; 0: no limit (a scheduler decides) */
  strv env_names, env_values; /* exported to every launch */
  /* A simulated cluster (SimGrid SMPI): its runs are predictions. */
  bool simulated;
  char *platform; /* the platform file, recorded with every run (simulated only) */
  char *bin_dir;  /* the build whose apps it runs (build-sim/bin; relative: to the source tree), or NULL */
  strv app_path;  /* folders of programs beyond the build's (apppath.h; relative: to the source tree) */
  /* batch jobs only */
  char *partition, *account, *time_limit;
  strv modules;    /* module load lines */
  strv directives; /* extra #SBATCH lines, verbatim */
} harness_env;

/* Loads path; NULL means envs/local.yaml of the source tree, or the copy
 * embedded at build time when that file is absent. */
int env_load(const char *path, harness_env *env);
int env_parse_string(const char *text, const char *origin, harness_env *env);
void env_free(harness_env *env);
/* An input error when a launch of `ranks` ranks is more than the
 * environment offers (its max_ranks), rather than a launcher that tries
 * to start them all and hangs the machine. */
int env_check_ranks(const harness_env *env, long ranks);

/* What the environment says of a job's launch: the build it runs
 * (bin_dir) and, on a simulated cluster, that its runs are predictions
 * (job.simulated_on). */
void env_apply_to_job(const harness_env *env, job *j);

/* Nodes enough for the job's ranks x threads cores and ranks x gpus GPUs;
 * a GPU job the environment cannot place is an input error. */
int env_node_count(const harness_env *env, const job *j, long *nodes);
/* Whether the job runs on fewer cores or GPUs than it uses: without a
 * scheduler it has this one machine (cores_per_node cores, gpus_per_node
 * GPUs, at least one for a job on GPUs), with one the nodes env_node_count
 * gives. It uses ranks x (threads + helper_threads) cores, helper_threads
 * being the program's own threads per rank beside its compute threads (the
 * record's helper_threads: a poller, I/O workers). Several ranks on one GPU
 * count as oversubscribed. */
bool env_oversubscribed(const harness_env *env, const job *j, long helper_threads);

/* Without a scheduler the launcher oversubscribes this machine's cores;
 * beyond this many ranks per core a launch only thrashes (or never starts). */
#define ENV_RANKS_PER_CORE 16

#endif
