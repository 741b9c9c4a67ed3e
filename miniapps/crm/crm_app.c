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

/* Calibration passes a sampled rank makes: noise on this machine (another
 * process, the hypervisor's steal) only ever adds to a burst, so the
 * fastest of a few passes is the burst's own cost; one pass moved the
 * charge by up to 35 % between runs. */
enum { CRM_CALIBRATION_PASSES = 3 };

/* A sampled rank's global step while the simulator stops counting, and
 * its real duration. */
static int uncharged_step(crm_run *r, double *seconds) {
  crm_sim_pause();
  double start = crm_sim_real_now();
  int status = crm_global_step(&r->s, r->tend, r->rain);
  *seconds = crm_sim_real_now() - start;
  crm_sim_resume();
  return status;
}

/* --sampled-ranks: each sampled rank times every global step of a few
 * passes while the simulator stops counting, starting again from its
 * columns after each; the charge of step n is the fastest over the
 * sampled ranks and passes, which every rank gets (the ranks that only
 * charge contribute nothing). */
static int calibrate(mapp_run *run, crm_run *r) {
  long steps = r->s.cfg.steps;
  double *bursts;
  MAPP_TRY(mapp_calloc((void **)&bursts, (size_t)steps, sizeof(double), "the sampled bursts"));
  for (long n = 0; n < steps; ++n) bursts[n] = r->charged ? HUGE_VAL : -1.0;
  int status = MAPP_OK;
  for (int pass = 0; !r->charged && status == MAPP_OK && pass < CRM_CALIBRATION_PASSES; ++pass) {
    for (long n = 0; status == MAPP_OK && n < steps; ++n) {
      double burst;
      status = uncharged_step(r, &burst);
      if (bursts[n] < 0 || burst < bursts[n]) bursts[n] = burst;
    }
    if (status == MAPP_OK) status = crm_state_restart(&r->s, &r->columns);
  }
  status = mapp_agree(run->mpi.comm, "mapp-crm", status);
  if (status == MAPP_OK)
    status = MPI_Allreduce(bursts, r->charge, (int)steps, MPI_DOUBLE, MPI_MIN, run->mpi.comm) == MPI_SUCCESS
                 ? MAPP_OK
                 : mapp_fail(MAPP_ERR_SYSTEM, "MPI_Allreduce of the sampled bursts failed");
  free(bursts);
  return status;
}

int crm_run_create(mapp_run *run, const crm_config *cfg, const crm_columns *cols, const crm_run_options *opt,
                   void **state) {
  crm_run *r;
  MAPP_TRY(mapp_calloc((void **)&r, 1, sizeof *r, "the crm run"));
  *state = r;
  r->opt = *opt;
  r->opt.exec.variant = (crm_variant)run->variant->kind;
  r->opt.exec.backend = run->backend;
  r->charged = opt->sampled_ranks > 0 && run->mpi.rank >= opt->sampled_ranks;
  if (r->charged) MAPP_TRY(crm_state_charged(cfg, cols->first, &r->s));
  else {
    MAPP_TRY(crm_columns_copy(cols, &r->columns));
    MAPP_TRY(crm_state_create(cfg, cols, &r->opt.exec, &r->s));
  }
  if (opt->cycle_group_all) {
    r->s.group_max = allreduce_max;
    r->s.group_ctx = (void *)&run->mpi.comm;
  }
  long n = r->s.g.ninst, M = n * r->s.g.rows;
  MAPP_TRY(mapp_calloc((void **)&r->water0, (size_t)n + 1, sizeof(double), "the water budget"));
  MAPP_TRY(mapp_calloc((void **)&r->tend, 3 * (size_t)M + 1, sizeof(double), "the tendencies"));
  MAPP_TRY(mapp_calloc((void **)&r->rain, (size_t)n + 1, sizeof(double), "the surface rain"));
  crm_water_budget(&r->s, r->water0);
  MAPP_TRY(crm_dycore_create(run->mpi.comm, &opt->sypd_at, opt->dycore_exchanges, &r->dycore));
  r->answered_instances = cfg->instances;
  if (opt->sampled_ranks <= 0) return MAPP_OK;
  if (opt->sampled_ranks < run->mpi.nranks)
    r->answered_instances = mapp_split_even(cfg->instances, run->mpi.nranks, (int)opt->sampled_ranks).first;
  MAPP_TRY(mapp_calloc((void **)&r->charge, (size_t)cfg->steps, sizeof(double), "the charges"));
  return calibrate(run, r);
}

/* One global step on this rank: its CRMs computed, or with
 * --sampled-ranks computed uncharged (sampled ranks) and the calibrated
 * burst charged (every rank). */
static int global_step(crm_run *r, long step) {
  if (r->opt.sampled_ranks <= 0) return crm_global_step(&r->s, r->tend, r->rain);
  double seconds;
  int status = r->charged ? MAPP_OK : uncharged_step(r, &seconds);
  crm_sim_charge(r->charge[step]);
  return status;
}

/* Per global step: the dycore's halo exchanges, then the CRMs. */
static int crm_compute(mapp_run *run, void *state) {
  crm_run *r = state;
  int status = MAPP_OK;
  for (long step = 0; status == MAPP_OK && step < r->s.cfg.steps; ++step) {
    status = mapp_agree(run->mpi.comm, "mapp-crm", crm_dycore_exchange(&r->dycore));
    if (status == MAPP_OK) status = mapp_agree(run->mpi.comm, "mapp-crm", global_step(r, step));
  }
  if (status == MAPP_OK && !r->charged) status = r->s.ops->to_host(&r->s, CRM_SYNC_ALL);
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
  return r->charged ? MAPP_OK : crm_state_restart(&r->s, &r->columns);
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
  MAPP_TRY(mapp_alloc((void **)&water, sizeof(double) * (size_t)(n + 1), "the water budget"));
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
  if (!(column_steps_per_s > 0)) return 0.0;
  double wall_per_crm_step = at->columns_per_node * (double)cfg->nx / column_steps_per_s;
  return cfg->dt / wall_per_crm_step / 365.0;
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

/* The nodes the run spans: its ranks grouped by shared memory (on a
 * simulated cluster, by host). */
static int count_nodes(MPI_Comm comm, int *nodes) {
  int local_rank;
  MAPP_TRY(mapp_node_ranks(comm, &local_rank, NULL));
  int leader = local_rank == 0;
  MAPP_MPI(MPI_Allreduce(&leader, nodes, 1, MPI_INT, MPI_SUM, comm));
  return MAPP_OK;
}

/* The CAAR report's figures: throughput as SYPD at a stated resolution's
 * columns per node, from a node's share of this run's column-steps/s. */
static int describe_sypd(mapp_run *run, const crm_run *r) {
  const crm_sypd_at *at = &r->opt.sypd_at;
  char where[64];
  int nodes = 1;
  MAPP_TRY(count_nodes(run->mpi.comm, &nodes));
  snprintf(where, sizeof where, "ne%ld/%ld", at->ne, at->nodes);
  MAPP_TRY(mapp_run_set(run, "sypd", json_real(crm_sypd(&r->s.cfg, at, run->rec.fom / nodes))));
  MAPP_TRY(mapp_run_set(run, "sypd_nodes", json_integer(nodes)));
  MAPP_TRY(mapp_run_set(run, "sypd_at", json_string(where)));
  MAPP_TRY(mapp_run_set(run, "sypd_columns_per_node", json_real(at->columns_per_node)));
  return mapp_run_set(run, "sypd_scope", json_string("CRM only: a node's share of this run's column-steps/s (over "
                                                     "sypd_nodes) at the resolution's columns a node; the rest of "
                                                     "the model and SAM's costlier physics excluded"));
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

/* The dycore's exchanges and, with --sampled-ranks, what was charged. */
static int describe_sampling(mapp_run *run, const crm_run *r) {
  MAPP_TRY(mapp_run_set(run, "dycore_exchanges", json_integer(r->dycore.exchanges)));
  if (r->dycore.exchanges > 0)
    MAPP_TRY(mapp_run_set(run, "dycore_bytes_per_exchange", json_integer((json_int_t)(8 * r->dycore.total))));
  if (r->opt.sampled_ranks <= 0) return MAPP_OK;
  json_t *charges = json_array();
  double charged = 0.0;
  for (long n = 0; charges && n < r->s.cfg.steps; ++n) {
    json_array_append_new(charges, json_real(r->charge[n]));
    charged += r->charge[n];
  }
  MAPP_TRY(mapp_run_set(run, "charge_s", charges));
  /* what the simulated cluster adds to the charged bursts (the dycore's
   * exchanges, the ranks' agreement after each step): the terms a weak
   * scaling series judges, apart from the bursts' run-to-run spread */
  MAPP_TRY(mapp_run_set(run, "uncharged_s", json_real(run->compute_s - charged)));
  MAPP_TRY(mapp_run_set(run, "sampled_ranks", json_integer(r->opt.sampled_ranks)));
  return mapp_run_set(run, "answered_instances", json_integer(r->answered_instances));
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
  MAPP_TRY(describe_sampling(run, r));
  return mapp_run_set(run, "sync", json_boolean(r->opt.exec.sync));
}

static int crm_write(mapp_run *run, void *state, const char *path) {
  crm_run *r = state;
  return crm_write_output(&r->s, run->mpi.comm, path, r->tend, r->rain, r->answered_instances, &run->rec);
}

static void crm_destroy(void *state) {
  crm_run *r = state;
  if (!r) return;
  crm_state_free(&r->s);
  crm_columns_free(&r->columns);
  crm_dycore_free(&r->dycore);
  free(r->charge);
  free(r->water0);
  free(r->tend);
  free(r->rain);
  free(r);
}

/* The report's headline (mapp_headline): batching acts within a rank. */
static const mapp_headline crm_headline = {
    .technique = "batched CRMs over one CRM at a time",
    .variant = "batched", .backend = "serial",
    .ref_variant = "percrm", .ref_backend = "serial",
    .min_ranks = 1,
};

const mapp_app crm_app_hooks = {
    .name = "crm",
    .variants = crm_variants,
    .default_variant = "batched", /* percrm is first: the "before" speedup is measured against */
    .bitwise_variants = true,
    .bitwise_ranks = true,
    .fom_name = "crm-column-steps/s",
    .headline = &crm_headline,
    .compute = crm_compute,
    .reset = crm_reset,
    .digest = crm_digest,
    .verify = crm_verify,
    .describe = crm_describe,
    .write = crm_write,
    .destroy = crm_destroy,
};
