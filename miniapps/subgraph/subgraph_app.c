/* subgraph as a mapp app: the variant table, the size presets, the run's
 * hooks and the METG sweep. main.c adds the command line. */
#include <stdio.h>
#include <stdlib.h>

#include "mapp_latency.h"
#include "mapp_watchdog.h"
#include "subgraph.h"
#include "tb_metg.h"

#define SUBGRAPH_BACKENDS (MAPP_BACKEND_BIT(SERIAL) | MAPP_BACKEND_BIT(THREADS) | MAPP_BACKEND_BIT(CUDA))
const mapp_variant_info subgraph_variants[] = {
    {.name = "eager", .backends = SUBGRAPH_BACKENDS, .kind = TB_VARIANT_EAGER, .mpi_threads = MAPP_MPI_FUNNELED,
     .description = "every task launched op by op: event, preconditions, ready queue, successor triggering"},
    {.name = "subgraph", .backends = SUBGRAPH_BACKENDS, .kind = TB_VARIANT_SUBGRAPH,
     .mpi_threads = MAPP_MPI_FUNNELED,
     .description = "graph-steps timesteps recorded once, compiled to per-worker schedules, replayed"},
    {.name = "cuda-graph", .backends = MAPP_BACKEND_BIT(CUDA), .kind = TB_VARIANT_CUDA_GRAPH,
     .mpi_threads = MAPP_MPI_FUNNELED,
     .description = "graph-steps timesteps captured once into a CUDA graph and launched per replay (no runtime)"},
    {0},
};

const subgraph_preset subgraph_presets[4] = {
    {"tiny", .width = 8, .steps = 64, .iterations = 1000, .graph_steps = 8},
    {"small", .width = 16, .steps = 1024, .iterations = 1000, .graph_steps = 64},
    {"medium", .width = 16, .steps = 8192, .iterations = 4096, .graph_steps = 64},
    {"large", .width = 64, .steps = 65536, .iterations = 4096, .graph_steps = 64},
};

typedef struct {
  tb_state *st;
  tb_config cfg; /* as given (the cuda backend has no host state) */
  tb_variant variant;
  bool cuda, metg;
  long metg_max;
  int metg_repeats;
  double kernel_ns; /* useful time per task at the run's K */
  double run_s;     /* the last compute's time, max over ranks */
  /* every compute's time (--min-time runs it again after reset), so the
   * figure of merit is the mean of the driver's timed iterations */
  double *run_seconds;
  int nruns, runs_capacity;
  tb_metg_sweep sweep;
  double round_trip_ns[2]; /* core-to-core, before and after the METG sweep; 0: not measured */
  double *cuda_values; /* cuda: the last timestep's values */
  sg_device_stats device; /* what the device did in the last run */
  long watch_seen, watch_since; /* the watchdog's: tasks done when last seen to change, and when */
} subgraph_run;

/* Nanoseconds one task's kernel takes at the current K, alone on the host
 * thread (Task Bench's useful time): the least disturbed of `trials` timings
 * of at least min_ns each, after one that sizes them. */
static double calibrate_kernel(tb_state *st, double min_ns, int trials) {
  long k = st->cfg.iterations;
  if (k == 0) return 0.0;
  long reps = 1;
  double ns;
  for (;;) {
    long t0 = sg_now_ns();
    for (long r = 0; r < reps; ++r) tb_kernel_run(st, 0);
    ns = (double)(sg_now_ns() - t0);
    if (ns > min_ns || reps > (1L << 30)) break;
    reps *= 4;
  }
  for (int trial = 0; trial < trials; ++trial) { /* a shared machine is noisy */
    long t0 = sg_now_ns();
    for (long r = 0; r < reps; ++r) tb_kernel_run(st, 0);
    double again = (double)(sg_now_ns() - t0);
    if (again < ns) ns = again;
  }
  return ns / (double)reps;
}

int subgraph_setup(mapp_run *run, const subgraph_options *opt, void **state) {
  subgraph_run *r;
  MAPP_TRY(mapp_calloc((void **)&r, 1, sizeof *r, "the subgraph run"));
  *state = r;
  r->variant = (tb_variant)run->variant->kind;
  r->cfg = opt->cfg;
  r->cuda = r->variant == TB_VARIANT_CUDA_GRAPH; /* the cuda backend's eager and subgraph go through the runtime */
  r->metg = opt->metg, r->metg_max = opt->metg_max, r->metg_repeats = opt->metg_repeats;
  r->sweep.metg_us = -1.0;
  if (r->cuda && run->mpi.nranks > 1)
    return mapp_fail(MAPP_ERR_INPUT, "--backend cuda runs on one rank (one device), not %d", run->mpi.nranks);
  if (r->cuda) return MAPP_OK; /* the device runs it: no host runtime */
  MAPP_TRY(tb_state_create(&opt->cfg, run->mpi.comm, &r->st));
  r->kernel_ns = calibrate_kernel(r->st, 5e6, 3);
  /* record + compile belong to setup: the timed run is replay only */
  if (r->variant == TB_VARIANT_SUBGRAPH) MAPP_TRY(tb_subgraph_prepare(r->st));
  return MAPP_OK;
}

/* The watchdog's check (mapp_watchdog.h): no task done on any thread for
 * --watchdog-s. Its clock (watch_seen, watch_since) is the watchdog's own. */
static bool stalled(void *arg, char *line, size_t len) {
  subgraph_run *r = arg;
  long done = tb_tasks_done(r->st), now = sg_now_ns();
  if (done != r->watch_seen || !r->watch_since) {
    r->watch_seen = done, r->watch_since = now;
    return false;
  }
  double idle_s = (double)(now - r->watch_since) * 1e-9;
  if (idle_s <= r->st->cfg.watchdog_s) return false;
  char pending[480];
  if (r->variant == TB_VARIANT_SUBGRAPH && r->st->graph) tb_subgraph_pending(r->st, pending, sizeof pending);
  else snprintf(pending, sizeof pending, "the eager path's tasks after the %ld done", done);
  snprintf(line, len, "mapp-subgraph: no task completed for %.1f s (watchdog): pending: %s", idle_s, pending);
  return true;
}

/* One run from the state as it is (setup's, or reset's), its time the
 * slowest rank's; watched when --watchdog-s is set. */
static int run_once(subgraph_run *r, double *seconds) {
  tb_state *st = r->st;
  MAPP_MPI(MPI_Barrier(st->comm));
  sg_runtime_device_stats_reset(st->rt); /* the last run's figures: nothing of an earlier one is in flight */
  mapp_watchdog watchdog = {0};
  r->watch_since = 0;
  if (st->cfg.watchdog_s > 0) MAPP_TRY(mapp_watchdog_start_status(&watchdog, stalled, r, st->rank == 0, MAPP_ERR_VERIFY));
  long t0 = sg_now_ns();
  int status = r->variant == TB_VARIANT_EAGER ? tb_run_eager(st) : tb_run_subgraph(st);
  double local = (double)(sg_now_ns() - t0) * 1e-9;
  mapp_watchdog_stop(&watchdog);
  sg_runtime_device_stats(st->rt, &r->device);
  MAPP_TRY(status);
  MAPP_MPI(MPI_Allreduce(&local, seconds, 1, MPI_DOUBLE, MPI_MAX, st->comm));
  return MAPP_OK;
}

static double total_tasks(const tb_config *cfg) { return (double)cfg->width * (double)cfg->steps; }
static double total_workers(const tb_state *st) { return (double)st->cfg.workers * st->nranks; }

/* The hand-off round trip between the CPUs the first two workers run on
 * (the process's first two when they are not pinned): METG at width 2 is
 * bound by it, and on a VM it changes from minute to minute
 * (mapp_latency.h). 0 when it cannot be measured (one CPU). */
static double worker_round_trip_ns(const tb_state *st, long trips) {
  int a, b;
  if (st->pinned && st->cfg.workers >= 2) a = st->cpus[0], b = st->cpus[1];
  else if (!mapp_two_cpus(&a, &b)) return 0.0;
  double ns = 0.0;
  if (mapp_core_round_trip(a, b, trips, 5, &ns) == MAPP_OK) return ns;
  mapp_error_clear(); /* not fatal (the record says null); keep the message slot for a real failure */
  return 0.0;
}

/* ---- the METG sweep's probe (tb_metg.h) on this rank's state ---- */

static int probe_run(void *ctx, long k, double *wall_s) {
  subgraph_run *r = ctx;
  r->st->cfg.iterations = k;
  tb_state_reset(r->st);
  return run_once(r, wall_s);
}

/* Shorter than the main run's calibration: each point takes the median of
 * one per repeat, so one disturbed calibration does not decide. */
static int probe_calibrate(void *ctx, long k, double *kernel_ns) {
  subgraph_run *r = ctx;
  r->st->cfg.iterations = k;
  *kernel_ns = calibrate_kernel(r->st, 1e6, 1);
  MAPP_MPI(MPI_Bcast(kernel_ns, 1, MPI_DOUBLE, 0, r->st->comm)); /* one useful time for every rank */
  return MAPP_OK;
}

static int probe_round_trip(void *ctx, double *ns) {
  *ns = worker_round_trip_ns(((subgraph_run *)ctx)->st, 2000); /* the VM's mode can change between points */
  return MAPP_OK;
}

static int metg_sweep(subgraph_run *r) {
  tb_state *st = r->st;
  long keep = st->cfg.iterations;
  tb_metg_probe probe = {.ctx = r, .run = probe_run, .calibrate = probe_calibrate, .round_trip = probe_round_trip};
  r->sweep.tasks = total_tasks(&st->cfg), r->sweep.workers = total_workers(st);
  r->round_trip_ns[0] = worker_round_trip_ns(st, 20000);
  int status = tb_metg_measure(&probe, r->metg_max, r->metg_repeats, &r->sweep);
  st->cfg.iterations = keep;
  tb_state_reset(st); /* the main run starts from setup's state */
  r->round_trip_ns[1] = worker_round_trip_ns(st, 20000);
  return status;
}

static int keep_run_time(subgraph_run *r, double seconds) {
  if (r->nruns == r->runs_capacity) {
    int capacity = r->runs_capacity ? 2 * r->runs_capacity : 16;
    double *grown = realloc(r->run_seconds, sizeof(double) * (size_t)capacity);
    if (!grown) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory keeping %d run times", capacity);
    r->run_seconds = grown, r->runs_capacity = capacity;
  }
  r->run_seconds[r->nruns++] = seconds;
  r->run_s = seconds;
  return MAPP_OK;
}

static int compute_on_device(subgraph_run *r) {
  long bad = 0;
  double seconds = 0.0;
  if (!r->cuda_values) /* kept across --min-time's iterations */
    MAPP_TRY(mapp_calloc((void **)&r->cuda_values, (size_t)r->cfg.width, sizeof(double), "the device's answer"));
  MAPP_TRY(tb_cuda_run(&r->cfg, true, &seconds, &bad, r->cuda_values));
  MAPP_TRY(keep_run_time(r, seconds));
  return bad ? mapp_fail(MAPP_ERR_VERIFY, "%ld device tasks read a wrong input tag", bad) : MAPP_OK;
}

static int subgraph_compute(mapp_run *run, void *state) {
  (void)run;
  subgraph_run *r = state;
  if (r->cuda) return compute_on_device(r);
  if (r->metg) MAPP_TRY(metg_sweep(r));
  double seconds = 0.0;
  MAPP_TRY(run_once(r, &seconds));
  return keep_run_time(r, seconds);
}

/* Back to setup's state: the tag ring, the copy buffers, the error and
 * instantiation counts. The recorded, compiled subgraph is kept: replaying
 * it reads only the ring and its own argument blocks, rewritten at every
 * instantiation, so a replay from here gives setup's answer (the driver's
 * digest holds every iteration to it). The device backend starts from
 * scratch in every run. */
static int subgraph_reset(mapp_run *run, void *state) {
  (void)run;
  subgraph_run *r = state;
  if (r->st) tb_state_reset(r->st);
  return MAPP_OK;
}

/* This rank's answer: its points' last-timestep tags (timestep, point and
 * value), or the device's values. */
static int subgraph_digest(mapp_run *run, void *state, uint64_t *digest) {
  (void)run;
  subgraph_run *r = state;
  if (r->cuda) {
    mapp_digest_add(digest, r->cuda_values, sizeof(double) * (size_t)r->cfg.width);
    return MAPP_OK;
  }
  const tb_state *st = r->st;
  long last = st->cfg.steps - 1;
  const tb_tag *row = tb_tag_at(st, last, st->first); /* the own points lead a ring row */
  mapp_digest_add(digest, row, sizeof(tb_tag) * (size_t)st->count);
  return MAPP_OK;
}

static int subgraph_verify(mapp_run *run, void *state) {
  subgraph_run *r = state;
  if (r->cuda) {
    mapp_run_check(run, "tags", true, 0.0, 0.0);
    return MAPP_OK;
  }
  tb_state *st = r->st;
  long local[2] = {atomic_load(&st->errors), 0}, global[2];
  long last = st->cfg.steps - 1; /* every point's last task ran and wrote its tag */
  for (long p = st->first; p < st->first + st->count; ++p) {
    const tb_tag *tag = tb_tag_at(st, last, p);
    local[1] += tag->t != last || tag->p != p;
  }
  MAPP_MPI(MPI_Allreduce(local, global, 2, MPI_LONG, MPI_SUM, run->mpi.comm));
  mapp_run_check(run, "tags", global[0] == 0, (double)global[0], 0.0);
  mapp_run_check(run, "last-step", global[1] == 0, (double)global[1], 0.0);
  return MAPP_OK;
}

/* The time of one timed iteration, as run->compute_s counts them: the
 * fastest of compute's runs over the iterations the driver timed (the first
 * is a warm-up when more than one ran). */
static double timed_run_s(const mapp_run *run, const subgraph_run *r) {
  int first = mapp_iterations_first_timed(&run->iterations), count = run->iterations.count;
  if (count != r->nruns || first >= count) return r->run_s; /* not repeated by the driver: the one run */
  double fastest = r->run_seconds[first];
  for (int i = first + 1; i < count; ++i)
    if (r->run_seconds[i] < fastest) fastest = r->run_seconds[i];
  return fastest;
}

static json_t *real_or_null(double value, bool known) { return known ? json_real(value) : json_null(); }

static json_t *sweep_point_json(const tb_metg_point *pt) {
  json_t *walls = json_array();
  for (int i = 0; walls && i < pt->n; ++i) json_array_append_new(walls, json_real(pt->wall_s[i]));
  return json_pack("{s:I,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:o,s:o}", "iterations", (json_int_t)pt->iterations,
                   "repeats", pt->n, "granularity_us", pt->granularity_us, "efficiency", pt->efficiency,
                   "efficiency_min", pt->eff_min, "efficiency_q1", pt->eff_q1, "efficiency_q3", pt->eff_q3,
                   "efficiency_max", pt->eff_max, "wall_s", pt->wall_median_s, "kernel_ns", pt->kernel_ns,
                   "walls_s", walls ? walls : json_null(), "round_trip_ns",
                   real_or_null(pt->round_trip_ns, pt->round_trip_ns > 0));
}

static json_t *sweep_json(const tb_metg_sweep *sweep) {
  json_t *arr = json_array();
  for (int i = 0; arr && i < sweep->npoints; ++i) json_array_append_new(arr, sweep_point_json(&sweep->points[i]));
  return arr;
}

/* The rises that make the curve non-monotone: the dip and the point above it. */
static json_t *rises_json(const tb_metg_sweep *sweep) {
  json_t *arr = json_array();
  for (int i = 0; arr && i < sweep->nrises && i < TB_METG_MAX_POINTS; ++i) {
    const tb_metg_point *dip = &sweep->points[sweep->rises[i].dip], *rise = &sweep->points[sweep->rises[i].rise];
    json_array_append_new(arr, json_pack("{s:I,s:f,s:f,s:I,s:f,s:f}", "dip_iterations", (json_int_t)dip->iterations,
                                         "dip_granularity_us", dip->granularity_us, "dip_efficiency", dip->efficiency,
                                         "iterations", (json_int_t)rise->iterations, "granularity_us",
                                         rise->granularity_us, "efficiency", rise->efficiency));
  }
  return arr;
}

static int describe_metg(mapp_run *run, const subgraph_run *r) {
  const tb_metg_sweep *s = &r->sweep;
  MAPP_TRY(mapp_run_set(run, "metg_us", real_or_null(s->metg_us, s->metg_us >= 0)));
  MAPP_TRY(mapp_run_set(run, "metg_us_quartiles",
                        json_pack("[o,o]", real_or_null(s->metg_low_us, s->metg_low_us >= 0),
                                  real_or_null(s->metg_high_us, s->metg_high_us >= 0))));
  MAPP_TRY(mapp_run_set(run, "metg_repeats", json_integer(s->repeats)));
  MAPP_TRY(mapp_run_set(run, "metg_statistic", json_string("median")));
  MAPP_TRY(mapp_run_set(run, "metg_monotone", json_boolean(s->monotone)));
  MAPP_TRY(mapp_run_set(run, "metg_precise", json_boolean(s->precise)));
  MAPP_TRY(mapp_run_set(run, "metg_flagged", json_boolean(!s->monotone || !s->precise)));
  MAPP_TRY(mapp_run_set(run, "metg_rises", rises_json(s)));
  MAPP_TRY(mapp_run_set(run, "metg_sweep", sweep_json(s)));
  MAPP_TRY(mapp_run_set(run, "round_trip_ns_before", real_or_null(r->round_trip_ns[0], r->round_trip_ns[0] > 0)));
  return mapp_run_set(run, "round_trip_ns_after", real_or_null(r->round_trip_ns[1], r->round_trip_ns[1] > 0));
}

static int describe_device(mapp_run *run, const subgraph_run *r) {
  double tasks = total_tasks(&r->cfg), seconds = timed_run_s(run, r);
  run->rec.steps = r->cfg.steps;
  run->rec.fom = seconds > 0 ? tasks / seconds : 0.0;
  MAPP_TRY(mapp_run_set(run, "pattern", json_string(tb_pattern_name(r->cfg.pattern))));
  MAPP_TRY(mapp_run_set(run, "tasks_per_s", json_real(run->rec.fom)));
  return mapp_run_set(run, "ns_per_task", json_real(seconds * 1e9 / tasks));
}

/* Where the workers ran. */
static int describe_placement(mapp_run *run, const tb_state *st) {
  int host_cpu = st->host_runs && st->pinned ? st->cpus[0] : st->host_cpu;
  json_t *cpus = st->pinned ? json_array() : json_null();
  for (int w = 0; st->pinned && cpus && w < st->cfg.workers; ++w)
    if (json_array_append_new(cpus, json_integer(st->cpus[w]))) json_decref(cpus), cpus = NULL;
  MAPP_TRY(mapp_run_set(run, "compile_s", json_real(st->compile_s)));
  MAPP_TRY(mapp_run_set(run, "spin_us", json_integer(st->cfg.spin_us)));
  MAPP_TRY(mapp_run_set(run, "host_worker", json_boolean(st->host_runs)));
  MAPP_TRY(mapp_run_set(run, "host_cpu", host_cpu >= 0 ? json_integer(host_cpu) : json_null()));
  MAPP_TRY(mapp_run_set(run, "copy_bytes", json_integer(st->cfg.copy_bytes)));
  return mapp_run_set(run, "worker_cpus", cpus);
}

/* The configuration the figures belong to. */
static int describe_config(mapp_run *run, const tb_config *cfg) {
  MAPP_TRY(mapp_run_set(run, "pattern", json_string(tb_pattern_name(cfg->pattern))));
  MAPP_TRY(mapp_run_set(run, "width", json_integer(cfg->width)));
  MAPP_TRY(mapp_run_set(run, "steps", json_integer(cfg->steps)));
  MAPP_TRY(mapp_run_set(run, "radix", json_integer(cfg->radix)));
  MAPP_TRY(mapp_run_set(run, "iterations", json_integer(cfg->iterations)));
  MAPP_TRY(mapp_run_set(run, "workers", json_integer(cfg->workers)));
  MAPP_TRY(mapp_run_set(run, "graph_steps", json_integer(cfg->graph_steps)));
  MAPP_TRY(mapp_run_set(run, "in_flight", json_integer(cfg->in_flight)));
  MAPP_TRY(mapp_run_set(run, "interpolate", json_boolean(cfg->interpolate)));
  MAPP_TRY(mapp_run_set(run, "chain", json_string(cfg->chain_finish ? "finish" : "ports")));
  return mapp_run_set(run, "kernel", json_string(cfg->kernel == TB_KERNEL_COMPUTE ? "compute" : "memory"));
}

/* "0.412" or "not crossed" (a negative crossing). */
static const char *microseconds_text(double us, char *buf, size_t len) {
  if (us < 0) return "not crossed";
  snprintf(buf, len, "%.3f", us);
  return buf;
}

/* The METG line, the sweep's points with their spread, and warnings (on
 * stderr, even when quiet) when a stall still bent the curve or the repeats
 * cannot place METG within TB_METG_PRECISION. */
static void print_metg(const mapp_run *run, const subgraph_run *r) {
  const tb_metg_sweep *s = &r->sweep;
  const tb_config *cfg = &r->st->cfg;
  if (!run->common.quiet) {
    char metg[32], low[32], high[32];
    printf("METG(50%%) %s %s width %ld graph-steps %ld (a launch every %ld steps): %s us (quartile curves %s to "
           "%s us), median of %d runs at each of %d points (core-to-core round trip %.0f ns before, %.0f after)\n",
           run->common.variant, tb_pattern_name(cfg->pattern), cfg->width, cfg->graph_steps, cfg->graph_steps,
           microseconds_text(s->metg_us, metg, sizeof metg), microseconds_text(s->metg_low_us, low, sizeof low),
           microseconds_text(s->metg_high_us, high, sizeof high), s->repeats, s->npoints, r->round_trip_ns[0],
           r->round_trip_ns[1]);
    printf("  %10s %14s %10s %19s %19s\n", "K", "granularity us", "efficiency", "quartiles", "min-max");
    for (int i = 0; i < s->npoints; ++i) {
      const tb_metg_point *pt = &s->points[i];
      printf("  %10ld %14.4g %10.3f %9.3f-%-9.3f %9.3f-%-9.3f\n", pt->iterations, pt->granularity_us, pt->efficiency,
             pt->eff_q1, pt->eff_q3, pt->eff_min, pt->eff_max);
    }
  }
  for (int i = 0; i < s->nrises && i < TB_METG_MAX_POINTS; ++i) {
    const tb_metg_point *dip = &s->points[s->rises[i].dip], *rise = &s->points[s->rises[i].rise];
    fprintf(stderr,
            "warning: METG: the efficiency curve is not monotone: %.3f at %.4g us (K = %ld) rises to %.3f at %.4g "
            "us (K = %ld), beyond both interquartile ranges; a disturbance may have moved METG\n",
            dip->efficiency, dip->granularity_us, dip->iterations, rise->efficiency, rise->granularity_us,
            rise->iterations);
  }
  if (!s->precise) {
    char low[32], high[32];
    fprintf(stderr,
            "warning: METG: imprecise: the quartile curves cross at %s and %s us, more than %.1fx apart; its runs "
            "disagree (a disturbance during part of the sweep)\n",
            microseconds_text(s->metg_low_us, low, sizeof low), microseconds_text(s->metg_high_us, high, sizeof high),
            TB_METG_PRECISION);
  }
}

/* The asynchronous effects: the device's figures of the last run (this
 * rank's), per op and per instantiation (eager: per chunk), and the
 * compiled graph's edges by kind. */
static int describe_effects(mapp_run *run, const subgraph_run *r) {
  const tb_state *st = r->st;
  const tb_config *cfg = &st->cfg;
  static const char *const ordered[] = {"all", "none", "alternate"}, *const devices[] = {"none", "emulated", "cuda"};
  bool emulated = cfg->device == TB_DEVICE_EMULATED;
  MAPP_TRY(mapp_run_set(run, "device", json_string(devices[cfg->device])));
  /* helpers: a thread per worker's stream (emulated), or the poller (cuda) */
  run->rec.helper_threads = emulated ? cfg->workers : cfg->device == TB_DEVICE_CUDA;
  if (cfg->device == TB_DEVICE_NONE) return MAPP_OK;
  const sg_device_stats *d = &r->device;
  double chunks = (double)(cfg->steps / cfg->graph_steps);
  MAPP_TRY(mapp_run_set(run, "stream_ordered", json_string(ordered[cfg->stream_ordered])));
  MAPP_TRY(mapp_run_set(run, "device_poll_us", emulated ? json_real((double)cfg->device_poll_ns * 1e-3) : json_null()));
  MAPP_TRY(mapp_run_set(run, "issue_us_per_op", json_real(d->issued_ops ? d->issue_ns * 1e-3 / d->issued_ops : 0.0)));
  /* the CUDA device's own time per op is not measured (it would take timed events) */
  MAPP_TRY(mapp_run_set(run, "device_us_per_op", d->kernels ? json_real(d->kernel_ns * 1e-3 / d->kernels) : json_null()));
  MAPP_TRY(mapp_run_set(run, "notifications_per_step", json_real((double)d->notifications / chunks)));
  MAPP_TRY(mapp_run_set(run, "max_runahead", emulated ? json_integer(d->max_runahead) : json_null()));
  if (r->variant != TB_VARIANT_SUBGRAPH) return MAPP_OK;
  sg_subgraph_stats g;
  tb_subgraph_stats(st, &g);
  json_t *edges = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "control", g.control_edges, "async", g.async_edges,
                            "device_waits", g.device_waits, "stream_order", g.stream_order_edges, "tokens", g.tokens,
                            "notifications", g.notifications);
  if (!edges) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory describing the graph's edges");
  return mapp_run_set(run, "graph_edges", edges);
}

static int subgraph_describe(mapp_run *run, void *state) {
  subgraph_run *r = state;
  if (r->cuda) return describe_device(run, r);
  tb_state *st = r->st;
  const tb_config *cfg = &st->cfg;
  double tasks = total_tasks(cfg), seconds = timed_run_s(run, r), workers = total_workers(st);
  mapp_run_dim(run, "width", cfg->width, st->count);
  mapp_run_dim(run, "steps", cfg->steps, cfg->steps);
  run->rec.steps = cfg->steps;
  run->rec.threads = cfg->workers;
  run->rec.fom = seconds > 0 ? tasks / seconds : 0.0;
  MAPP_TRY(describe_config(run, cfg));
  MAPP_TRY(mapp_run_set(run, "tasks", json_real(tasks)));
  MAPP_TRY(mapp_run_set(run, "tasks_per_s", json_real(run->rec.fom)));
  MAPP_TRY(mapp_run_set(run, "ns_per_task", json_real(seconds * 1e9 / tasks)));
  MAPP_TRY(mapp_run_set(run, "kernel_ns", json_real(r->kernel_ns)));
  double efficiency = seconds > 0 ? tasks * r->kernel_ns * 1e-9 / (seconds * workers) : 0.0;
  MAPP_TRY(mapp_run_set(run, "efficiency", json_real(efficiency)));
  MAPP_TRY(mapp_run_set(run, "granularity_us", json_real(seconds * workers / tasks * 1e6)));
  MAPP_TRY(mapp_run_set(run, "record_s", json_real(st->record_s)));
  MAPP_TRY(mapp_run_set(run, "instantiations", json_integer(st->instantiations)));
  MAPP_TRY(describe_placement(run, st));
  MAPP_TRY(describe_effects(run, r));
  if (r->metg) MAPP_TRY(describe_metg(run, r));
  if (run->mpi.rank == 0 && r->metg) print_metg(run, r);
  return MAPP_OK;
}

/* The answer: the last timestep's value per point (each rank its slab),
 * the same bit for bit for every variant, backend and rank count. */
static int subgraph_write(mapp_run *run, void *state, const char *path) {
  subgraph_run *r = state;
  const tb_config *cfg = r->cuda ? &r->cfg : &r->st->cfg;
  long first = r->cuda ? 0 : r->st->first, count = r->cuda ? cfg->width : r->st->count;
  double *values;
  MAPP_TRY(mapp_alloc((void **)&values, sizeof(double) * (size_t)(count + 1), "the answer"));
  for (long i = 0; i < count; ++i)
    values[i] = r->cuda ? r->cuda_values[i] : tb_tag_at(r->st, cfg->steps - 1, first + i)->v;
  mapp_h5_slab slab = {.ndims = 1, .global_dims = {cfg->width}, .first = first, .count = count, .stride = 1};
  hid_t file;
  int status = mapp_h5_create(run->mpi.comm, path, &file);
  if (status == MAPP_OK) {
    status = mapp_h5_write_field(file, "value", &slab, values);
    if (status == MAPP_OK) status = mapp_h5_write_provenance(file, run->mpi.comm, &run->rec);
    if (status == MAPP_OK) status = mapp_h5_attr_string(file, "pattern", tb_pattern_name(cfg->pattern));
    if (status == MAPP_OK) status = mapp_h5_attr_long(file, "width", cfg->width);
    if (status == MAPP_OK) status = mapp_h5_attr_long(file, "radix", cfg->radix);
    int closed = mapp_h5_close(file);
    if (status == MAPP_OK) status = closed;
  }
  free(values);
  return status;
}

static void subgraph_destroy(void *state) {
  subgraph_run *r = state;
  if (!r) return;
  free(r->cuda_values);
  free(r->run_seconds);
  if (r->st) tb_subgraph_release(r->st);
  tb_state_destroy(r->st);
  free(r);
}

/* The report's headline (mapp_headline): replay acts within a rank. */
static const mapp_headline subgraph_headline = {
    .technique = "subgraph replay over eager launches",
    .variant = "subgraph", .backend = "serial",
    .ref_variant = "eager", .ref_backend = "serial",
    .min_ranks = 1,
};

const mapp_app subgraph_app_hooks = {
    .name = "subgraph",
    .variants = subgraph_variants,
    .presets = MAPP_PRESETS(subgraph_presets),
    .bitwise_variants = true,
    .bitwise_ranks = true,
    .fom_name = "tasks/s",
    .headline = &subgraph_headline,
    .compute = subgraph_compute,
    .reset = subgraph_reset,
    .digest = subgraph_digest,
    .verify = subgraph_verify,
    .describe = subgraph_describe,
    .write = subgraph_write,
    .destroy = subgraph_destroy,
};

#ifndef MAPP_HAVE_CUDA
int tb_cuda_run(const tb_config *cfg, bool graph, double *seconds, long *bad_tags, double *last_values) {
  (void)cfg, (void)graph, (void)seconds, (void)bad_tags, (void)last_values;
  return mapp_fail(MAPP_ERR_INPUT, "--backend cuda: this build has no CUDA");
}
int tb_cuda_run_timed(const tb_config *cfg, bool graph, tb_cuda_times *times, long *bad_tags, double *last_values) {
  (void)cfg, (void)graph, (void)times, (void)bad_tags, (void)last_values;
  return mapp_fail(MAPP_ERR_INPUT, "--backend cuda: this build has no CUDA");
}
#endif
