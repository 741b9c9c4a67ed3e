/* The app's hooks: the variant table, the setup from options (layers,
 * budgets, the refusal or the fall-back to checkpointing), the timed
 * gradient, the checks, the record and the answer file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap_app_internal.h"

#define SNAP_CPU_BACKENDS (MAPP_BACKEND_BIT(SERIAL) | MAPP_BACKEND_BIT(OMP))
#define SNAP_ALL_BACKENDS (SNAP_CPU_BACKENDS | MAPP_BACKEND_BIT(CUDA))

/* memory is first: the in-memory reference the others' speed is compared
 * with (--layers none). All three give the same gradient bit for bit. */
const mapp_variant_info snap_variants[] = {
    {.name = "memory", .backends = SNAP_ALL_BACKENDS, .kind = SNAP_MODE_MEMORY,
     .description = "every snapshot in one in-memory array, allocated and touched before the clock (--layers none)"},
    {.name = "stream", .backends = SNAP_ALL_BACKENDS, .kind = SNAP_MODE_STREAM,
     .description = "snapshots streamed across the layers under budgets by writer and prefetcher threads"},
    {.name = "revolve", .backends = SNAP_ALL_BACKENDS, .kind = SNAP_MODE_REVOLVE,
     .description = "binomial checkpointing (revolve): a few states kept, the forward recomputed in the adjoint"},
    {0},
};

typedef struct {
  snap_options opt;
  snap_strategy st;
  snap_problem p;
  bool have_problem;
  snap_engine *e;
  snap_store *store;
  double *m0, *observed, *grad, *rec, *u_final;
  snap_result res;
  snap_estimate est;
  const char *layers_name;
  size_t host_total;          /* the host budget (wavefields included) */
  size_t device_total;        /* the device budget (device fields included); 0 without the device layer */
  snap_placement plan;        /* where uncompressed snapshots go under the budgets */
  bool host_explicit;
  size_t rss_before, rss_peak;
  bool estimate_only, fell_back;
  char single_reason[200];    /* why the host budget chose one step at a time; "" where it did not */
  size_t needed, given;       /* snapshot bytes needed and what the budgets give */
  bool lossy_checked;         /* zfp: the gradient compared with the exact one */
  double error_abs, error_rel;/* max |g - exact| and that over max |exact| */
} snap_state;

static const char *default_layers(mapp_backend b) {
  return b == MAPP_BACKEND_CUDA ? "disk-host-device" : "disk-host";
}

static int choose_layers(mapp_run *run, snap_state *s) {
  snap_mode mode = (snap_mode)run->variant->kind;
  const char *given = s->opt.layers;
  if (mode == SNAP_MODE_MEMORY) {
    if (given && strcmp(given, "none"))
      return mapp_fail(MAPP_ERR_INPUT, "--variant memory keeps every snapshot in memory; --layers %s needs --variant stream",
                       given);
    s->layers_name = "none";
  } else if (mode == SNAP_MODE_REVOLVE) {
    if (given) return mapp_fail(MAPP_ERR_INPUT, "--variant revolve keeps checkpoints in host memory; --layers %s needs --variant stream", given);
    s->layers_name = "host";
  } else {
    s->layers_name = given ? given : default_layers(run->backend);
  }
  unsigned mask;
  MAPP_TRY(snap_layers_parse(s->layers_name, &mask));
  if (mask & (1u << SNAP_LAYER_DEVICE)) {
    if (!mapp_backend_built(MAPP_BACKEND_CUDA))
      return mapp_fail(MAPP_ERR_INPUT, "--layers %s holds the device layer, which needs a GPU build (this one has no CUDA)",
                       s->layers_name);
    if (run->backend != MAPP_BACKEND_CUDA)
      return mapp_fail(MAPP_ERR_INPUT, "--layers %s holds the device layer, which needs --backend cuda (not %s)",
                       s->layers_name, mapp_backend_name(run->backend));
  }
  /* The layers' writer and prefetcher threads run outside the simulated
   * rank: their work would cost no simulated time, and a read of SMPI's
   * clock from one of them crashes the simulator (measured: compression or
   * the disk layer, at once). */
  if (MAPP_SIMULATED && mode == SNAP_MODE_STREAM && mask)
    return mapp_fail(MAPP_ERR_INPUT,
                     "--variant stream --layers %s cannot run simulated (its writer and prefetcher threads run "
                     "outside the simulated rank, which SimGrid SMPI does not model); use --variant memory or revolve",
                     s->layers_name);
  s->st.mode = mode;
  s->st.store.layers = mode == SNAP_MODE_MEMORY ? 0 : mask;
  /* Non-NULL here: a CUDA build (checked above) has the device tier. */
  if (mask & (1u << SNAP_LAYER_DEVICE)) s->st.store.device = snap_cuda_device_ops();
  return MAPP_OK;
}

/* --mem-perc, else MAPP_<LAYER>_MEM_PERC, else 0.7 (the seed's default). */
static int mem_perc(const snap_state *s, snap_layer l, double *out) {
  static const char *env[SNAP_NLAYERS] = {"MAPP_DEVICE_MEM_PERC", "MAPP_HOST_MEM_PERC", "MAPP_DISK_MEM_PERC"};
  *out = 0.7;
  const char *text = getenv(env[l]);
  if (s->opt.mem_perc > 0) *out = s->opt.mem_perc;
  else if (text && *text) {
    char *end;
    *out = strtod(text, &end);
    if (*end || !(*out > 0 && *out <= 1))
      return mapp_fail(MAPP_ERR_INPUT, "%s=%s is outside (0, 1]", env[l], text);
  }
  return MAPP_OK;
}


static int layer_budget(mapp_run *run, snap_state *s, snap_layer l, size_t *budget) {
  if (s->opt.budget[l]) return snap_parse_size(s->opt.budget[l], budget);
  double perc;
  MAPP_TRY(mem_perc(s, l, &perc));
  int local;
  MAPP_TRY(mapp_node_ranks(run->mpi.comm, NULL, &local)); /* they share MemAvailable and the disk */
  size_t avail = 0;
  if (l == SNAP_LAYER_HOST) {
    avail = snap_host_available();
  } else if (l == SNAP_LAYER_DISK) {
    MAPP_TRY(snap_disk_available(s->st.store.disk_dir, &avail));
  } else {
    /* Every rank uses the same device (mapp selects none per rank), so the
     * ranks on a node share its free memory as they share MemAvailable. */
    if (!s->st.store.device) return mapp_fail(MAPP_ERR_INPUT, "the device layer needs a GPU build");
    MAPP_TRY(s->st.store.device->available(&avail));
  }
  *budget = (size_t)(perc * (double)avail / local);
  return MAPP_OK;
}

/* The device's budget: its fields first (as the host's budget includes
 * the wavefields), the rest for the device tier's snapshots. */
static int set_device_budget(mapp_run *run, snap_state *s) {
  snap_store_config *sc = &s->st.store;
  MAPP_TRY(layer_budget(run, s, SNAP_LAYER_DEVICE, &s->device_total));
  if (s->device_total < s->est.device)
    return mapp_fail(MAPP_ERR_INPUT,
                     "device budget of %zu bytes cannot hold even the wavefields and model on the device (%zu bytes)",
                     s->device_total, s->est.device);
  sc->budget[SNAP_LAYER_DEVICE] = s->device_total - s->est.device;
  return MAPP_OK;
}

/* A host budget below the wavefields and the buffers of two steps at a
 * time (`paired` bytes): the store's one-at-a-time layout where the
 * budget holds it, else the refusal. */
static int one_at_a_time(snap_state *s, size_t paired) {
  s->st.store.one_at_a_time = true;
  s->est.buffers = (size_t)snap_store_buffer_count(&s->st.store) * s->est.snapshot_bytes;
  size_t single = snap_estimate_host(&s->est);
  if (s->host_total < single)
    return mapp_fail(MAPP_ERR_INPUT,
                     "host budget of %zu bytes cannot hold even the wavefields and buffers (%zu bytes, one step at a time)",
                     s->host_total, single);
  snprintf(s->single_reason, sizeof s->single_reason,
           "the host budget of %zu bytes holds the wavefields and buffers of one step at a time (%zu bytes), "
           "not of two (%zu bytes)", s->host_total, single, paired);
  return MAPP_OK;
}

/* Budgets per layer, the wavefields out of the host's (and the device's),
 * and what the snapshots need against what the layers give. */
static int set_budgets(mapp_run *run, snap_state *s) {
  snap_store_config *sc = &s->st.store;
  MAPP_TRY(layer_budget(run, s, SNAP_LAYER_HOST, &s->host_total));
  s->host_explicit = s->opt.budget[SNAP_LAYER_HOST] != NULL;
  size_t fixed = snap_estimate_host(&s->est);
  if (s->host_total < fixed) MAPP_TRY(one_at_a_time(s, fixed));
  fixed = snap_estimate_host(&s->est);
  if (sc->layers & (1u << SNAP_LAYER_HOST)) sc->budget[SNAP_LAYER_HOST] = s->host_total - fixed;
  if (sc->layers & (1u << SNAP_LAYER_DISK)) MAPP_TRY(layer_budget(run, s, SNAP_LAYER_DISK, &sc->budget[SNAP_LAYER_DISK]));
  if (sc->layers & (1u << SNAP_LAYER_DEVICE)) MAPP_TRY(set_device_budget(run, s));
  /* The latest on the device, the earliest on disk; blocks are aligned per
   * layer (disk: 4 KiB for direct I/O). The store follows the same plan. */
  snap_placement_plan(sc->layers, sc->budget, s->est.snapshot_bytes, s->est.nsnap, &s->plan);
  s->needed = s->est.snapshots;
  s->given = sc->budget[SNAP_LAYER_DEVICE] + sc->budget[SNAP_LAYER_HOST] + sc->budget[SNAP_LAYER_DISK];
  int all_fit = s->plan.unplaced == 0, agreed;
  MAPP_MPI(MPI_Allreduce(&all_fit, &agreed, 1, MPI_INT, MPI_MIN, run->mpi.comm));
  /* Compressed sizes are learnt at run time (the device tier stores raw,
   * so a device-only run must fit uncompressed). */
  bool device_only = sc->layers == (1u << SNAP_LAYER_DEVICE);
  if (agreed || (sc->compression != SNAP_COMP_NONE && !device_only)) return MAPP_OK;
  if (!s->opt.recompute)
    return mapp_fail(MAPP_ERR_INPUT,
                     "snapshots need %zu bytes per rank but the budgets give %zu (device %zu, host %zu, disk %zu); use "
                     "--recompute or larger budgets",
                     s->needed, s->given, sc->budget[SNAP_LAYER_DEVICE], sc->budget[SNAP_LAYER_HOST],
                     sc->budget[SNAP_LAYER_DISK]);
  /* --recompute: keep what fits in host memory as revolve's checkpoints
   * (revolve keeps them in host memory whichever layers were asked for). */
  size_t slot = 2 * s->est.snapshot_bytes, room = s->host_total - fixed;
  long slots = (long)(room / slot);
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, &slots, 1, MPI_LONG, MPI_MIN, run->mpi.comm));
  if (slots < 1)
    return mapp_fail(MAPP_ERR_INPUT, "--recompute: not even one checkpoint (%zu bytes) fits the host budget's %zu bytes left",
                     slot, room);
  s->st.mode = SNAP_MODE_REVOLVE;
  s->st.checkpoints = (int)(slots < s->opt.cfg.nt ? slots : s->opt.cfg.nt);
  s->fell_back = true;
  s->single_reason[0] = '\0'; /* revolve has no store */
  return MAPP_OK;
}

/* What the device holds besides snapshots (0 on a CPU backend). */
static size_t device_fixed(const mapp_run *run, const snap_state *s) {
  return run->backend == MAPP_BACKEND_CUDA ? s->est.device : 0;
}

static void print_estimate(mapp_run *run, const snap_state *s) {
  if (run->mpi.rank != 0 || run->common.quiet) return;
  const snap_store_config *sc = &s->st.store;
  const snap_placement *pl = &s->plan;
  printf("estimate (bytes per rank, rank 0): host %zu (wavefields and model %zu, buffers %zu%s), device %zu, "
         "snapshots %zu (upper bound: %ld x %zu); layers %s: budgets host %zu, disk %zu, device %zu; "
         "uncompressed placement: device %ld (the latest), host %ld, disk %ld (the earliest), no room %ld\n",
         snap_estimate_host(&s->est), s->est.wavefields, s->est.buffers,
         s->st.store.one_at_a_time ? " for one step at a time" : "", device_fixed(run, s), s->est.snapshots,
         s->est.nsnap, s->est.snapshot_bytes, s->layers_name, sc->budget[SNAP_LAYER_HOST], sc->budget[SNAP_LAYER_DISK],
         sc->budget[SNAP_LAYER_DEVICE], pl->count[SNAP_LAYER_DEVICE], pl->count[SNAP_LAYER_HOST],
         pl->count[SNAP_LAYER_DISK], pl->unplaced);
}

static int fill_store_config(mapp_run *run, snap_state *s) {
  snap_store_config *sc = &s->st.store;
  const snap_options *o = &s->opt;
  sc->compression = o->compression;
  sc->zstd_level = o->zstd_level, sc->zfp_tolerance = o->zfp_tolerance, sc->zfp_rate = o->zfp_rate;
  if (sc->compression == SNAP_COMP_ZFP && o->zfp_rate > 0) sc->zfp_tolerance = 0; /* fixed rate */
  sc->io_threads = o->io_threads, sc->prefetch_depth = o->prefetch_depth;
  const char *tmp = getenv("TMPDIR");
  sc->disk_dir = o->disk_dir ? o->disk_dir : tmp && *tmp ? tmp : "/tmp";
  sc->keep = o->keep, sc->direct_io = o->direct_io, sc->uring = o->uring;
  sc->prog = run->app->name ? "mapp-snapshots" : "mapp-snapshots";
  if (s->st.mode != SNAP_MODE_STREAM && sc->compression != SNAP_COMP_NONE)
    return mapp_fail(MAPP_ERR_INPUT, "--compression %s applies to --variant stream only",
                     snap_compression_name(sc->compression));
  return MAPP_OK;
}

static int allocate_arrays(snap_state *s) {
  size_t n = (size_t)s->p.grid.interior, nrec = snap_rec_values(&s->p); /* this rank's receivers */
  MAPP_TRY(mapp_alloc((void **)&s->m0, n * sizeof(double), "the model"));
  MAPP_TRY(mapp_alloc((void **)&s->grad, n * sizeof(double), "the gradient"));
  MAPP_TRY(mapp_alloc((void **)&s->u_final, n * sizeof(double), "the last wavefield"));
  MAPP_TRY(mapp_alloc((void **)&s->observed, nrec * sizeof(double), "the observed data"));
  MAPP_TRY(mapp_alloc((void **)&s->rec, nrec * sizeof(double), "the receivers' data"));
  return MAPP_OK;
}

/* The observed data: a forward in the true model (setup, not timed). */
static int observe(snap_state *s) {
  double *m_true;
  MAPP_TRY(mapp_alloc((void **)&m_true, (size_t)s->p.grid.interior * sizeof(double), "the true model"));
  snap_model_true(&s->p, m_true);
  int status = snap_engine_set_model(s->e, m_true);
  snap_source src = {.wavelet = s->p.wavelet};
  if (!status) status = snap_forward(s->e, &src, s->observed, NULL, NULL);
  free(m_true);
  snap_model_smooth(&s->p, s->m0);
  return status;
}

int snap_app_setup(mapp_run *run, const snap_options *opt, void **state) {
  snap_state *s;
  MAPP_TRY(mapp_calloc((void **)&s, 1, sizeof *s, "the run"));
  *state = s;
  if (run->backend == MAPP_BACKEND_CUDA) {
    /* The CUDA context's host memory is the runtime's, not the run's: it
     * is made before the memory the host budget is checked against. */
    char why[160];
    if (mapp_cuda_open_context(why, sizeof why))
      return mapp_fail(MAPP_ERR_SYSTEM, "creating the CUDA context failed: %s", why);
  }
  s->rss_before = snap_peak_rss();
  s->opt = *opt;
  MAPP_TRY(snap_problem_create(run->mpi.comm, &opt->cfg, &s->p));
  s->have_problem = true;
  MAPP_TRY(choose_layers(run, s));
  MAPP_TRY(fill_store_config(run, s));
  /* The store's buffers for two steps at a time (set_budgets may choose one). */
  int buffers = s->st.mode == SNAP_MODE_STREAM ? snap_store_buffer_count(&s->st.store) : 0;
  const snap_ops *ops = run->backend == MAPP_BACKEND_CUDA ? snap_cuda_ops() : &snap_cpu_ops;
  snap_estimate_memory(&s->p.grid, &s->p.cfg, buffers, ops && snap_ops_two_levels(ops), &s->est);
  s->est.wavefields += 3 * sizeof(double) * snap_rec_values(&s->p); /* observed, synthetic, residual */
  s->est.wavefields += snap_gather_bytes(&s->p); /* summing the objective, while the snapshots are held */
  if (s->st.mode == SNAP_MODE_STREAM && s->st.store.layers) MAPP_TRY(set_budgets(run, s));
  else if (opt->budget[SNAP_LAYER_HOST]) {
    /* memory and revolve keep what they keep; a host budget given is what
     * their peak RSS is checked against. */
    MAPP_TRY(snap_parse_size(opt->budget[SNAP_LAYER_HOST], &s->host_total));
    s->host_explicit = true;
  }
  if (s->single_reason[0] && run->mpi.rank == 0 && !run->common.quiet)
    printf("snapshots: one step at a time: %s\n", s->single_reason);
  if (s->st.mode == SNAP_MODE_REVOLVE && !s->fell_back) {
    s->st.checkpoints = opt->checkpoints > 0 ? opt->checkpoints : 10;
    if (s->st.checkpoints > opt->cfg.nt) s->st.checkpoints = (int)opt->cfg.nt;
  }
  if (opt->estimate && run->common.min_time > 0)
    return mapp_fail(MAPP_ERR_INPUT, "--min-time with --estimate: an estimate runs no gradient, so there is nothing to time");
  if (opt->estimate) {
    print_estimate(run, s);
    s->estimate_only = true;
    return MAPP_OK;
  }
  if (!ops) return mapp_fail(MAPP_ERR_INPUT, "--backend cuda: this build has no CUDA");
  s->st.store.in_place = ops->step_save != NULL;
  MAPP_TRY(snap_engine_create(&s->e, &s->p, ops));
  MAPP_TRY(allocate_arrays(s));
  MAPP_TRY(observe(s));
  if (s->st.mode != SNAP_MODE_REVOLVE)
    MAPP_TRY(snap_store_create(&s->store, &s->st.store, &s->p.grid, &s->p.cfg, s->est.nsnap));
  return MAPP_OK;
}

static int snap_compute(mapp_run *run, void *state) {
  snap_state *s = state;
  (void)run;
  if (s->estimate_only) return MAPP_OK;
  int status = snap_gradient(s->e, &s->st, s->store, s->m0, s->observed, s->grad, s->rec, s->u_final, &s->res);
  s->rss_peak = snap_peak_rss();
  return status;
}

/* Ready for the gradient again as setup left it: the store emptied (the
 * writers and prefetchers stopped, every snapshot's place forgotten, its
 * statistics zeroed, the disk file reused from its header on, the device
 * pool kept), so the forward and the adjoint run as the first time did.
 * The engine needs nothing: the gradient sets the model and zeroes its
 * fields and accumulators itself; memory and revolve hold no store state
 * between runs (memory's array is overwritten). */
static int snap_reset(mapp_run *run, void *state) {
  (void)run;
  snap_state *s = state;
  return s->store ? snap_store_reset(s->store) : MAPP_OK;
}

/* The answer the write hook writes, in its order: the gradient, the last
 * wavefield, the receivers' data (this rank's) and the objective. */
static int snap_digest(mapp_run *run, void *state, uint64_t *digest) {
  (void)run;
  snap_state *s = state;
  size_t field = sizeof(double) * (size_t)s->p.grid.interior;
  size_t rec = sizeof(double) * (size_t)(s->p.cfg.nt * s->p.nrec_local);
  mapp_digest_add(digest, s->grad, field);
  mapp_digest_add(digest, s->u_final, field);
  mapp_digest_add(digest, s->rec, rec);
  mapp_digest_add(digest, &s->res.objective, sizeof s->res.objective);
  return MAPP_OK;
}

/* A lossy (zfp) store: the exact gradient again, by binomial checkpointing
 * (bit for bit the in-memory one, in a few checkpoints' memory), for the
 * error the record reports and a check that it stays within the bound the
 * tolerance states (fixed-rate zfp states none: reported, not checked). */
static int check_lossy(mapp_run *run, snap_state *s) {
  long n = s->p.grid.interior;
  snap_strategy exact = {.mode = SNAP_MODE_REVOLVE, .checkpoints = s->p.cfg.nt < 32 ? (int)s->p.cfg.nt : 32};
  double *g = NULL, *rec = NULL;
  snap_result res;
  int status = mapp_alloc((void **)&g, sizeof(double) * (size_t)n, "the exact gradient");
  if (!status) status = mapp_alloc((void **)&rec, sizeof(double) * snap_rec_values(&s->p), "receiver data");
  if (!status) status = snap_gradient(s->e, &exact, NULL, s->m0, s->observed, g, rec, NULL, &res);
  double err[2] = {0.0, 0.0}; /* max |g - exact|, max |exact| */
  for (long i = 0; !status && i < n; i++)
    err[0] = fmax(err[0], fabs(s->grad[i] - g[i])), err[1] = fmax(err[1], fabs(g[i]));
  free(g), free(rec);
  MAPP_TRY(status);
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, err, 2, MPI_DOUBLE, MPI_MAX, run->mpi.comm));
  s->lossy_checked = true;
  s->error_abs = err[0], s->error_rel = err[1] > 0 ? err[0] / err[1] : 0.0;
  if (s->res.zfp_bound > 0)
    mapp_run_check(run, "zfp-gradient-within-bound", err[0] <= s->res.zfp_bound, err[0], s->res.zfp_bound);
  return MAPP_OK;
}

static int snap_verify(mapp_run *run, void *state) {
  snap_state *s = state;
  if (s->estimate_only) return MAPP_OK;
  double worst = 0.0;
  int finite = 1;
  for (long i = 0; i < s->p.grid.interior; i++) {
    if (!isfinite(s->grad[i])) finite = 0;
    else if (fabs(s->grad[i]) > worst) worst = fabs(s->grad[i]);
  }
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, run->mpi.comm));
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, run->mpi.comm));
  mapp_run_check(run, "finite", finite, finite ? 0.0 : 1.0, 0.0);
  long failures = s->res.store.checksum_failures;
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_LONG, MPI_SUM, run->mpi.comm));
  mapp_run_check(run, "snapshot-checksums", failures == 0, (double)failures, 0.0);
  if (s->st.store.compression == SNAP_COMP_ZFP) MAPP_TRY(check_lossy(run, s));
#ifdef __SANITIZE_ADDRESS__
  bool rss_meaningful = false; /* ASan's shadow memory and quarantine are not the app's */
#else
  bool rss_meaningful = true;
#endif
  if (s->host_explicit && rss_meaningful) {
    /* Peak RSS within what the process held before setup plus the host
     * budget (wavefields included) plus 5 %, plus 4 MiB for what the
     * threads bring (stacks, allocator arenas, zstd contexts). */
    double rss = (double)s->rss_peak,
           bound = (double)s->rss_before + 1.05 * (double)s->host_total + 4.0 * 1048576.0;
    MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, &rss, 1, MPI_DOUBLE, MPI_MAX, run->mpi.comm));
    mapp_run_check(run, "rss-within-host-budget", rss <= bound, rss, bound);
  }
  return MAPP_OK;
}

/* One value per layer under key.<layer>: reduced over the ranks with op,
 * or, for rank-local figures (a plan), as this rank has them. */
static int describe_layers(mapp_run *run, const char *key, const double v[SNAP_NLAYERS], const mapp_reduce_op *op) {
  for (int l = 0; l < SNAP_NLAYERS; l++) {
    char name[96];
    snprintf(name, sizeof name, "%s.%s", key, snap_layer_name((snap_layer)l));
    MAPP_TRY(op ? mapp_run_reduce(run, name, v[l], *op, NULL) : mapp_run_set(run, name, json_real(v[l])));
  }
  return MAPP_OK;
}

/* Where the snapshots went, per layer. */
static int describe_store_layers(mapp_run *run, const snap_state *s) {
  const snap_store_stats *st = &s->res.store;
  double count[SNAP_NLAYERS], peak[SNAP_NLAYERS], budget[SNAP_NLAYERS];
  for (int l = 0; l < SNAP_NLAYERS; l++)
    count[l] = (double)st->count[l], peak[l] = (double)st->peak_bytes[l], budget[l] = (double)s->st.store.budget[l];
  static const mapp_reduce_op sum = MAPP_REDUCE_SUM, max = MAPP_REDUCE_MAX;
  MAPP_TRY(describe_layers(run, "snapshots_per_layer", count, &sum));
  MAPP_TRY(describe_layers(run, "peak_bytes_per_layer", peak, &max));
  return describe_layers(run, "budget_bytes_per_layer", budget, NULL);
}

/* Times are maxima over ranks (the slowest rank sets the pace), bytes sums. */
static int describe_streaming(mapp_run *run, const snap_state *s) {
  const snap_store_stats *st = &s->res.store;
  double raw, stored, written, read, write_s, read_s;
  MAPP_TRY(mapp_run_reduce(run, "forward_s", s->res.forward_s, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce(run, "adjoint_s", s->res.adjoint_s, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce(run, "stall_forward_s", st->stall_forward_s, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce(run, "stall_adjoint_s", st->stall_adjoint_s, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce(run, "compress_s", st->compress_s, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce(run, "decompress_s", st->decompress_s, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_reduce(run, "disk_write_s", st->write_s, MAPP_REDUCE_MAX, &write_s));
  MAPP_TRY(mapp_run_reduce(run, "disk_read_s", st->read_s, MAPP_REDUCE_MAX, &read_s));
  MAPP_TRY(mapp_run_reduce(run, "snapshot_raw_bytes", (double)st->raw_bytes, MAPP_REDUCE_SUM, &raw));
  MAPP_TRY(mapp_run_reduce(run, "snapshot_stored_bytes", (double)st->stored_bytes, MAPP_REDUCE_SUM, &stored));
  MAPP_TRY(mapp_run_reduce(run, "disk_written_bytes", (double)st->disk_written, MAPP_REDUCE_SUM, &written));
  MAPP_TRY(mapp_run_reduce(run, "disk_read_bytes", (double)st->disk_read, MAPP_REDUCE_SUM, &read));
  MAPP_TRY(mapp_run_set(run, "compression_ratio", json_real(stored > 0 ? raw / stored : 1.0)));
  MAPP_TRY(mapp_run_set(run, "disk_write_GBps", json_real(write_s > 0 ? written / write_s / 1e9 : 0.0)));
  MAPP_TRY(mapp_run_set(run, "disk_read_GBps", json_real(read_s > 0 ? read / read_s / 1e9 : 0.0)));
  MAPP_TRY(mapp_run_set(run, "direct_io", json_boolean(st->direct_io)));
  MAPP_TRY(mapp_run_set(run, "disk_io", json_string(st->uring ? "uring" : st->direct_io ? "direct" : "buffered")));
  MAPP_TRY(mapp_run_set(run, "io_threads", json_integer(s->st.store.io_threads)));
  return mapp_run_set(run, "prefetch_depth", json_integer(s->st.store.prefetch_depth));
}

/* Memory: the peak resident set over ranks beside the budgets. */
static int describe_memory(mapp_run *run, const snap_state *s) {
  bool revolve = s->st.mode == SNAP_MODE_REVOLVE;
  double nt = (double)s->p.cfg.nt;
  MAPP_TRY(mapp_run_reduce(run, "peak_rss_bytes", (double)s->rss_peak, MAPP_REDUCE_MAX, NULL));
  MAPP_TRY(mapp_run_set(run, "rss_before_bytes", json_real((double)s->rss_before)));
  MAPP_TRY(mapp_run_set(run, "host_budget_bytes", json_real((double)s->host_total)));
  MAPP_TRY(mapp_run_set(run, "device_budget_bytes", json_real((double)s->device_total)));
  MAPP_TRY(mapp_run_set(run, "recompute", json_boolean(revolve)));
  MAPP_TRY(mapp_run_set(run, "checkpoints", json_integer(revolve ? s->st.checkpoints : 0)));
  MAPP_TRY(mapp_run_set(run, "steps_per_pass", json_integer(s->res.steps_per_pass > 1 ? s->res.steps_per_pass : 1)));
  MAPP_TRY(mapp_run_set(run, "adjoint_steps_per_pass",
                        json_integer(s->res.adjoint_steps_per_pass > 1 ? s->res.adjoint_steps_per_pass : 1)));
  MAPP_TRY(mapp_run_set(run, "budget_single_steps", json_boolean(s->single_reason[0] != '\0')));
  MAPP_TRY(mapp_run_set(run, "budget_single_steps_reason", json_string(s->single_reason)));
  return mapp_run_set(run, "recomputation_factor",
                      json_real(s->res.forward_steps > 0 ? (double)s->res.forward_steps / nt : 1.0));
}

/* Rank 0's plan for uncompressed snapshots (streamed runs; zeros otherwise). */
static int describe_estimate(mapp_run *run, const snap_state *s) {
  double planned[SNAP_NLAYERS];
  for (int l = 0; l < SNAP_NLAYERS; l++) planned[l] = (double)s->plan.count[l];
  MAPP_TRY(mapp_run_set(run, "estimate.host_wavefields_bytes", json_real((double)s->est.wavefields)));
  MAPP_TRY(mapp_run_set(run, "estimate.host_buffers_bytes", json_real((double)s->est.buffers)));
  MAPP_TRY(mapp_run_set(run, "estimate.snapshots_upper_bound_bytes", json_real((double)s->est.snapshots)));
  MAPP_TRY(mapp_run_set(run, "estimate.device_bytes", json_real((double)device_fixed(run, s))));
  MAPP_TRY(describe_layers(run, "estimate.snapshots_per_layer", planned, NULL));
  MAPP_TRY(mapp_run_set(run, "estimate.snapshots_without_room", json_real((double)s->plan.unplaced)));
  return mapp_run_set(run, "estimate_only", json_boolean(s->estimate_only));
}

/* The problem and its answer's figures. */
static int describe_problem(mapp_run *run, const snap_state *s) {
  MAPP_TRY(mapp_run_set(run, "layers", json_string(s->layers_name)));
  MAPP_TRY(mapp_run_set(run, "compression", json_string(snap_compression_name(s->st.store.compression))));
  MAPP_TRY(mapp_run_set(run, "dims", json_integer(s->p.grid.dims)));
  MAPP_TRY(mapp_run_set(run, "space_order", json_integer(s->p.cfg.space_order)));
  const snap_ops *ops = run->backend == MAPP_BACKEND_CUDA ? snap_cuda_ops() : &snap_cpu_ops;
  MAPP_TRY(mapp_run_set(run, "kernels", json_string(!ops ? "none" : ops->kernels ? ops->kernels(&s->p.grid) : ops->name)));
  MAPP_TRY(mapp_run_set(run, "dt", json_real(s->p.dt)));
  MAPP_TRY(mapp_run_set(run, "save_every", json_integer((json_int_t)s->p.cfg.save_every)));
  MAPP_TRY(mapp_run_set(run, "objective", json_real(s->res.objective)));
  MAPP_TRY(mapp_run_set(run, "zfp_gradient_bound_abs", json_real(s->res.zfp_bound)));
  if (!s->lossy_checked) return MAPP_OK;
  MAPP_TRY(mapp_run_set(run, "gradient_error_abs", json_real(s->error_abs)));
  return mapp_run_set(run, "gradient_error_rel", json_real(s->error_rel));
}

static int snap_describe(mapp_run *run, void *state) {
  snap_state *s = state;
  const snap_grid *g = &s->p.grid;
  long per_rank_x = mapp_split_even(g->global[0], run->mpi.nranks, 0).count;
  mapp_run_dim(run, "nx", g->global[0], per_rank_x);
  if (g->dims == 3) mapp_run_dim(run, "ny", g->global[1], g->global[1]);
  mapp_run_dim(run, "nz", g->global[2], g->global[2]);
  run->rec.steps = s->p.cfg.nt;
  /* streaming's writers (forward) or as many prefetchers (adjoint) */
  int io_threads = s->st.store.io_threads > 0 ? s->st.store.io_threads : 1;
  run->rec.helper_threads = (snap_mode)run->variant->kind == SNAP_MODE_STREAM ? io_threads : 0;
  double points = (double)g->global[0] * (double)g->global[1] * (double)g->global[2];
  run->rec.fom = run->compute_s > 0 && !s->estimate_only ? 2.0 * points * (double)s->p.cfg.nt / run->compute_s : 0.0;
  run->rec.bytes_moved = -1;
  MAPP_TRY(describe_problem(run, s));
  MAPP_TRY(describe_store_layers(run, s));
  MAPP_TRY(describe_streaming(run, s));
  MAPP_TRY(describe_memory(run, s));
  return describe_estimate(run, s);
}

static int write_fields(const snap_state *s, hid_t file) {
  const snap_grid *g = &s->p.grid;
  mapp_h5_slab field = {.ndims = g->dims, .first = g->first, .count = g->n[0], .stride = g->n[1] * g->n[2]};
  field.global_dims[0] = g->global[0];
  if (g->dims == 3) field.global_dims[1] = g->global[1], field.global_dims[2] = g->global[2];
  else field.global_dims[1] = g->global[2];
  MAPP_TRY(mapp_h5_write_field(file, "gradient", &field, s->grad));
  MAPP_TRY(mapp_h5_write_field(file, "u_final", &field, s->u_final));
  /* The nt x nrec array is rank 0's slab: gathered there, once, to write. */
  bool root = g->rank == 0;
  double *all;
  MAPP_TRY(snap_receivers_gather(&s->p, s->rec, &all));
  mapp_h5_slab rec = {.ndims = 2, .global_dims = {s->p.cfg.nt, s->p.nrec}, .first = 0,
                      .count = root ? s->p.cfg.nt : 0, .stride = s->p.nrec};
  int status = mapp_h5_write_field(file, "rec", &rec, root ? all : s->rec);
  free(all);
  MAPP_TRY(status);
  MAPP_TRY(mapp_h5_attr_double(file, "objective", s->res.objective));
  MAPP_TRY(mapp_h5_attr_double(file, "dt", s->p.dt));
  MAPP_TRY(mapp_h5_attr_long(file, "space_order", s->p.cfg.space_order));
  return MAPP_OK;
}

static int snap_write(mapp_run *run, void *state, const char *path) {
  snap_state *s = state;
  if (s->estimate_only) return mapp_fail(MAPP_ERR_INPUT, "--estimate runs nothing, so --output has nothing to write");
  hid_t file;
  MAPP_TRY(mapp_h5_create(run->mpi.comm, path, &file));
  int status = mapp_h5_write_provenance(file, run->mpi.comm, &run->rec);
  if (status == MAPP_OK) status = write_fields(s, file);
  int closed = mapp_h5_close(file);
  return status ? status : closed;
}

static void snap_destroy(void *state) {
  snap_state *s = state;
  if (!s) return;
  snap_store_destroy(s->store);
  snap_engine_free(s->e);
  if (s->have_problem) snap_problem_free(&s->p);
  free(s->m0), free(s->observed), free(s->grad), free(s->rec), free(s->u_final);
  free(s);
}

/* The report's headline (mapp_headline): streaming acts within a rank. */
static const mapp_headline snap_headline = {
    .technique = "snapshots streamed over kept in memory",
    .variant = "stream", .backend = "serial",
    .ref_variant = "memory", .ref_backend = "serial",
    .min_ranks = 1,
};

const mapp_app snap_app_hooks = {
    .name = "snapshots",
    .variants = snap_variants,
    .default_variant = "stream",
    .bitwise_variants = true,
    .bitwise_ranks = true,
    .fom_name = "point-updates/s",
    .headline = &snap_headline,
    .compute = snap_compute,
    .reset = snap_reset,
    .digest = snap_digest,
    .verify = snap_verify,
    .describe = snap_describe,
    .write = snap_write,
    .destroy = snap_destroy,
};
