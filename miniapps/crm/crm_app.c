/* crm as a mapp app: its variant table, its size presets and the run's
 * hooks (mapp_app.h). main.c adds the command line and the config. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crm.h"

#define CRM_ALL_BACKENDS (MAPP_BACKEND_BIT(SERIAL) | MAPP_BACKEND_BIT(OMP) | MAPP_BACKEND_BIT(CUDA))
const mapp_variant_info crm_variants[] = {
    {.name = "percrm", .backends = CRM_ALL_BACKENDS, .kind = CRM_VARIANT_PERCRM,
     .description = "each loop nest (kernel) run once per CRM instance"},
    {.name = "batched", .backends = CRM_ALL_BACKENDS, .kind = CRM_VARIANT_BATCHED,
     .description = "instance index inside every collapsed loop nest (kernel)"},
    {0},
};

static int allreduce_max(void *ctx, double *values, int n) {
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_MAX, *(MPI_Comm *)ctx));
  return MAPP_OK;
}

int crm_run_create(mapp_run *run, const crm_config *cfg, const crm_columns *cols, const crm_run_options *opt,
                   void **state) {
  crm_run *r;
  MAPP_TRY(mapp_calloc((void **)&r, 1, sizeof *r, "the crm run"));
  *state = r;
  r->opt = *opt;
  r->opt.exec.variant = (crm_variant)run->variant->kind;
  r->opt.exec.backend = run->backend;
  MAPP_TRY(crm_columns_copy(cols, &r->columns));
  MAPP_TRY(crm_state_create(cfg, cols, &r->opt.exec, &r->s));
  if (opt->cycle_group_all) {
    r->s.group_max = allreduce_max;
    r->s.group_ctx = (void *)&run->mpi.comm;
  }
  long n = r->s.g.ninst, M = n * r->s.g.rows;
  MAPP_TRY(mapp_calloc((void **)&r->water0, (size_t)n, sizeof(double), "the water budget"));
  MAPP_TRY(mapp_calloc((void **)&r->tend, 3 * (size_t)M, sizeof(double), "the tendencies"));
  MAPP_TRY(mapp_calloc((void **)&r->rain, (size_t)n, sizeof(double), "the surface rain"));
  crm_water_budget(&r->s, r->water0);
  return MAPP_OK;
}

static int crm_compute(mapp_run *run, void *state) {
  crm_run *r = state;
  int status = MAPP_OK;
  for (long step = 0; status == MAPP_OK && step < r->s.cfg.steps; ++step)
    status = mapp_agree(run->mpi.comm, "mapp-crm", crm_global_step(&r->s, r->tend, r->rain));
  if (status == MAPP_OK) status = r->s.ops->to_host(&r->s, CRM_SYNC_ALL);
  return status;
}

/* Back to the state setup made, from the columns it made it from: the
 * water budget at the start (water0) then holds again, and the last global
 * step's tendencies and rain are rewritten by the next compute. */
static int crm_reset(mapp_run *run, void *state) {
  (void)run;
  crm_run *r = state;
  long n = r->s.g.ninst, M = n * r->s.g.rows;
  memset(r->tend, 0, sizeof(double) * 3 * (size_t)M);
  memset(r->rain, 0, sizeof(double) * (size_t)n);
  return crm_state_restart(&r->s, &r->columns);
}

/* The answer the write hook writes, in its order: the final fields, the
 * tendencies, the accumulated and the last step's rain (the cloud water
 * path it also writes is qc integrated with the fixed density). Host
 * arrays: compute ends with the device's state copied back. */
static int crm_digest(mapp_run *run, void *state, uint64_t *digest) {
  (void)run;
  crm_run *r = state;
  const crm_view *v = &r->s.host;
  const crm_grid *g = &r->s.g;
  size_t field = sizeof(double) * (size_t)(g->ninst * g->stride);
  size_t profiles = sizeof(double) * (size_t)(g->ninst * g->rows);
  mapp_digest_add(digest, v->u, field);
  mapp_digest_add(digest, v->w, field);
  mapp_digest_add(digest, v->scal, CRM_NSCALAR * field);
  mapp_digest_add(digest, v->qc, field);
  mapp_digest_add(digest, r->tend, 3 * profiles);
  mapp_digest_add(digest, v->precip, sizeof(double) * (size_t)(g->ninst * g->nx));
  mapp_digest_add(digest, r->rain, sizeof(double) * (size_t)g->ninst);
  return MAPP_OK;
}

/* Invariants: the water budget closes per CRM to round-off; the last
 * projection left a divergence at round-off. */
static int crm_verify(mapp_run *run, void *state) {
  crm_run *r = state;
  long n = r->s.g.ninst;
  double *water;
  MAPP_TRY(mapp_alloc((void **)&water, sizeof(double) * (size_t)n, "the water budget"));
  crm_water_budget(&r->s, water);
  double local[2] = {0.0, crm_relative_divergence(&r->s)}, global[2];
  for (long c = 0; c < n; ++c) local[0] = fmax(local[0], fabs(water[c] - r->water0[c]) / r->water0[c]);
  free(water);
  MAPP_MPI(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, run->mpi.comm));
  mapp_run_check(run, "finite", true, 0.0, 0.0);
  mapp_run_check(run, "water-budget", global[0] <= 1e-10, global[0], 1e-10);
  mapp_run_check(run, "divergence", global[1] <= 1e-10, global[1], 1e-10);
  return MAPP_OK;
}

int crm_sypd_parse(const char *text, crm_sypd_at *at) {
  char tail;
  if (sscanf(text, "ne%ld/%ld%c", &at->ne, &at->nodes, &tail) != 2 || at->ne < 1 || at->nodes < 1 ||
      at->ne > 100000 || at->nodes > 10000000)
    return mapp_fail(MAPP_ERR_INPUT, "--sypd-at: '%s' is not neN/NODES (e.g. ne30/64, ne120/1024)", text);
  at->columns_per_node = (54.0 * (double)at->ne * (double)at->ne + 2.0) / (double)at->nodes;
  return MAPP_OK;
}

/* A node runs columns_per_node CRMs, each nx column-steps a CRM step of dt
 * simulated seconds: simulated seconds per wall second, over the seconds
 * of a year per second of a day (365). */
double crm_sypd(const crm_config *cfg, const crm_sypd_at *at, double column_steps_per_s) {
  double wall_per_crm_step = at->columns_per_node * (double)cfg->nx / column_steps_per_s;
  return column_steps_per_s > 0 ? cfg->dt / wall_per_crm_step / 365.0 : 0.0;
}

/* Whether CUDA's MPS server runs on this node: the record says so, and
 * that the run left it as the machine set it. */
static const char *mps_state(void) {
  DIR *proc = opendir("/proc");
  if (!proc) return "unknown";
  const char *state = "not running";
  for (struct dirent *e; (e = readdir(proc)) && strcmp(state, "running");) {
    char path[300], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(comm, sizeof comm, f) && !strncmp(comm, "nvidia-cuda-mps", 15)) state = "running";
    fclose(f);
  }
  closedir(proc);
  return state;
}

/* The CAAR report's figures: throughput as SYPD at a stated resolution's
 * columns per node, the run taken as one node. */
static int describe_sypd(mapp_run *run, const crm_run *r) {
  const crm_sypd_at *at = &r->opt.sypd_at;
  char where[64];
  snprintf(where, sizeof where, "ne%ld/%ld", at->ne, at->nodes);
  MAPP_TRY(mapp_run_set(run, "sypd", json_real(crm_sypd(&r->s.cfg, at, run->rec.fom))));
  MAPP_TRY(mapp_run_set(run, "sypd_at", json_string(where)));
  MAPP_TRY(mapp_run_set(run, "sypd_columns_per_node", json_real(at->columns_per_node)));
  return mapp_run_set(run, "sypd_scope", json_string("CRM only: this run's column-steps/s as one node's, at the "
                                                     "resolution's columns a node; the rest of the model and SAM's "
                                                     "costlier physics excluded"));
}

/* How the device was driven: per CRM step, what the report's asynchronous
 * launches hide (launches) and what they cannot (host synchronisations). */
static int describe_cuda(mapp_run *run, const crm_run *r) {
  const crm_exec *x = &r->opt.exec;
  double steps = r->s.crm_step > 0 ? (double)r->s.crm_step : 1.0;
  MAPP_TRY(mapp_run_reduce(run, "launches_per_crm_step", (double)r->s.launches / steps, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce(run, "host_syncs_per_crm_step", (double)r->s.host_syncs / steps, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_set(run, "alloc", json_string(x->alloc == CRM_ALLOC_PER_PHASE ? "per-phase" : "pool")));
  MAPP_TRY(mapp_run_set(run, "memory", json_string(x->memory == CRM_MEMORY_MANAGED ? "managed" : "device")));
  /* the node's cores over its GPUs: what shares one GPU (Summit: 42 / 6 = 7) */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int gpus = mapp_cuda_device_count();
  if (gpus > 0 && cores > 0) MAPP_TRY(mapp_run_set(run, "cores_per_gpu", json_real((double)cores / gpus)));
  return mapp_run_set(run, "mps", json_pack("{s:s, s:s}", "server", mps_state(), "setting",
                                            "the accelerator's: left as the machine set it"));
}

static int crm_describe(mapp_run *run, void *state) {
  crm_run *r = state;
  const crm_config *cfg = &r->s.cfg;
  long per_rank = mapp_split_even(cfg->instances, run->mpi.nranks, 0).count;
  double column_steps = (double)cfg->instances * (double)cfg->nx * (double)cfg->steps * (double)cfg->crm_steps;
  mapp_run_dim(run, "instances", cfg->instances, per_rank);
  mapp_run_dim(run, "nx", cfg->nx, cfg->nx);
  mapp_run_dim(run, "nz", cfg->nz, cfg->nz);
  mapp_run_dim(run, "crm_steps", cfg->crm_steps, cfg->crm_steps);
  run->rec.steps = cfg->steps;
  run->rec.fom = run->compute_s > 0 ? column_steps / run->compute_s : 0.0;
  MAPP_TRY(mapp_run_reduce_long(run, "max_sub_cycles", r->s.max_cycles, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce_long(run, "max_fall_sub_cycles", r->s.max_fall_cycles, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce_long(run, "chunk", r->s.chunk, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_set(run, "cycle_group", json_string(r->opt.cycle_group_all ? "all" : "task")));
  MAPP_TRY(mapp_run_set(run, "host_work_us", json_real(r->opt.exec.host_work_us)));
  MAPP_TRY(mapp_run_reduce(run, "host_work_s", r->s.host_work_s, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(describe_sypd(run, r));
  if (run->backend == MAPP_BACKEND_CUDA) MAPP_TRY(describe_cuda(run, r));
  return mapp_run_set(run, "sync", json_boolean(r->opt.exec.sync));
}

static int crm_write(mapp_run *run, void *state, const char *path) {
  crm_run *r = state;
  return crm_write_output(&r->s, run->mpi.comm, path, r->tend, r->rain, &run->rec);
}

static void crm_destroy(void *state) {
  crm_run *r = state;
  if (!r) return;
  crm_state_free(&r->s);
  crm_columns_free(&r->columns);
  free(r->water0);
  free(r->tend);
  free(r->rain);
  free(r);
}

const mapp_app crm_app_hooks = {
    .name = "crm",
    .variants = crm_variants,
    .default_variant = "batched", /* percrm is first: the "before" speedup is measured against */
    .bitwise_variants = true,
    .bitwise_ranks = true,
    .fom_name = "crm-column-steps/s",
    .compute = crm_compute,
    .reset = crm_reset,
    .digest = crm_digest,
    .verify = crm_verify,
    .describe = crm_describe,
    .write = crm_write,
    .destroy = crm_destroy,
};
