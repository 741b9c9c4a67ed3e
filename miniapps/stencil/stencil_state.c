/* State of the shallow-water model: decomposition, initial conditions,
 * preparing a mode (eager kernels, or the distributed build and load of the
 * generated program), the step, and diagnostics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"

const stencil_preset stencil_presets[4] = {
    {"tiny", 24, 24, 20},
    {"small", 96, 96, 50},     /* Pace's 48 x 48 per rank on 2 x 2 */
    {"medium", 384, 384, 20},
    {"large", 1024, 1024, 10},
};

const mapp_variant_info stencil_variants[] = {
    {.name = "eager", .backends = MAPP_BACKENDS_CPU, .mpi_threads = MAPP_MPI_FUNNELED,
     .description = "walk the step's list: one compiled stencil per call, halo exchanges and regions at run time",
     .kind = STENCIL_MODE_EAGER},
    {.name = "build", .backends = MAPP_BACKENDS_CPU | MAPP_BACKEND_BIT(CUDA), .mpi_threads = MAPP_MPI_FUNNELED,
     .description = "generate the step as one program per code-path class, compile it into the cache, exit",
     .kind = STENCIL_MODE_BUILD, .not_alone = true /* writes no answer */},
    {.name = "build-and-run", .backends = MAPP_BACKENDS_CPU | MAPP_BACKEND_BIT(CUDA),
     .mpi_threads = MAPP_MPI_FUNNELED,
     .description = "build what is missing or stale (one rank per class), load the cached program and run it",
     .kind = STENCIL_MODE_BUILD_AND_RUN},
    {.name = "run", .backends = MAPP_BACKENDS_CPU | MAPP_BACKEND_BIT(CUDA), .mpi_threads = MAPP_MPI_FUNNELED,
     .description = "load the cached program and run it; refuse a missing or stale entry, naming what differs",
     .kind = STENCIL_MODE_RUN, .not_alone = true /* needs a cache built first */},
    {0},
};

/* Physical constants of the test case. */
#define MEAN_DEPTH 100.0 /* m */
#define GRAVITY 9.81
#define SPACING 1.0e5 /* m */
#define F0 1.0e-4
#define BETA 2.0e-12
#define DAMPING 0.02 /* nu dt / dx^2 */

void stencil_config_defaults(stencil_config *c) {
  *c = (stencil_config){.nx = 24, .ny = 24, .steps = 20, .init = STENCIL_INIT_BUMP, .amplitude = 0.1, .cfl = 0.3,
                        .mode = STENCIL_MODE_EAGER, .backend = MAPP_BACKEND_SERIAL};
  c->cache_dir = stencil_cache_default();
}

/* ------------------------------------------------------------ debug passes */

bool stencil_debug_any(const stencil_debug *d) {
  bool any = d->nan || d->trace || d->progress;
  for (int f = 0; f < ST_NFIELDS; ++f) any |= d->negative[f];
  return any;
}

void stencil_debug_describe(const stencil_debug *d, char *buf, size_t len) {
  buf[0] = '\0';
  size_t used = 0;
#define APPEND(...) used += (size_t)snprintf(buf + used, used < len ? len - used : 0, __VA_ARGS__)
  if (d->nan) APPEND("%snan", used ? "," : "");
  for (int f = 0; f < ST_NFIELDS; ++f)
    if (d->negative[f]) APPEND("%snegative=%s", used ? "," : "", st_field_names[f]);
  if (d->trace) APPEND("%strace", used ? "," : "");
  if (d->progress) APPEND("%sprogress", used ? "," : "");
  if (!used) APPEND("none");
#undef APPEND
}

int stencil_debug_parse_check(stencil_debug *d, const char *value) {
  if (!strcmp(value, "nan")) {
    d->nan = true;
    return MAPP_OK;
  }
  if (strncmp(value, "negative=", 9) != 0)
    return mapp_fail(MAPP_ERR_INPUT, "--check: '%s' is neither nan nor negative=FIELD[,FIELD...]", value);
  char names[512];
  snprintf(names, sizeof names, "%s", value + 9);
  char *save = NULL;
  int n = 0;
  for (char *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save), ++n) {
    int f = st_field_find(tok);
    if (f < 0)
      return mapp_fail(MAPP_ERR_INPUT, "--check negative=: unknown field '%s' (fields: h, u, v and the temporaries, e.g. div, pv)",
                       tok);
    d->negative[f] = true;
  }
  if (!n) return mapp_fail(MAPP_ERR_INPUT, "--check negative= names no field");
  return MAPP_OK;
}

/* ------------------------------------------------------------ set-up */

#ifdef MAPP_HAVE_CUDA
int stencil_managed_alloc(double **out, size_t count);
void stencil_managed_free(void *p);
#endif

/* A zeroed field: managed memory for the CUDA program, else host memory. */
static int field_alloc(const stencil_state *s, double **out, const char *what) {
#ifdef MAPP_HAVE_CUDA
  if (s->cfg.backend == MAPP_BACKEND_CUDA)
    return stencil_managed_alloc(out, s->field_elems)
               ? mapp_fail(MAPP_ERR_SYSTEM, "cudaMallocManaged of %zu doubles for the %s failed", s->field_elems, what)
               : MAPP_OK;
#endif
  return mapp_calloc((void **)out, s->field_elems, sizeof(double), what);
}

static void field_free(const stencil_state *s, double *p) {
#ifdef MAPP_HAVE_CUDA
  if (s->cfg.backend == MAPP_BACKEND_CUDA) {
    stencil_managed_free(p);
    return;
  }
#endif
  (void)s;
  free(p);
}

static int halo_callback(void *ctx, const int *fields, int n) {
  stencil_state *s = ctx;
  double *ptr[ST_NFIELDS];
  for (int m = 0; m < n; ++m) ptr[m] = s->fields[fields[m]];
  return mapp_halo2d_exchange(&s->halo, ptr, n);
}

/* The analytic depth of the bump (global coordinates in cells). */
static double bump_depth(const stencil_config *c, double x, double y) {
  double cx = 0.5 * (double)c->nx, cy = 0.5 * (double)c->ny;
  double sigma = 0.1 * (double)(c->nx < c->ny ? c->nx : c->ny);
  double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
  return MEAN_DEPTH * (1.0 + c->amplitude * exp(-0.5 * r2 / (sigma * sigma)));
}

static double coriolis_at(const stencil_args *a, double y_cells) {
  return a->f0 + a->beta * (y_cells - 0.5 * (double)a->ny) * a->dy;
}

/* Initial state from global indices only, so any layout starts the same. */
static void initialise(stencil_state *s) {
  const stencil_config *c = &s->cfg;
  const stencil_args *a = &s->args;
  double *h = s->state_fields[ST_F_H], *u = s->state_fields[ST_F_U], *v = s->state_fields[ST_F_V];
  for (long j = 0; j < a->ly; ++j)
    for (long i = 0; i < a->lx; ++i) {
      long k = a->origin + j * a->stride + i, gi = a->i0 + i, gj = a->j0 + j;
      double x = (double)gi + 0.5, y = (double)gj + 0.5; /* cell centre, in cells */
      h[k] = c->init == STENCIL_INIT_REST ? MEAN_DEPTH : bump_depth(c, x, y);
      u[k] = v[k] = 0.0;
      if (c->init == STENCIL_INIT_GEOSTROPHIC) {
        /* f u = -g dh/dy on the west face, f v = g dh/dx on the south face */
        double xw = (double)gi, ys = (double)gj;
        double dhdy = (bump_depth(c, xw, y + 0.5) - bump_depth(c, xw, y - 0.5)) / a->dy;
        double dhdx = (bump_depth(c, x + 0.5, ys) - bump_depth(c, x - 0.5, ys)) / a->dx;
        u[k] = gi == 0 ? 0.0 : -a->g * dhdy / coriolis_at(a, y);
        v[k] = gj == 0 ? 0.0 : a->g * dhdx / coriolis_at(a, ys);
      }
    }
  /* test hook: a NaN in the initial wind, for the --check nan test */
  const char *brk = getenv("MAPP_STENCIL_BREAK");
  if (brk && !strcmp(brk, "nan") && s->cfg.nx / 2 >= a->i0 && s->cfg.nx / 2 < a->i0 + a->lx &&
      s->cfg.ny / 2 >= a->j0 && s->cfg.ny / 2 < a->j0 + a->ly)
    u[a->origin + (s->cfg.ny / 2 - a->j0) * a->stride + (s->cfg.nx / 2 - a->i0)] = NAN;
  memcpy(s->initial_h, h, s->field_elems * sizeof(double));
}

static int parse_layout_check(const stencil_config *c, int nranks) {
  if (c->px || c->py) {
    if (c->px * c->py != nranks)
      return mapp_fail(MAPP_ERR_INPUT, "--layout %dx%d needs %d ranks, not %d", c->px, c->py, c->px * c->py, nranks);
  }
  return MAPP_OK;
}

int stencil_state_create(MPI_Comm comm, const stencil_config *cfg, stencil_state **out) {
  stencil_state *s = NULL;
  MAPP_TRY(mapp_calloc((void **)&s, 1, sizeof *s, "stencil state"));
  *out = s;
  s->cfg = *cfg;
  s->comm = comm;
  MAPP_MPI(MPI_Comm_rank(comm, &s->rank));
  MAPP_MPI(MPI_Comm_size(comm, &s->nranks));
  MAPP_TRY(parse_layout_check(cfg, s->nranks));
  int dims[2] = {cfg->py, cfg->px}; /* rows (y) first */
  if (dims[0] == 0 && dims[1] == 0) {
    MAPP_MPI(MPI_Dims_create(s->nranks, 2, dims));
    if (cfg->nx > cfg->ny && dims[1] < dims[0]) { int t = dims[0]; dims[0] = dims[1]; dims[1] = t; }
  }
  if (cfg->nx < (long)dims[1] * ST_HALO || cfg->ny < (long)dims[0] * ST_HALO)
    return mapp_fail(MAPP_ERR_INPUT, "a %ld x %ld grid on a %dx%d layout leaves a rank under %d cells across", cfg->nx,
                     cfg->ny, dims[1], dims[0], ST_HALO);
  const bool periodic[2] = {false, false};
  MAPP_TRY(mapp_decomp2d_create_dims(comm, cfg->ny, cfg->nx, ST_HALO, periodic, dims, &s->decomp));
  s->have_decomp = true;
  MAPP_TRY(mapp_halo2d_init(&s->halo, &s->decomp));
  s->have_halo = true;
  const mapp_decomp2d *d = &s->decomp;
  long stride = d->local[1] + 2 * ST_HALO;
  double c = sqrt(GRAVITY * MEAN_DEPTH);
  s->args = (stencil_args){.nx = cfg->nx, .ny = cfg->ny, .lx = d->local[1], .ly = d->local[0],
                           .i0 = d->range[1].first, .j0 = d->range[0].first, .stride = stride,
                           .origin = ST_HALO * stride + ST_HALO, .dx = SPACING, .dy = SPACING,
                           .dt = cfg->cfl * SPACING / c, .g = GRAVITY, .f0 = F0, .beta = BETA};
  s->args.nu = DAMPING * SPACING * SPACING / s->args.dt;
  s->args.rdx = 1.0 / s->args.dx;
  s->args.rdy = 1.0 / s->args.dy;
  s->cls = st_class_of(s->args.i0, s->args.lx, s->args.nx, s->args.j0, s->args.ly, s->args.ny);
  s->field_elems = (size_t)(d->local[0] + 2 * ST_HALO) * (size_t)stride;
  MAPP_TRY(st_program_build(&s->program, cfg->drop));
  for (int f = 0; f < ST_NSTATE; ++f) {
    MAPP_TRY(field_alloc(s, &s->state_fields[f], "state field"));
    s->fields[f] = s->state_fields[f];
  }
  MAPP_TRY(mapp_calloc((void **)&s->initial_h, s->field_elems, sizeof(double), "initial depth"));
  s->hooks = (stencil_hooks){.halo = halo_callback, .halo_ctx = s, .trace_gi = cfg->debug.trace_i,
                             .trace_gj = cfg->debug.trace_j, .progress_rank0 = s->rank == 0, .out = stdout};
  if (cfg->debug.trace && (cfg->debug.trace_i < 0 || cfg->debug.trace_i >= cfg->nx || cfg->debug.trace_j < 0 ||
                           cfg->debug.trace_j >= cfg->ny))
    return mapp_fail(MAPP_ERR_INPUT, "--trace %ld,%ld is outside the %ld x %ld domain", cfg->debug.trace_i,
                     cfg->debug.trace_j, cfg->nx, cfg->ny);
  initialise(s);
  return stencil_total_mass(s, &s->mass0);
}

/* ------------------------------------------------------------ orchestrated */

/* Generate, build where needed (one rank per class: the lowest), load. */
static int prepare_orchestrated(stencil_state *s) {
  const stencil_config *c = &s->cfg;
  bool may_build = c->mode != STENCIL_MODE_RUN;
  bool load = c->mode != STENCIL_MODE_BUILD;
  st_plan_level level = stencil_debug_any(&c->debug) ? ST_PLAN_SEPARATE
                        : c->backend == MAPP_BACKEND_SERIAL ? ST_PLAN_ROWS /* a row sweep is one thread's */
                                                            : ST_PLAN_FUSED;
  MAPP_TRY(st_plan_make(&s->program, s->cls, level, &s->plan));
  MPI_Comm class_comm;
  MAPP_MPI(MPI_Comm_split(s->comm, s->cls, s->rank, &class_comm));
  int class_rank;
  MPI_Comm_rank(class_comm, &class_rank);
  char *source = NULL, debug[256];
  stencil_debug_describe(&c->debug, debug, sizeof debug);
  int status = stencil_generate(&s->program, &s->plan, c->backend, &c->debug, &source);
  if (status == MAPP_OK && class_rank == 0) status = stencil_key_make(source, s->cls, c->backend, debug, &s->key);
  if (status == MAPP_OK && class_rank == 0 && (load || may_build))
    status = stencil_cache_get(c->cache_dir, &s->key, source, may_build, load, &s->loaded, &s->cache);
  /* the others wait for their class's builder, then load its entry */
  int leader_status = status;
  MPI_Bcast(&leader_status, 1, MPI_INT, 0, class_comm);
  MPI_Bcast(&s->key, (int)sizeof s->key, MPI_BYTE, 0, class_comm);
  if (class_rank != 0) {
    if (leader_status != MAPP_OK)
      status = mapp_fail(leader_status, "the builder of this rank's class failed");
    else if (load)
      status = stencil_cache_get(c->cache_dir, &s->key, source, false, true, &s->loaded, &s->cache);
  }
  free(source);
  MPI_Comm_free(&class_comm);
  int built = s->cache.built;
  MPI_Allreduce(&built, &s->builds_total, 1, MPI_INT, MPI_SUM, s->comm);
  MPI_Allreduce(&s->cache.build_s, &s->build_s_max, 1, MPI_DOUBLE, MPI_MAX, s->comm);
  MPI_Allreduce(&s->cache.load_s, &s->load_s_max, 1, MPI_DOUBLE, MPI_MAX, s->comm);
  MAPP_TRY(status);
  if (!load) return MAPP_OK;
  for (int k = 0; k < s->loaded.nslots; ++k)
    MAPP_TRY(field_alloc(s, &s->slots[k], "pooled temporary"));
  for (int f = ST_NSTATE; f < ST_NFIELDS; ++f)
    s->fields[f] = s->loaded.slot[f] >= 0 ? s->slots[s->loaded.slot[f]] : NULL;
  return MAPP_OK;
}

int stencil_prepare(stencil_state *s) {
  if (s->cfg.mode == STENCIL_MODE_EAGER) return stencil_eager_init(s);
  return prepare_orchestrated(s);
}

/* Ranks agree on debug-check failures after every step; the rank that
 * failed names the stencil, field, point and step. */
static int agree_checks(stencil_state *s) {
  int failed = s->hooks.failure.failed, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, s->comm);
  if (!any) return MAPP_OK;
  if (!failed) return STENCIL_STOPPED;
  const stencil_failure *f = &s->hooks.failure;
  if (f->kind == ST_CHECK_NAN)
    return mapp_fail(MAPP_ERR_VERIFY, "check nan failed: stencil %s wrote NaN to field %s at (%ld,%ld) in step %ld",
                     f->stencil, f->field, f->gi, f->gj, s->hooks.step);
  return mapp_fail(MAPP_ERR_VERIFY, "check negative failed: stencil %s wrote %g to field %s at (%ld,%ld) in step %ld",
                   f->stencil, f->value, f->field, f->gi, f->gj, s->hooks.step);
}

int stencil_step(stencil_state *s) {
  s->hooks.step = s->steps_done;
  if (s->cfg.mode == STENCIL_MODE_EAGER) {
    MAPP_TRY(stencil_eager_step(s));
  } else if (s->loaded.step(&s->args, s->fields, &s->hooks) != 0) {
    return mapp_fail(MAPP_ERR_SYSTEM, "the generated step failed in a halo exchange");
  }
  ++s->steps_done;
  bool checks = s->cfg.debug.nan;
  for (int f = 0; f < ST_NFIELDS; ++f) checks |= s->cfg.debug.negative[f];
  return checks ? agree_checks(s) : MAPP_OK;
}

int stencil_run_steps(stencil_state *s, long steps) {
  for (long n = 0; n < steps; ++n) {
    int status = stencil_step(s);
    if (status == STENCIL_STOPPED) return MAPP_OK;
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

void stencil_state_destroy(stencil_state *s) {
  if (!s) return;
  stencil_eager_free(s);
  stencil_loaded_close(&s->loaded);
  for (int k = 0; k < ST_NFIELDS; ++k) field_free(s, s->slots[k]);
  for (int f = 0; f < ST_NSTATE; ++f) field_free(s, s->state_fields[f]);
  free(s->initial_h);
  if (s->have_halo) mapp_halo2d_free(&s->halo);
  if (s->have_decomp) mapp_decomp2d_free(&s->decomp);
  free(s);
}

/* ------------------------------------------------------------ diagnostics */

int stencil_total_mass(stencil_state *s, double *mass) {
  const stencil_args *a = &s->args;
  double local = 0.0;
  for (long j = 0; j < a->ly; ++j)
    for (long i = 0; i < a->lx; ++i) local += s->state_fields[ST_F_H][a->origin + j * a->stride + i];
  local *= a->dx * a->dy;
  MAPP_MPI(MPI_Allreduce(&local, mass, 1, MPI_DOUBLE, MPI_SUM, s->comm));
  return MAPP_OK;
}

static int max_over(stencil_state *s, double (*value)(const stencil_state *, long), double *out) {
  const stencil_args *a = &s->args;
  double local = 0.0;
  for (long j = 0; j < a->ly; ++j)
    for (long i = 0; i < a->lx; ++i) {
      double x = value(s, a->origin + j * a->stride + i);
      if (!(x <= local)) local = x; /* NaN wins */
    }
  MAPP_MPI(MPI_Allreduce(&local, out, 1, MPI_DOUBLE, MPI_MAX, s->comm));
  return MAPP_OK;
}

static double abs_velocity(const stencil_state *s, long k) {
  double u = fabs(s->state_fields[ST_F_U][k]), v = fabs(s->state_fields[ST_F_V][k]);
  return u > v ? u : v;
}
static double depth_change(const stencil_state *s, long k) {
  return fabs(s->state_fields[ST_F_H][k] - s->initial_h[k]);
}

int stencil_max_abs_velocity(stencil_state *s, double *vmax) { return max_over(s, abs_velocity, vmax); }
int stencil_max_depth_change(stencil_state *s, double *change) { return max_over(s, depth_change, change); }
