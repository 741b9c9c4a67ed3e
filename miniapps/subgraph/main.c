/* mapp-subgraph: the command line of the subgraph mini-app (its flags and
 * its config); the driver (mapp_app_main) and the hooks (subgraph_app.c) do the
 * rest. */
#include <string.h>

#include "subgraph.h"
#include "tb_metg.h"

/* The command line's values: width, iterations and graph-steps not given
 * take the preset's (preset_field), the defaults derived from other values
 * apply when an option is not given (mapp_run_given). Ranges are checked by
 * tb_config_check so its messages name the problem ("--iterations: -3 is
 * negative"). The answer depends on the pattern, its radix, the width and
 * the steps only: K, kernel, workers, graph-steps, in-flight, chaining and
 * interpolation change the speed, not the values. */
static struct {
  const char *pattern, *kernel, *chain, *broken_graph, *host_worker, *device, *stream_ordered, *plant;
  double device_poll_us, watchdog_s;
  long width, radix, iterations, workers, spin_us, graph_steps, in_flight, scratch_bytes, metg_max, metg_repeats,
      copy_bytes;
  bool interpolate, metg, break_dependence, no_pin, check_peek;
} args = {.pattern = "stencil_1d", .kernel = "compute", .chain = "ports", .host_worker = "auto", .spin_us = 100,
          .scratch_bytes = 16384, .metg_max = 65536, .device = "none", .stream_ordered = "all",
          .device_poll_us = TB_DEVICE_POLL_US, .watchdog_s = 60.0};

/* The old name of --in-flight: "run-ahead" is the seed's word for device
 * work issued ahead of its completion, which --stream-ordered measures. */
static int refuse_run_ahead(const char *value, void *dest) {
  (void)value, (void)dest;
  return mapp_fail(MAPP_ERR_INPUT, "--run-ahead was renamed --in-flight (instantiations in flight on the host); "
                                   "the seed's runahead of device work is --stream-ordered");
}

#define BIG (1L << 40)
static const mapp_option options[] = {
    {.name = "pattern", .kind = MAPP_OPT_CHOICE, .dest = &args.pattern, .choices = TB_PATTERN_NAMES,
     .help = "Task Bench dependence pattern", .changes = MAPP_CHANGES_ANSWER},
    {.name = "width", .kind = MAPP_OPT_LONG, .dest = &args.width, .min = -BIG, .max = 1L << 24,
     .default_text = "from --size", .help = "points per timestep (per rank with --scaling weak)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(subgraph_preset, width)},
    {.name = "radix", .kind = MAPP_OPT_LONG, .dest = &args.radix, .min = -BIG, .max = BIG, .default_text = "min(3, width)",
     .help = "dependences per task for nearest, spread, random_nearest", .changes = MAPP_CHANGES_ANSWER},
    {.name = "iterations", .kind = MAPP_OPT_LONG, .dest = &args.iterations, .min = -BIG, .max = BIG,
     .default_text = "from --size", .help = "kernel iterations per task (K >= 0; 0 measures the runtime's overhead alone)",
     .preset_field = MAPP_PRESET_LONG(subgraph_preset, iterations)},
    {.name = "kernel", .kind = MAPP_OPT_CHOICE, .dest = &args.kernel, .choices = "compute|memory",
     .help = "compute: a multiply-add chain of K; memory: K passes over a per-worker buffer"},
    {.name = "scratch-bytes", .kind = MAPP_OPT_LONG, .dest = &args.scratch_bytes, .min = 8, .max = 1L << 30,
     .help = "memory kernel: bytes per worker"},
    {.name = "workers", .kind = MAPP_OPT_LONG, .dest = &args.workers, .min = -BIG, .max = BIG,
     .default_text = "1 on serial, 2 on threads", .help = "runtime worker threads per rank"},
    {.name = "spin-us", .kind = MAPP_OPT_LONG, .dest = &args.spin_us, .min = 0, .max = 10000000,
     .help = "idle workers and host waits spin this long (>= 0; 0: sleep at once) before sleeping"},
    {.name = "host-worker", .kind = MAPP_OPT_CHOICE, .dest = &args.host_worker, .choices = "auto|yes|no",
     .help = "threads backend: is the host thread worker 0 (--workers - 1 threads start)? auto: when this rank's "
             "share of the node has no CPU to spare for a host thread of its own (the serial backend's one worker "
             "is always the host)"},
    {.name = "no-pin", .kind = MAPP_OPT_FLAG, .dest = &args.no_pin,
     .help = "leave workers unpinned (by default each is bound to its own CPU of this rank's share of the node, "
             "when the share has one per worker)"},
    {.name = "graph-steps", .kind = MAPP_OPT_LONG, .dest = &args.graph_steps, .min = -BIG, .max = BIG,
     .default_text = "from --size: 8 tiny, 64 others (lowered to divide --steps)",
     .help = "timesteps per recorded subgraph (and per eager chunk)",
     .preset_field = MAPP_PRESET_LONG(subgraph_preset, graph_steps)},
    {.name = "in-flight", .kind = MAPP_OPT_LONG, .dest = &args.in_flight, .min = -BIG, .max = 1024,
     .default_text = "64 timesteps in flight: max(4, 64 / graph-steps)",
     .help = "instantiations (chunks) the host keeps in flight; 1: one at a time (not the seed's runahead, "
             "which is --stream-ordered)"},
    {.name = "run-ahead", .kind = MAPP_OPT_CALLBACK, .parse = refuse_run_ahead, .choices = "N",
     .help = "renamed --in-flight (refused)"},
    {.name = "chain", .kind = MAPP_OPT_CHOICE, .dest = &args.chain, .choices = "ports|finish",
     .help = "subgraph: chain instantiations point by point (ports) or by the finish event"},
    {.name = "copy-bytes", .kind = MAPP_OPT_LONG, .dest = &args.copy_bytes, .min = -BIG, .max = 1L << 30,
     .help = "each dependence on another point of the rank becomes a copy op of this many bytes from the "
             "producer's output buffer to the consumer's input buffer, checked by the consumer (0: none)"},
    {.name = "device", .kind = MAPP_OPT_CHOICE, .dest = &args.device, .choices = "none|emulated",
     .help = "serial and threads backends: none (a task is done when it returns) or emulated (a task enqueues its "
             "work on its worker's in-order device queue, served by a thread of its own, and is done on the device "
             "when the queue has run it)"},
    {.name = "device-poll-us", .kind = MAPP_OPT_DOUBLE, .dest = &args.device_poll_us, .dmin = -1e9, .dmax = 1e6,
     .help = "emulated device: a completion reaches the runtime this long after the device (CUDA's event "
             "notification latency)"},
    {.name = "stream-ordered", .kind = MAPP_OPT_CHOICE, .dest = &args.stream_ordered, .choices = "all|none|alternate",
     .help = "with a device: the tasks promise stream order, so a replay issues them after their producers' host "
             "side and orders them on the device (the seed's runahead: all); none: each waits for its producers' "
             "device side; alternate: every other timestep's tasks are host tasks"},
    {.name = "check-peek", .kind = MAPP_OPT_FLAG, .dest = &args.check_peek,
     .help = "with a device: a host task that reads an input the device has not written yet is reported by name "
             "(exit 1)"},
    {.name = "plant", .kind = MAPP_OPT_CHOICE, .dest = &args.plant,
     .choices = "no-device-wait|host-runahead|early-issue",
     .help = "test only: a bug in the asynchronous effects that a check must catch (exit 1): a consumer's stream "
             "does not wait on its producer's token; host tasks promise stream order; or ops fed by precondition "
             "ports are issued before the ports trigger, behind which the ports' tokens are then recorded (a cycle "
             "on the device, which the watchdog names)",
     .changes = MAPP_CHANGES_ANSWER},
    {.name = "watchdog-s", .kind = MAPP_OPT_DOUBLE, .dest = &args.watchdog_s, .dmin = -1e9, .dmax = 1e6,
     .help = "a run in which no task completes for this long is stopped with one line naming the ops still "
             "pending, exit 1 (0: no watchdog)"},
    {.name = "interpolate", .kind = MAPP_OPT_FLAG, .dest = &args.interpolate,
     .help = "subgraph: patch the base timestep into every op per instantiation"},
    {.name = "metg", .kind = MAPP_OPT_FLAG, .dest = &args.metg,
     .help = "sweep K down from --metg-max and report METG(50%) before the run"},
    {.name = "metg-max", .kind = MAPP_OPT_LONG, .dest = &args.metg_max, .min = 1, .max = BIG,
     .help = "the METG sweep's largest K"},
    {.name = "metg-repeats", .kind = MAPP_OPT_LONG, .dest = &args.metg_repeats, .min = 1, .max = TB_METG_MAX_REPEATS,
     .default_text = TB_METG_TEXT(TB_METG_DEFAULT_REPEATS),
     .help = "runs of each METG point, interleaved over the sweep (a stall falls on a few runs of many points); "
             "each point is their median, with its quartiles and extremes as its spread"},
    {.name = "break-dependence", .kind = MAPP_OPT_FLAG, .dest = &args.break_dependence,
     .help = "test only: reverse one dependence, so the tag check must fail (exit 1)", .changes = MAPP_CHANGES_ANSWER},
    {.name = "broken-graph", .kind = MAPP_OPT_CHOICE, .dest = &args.broken_graph,
     .choices = "cycle|dangling-port|interpolation|contract",
     .help = "test only: compile a broken graph definition, which must be rejected (exit 2), or run an op that "
             "launches inside a subgraph (contract: exit 1)"},
    MAPP_OPTION_END,
};

static int resolve_workers(const mapp_run *run, long *workers) {
  bool threads = run->backend == MAPP_BACKEND_THREADS;
  *workers = mapp_run_given(run, "workers") ? args.workers : threads ? 2 : 1;
  if (!threads && *workers != 1 && run->backend != MAPP_BACKEND_CUDA)
    return mapp_fail(MAPP_ERR_INPUT, "--workers %ld: the %s backend runs 1 worker (use --backend threads)", *workers,
                     run->common.backend);
  if (*workers < 1 || *workers > SG_MAX_WORKERS)
    return mapp_fail(MAPP_ERR_INPUT, "--workers: %ld is outside [1, %d]", *workers, SG_MAX_WORKERS);
  return MAPP_OK;
}

static int resolve_host_worker(const mapp_run *run, tb_host_worker *out) {
  bool serial = run->backend == MAPP_BACKEND_SERIAL;
  if (serial && !strcmp(args.host_worker, "no"))
    return mapp_fail(MAPP_ERR_INPUT, "--host-worker no: the serial backend's one worker is the host (use --backend "
                                     "threads --workers 1 for a worker thread)");
  *out = serial || !strcmp(args.host_worker, "yes") ? TB_HOST_WORKER_YES
         : !strcmp(args.host_worker, "no")          ? TB_HOST_WORKER_NO
                                                    : TB_HOST_WORKER_AUTO;
  return MAPP_OK;
}

static long default_in_flight(long graph_steps) {
  if (graph_steps < 1) return 4; /* refused by tb_config_check, which names it */
  long launches = (64 + graph_steps - 1) / graph_steps;
  return launches > 4 ? launches : 4;
}

/* --metg-repeats belongs to --metg; --metg with --min-time is refused: the
 * sweep repeats its own points, and a second sweep per iteration would
 * time the sweep, not the run. */
static int check_metg_flags(const mapp_run *run) {
  if (mapp_run_given(run, "metg-repeats") && !args.metg) return mapp_fail(MAPP_ERR_INPUT, "--metg-repeats applies to --metg");
  if (args.metg && run->common.min_time > 0)
    return mapp_fail(MAPP_ERR_INPUT, "--metg with --min-time: the METG sweep repeats each point itself "
                                     "(--metg-repeats); run the two apart");
  return MAPP_OK;
}

/* --device, --stream-ordered, --device-poll-us, --check-peek, --plant. */
static int resolve_device(const mapp_run *run, tb_config *cfg) {
  bool emulated = !strcmp(args.device, "emulated"), cuda = run->backend == MAPP_BACKEND_CUDA;
  if (emulated && cuda)
    return mapp_fail(MAPP_ERR_INPUT, "--device emulated: the cuda backend has a real device (use --backend "
                                     "serial or threads)");
  /* the cuda backend's eager and subgraph variants drive the GPU's streams through the runtime */
  cfg->device = emulated                                                ? TB_DEVICE_EMULATED
                : cuda && run->variant->kind != TB_VARIANT_CUDA_GRAPH ? TB_DEVICE_CUDA
                                                                        : TB_DEVICE_NONE;
  if (!cfg->device && mapp_run_given(run, "stream-ordered"))
    return mapp_fail(MAPP_ERR_INPUT, "--stream-ordered applies to a device: add --device emulated");
  if (!emulated && mapp_run_given(run, "device-poll-us"))
    return mapp_fail(MAPP_ERR_INPUT, "--device-poll-us is the emulated device's latency: add --device emulated");
  if (args.device_poll_us < 0) return mapp_fail(MAPP_ERR_INPUT, "--device-poll-us: %g is negative", args.device_poll_us);
  cfg->device_poll_ns = (long)(args.device_poll_us * 1e3 + 0.5);
  cfg->stream_ordered = !strcmp(args.stream_ordered, "none")        ? TB_STREAM_ORDERED_NONE
                        : !strcmp(args.stream_ordered, "alternate") ? TB_STREAM_ORDERED_ALTERNATE
                                                                    : TB_STREAM_ORDERED_ALL;
  cfg->check_peek = args.check_peek;
  cfg->plant = !args.plant                          ? TB_PLANT_NONE
               : !strcmp(args.plant, "no-device-wait") ? TB_PLANT_NO_DEVICE_WAIT
               : !strcmp(args.plant, "host-runahead")  ? TB_PLANT_HOST_RUNAHEAD
                                                       : TB_PLANT_EARLY_ISSUE;
  if (cfg->plant == TB_PLANT_EARLY_ISSUE && run->variant->kind != TB_VARIANT_SUBGRAPH)
    return mapp_fail(MAPP_ERR_INPUT, "--plant early-issue plants a bug in the ports of a replay: it needs "
                                     "--variant subgraph");
  if (args.watchdog_s < 0) return mapp_fail(MAPP_ERR_INPUT, "--watchdog-s: %g is negative", args.watchdog_s);
  cfg->watchdog_s = args.watchdog_s;
  if (cfg->plant == TB_PLANT_HOST_RUNAHEAD && cfg->stream_ordered != TB_STREAM_ORDERED_ALTERNATE)
    return mapp_fail(MAPP_ERR_INPUT, "--plant host-runahead needs host tasks: add --stream-ordered alternate");
  return MAPP_OK;
}

static int setup(mapp_run *run, void **state) {
  if (args.broken_graph) return subgraph_compile_broken(args.broken_graph);
  MAPP_TRY(check_metg_flags(run));
  subgraph_options opt = {.metg = args.metg, .metg_max = args.metg_max,
                          .metg_repeats = (int)(mapp_run_given(run, "metg-repeats") ? args.metg_repeats
                                                                                   : TB_METG_DEFAULT_REPEATS)};
  tb_config *cfg = &opt.cfg;
  long workers;
  MAPP_TRY(resolve_workers(run, &workers));
  cfg->pattern = (tb_pattern)tb_pattern_from_name(args.pattern);
  if (args.width < 1) return mapp_fail(MAPP_ERR_INPUT, "--width: %ld is outside [1, 2^24]", args.width);
  cfg->width = mapp_run_scaled(run, args.width); /* per rank fixed when weak */
  cfg->steps = run->common.steps;
  cfg->iterations = args.iterations;
  bool radix_given = mapp_run_given(run, "radix");
  if (radix_given && !tb_pattern_takes_radix(cfg->pattern))
    return mapp_fail(MAPP_ERR_INPUT, "--radix applies to the nearest, spread and random_nearest patterns, not %s",
                     args.pattern);
  cfg->radix = radix_given ? args.radix : (cfg->width < 3 ? cfg->width : 3);
  cfg->kernel = strcmp(args.kernel, "memory") ? TB_KERNEL_COMPUTE : TB_KERNEL_MEMORY;
  cfg->scratch_bytes = args.scratch_bytes;
  cfg->workers = (int)workers;
  cfg->spin_us = args.spin_us;
  cfg->pin = !args.no_pin;
  MAPP_TRY(resolve_host_worker(run, &cfg->host_worker));
  cfg->graph_steps = args.graph_steps;
  if (!mapp_run_given(run, "graph-steps") && cfg->steps % cfg->graph_steps) /* --steps alone: the largest divisor */
    while (cfg->steps % cfg->graph_steps) cfg->graph_steps--;
  /* Launches in flight by timesteps: at one timestep per launch, 4 in
   * flight left the host sleeping and woken every other launch. */
  cfg->in_flight = (int)(mapp_run_given(run, "in-flight") ? args.in_flight : default_in_flight(cfg->graph_steps));
  cfg->interpolate = args.interpolate;
  cfg->chain_finish = !strcmp(args.chain, "finish");
  cfg->break_dependence = args.break_dependence;
  cfg->copy_bytes = args.copy_bytes;
  MAPP_TRY(resolve_device(run, cfg));
  MAPP_TRY(tb_config_check(cfg, run->mpi.nranks));
  return subgraph_setup(run, &opt, state);
}

int main(int argc, char **argv) {
  mapp_app app = subgraph_app_hooks;
  app.summary = "Task Bench patterns on a small task runtime (the Realm subgraph seed): every task launched op by\n"
                "op with dynamic dependence tracking (eager) versus graph-steps timesteps recorded once, compiled\n"
                "to static per-worker schedules and replayed (subgraph). Figures: tasks/s, ns per task, METG.";
  app.options = options;
  app.preset_steps = MAPP_PRESET_LONG(subgraph_preset, steps);
  app.steps_change_size = true; /* the graph's height */
  app.setup = setup;
  return mapp_app_main(&app, argc, argv);
}
