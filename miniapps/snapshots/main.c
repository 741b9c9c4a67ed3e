/* mapp-snapshots: the command line of the streamed-snapshots mini-app (its
 * own flags); the driver (mapp_app_main) and the hooks (snap_app.c) do the
 * rest. */
#include <string.h>

#include "snapshots.h"

/* The command line's values: nx and nz not given take the preset's
 * (preset_field), the other dimensions are applied only when given. Layers,
 * budgets, lossless compression and threads change where snapshots live,
 * never the answer; zfp and --save-every do. */
static struct {
  long dims, nx, ny, nz, space_order, save_every, nbl;
  long zstd_level, io_threads, prefetch_depth, checkpoints;
  double zfp_tolerance, zfp_rate, mem_perc;
  const char *layers, *compression, *disk_dir, *disk_io;
  const char *host_budget, *disk_budget, *device_budget;
  bool keep, recompute, estimate;
} args = {.compression = "none", .zstd_level = 1, .zfp_tolerance = 1e-6, .io_threads = 1, .prefetch_depth = 2,
          .save_every = 1, .disk_io = "direct"};

static const mapp_option options[] = {
    {.name = "dims", .kind = MAPP_OPT_LONG, .dest = &args.dims, .min = 2, .max = 3, .default_text = "from --size",
     .help = "2 or 3 space dimensions", .changes = MAPP_CHANGES_SIZE},
    {.name = "nx", .kind = MAPP_OPT_LONG, .dest = &args.nx, .min = 1, .max = 1L << 20, .default_text = "from --size",
     .help = "grid points along x (split over the ranks)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(snap_preset, n[0])},
    {.name = "ny", .kind = MAPP_OPT_LONG, .dest = &args.ny, .min = 1, .max = 1L << 20, .default_text = "nx in 3-D",
     .help = "grid points along y (3-D)", .changes = MAPP_CHANGES_SIZE},
    {.name = "nz", .kind = MAPP_OPT_LONG, .dest = &args.nz, .min = 1, .max = 1L << 20, .default_text = "from --size",
     .help = "grid points along z (depth)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(snap_preset, n[2])},
    {.name = "nbl", .kind = MAPP_OPT_LONG, .dest = &args.nbl, .min = 1, .max = 1L << 16, .default_text = "10",
     .help = "absorbing boundary layer width (points)", .changes = MAPP_CHANGES_SIZE},
    {.name = "space-order", .kind = MAPP_OPT_LONG, .dest = &args.space_order, .min = 1, .max = 64,
     .default_text = "from --size", .help = "2, 4 or 8: the centred stencil's order", .changes = MAPP_CHANGES_SIZE},
    {.name = "save-every", .kind = MAPP_OPT_LONG, .dest = &args.save_every, .min = 1, .max = 1L << 30,
     .help = "keep every k-th snapshot (k > 1 approximates the gradient)", .changes = MAPP_CHANGES_ANSWER},
    {.name = "layers", .kind = MAPP_OPT_STRING, .dest = &args.layers, .choices = SNAP_LAYER_NAMES,
     .default_text = "disk-host (cpu), disk-host-device (cuda)",
     .help = "the layers snapshots may live in (none: one in-memory array)"},
    {.name = "compression", .kind = MAPP_OPT_CHOICE, .dest = &args.compression, .choices = "none|zstd|zfp",
     .help = "snapshot compression: zstd lossless, zfp lossy",
     .changes = MAPP_CHANGES_ANSWER, .changing_choices = "zfp"},
    {.name = "zstd-level", .kind = MAPP_OPT_LONG, .dest = &args.zstd_level, .min = -7, .max = 22,
     .help = "zstd compression level (-7..22; negative: zstd's fast levels, 0: its default)"},
    {.name = "zfp-tolerance", .kind = MAPP_OPT_DOUBLE, .dest = &args.zfp_tolerance, .dmin = 1e-300, .dmax = 1e300,
     .help = "zfp fixed-accuracy absolute tolerance"},
    {.name = "zfp-rate", .kind = MAPP_OPT_DOUBLE, .dest = &args.zfp_rate, .dmin = 1e-3, .dmax = 64,
     .default_text = "off", .help = "zfp fixed-rate mode: bits per value (instead of the tolerance)"},
    {.name = "io-threads", .kind = MAPP_OPT_LONG, .dest = &args.io_threads, .min = 1, .max = 64,
     .help = "writer threads in the forward, as many prefetchers in the adjoint"},
    {.name = "prefetch-depth", .kind = MAPP_OPT_LONG, .dest = &args.prefetch_depth, .min = 1, .max = 1024,
     .help = "adjoint: snapshots fetched ahead (2: double buffering)"},
    {.name = "disk-dir", .kind = MAPP_OPT_STRING, .dest = &args.disk_dir, .default_text = "$TMPDIR, else /tmp",
     .help = "folder of the disk layer's files (one per rank)"},
    {.name = "disk-io", .kind = MAPP_OPT_CHOICE, .dest = &args.disk_io, .choices = "direct|uring|buffered",
     .help = "disk layer I/O: O_DIRECT pwrite/pread (falls back where refused), the same through io_uring with 4 requests in flight per snapshot, or through the page cache"},
    {.name = "keep", .kind = MAPP_OPT_FLAG, .dest = &args.keep, .help = "keep the disk files (mapp-snapshots-inspect reads them)"},
    {.name = "mem-perc", .kind = MAPP_OPT_DOUBLE, .dest = &args.mem_perc, .dmin = 1e-6, .dmax = 1.0,
     .default_text = "0.7 (or MAPP_<LAYER>_MEM_PERC)", .help = "share of each layer's available capacity, in (0, 1]"},
    {.name = "host-budget", .kind = MAPP_OPT_STRING, .dest = &args.host_budget, .default_text = "mem-perc x MemAvailable",
     .help = "host memory per rank, wavefields included (e.g. 2GiB)"},
    {.name = "disk-budget", .kind = MAPP_OPT_STRING, .dest = &args.disk_budget, .default_text = "mem-perc x free disk",
     .help = "disk space per rank (e.g. 100GiB)"},
    {.name = "device-budget", .kind = MAPP_OPT_STRING, .dest = &args.device_budget, .default_text = "none",
     .help = "device memory per rank (cuda)"},
    {.name = "recompute", .kind = MAPP_OPT_FLAG, .dest = &args.recompute,
     .help = "when the budgets are too small, keep what fits as revolve checkpoints and recompute"},
    {.name = "checkpoints", .kind = MAPP_OPT_LONG, .dest = &args.checkpoints, .min = 1, .max = 1L << 20,
     .default_text = "10", .help = "revolve: states kept"},
    {.name = "estimate", .kind = MAPP_OPT_FLAG, .dest = &args.estimate,
     .help = "print the memory each layer needs and exit without running"},
    MAPP_OPTION_END,
};

static snap_compression compression_kind(const char *name) {
  return !strcmp(name, "zstd") ? SNAP_COMP_ZSTD : !strcmp(name, "zfp") ? SNAP_COMP_ZFP : SNAP_COMP_NONE;
}

static int check_combinations(const mapp_run *run) {
  snap_mode mode = (snap_mode)run->variant->kind;
  if (args.estimate && run->common.output) return mapp_fail(MAPP_ERR_INPUT, "--estimate runs nothing; drop --output");
  if (args.checkpoints && mode != SNAP_MODE_REVOLVE)
    return mapp_fail(MAPP_ERR_INPUT, "--checkpoints applies to --variant revolve only");
  if (args.recompute && mode != SNAP_MODE_STREAM) return mapp_fail(MAPP_ERR_INPUT, "--recompute applies to --variant stream only");
  if (args.device_budget && run->backend != MAPP_BACKEND_CUDA)
    return mapp_fail(MAPP_ERR_INPUT, "--device-budget applies to --backend cuda only");
  if (args.zfp_rate > 0 && strcmp(args.compression, "zfp"))
    return mapp_fail(MAPP_ERR_INPUT, "--zfp-rate applies to --compression zfp only");
  return MAPP_OK;
}

static int setup(mapp_run *run, void **state) {
  MAPP_TRY(check_combinations(run));
  snap_options o = {0};
  snap_config_from_preset(run->preset, &o.cfg);
  snap_config *c = &o.cfg;
  if (mapp_run_given(run, "dims")) c->dims = (int)args.dims;
  c->n[0] = args.nx;
  /* y: --ny, else (as --help says) nx in 3-D, after --nx; 1 in 2-D. */
  c->n[1] = c->dims == 3 ? (mapp_run_given(run, "ny") ? args.ny : c->n[0]) : 1;
  c->n[2] = args.nz;
  if (mapp_run_given(run, "space-order")) c->space_order = (int)args.space_order;
  if (mapp_run_given(run, "nbl")) c->nbl = (int)args.nbl;
  c->n[0] = mapp_run_scaled(run, c->n[0]); /* x per rank stays fixed under weak scaling */
  c->nt = run->common.steps;
  c->save_every = args.save_every;
  o.layers = args.layers;
  o.compression = compression_kind(args.compression);
  o.zstd_level = (int)args.zstd_level, o.zfp_tolerance = args.zfp_tolerance, o.zfp_rate = args.zfp_rate;
  o.io_threads = (int)args.io_threads, o.prefetch_depth = (int)args.prefetch_depth;
  o.disk_dir = args.disk_dir, o.keep = args.keep, o.direct_io = strcmp(args.disk_io, "buffered") != 0;
  o.uring = !strcmp(args.disk_io, "uring");
  o.mem_perc = args.mem_perc;
  o.budget[SNAP_LAYER_HOST] = args.host_budget, o.budget[SNAP_LAYER_DISK] = args.disk_budget;
  o.budget[SNAP_LAYER_DEVICE] = args.device_budget;
  o.recompute = args.recompute, o.estimate = args.estimate, o.checkpoints = (int)args.checkpoints;
  return snap_app_setup(run, &o, state);
}

int main(int argc, char **argv) {
  mapp_app app = snap_app_hooks;
  app.summary = "Acoustic forward and adjoint (the DevitoPRO data-streaming seed): the forward saves a snapshot\n"
                "every step, the adjoint reads them back in reverse to form the gradient; snapshots are streamed\n"
                "across device, host and disk under memory budgets, asynchronously, optionally compressed.";
  app.options = options;
  app.presets = MAPP_PRESETS(snap_presets);
  app.preset_steps = MAPP_PRESET_LONG(snap_preset, nt);
  app.setup = setup;
  return mapp_app_main(&app, argc, argv);
}
