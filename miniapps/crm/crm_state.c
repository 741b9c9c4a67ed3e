/* The crm problem: presets, grid checks, one rank's state carved from one
 * pool allocation, reference profiles and initial fields from the columns. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "crm.h"
#include "crm_kernel.h"

#define CRM_ZTOP 20000.0 /* m: the model top every preset shares */

/* small is the report's regime (32 CRM columns, little work per instance)
 * and rains, so benchmarks time the microphysics; medium and large are the
 * production CRM (64 x 50). tiny-rain is tiny made to exercise every
 * process: a warm bubble in a shallow (2.88 km), finely layered (60 m)
 * domain rains within its 30 global steps, and both the dynamics' CFL and
 * the rain fall's sub-cycling engage (2 sub-cycles each). caar-2d is the
 * report's 2-D test CRM (8 x 1 x 28) on its test grid (4 x 4 x 6
 * spectral elements of 4 x 4 points: ne4, 866 columns), one CRM a column.
 * caar-node is one node's share at the report's scale (ne30 on 64 nodes
 * and ne120 on 1,024 both have 759.4 columns a node: 760 CRMs, weak
 * scaling keeps them per rank), 32 x 28 CRMs (the report's 28 levels). */
static const crm_preset presets[] = {
    {"tiny", 16, 16, 8, 2, 5, CRM_ZTOP, CRM_PERTURB_NOISE},
    {"tiny-rain", 16, 48, 8, 30, 5, 2880.0, CRM_PERTURB_BUBBLE},
    {"small", 32, 48, 64, 15, 10, 2880.0, CRM_PERTURB_BUBBLE},
    {"medium", 64, 50, 64, 2, 10, CRM_ZTOP, CRM_PERTURB_NOISE},
    {"large", 64, 50, 512, 4, 10, CRM_ZTOP, CRM_PERTURB_NOISE},
    {"caar-2d", 8, 28, 866, 2, 10, CRM_ZTOP, CRM_PERTURB_NOISE},
    {"caar-node", 32, 28, 760, 2, 10, CRM_ZTOP, CRM_PERTURB_NOISE},
};

const mapp_presets crm_presets = {presets, sizeof presets / sizeof presets[0], sizeof presets[0]};

void crm_config_from_preset(const crm_preset *p, crm_config *cfg) {
  *cfg = (crm_config){.nx = p->nx, .nz = p->nz, .instances = p->instances, .steps = p->steps,
                      .crm_steps = p->crm_steps, .dx = 2000.0, .dz = p->ztop / (double)p->nz,
                      .dt = 10.0, .nudge_tau = 3600.0, .forcing = true, .perturb = p->perturb};
}

int crm_config_preset(const char *size, crm_config *cfg) {
  const void *row;
  MAPP_TRY(mapp_preset_find("crm", crm_presets, size, &row));
  crm_config_from_preset(row, cfg);
  return MAPP_OK;
}

double crm_default_dz(long nz) { return CRM_ZTOP / (double)nz; }

int crm_config_check(const crm_config *cfg) {
  if (cfg->instances < 1)
    return mapp_fail(MAPP_ERR_INPUT, "zero instances: a run needs at least one CRM, got %ld", cfg->instances);
  if (cfg->nx < 4 || cfg->nx % 2 != 0)
    return mapp_fail(MAPP_ERR_INPUT,
                     "nx = %ld: the periodic staggered grid and its real FFT need an even nx >= 4", cfg->nx);
  if (cfg->nz < 3) return mapp_fail(MAPP_ERR_INPUT, "nz = %ld: the CRM needs at least 3 levels", cfg->nz);
  if (cfg->nx > (1L << 20) || cfg->nz > (1L << 16))
    return mapp_fail(MAPP_ERR_INPUT, "a %ld x %ld CRM is beyond what the FFT batch can index", cfg->nx, cfg->nz);
  if (!(cfg->dx > 0) || !(cfg->dz > 0) || !(cfg->dt > 0) || !(cfg->nudge_tau > 0))
    return mapp_fail(MAPP_ERR_INPUT, "dx, dz, dt and the nudging time must be positive (got %g, %g, %g, %g)",
                     cfg->dx, cfg->dz, cfg->dt, cfg->nudge_tau);
  if (cfg->steps < 1 || cfg->crm_steps < 1)
    return mapp_fail(MAPP_ERR_INPUT, "steps (%ld) and CRM steps per global step (%ld) must be >= 1",
                     cfg->steps, cfg->crm_steps);
  return MAPP_OK;
}

long crm_rows(long nz) { return (nz + 1 + 3) / 4 * 4; }

/* ---------------------------------------------------------------- layout */

/* One pool block: a destination pointer and its length in doubles. */
typedef struct {
  double **ptr;
  long count;
} crm_block;

enum { CRM_MAX_BLOCKS = 48 };

typedef struct {
  crm_block persistent[CRM_MAX_BLOCKS], advect[CRM_MAX_BLOCKS], pressure[CRM_MAX_BLOCKS];
  int np, na, npr;
} crm_layout;

static void add(crm_block *list, int *n, double **ptr, long count) { list[(*n)++] = (crm_block){ptr, count}; }

/* Fields live all run; the advection and the pressure temporaries are
 * never live together, so they share the pool above the persistent part
 * (mark, carve one set, release, carve the other). */
static void make_layout(crm_state *s, crm_layout *L) {
  crm_view *v = &s->host;
  const crm_grid *g = &s->g;
  long F = g->ninst * g->stride, P = g->ninst * g->rows;
  memset(L, 0, sizeof *L);
  double **fields[] = {&v->u, &v->w, &v->us, &v->ws, &v->qc, &v->tend_u[0], &v->tend_u[1],
                       &v->tend_u[2], &v->tend_w[0], &v->tend_w[1], &v->tend_w[2]};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) add(L->persistent, &L->np, fields[i], F);
  add(L->persistent, &L->np, &v->scal, CRM_NSCALAR * F);
  double **profiles[] = {&v->rho, &v->rhof, &v->pres, &v->exner, &v->zc, &v->source};
  for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; ++i) add(L->persistent, &L->np, profiles[i], P);
  add(L->persistent, &L->np, &v->col, 3 * P);
  add(L->persistent, &L->np, &v->ls, 2 * P);
  add(L->persistent, &L->np, &v->mean, CRM_NMEAN * P);
  add(L->persistent, &L->np, &v->precip, g->ninst * g->nx);
  add(L->persistent, &L->np, &v->lambda, g->nk);
  add(L->persistent, &L->np, &v->lu_c, g->ninst * g->rows * g->nk);
  add(L->persistent, &L->np, &v->lu_inv, g->ninst * g->rows * g->nk);
  double **temps[] = {&v->low, &v->limit, &v->flux_x, &v->flux_z, &v->anti_x, &v->anti_z};
  for (size_t i = 0; i < sizeof temps / sizeof temps[0]; ++i) add(L->advect, &L->na, temps[i], CRM_NSCALAR * F);
  add(L->pressure, &L->npr, &v->phi, F);
  add(L->pressure, &L->npr, &v->spec, 2 * g->ninst * g->cstride);
}

static size_t block_bytes(const crm_block *b, int n) {
  size_t total = 0;
  for (int i = 0; i < n; ++i)
    total += ((size_t)b[i].count * sizeof(double) + MAPP_POOL_ALIGN - 1) / MAPP_POOL_ALIGN * MAPP_POOL_ALIGN;
  return total;
}

static int carve(mapp_pool *pool, const crm_block *b, int n) {
  for (int i = 0; i < n; ++i) {
    MAPP_TRY(mapp_pool_alloc(pool, (size_t)b[i].count * sizeof(double), (void **)b[i].ptr));
    memset(*b[i].ptr, 0, (size_t)b[i].count * sizeof(double));
  }
  return MAPP_OK;
}

/* The pool one rank's state needs: the persistent arrays and the larger of
 * the two scratch phases (they reuse one region). */
static size_t pool_bytes(const crm_state *s) {
  crm_layout L;
  make_layout((crm_state *)s, &L);
  size_t adv = block_bytes(L.advect, L.na), prs = block_bytes(L.pressure, L.npr);
  return block_bytes(L.persistent, L.np) + (adv > prs ? adv : prs);
}

static int allocate(crm_state *s) {
  crm_layout L;
  make_layout(s, &L);
  MAPP_TRY(mapp_pool_init(&s->pool, pool_bytes(s)));
  MAPP_TRY(carve(&s->pool, L.persistent, L.np));
  size_t mark = mapp_pool_mark(&s->pool);
  MAPP_TRY(carve(&s->pool, L.advect, L.na));
  mapp_pool_release(&s->pool, mark);
  return carve(&s->pool, L.pressure, L.npr);
}

/* ---------------------------------------------------------- initial state */

void crm_reference_profile(const double *t, const double *qt, long nz, double dz, double *pres,
                           double *rho, double *exner) {
  double p = CRM_PSFC, tv_prev = 0.0;
  for (long k = 0; k < nz; ++k) {
    double z = (k + 0.5) * dz;
    double tv = (t[k] - CRM_GRAV * z / CRM_CP) * (1.0 + 0.608 * qt[k]);
    /* hydrostatic: surface to the first centre, then centre to centre */
    p *= k == 0 ? exp(-CRM_GRAV * z / (CRM_RD * tv)) : exp(-CRM_GRAV * dz / (CRM_RD * 0.5 * (tv + tv_prev)));
    tv_prev = tv;
    pres[k] = p;
    rho[k] = p / (CRM_RD * tv);
    if (exner) exner[k] = pow(p / CRM_P00, CRM_RD / CRM_CP);
  }
}

/* Uniform in [-1, 1) from a 64-bit key (splitmix64): the perturbations
 * depend on the global column index, never on the rank count. */
double crm_hash_unit(unsigned long long key) {
  uint64_t z = (uint64_t)key + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* Temperature perturbation (K) of cell (k, i) of global CRM gc. */
static double perturbation(const crm_config *cfg, long gc, long k, long i) {
  double z = (k + 0.5) * cfg->dz, x = (i + 0.5) * cfg->dx;
  if (cfg->perturb == CRM_PERTURB_NOISE)
    return z < 1000.0 ? 0.5 * crm_hash_unit(((uint64_t)gc * 65536u + (uint64_t)k) * 1048576u + (uint64_t)i) : 0.0;
  if (cfg->perturb == CRM_PERTURB_BUBBLE) {
    double rx = (x - 0.5 * cfg->nx * cfg->dx) / 4000.0, rz = (z - 2000.0) / 2000.0;
    double r = sqrt(rx * rx + rz * rz), shape = cos(0.5 * CRM_PI * r);
    return r < 1.0 ? 2.0 * shape * shape : 0.0;
  }
  return 0.0;
}

static void init_profiles(crm_state *s, const crm_columns *cols) {
  crm_view *v = &s->host;
  const crm_grid *g = &s->g;
  long M = g->ninst * g->rows;
  for (long c = 0; c < g->ninst; ++c) {
    long p0 = crm_px(g, c, 0);
    const double *t = cols->t + p0, *qt = cols->qt + p0;
    crm_reference_profile(t, qt, g->nz, s->cfg.dz, v->pres + p0, v->rho + p0, v->exner + p0);
    for (long k = 0; k < g->nz; ++k) {
      v->zc[p0 + k] = (k + 0.5) * s->cfg.dz;
      v->rhof[p0 + k] = k > 0 ? 0.5 * (v->rho[p0 + k - 1] + v->rho[p0 + k]) : v->rho[p0];
      v->col[p0 + k] = t[k];
      v->col[M + p0 + k] = qt[k];
      v->col[2 * M + p0 + k] = cols->u[p0 + k];
      v->ls[p0 + k] = cols->t_ls[p0 + k];
      v->ls[M + p0 + k] = cols->qt_ls[p0 + k];
    }
    v->rhof[p0 + g->nz] = v->rho[p0 + g->nz - 1];
  }
}

static void init_fields(crm_state *s) {
  crm_view *v = &s->host;
  const crm_grid *g = &s->g;
  long N = crm_field_size(g), M = g->ninst * g->rows;
  for (long c = 0; c < g->ninst; ++c)
    for (long k = 0; k < g->nz; ++k) {
      long p = crm_px(g, c, k);
      for (long i = 0; i < g->nx; ++i) {
        long n = crm_ix(g, c, k, i);
        v->scal[n] = v->col[p] + perturbation(&s->cfg, s->first + c, k, i) * v->exner[p];
        v->scal[N + n] = v->col[M + p];
        v->u[n] = v->col[2 * M + p];
      }
    }
}

/* The pressure solver's time-invariant parts: eigenvalues of the x second
 * difference (the only cosines) and the Thomas factorisation per mode. */
static void init_poisson(crm_state *s) {
  crm_view *v = &s->host;
  for (long m = 0; m < s->g.nk; ++m) {
    double sn = sin(CRM_PI * (double)m / (double)s->g.nx);
    v->lambda[m] = 4.0 * sn * sn / (s->cfg.dx * s->cfg.dx);
  }
  for (long c = 0; c < s->g.ninst; ++c)
    for (long m = 1; m < s->g.nk; ++m) crm_poisson_factor(v, c, m);
}

/* The counters a run advances: the Adams-Bashforth start-up, the CRM
 * steps done and the worst sub-cycle counts and divergence seen. */
static void reset_counters(crm_state *s) {
  s->ab_order = s->ab_slot = 0;
  s->ab_dt = 0.0;
  s->crm_step = 0;
  s->max_cycles = s->max_fall_cycles = 1;
  s->divergence = 0.0;
  s->launches = s->host_syncs = 0;
  s->host_work_s = 0.0;
}

/* The initial state in arrays that hold zeros: the profiles and fields from
 * the columns, the pressure solver's factorisation. */
static void initial_state(crm_state *s, const crm_columns *cols) {
  init_profiles(s, cols);
  init_fields(s);
  init_poisson(s);
}

long crm_block_size(const crm_exec *exec, long n) {
  long chunk = exec->chunk > 0 ? exec->chunk : exec->variant == CRM_VARIANT_PERCRM ? 1 : n;
  return chunk < n ? chunk : n;
}

/* A state of ninst CRMs from `first` without arrays: the config, the grid
 * and the host view's constants, the counters at their start. */
static int describe_state(const crm_config *cfg, long first, long ninst, crm_state *s) {
  memset(s, 0, sizeof *s);
  MAPP_TRY(crm_config_check(cfg));
  s->cfg = *cfg;
  s->first = first;
  s->g = (crm_grid){.nx = cfg->nx, .nz = cfg->nz, .rows = crm_rows(cfg->nz), .nk = cfg->nx / 2 + 1, .ninst = ninst};
  s->g.stride = s->g.rows * s->g.nx;
  s->g.cstride = s->g.rows * s->g.nk;
  s->host.g = s->g;
  s->host.dx = cfg->dx;
  s->host.dz = cfg->dz;
  s->host.dt = cfg->dt;
  s->host.nudge_tau = cfg->nudge_tau;
  reset_counters(s);
  return MAPP_OK;
}

int crm_state_create(const crm_config *cfg, const crm_columns *cols, const crm_exec *exec, crm_state *s) {
  MAPP_TRY(describe_state(cfg, cols->first, cols->count, s));
  if (cols->nz != cfg->nz || cols->count < 1)
    return mapp_fail(MAPP_ERR_INPUT, "columns have %ld levels and %ld columns; the CRM needs %ld levels",
                     cols->nz, cols->count, cfg->nz);
  s->exec = *exec;
  s->chunk = crm_block_size(exec, s->g.ninst);
  /* A GPU too small for the state is bad input, found before anything is
   * allocated on the host or the device. */
  if (exec->backend == MAPP_BACKEND_CUDA) MAPP_TRY(crm_cuda_check_fits(pool_bytes(s), &s->g));
  MAPP_TRY(allocate(s));
  initial_state(s, cols);
  if (exec->backend == MAPP_BACKEND_CUDA) return crm_cuda_attach(s);
  return crm_cpu_attach(s, exec->backend == MAPP_BACKEND_OMP);
}

int crm_state_charged(const crm_config *cfg, long first, crm_state *s) { return describe_state(cfg, first, 0, s); }

/* The whole pool is zeroed as allocate's carving left it (the scratch
 * arrays too, so no iteration sees the one before's temporaries), then
 * filled as crm_state_create filled it. */
int crm_state_restart(crm_state *s, const crm_columns *cols) {
  if (cols->count != s->g.ninst || cols->nz != s->g.nz)
    return mapp_fail(MAPP_ERR_SYSTEM, "restarting %ld CRMs of %ld levels from %ld columns of %ld levels", s->g.ninst,
                     s->g.nz, cols->count, cols->nz);
  memset(s->pool.base, 0, s->pool.capacity);
  initial_state(s, cols);
  reset_counters(s);
  return s->ops->to_device(s, CRM_SYNC_ALL);
}

void crm_state_free(crm_state *s) {
  if (s->ops && s->ops->release) s->ops->release(s);
  mapp_pool_free(&s->pool);
  s->ops = NULL;
}

/* ------------------------------------------------------------ diagnostics */

void crm_water_budget(const crm_state *s, double *per_instance) {
  const crm_view *v = &s->host;
  const crm_grid *g = &s->g;
  long N = crm_field_size(g);
  for (long c = 0; c < g->ninst; ++c) {
    double total = 0.0;
    for (long k = 0; k < g->nz; ++k) {
      long n = crm_ix(g, c, k, 0), p = crm_px(g, c, k);
      double level = 0.0;
      for (long i = 0; i < g->nx; ++i) level += v->scal[N + n + i] + v->scal[2 * N + n + i];
      total += v->rho[p] * v->dz * level - v->source[p];
    }
    for (long i = 0; i < g->nx; ++i) total += v->precip[c * g->nx + i];
    per_instance[c] = total;
  }
}

double crm_relative_divergence(const crm_state *s) {
  const crm_view *v = &s->host;
  const crm_grid *g = &s->g;
  double worst = 0.0, umax = 0.0, wmax = 0.0;
  for (long c = 0; c < g->ninst; ++c)
    for (long k = 0; k < g->nz; ++k)
      for (long i = 0; i < g->nx; ++i) {
        long n = crm_ix(g, c, k, i);
        worst = fmax(worst, fabs(crm_divergence(v, v->u, v->w, c, k, i)));
        umax = fmax(umax, fabs(v->u[n]));
        wmax = fmax(wmax, fabs(v->w[n]));
      }
  double scale = umax / v->dx + wmax / v->dz;
  return scale > 0.0 ? worst / scale : 0.0;
}

void crm_cloud_water_path(const crm_state *s, double *cwp) {
  const crm_view *v = &s->host;
  const crm_grid *g = &s->g;
  for (long c = 0; c < g->ninst; ++c)
    for (long i = 0; i < g->nx; ++i) {
      double path = 0.0; /* running integral from the surface up */
      for (long k = 0; k < g->nz; ++k) path += v->rho[crm_px(g, c, k)] * v->dz * v->qc[crm_ix(g, c, k, i)];
      cwp[c * g->nx + i] = path;
    }
}

#ifndef MAPP_HAVE_CUDA
/* A build without nvcc: mapp_select_backend refuses cuda before this. */
int crm_cuda_attach(crm_state *s) {
  (void)s;
  return mapp_fail(MAPP_ERR_INPUT, "backend 'cuda' is not built in this build (configure with nvcc on PATH)");
}
int crm_cuda_check_fits(size_t bytes, const crm_grid *g) {
  (void)bytes;
  (void)g;
  return mapp_fail(MAPP_ERR_INPUT, "backend 'cuda' is not built in this build (configure with nvcc on PATH)");
}
#endif
