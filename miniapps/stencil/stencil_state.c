/* State of a stencil program: decomposition, initial conditions (its physics),
 * preparing a mode (eager kernels, or the distributed build and load of the
 * generated program), the step, and diagnostics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"

const stencil_preset stencil_presets[4] = {
    {"tiny", 24, 24, 20, 8},
    {"small", 96, 96, 50, 20},     /* Pace's 48 x 48 per rank on 2 x 2 */
    {"medium", 384, 384, 20, 40},
    {"large", 1024, 1024, 10, 80}, /* FV3's 79-80 levels */
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

void stencil_config_defaults(stencil_config *c) {
  *c = (stencil_config){.program = st_programs[0].name, .nx = 24, .nz = 8, .ny = 24, .steps = 20, .init = STENCIL_INIT_BUMP, .amplitude = 0.1, .cfl = 0.3,
                        .mode = STENCIL_MODE_EAGER, .backend = MAPP_BACKEND_SERIAL};
  stencil_config_read_env(c); /* before the options, which override it (--cache) */
}

/* ------------------------------------------------------------ debug passes */

bool stencil_debug_any(const stencil_debug *d) {
  bool any = d->nan || d->trace || d->progress;
  for (int f = 0; f < ST_MAX_FIELDS; ++f) any |= d->negative[f];
  return any;
}

void stencil_debug_describe(const stencil_debug *d, const st_program *p, char *buf, size_t len) {
  buf[0] = '\0';
  size_t used = 0;
#define APPEND(...) used += (size_t)snprintf(buf + used, used < len ? len - used : 0, __VA_ARGS__)
  if (d->nan) APPEND("%snan", used ? "," : "");
  for (int f = 0; f < p->nfields; ++f)
    if (d->negative[f]) APPEND("%snegative=%s", used ? "," : "", p->fields[f].name);
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
  if (strspn(value + 9, ",") == strlen(value + 9)) return mapp_fail(MAPP_ERR_INPUT, "--check negative= names no field");
  size_t used = strlen(d->negative_names);
  if (used + strlen(value + 9) + 2 > sizeof d->negative_names)
    return mapp_fail(MAPP_ERR_INPUT, "--check negative=: too many fields");
  snprintf(d->negative_names + used, sizeof d->negative_names - used, "%s%s", used ? "," : "", value + 9);
  return MAPP_OK;
}

int stencil_debug_resolve(stencil_debug *d, const st_program *p) {
  char names[sizeof d->negative_names];
  snprintf(names, sizeof names, "%s", d->negative_names);
  memset(d->negative, 0, sizeof d->negative);
  char *save = NULL;
  for (char *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int f = st_field_find(p, tok);
    if (f < 0) {
      char known[1024] = "";
      for (int g = 0, used = 0; g < p->nfields && used < (int)sizeof known; ++g)
        used += snprintf(known + used, sizeof known - (size_t)used, "%s%s", g ? ", " : "", p->fields[g].name);
      return mapp_fail(MAPP_ERR_INPUT, "--check negative=: unknown field '%s' (fields of program %s: %s)", tok, p->name,
                       known);
    }
    d->negative[f] = true;
  }
  return MAPP_OK;
}

/* ------------------------------------------------------------ set-up */

#ifdef MAPP_HAVE_CUDA
int stencil_managed_alloc(double **out, size_t count);
void stencil_managed_free(void *p);
#endif

void stencil_field_first_touch(const stencil_state *s, double *x) {
  const long rows = s->args.ly + 2 * ST_HALO, stride = s->args.stride, plane = s->args.plane, nz = s->args.nz;
#pragma omp parallel for schedule(static)
  for (long j = 0; j < rows; ++j)
    for (long kz = 0; kz < nz; ++kz) memset(x + kz * plane + j * stride, 0, (size_t)stride * sizeof(double));
}

/* A zeroed field: managed memory for the CUDA program, else host memory,
 * first-touched at set-up. */
static int field_alloc(const stencil_state *s, double **out, const char *what) {
#ifdef MAPP_HAVE_CUDA
  if (s->cfg.backend == MAPP_BACKEND_CUDA)
    return stencil_managed_alloc(out, s->field_elems)
               ? mapp_fail(MAPP_ERR_SYSTEM, "cudaMallocManaged of %zu doubles for the %s failed", s->field_elems, what)
               : MAPP_OK;
#endif
  MAPP_TRY(mapp_calloc((void **)out, s->field_elems, sizeof(double), what));
  stencil_field_first_touch(s, *out);
  return MAPP_OK;
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

/* Every level of a 3-D field is a padded plane of its own to the exchange. */
static int halo_callback(void *ctx, const int *fields, int n) {
  stencil_state *s = ctx;
  int planes = 0;
  for (int m = 0; m < n; ++m) {
    long levels = s->program.fields[fields[m]].dims == 3 ? s->args.nz : 1;
    for (long kz = 0; kz < levels; ++kz) s->halo_planes[planes++] = s->fields[fields[m]] + kz * s->args.plane;
  }
  return mapp_halo2d_exchange(&s->halo, s->halo_planes, planes);
}

static bool program_is_3d(const st_program *p) {
  for (int f = 0; f < p->nfields; ++f)
    if (p->fields[f].dims == 3) return true;
  return false;
}

/* The program's physics (its own, else the generic one), and an --init it
 * knows. */
static int physics_of(stencil_state *s) {
  static const char *const inits[] = {"bump", "rest", "geostrophic", "constant"};
  const stencil_physics *own = st_program_find(s->program.name)->physics;
  s->physics = own ? own : &stencil_physics_generic;
  const char *init = inits[s->cfg.init];
  char list[64];
  snprintf(list, sizeof list, "|%s|", s->physics->inits);
  char want[32];
  snprintf(want, sizeof want, "|%s|", init);
  if (!strstr(list, want))
    return mapp_fail(MAPP_ERR_INPUT, "--init %s: program %s starts from %s", init, s->program.name, s->physics->inits);
  return MAPP_OK;
}

double *stencil_state_field(stencil_state *s, const char *name) {
  int f = st_field_find(&s->program, name);
  return f >= 0 && f < s->program.nstate ? s->state_fields[f] : NULL;
}

int stencil_reduce(stencil_state *s, MPI_Op op, double (*value)(const stencil_state *, long), double *out) {
  const stencil_args *a = &s->args;
  double local = 0.0;
  for (long kz = 0; kz < a->nz; ++kz)
    for (long j = 0; j < a->ly; ++j)
      for (long i = 0; i < a->lx; ++i) {
        double x = value(s, a->origin + kz * a->plane + j * a->stride + i);
        if (op == MPI_SUM) local += x;
        else if (!(x <= local)) local = x; /* NaN wins */
      }
  MAPP_MPI(MPI_Allreduce(&local, out, 1, MPI_DOUBLE, op, s->comm));
  return MAPP_OK;
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
  MAPP_TRY(st_program_make(&s->program, cfg->program, cfg->drop));
  MAPP_TRY(stencil_debug_resolve(&s->cfg.debug, &s->program));
  MAPP_TRY(physics_of(s));
  long stride = d->local[1] + 2 * ST_HALO, plane = (d->local[0] + 2 * ST_HALO) * stride;
  long nz = program_is_3d(&s->program) ? cfg->nz : 1;
  if (nz < ST_NZ_MIN && program_is_3d(&s->program))
    return mapp_fail(MAPP_ERR_INPUT, "--nz %ld: program %s needs at least %d levels", nz, s->program.name, ST_NZ_MIN);
  s->args = (stencil_args){.nx = cfg->nx, .ny = cfg->ny, .lx = d->local[1], .ly = d->local[0],
                           .i0 = d->range[1].first, .j0 = d->range[0].first, .stride = stride,
                           .origin = ST_HALO * stride + ST_HALO, .nz = nz, .plane = plane};
  s->physics->arguments(s);
  s->cls = st_class_of(s->args.i0, s->args.lx, s->args.nx, s->args.j0, s->args.ly, s->args.ny);
  s->field_elems = (size_t)plane * (size_t)nz;
  for (int f = 0; f < s->program.nstate; ++f) {
    MAPP_TRY(field_alloc(s, &s->state_fields[f], "state field"));
    s->fields[f] = s->state_fields[f];
  }
  MAPP_TRY(mapp_calloc((void **)&s->initial, s->field_elems, sizeof(double), "initial state"));
  MAPP_TRY(mapp_calloc((void **)&s->halo_planes, (size_t)(ST_MAX_FIELDS * nz), sizeof(double *), "halo planes"));
  s->hooks = (stencil_hooks){.halo = halo_callback, .halo_ctx = s, .trace_gi = cfg->debug.trace_i,
                             .trace_gj = cfg->debug.trace_j, .progress_rank0 = s->rank == 0, .out = stdout};
  if (cfg->debug.trace && (cfg->debug.trace_i < 0 || cfg->debug.trace_i >= cfg->nx || cfg->debug.trace_j < 0 ||
                           cfg->debug.trace_j >= cfg->ny))
    return mapp_fail(MAPP_ERR_INPUT, "--trace %ld,%ld is outside the %ld x %ld domain", cfg->debug.trace_i,
                     cfg->debug.trace_j, cfg->nx, cfg->ny);
  MAPP_TRY(s->physics->initialise(s));
  memcpy(s->initial, s->state_fields[0], s->field_elems * sizeof(double));
  return MAPP_OK;
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
  stencil_debug_describe(&c->debug, &s->program, debug, sizeof debug);
  int status = stencil_generate(&s->program, &s->plan, c->backend, &c->debug, &source);
  if (status == MAPP_OK && class_rank == 0)
    status = stencil_key_make(&c->toolchain, &s->program, source, s->cls, c->backend, debug, &s->key);
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
  if (s->loaded.nfields != s->program.nfields || s->loaded.nslots > ST_MAX_FIELDS)
    return mapp_fail(MAPP_ERR_INPUT, "cache entry %s holds a program of %d fields, not %d", s->loaded.entry,
                     s->loaded.nfields, s->program.nfields);
  for (int k = 0; k < s->loaded.nslots; ++k)
    MAPP_TRY(field_alloc(s, &s->slots[k], "pooled temporary"));
  for (int f = s->program.nstate; f < s->program.nfields; ++f)
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
  for (int f = 0; f < ST_MAX_FIELDS; ++f) checks |= s->cfg.debug.negative[f];
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

/* Zeros, as field_alloc left them: every state field (halos included) and
 * the orchestrated program's pooled temporaries. The eager pool is
 * malloc'd, not zeroed, at setup: zeroed here, so no iteration sees the
 * previous one's temporaries (a step that read a temporary before writing
 * it would then answer differently on its first iteration, which the
 * driver's digests catch). */
static void zero_arrays(stencil_state *s) {
  size_t bytes = s->field_elems * sizeof(double);
  for (int f = 0; f < s->program.nstate; ++f) memset(s->state_fields[f], 0, bytes);
  for (int k = 0; k < s->loaded.nslots; ++k) memset(s->slots[k], 0, bytes);
  if (s->pool.base) memset(s->pool.base, 0, s->pool.capacity);
}

int stencil_state_restart(stencil_state *s) {
  zero_arrays(s);
  s->steps_done = 0;
  s->hooks.step = 0;
  memset(&s->hooks.failure, 0, sizeof s->hooks.failure);
  s->eager_calls = s->eager_exchanges = 0;
  return s->physics->initialise(s);
}

void stencil_state_destroy(stencil_state *s) {
  if (!s) return;
  stencil_eager_free(s);
  stencil_loaded_close(&s->loaded);
  for (int k = 0; k < ST_MAX_FIELDS; ++k) field_free(s, s->slots[k]);
  for (int f = 0; f < ST_MAX_FIELDS; ++f) field_free(s, s->state_fields[f]);
  free(s->initial);
  free(s->halo_planes);
  if (s->have_halo) mapp_halo2d_free(&s->halo);
  if (s->have_decomp) mapp_decomp2d_free(&s->decomp);
  free(s);
}

/* ------------------------------------------------------------ diagnostics */
