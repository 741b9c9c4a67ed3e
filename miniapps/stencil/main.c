/* mapp-stencil: the command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"

typedef struct {
  long nx, ny, nz;
  const char *program, *layout, *init, *cache;
  double amplitude, cfl;
  stencil_debug debug;
} stencil_cli;

static stencil_cli args = {.program = "shallow-water", .layout = "auto", .init = "bump", .amplitude = 0.1, .cfl = 0.3};

static int parse_check(const char *value, void *dest) { return stencil_debug_parse_check(dest, value); }

static int parse_trace(const char *value, void *dest) {
  stencil_debug *d = dest;
  int used = 0;
  if (sscanf(value, "%ld,%ld%n", &d->trace_i, &d->trace_j, &used) != 2 || value[used])
    return mapp_fail(MAPP_ERR_INPUT, "--trace: '%s' is not I,J", value);
  d->trace = true;
  return MAPP_OK;
}

static const mapp_option options[] = {
    {.name = "program", .kind = MAPP_OPT_CHOICE, .dest = &args.program, .choices = st_program_choices,
     .help = "the step: a program table (stencil_program_<name>.c)", .changes = MAPP_CHANGES_ANSWER},
    {.name = "nx", .kind = MAPP_OPT_LONG, .dest = &args.nx, .min = 1, .max = 1L << 30,
     .default_text = "from --size", .help = "cells in x (per rank along x with --scaling weak)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(stencil_preset, nx)},
    {.name = "ny", .kind = MAPP_OPT_LONG, .dest = &args.ny, .min = 1, .max = 1L << 30,
     .default_text = "from --size", .help = "cells in y",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(stencil_preset, ny)},
    {.name = "nz", .kind = MAPP_OPT_LONG, .dest = &args.nz, .min = ST_NZ_MIN, .max = 1L << 20,
     .default_text = "from --size", .help = "levels of a program with 3-D fields (vertical, hydrostatic)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(stencil_preset, nz)},
    {.name = "layout", .kind = MAPP_OPT_STRING, .dest = &args.layout,
     .help = "process grid PXxPY (ranks along x and y), or auto"},
    {.name = "init", .kind = MAPP_OPT_CHOICE, .dest = &args.init, .choices = STENCIL_INIT_CHOICES,
     .help = "initial state: a depth bump at rest, a flat state at rest, a geostrophically balanced bump "
             "(shallow-water); a tracer bump, a constant tracer (vertical); smooth waves, bump only (a program "
             "without its own physics)", .changes = MAPP_CHANGES_ANSWER},
    {.name = "amplitude", .kind = MAPP_OPT_DOUBLE, .dest = &args.amplitude, .dmin = -10, .dmax = 10,
     .help = "bump height as a fraction of the mean depth", .changes = MAPP_CHANGES_ANSWER},
    {.name = "cfl", .kind = MAPP_OPT_DOUBLE, .dest = &args.cfl, .dmin = 1e-6, .dmax = 100,
     .help = "gravity-wave Courant number of the time step", .changes = MAPP_CHANGES_ANSWER},
    {.name = "cache", .kind = MAPP_OPT_STRING, .dest = &args.cache,
     .default_text = "$MAPP_CACHE_DIR/stencil or .mapp-cache/stencil",
     .help = "folder of the generated-program cache (orchestrated modes)"},
    {.name = "check", .kind = MAPP_OPT_CALLBACK, .dest = &args.debug, .parse = parse_check,
     .choices = "nan|negative=FIELD[,FIELD]", .default_text = "none",
     .help = "debug pass: after every stencil check each written field (repeatable)"},
    {.name = "trace", .kind = MAPP_OPT_CALLBACK, .dest = &args.debug, .parse = parse_trace, .choices = "I,J",
     .default_text = "none", .help = "debug pass: print every written field at global cell I,J after each stencil"},
    {.name = "progress", .kind = MAPP_OPT_FLAG, .dest = &args.debug.progress,
     .help = "debug pass: print each stencil as it runs"},
    MAPP_OPTION_END,
};

/* --min-time repeats the timed steps from the initial state; refused where
 * a repetition would not be the same run again. */
static int check_min_time(const mapp_run *run, const stencil_config *c) {
  if (!(run->common.min_time > 0)) return MAPP_OK;
  if (c->mode == STENCIL_MODE_BUILD)
    return mapp_fail(MAPP_ERR_INPUT, "--min-time with --mode build: a build runs no step, so there is nothing to time");
  if (c->debug.trace || c->debug.progress)
    return mapp_fail(MAPP_ERR_INPUT, "--min-time with --%s: the debug pass prints every step, and each repeated "
                                     "iteration would print its steps again",
                     c->debug.trace ? "trace" : "progress");
  return MAPP_OK;
}

static int setup(mapp_run *run, void **state) {
  stencil_config c;
  stencil_config_defaults(&c);
  c.nx = args.nx;
  c.ny = args.ny;
  c.nz = args.nz;
  c.steps = run->common.steps;
  c.program = args.program;
  c.mode = (stencil_mode)run->variant->kind;
  c.backend = run->backend;
  c.amplitude = args.amplitude;
  c.cfl = args.cfl;
  c.debug = args.debug;
  c.init = !strcmp(args.init, "rest") ? STENCIL_INIT_REST
           : !strcmp(args.init, "geostrophic") ? STENCIL_INIT_GEOSTROPHIC
           : !strcmp(args.init, "constant")    ? STENCIL_INIT_CONSTANT
                                               : STENCIL_INIT_BUMP;
  if (args.cache) c.cache_dir = args.cache;
  if (c.mode == STENCIL_MODE_BUILD && run->common.output)
    return mapp_fail(MAPP_ERR_INPUT, "--output with --mode build: a build runs no step, so it has no answer to write");
  MAPP_TRY(check_min_time(run, &c));
  if (strcmp(args.layout, "auto")) {
    int used = 0;
    if (sscanf(args.layout, "%dx%d%n", &c.px, &c.py, &used) != 2 || args.layout[used] || c.px < 1 || c.py < 1)
      return mapp_fail(MAPP_ERR_INPUT, "--layout: '%s' is not PXxPY (for example 2x2)", args.layout);
  }
  if (c.px && mapp_run_weak_ranks(run) != run->mpi.nranks)
    return mapp_fail(MAPP_ERR_INPUT, "--layout %s with --weak-ranks %d: the layout is of the ranks that run (%d), "
                     "so it cannot also say how the problem of %d ranks is laid out",
                     args.layout, mapp_run_weak_ranks(run), run->mpi.nranks, mapp_run_weak_ranks(run));
  if (!strcmp(run->common.scaling, "weak")) {
    int dims[2] = {c.py, c.px};
    if (!c.px) MPI_Dims_create(mapp_run_weak_ranks(run), 2, dims);
    c.nx *= dims[1], c.ny *= dims[0];
  }
  if (args.cache && c.mode == STENCIL_MODE_EAGER)
    return mapp_fail(MAPP_ERR_INPUT, "--cache applies to the orchestrated modes (build, build-and-run, run), not eager");
  /* Every field of the step over the whole grid (with its 3-cell halos):
   * refused here, naming the bytes, before MPI or the allocator fail on it. */
  size_t cells, bytes;
  static st_program program; /* a few KB: not on the stack */
  MAPP_TRY(st_program_make(&program, c.program, NULL));
  bool levels = false;
  for (int f = 0; f < program.nfields; ++f) levels |= program.fields[f].dims == 3;
  MAPP_TRY(mapp_size_mul((size_t)(c.nx + 6), (size_t)(c.ny + 6), &cells, "the stencil grid's cells"));
  MAPP_TRY(mapp_size_mul(cells, levels ? (size_t)c.nz : 1, &cells, "the stencil grid's cells"));
  MAPP_TRY(mapp_size_mul(cells, (size_t)program.nfields * sizeof(double), &bytes, "the stencil fields"));
  MAPP_TRY(mapp_size_fits_memory(bytes, "the stencil fields"));
  run->custom_case |= c.drop != NULL; /* a planted fault changes the step list */
  stencil_state *s = NULL;
  int status = stencil_state_create(run->mpi.comm, &c, &s);
  *state = s;
  MAPP_TRY(status);
  return stencil_prepare(s);
}

static const mapp_app app = {
    .name = "stencil",
    .summary = "A stencil program (--program; the default, a shallow-water step on a staggered grid in\n"
               "the spirit of FV3's c_sw/d_sw, has 27 stencil calls) run one call at a time (eager), or\n"
               "generated as one program per code-path class, compiled, cached and loaded (build,\n"
               "build-and-run, run). --mode is --variant. The generated programs are compiled with the\n"
               "configured compiler and flags; environment: MAPP_STENCIL_CC (another compiler),\n"
               "MAPP_STENCIL_CFLAGS (extra flags), MAPP_CACHE_DIR.",
    .variants = stencil_variants,
    .options = options,
    .presets = MAPP_PRESETS(stencil_presets),
    .preset_steps = MAPP_PRESET_LONG(stencil_preset, steps),
    .bitwise_variants = true,
    .bitwise_ranks = true,
    .fom_name = "cell-updates/s",
    .headline = &stencil_headline,
    .setup = setup,
    .compute = stencil_hook_compute,
    .reset = stencil_hook_reset,
    .digest = stencil_hook_digest,
    .verify = stencil_hook_verify,
    .describe = stencil_hook_describe,
    .write = stencil_hook_write,
    .destroy = stencil_hook_destroy,
};

int main(int argc, char **argv) {
  /* --mode MODE (the seed's FV3_DACEMODE) is another name for --variant */
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--mode")) argv[i] = "--variant";
    else if (!strncmp(argv[i], "--mode=", 7)) {
      static char buf[256];
      snprintf(buf, sizeof buf, "--variant=%s", argv[i] + 7);
      argv[i] = buf;
    }
  }
  return mapp_app_main(&app, argc, argv);
}
