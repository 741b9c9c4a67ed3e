/* crm: batched cloud-resolving models (the E3SM-MMF CAAR seed). This header
 * is the app's API; main.c is only the command line.
 *
 * Each global-model column carries a small 2-D (x, z) anelastic CRM,
 * periodic in x, rigid lid and surface in z. CRMs never talk to each
 * other. The `percrm` variant runs every loop nest once per instance (the
 * report's "before": too little parallelism per launch); `batched` pushes
 * the instance index inside every loop nest and collapses it with the
 * level and column indices (the report's "after"). Both call the same loop
 * bodies (crm_kernel.h) in the same order per instance, so they agree bit
 * for bit.
 *
 * Layout: every 3-D field is [instance][row][x] with the instance slowest
 * (the report's second port) and `rows` = nz + 1 rounded up to 4, so w's
 * nz + 1 faces fit, each instance starts on a 64-byte boundary, and the
 * real FFT sees a uniform batch of rows on both FFTW and cuFFT. */
#ifndef CRM_H
#define CRM_H

#include <stdbool.h>

#include "mapp.h"

typedef enum { CRM_PERTURB_NOISE, CRM_PERTURB_BUBBLE, CRM_PERTURB_NONE } crm_perturb;
typedef enum { CRM_VARIANT_PERCRM, CRM_VARIANT_BATCHED } crm_variant;
/* cuda: the device's scratch arrays from the one pool allocated at setup,
 * or allocated on entry to each phase and freed on its exit (OpenACC's
 * `enter data create` / `exit data delete` per subroutine, the report's
 * code before its pool). */
typedef enum { CRM_ALLOC_POOL, CRM_ALLOC_PER_PHASE } crm_alloc;
/* cuda: the device copy of the state in device memory or in managed
 * (unified) memory, which the report measured and rejected. */
typedef enum { CRM_MEMORY_DEVICE, CRM_MEMORY_MANAGED } crm_memory;

typedef struct {
  long nx, nz;          /* CRM columns (periodic, even) and levels */
  long instances;       /* CRMs in the whole run */
  long steps;           /* global-model steps */
  long crm_steps;       /* CRM steps per global step */
  double dx, dz, dt;    /* m, m, s */
  double nudge_tau;     /* s: relaxation of the CRM mean toward its column */
  bool forcing;         /* large-scale forcing and nudging on */
  crm_perturb perturb;  /* initial CRM perturbation */
} crm_config;

/* A size preset (the first member is its name, for mapp_preset_find). */
typedef struct {
  const char *name;
  long nx, nz, instances, steps, crm_steps;
  double ztop;          /* m: the model top (dz = ztop / nz) */
  crm_perturb perturb;  /* initial perturbation */
} crm_preset;
extern const mapp_presets crm_presets;
void crm_config_from_preset(const crm_preset *p, crm_config *cfg);
int crm_config_preset(const char *size, crm_config *cfg);
/* Level spacing for nz levels under the presets' 20 km top. */
double crm_default_dz(long nz);
/* How a rank runs its CRMs: nothing here changes an answer on the CPU
 * (chunks only cut the same loop nests into more launches). */
typedef struct {
  crm_variant variant;
  mapp_backend backend;
  long chunk;          /* CRMs a launch covers (PCOLS); 0: the variant's (1 percrm, all batched) */
  bool sync;           /* cuda: synchronise after every launch */
  crm_alloc alloc;     /* cuda */
  crm_memory memory;   /* cuda */
  double host_work_us; /* CPU time per column per global step for the rest of the model */
} crm_exec;
/* Rows per instance of every 3-D field: nz + 1 rounded up to 4. */
long crm_rows(long nz);
/* Input errors for grids the model or the FFT cannot take. */
int crm_config_check(const crm_config *cfg);

/* Geometry of one rank's arrays. */
typedef struct {
  long nx, nz, rows; /* rows = nz + 1 rounded up to 4 */
  long nk;           /* nx / 2 + 1 wavenumbers of the real FFT */
  long stride;       /* doubles per instance of a 3-D field: rows * nx */
  long cstride;      /* complex values per instance of the spectrum: rows * nk */
  long ninst;        /* instances on this rank */
} crm_grid;

/* Global-model columns: the forcing and initial state of each CRM. Each
 * array is [instance][row] with row stride grid.rows. */
typedef struct {
  long count, nz, first; /* columns held, levels, global index of the first */
  double *t, *qt, *u;    /* K (liquid-water static energy / cp), kg/kg, m/s */
  double *t_ls, *qt_ls;  /* large-scale forcing, K/s and kg/kg/s */
} crm_columns;

/* Every array a loop body touches, by value so a CUDA kernel can take it
 * as an argument. Pointers are host or device addresses, never mixed. */
typedef struct {
  crm_grid g;
  double dx, dz, dt, nudge_tau;
  double *u, *w, *us, *ws;   /* velocities, and before the projection */
  double *tend_u[3], *tend_w[3]; /* Adams-Bashforth history, slots rotate */
  double *scal;              /* t, qt, qp: [3][instance][row][x] */
  double *qc;                /* diagnostic cloud water */
  double *low, *limit;       /* scalar advection: low-order field, limiter */
  double *flux_x, *flux_z, *anti_x, *anti_z; /* [3][instance][row][x] */
  double *phi;               /* pressure (kinematic) */
  double *spec;              /* spectrum, complex as (re, im) pairs */
  double *lu_c, *lu_inv;     /* Thomas factorisation per (instance, k, m) */
  double *precip;            /* [instance][x] accumulated surface rain, kg/m^2 */
  /* [instance][row] profiles */
  double *rho, *rhof, *pres, *exner, *zc;
  double *col, *ls;          /* column target t, qt, u; forcing t, qt: [3 or 2][inst][row] */
  double *mean;              /* level means: t, qt, u, qp, theta_rho: [5][inst][row] */
  double *source;            /* [instance][row] water added by forcing, kg/m^2 summed over x */
  double *lambda;            /* [nk] -eigenvalues of the x second difference */
} crm_view;

static inline double *crm_scalar(const crm_view *v, int s) {
  return v->scal + (long)s * v->g.ninst * v->g.stride;
}
enum { CRM_T, CRM_QT, CRM_QP, CRM_NSCALAR };
enum { CRM_MEAN_T, CRM_MEAN_QT, CRM_MEAN_U, CRM_MEAN_QP, CRM_MEAN_THR, CRM_NMEAN };

/* A range of this rank's instances. */
typedef struct {
  long first, count;
} crm_range;

/* Adams-Bashforth weights of the current and two previous tendencies, and
 * which history slot holds each. */
typedef struct {
  double a[3];
  int slot[3];
  double dt;
} crm_ab;

/* What to_host/to_device move: everything, the level means and surface
 * rain (twice per global step), or the column targets. */
enum { CRM_SYNC_ALL, CRM_SYNC_DIAG, CRM_SYNC_COLUMNS };

struct crm_state;
/* One backend: each phase runs its loop nests over the instances in r.
 * Group reductions (CFL, fall speed, the NaN scan) cover all instances. */
typedef struct {
  const char *name;
  int (*forcing)(struct crm_state *s, crm_range r);
  int (*max_cfl)(struct crm_state *s, double *cfl);
  int (*means)(struct crm_state *s, crm_range r);
  int (*momentum)(struct crm_state *s, crm_range r, const crm_ab *ab);
  int (*pressure)(struct crm_state *s, crm_range r, double dt);
  int (*advect)(struct crm_state *s, crm_range r, double dt);
  int (*micro)(struct crm_state *s, crm_range r);
  int (*max_fall_cfl)(struct crm_state *s, double *cfl);
  int (*fall)(struct crm_state *s, crm_range r, int cycles);
  int (*level_means)(struct crm_state *s, crm_range r); /* t, qt, u, qp into mean */
  /* Linear index into the [5][instance][row][x] fields u, w, t, qt, qp of
   * the first non-finite value, or -1. */
  int (*first_nonfinite)(struct crm_state *s, long *where);
  int (*to_host)(struct crm_state *s, int what);   /* device to the host view */
  int (*to_device)(struct crm_state *s, int what); /* host view to the device */
  void (*release)(struct crm_state *s);
} crm_ops;

/* Combines a per-rank group maximum across the group the sub-cycle counts
 * obey (the driver passes an MPI reduction; NULL means this rank alone).
 * The CRM code itself never calls MPI. */
typedef int (*crm_group_max_fn)(void *ctx, double *values, int n);

typedef struct crm_state {
  crm_config cfg;
  crm_grid g;
  long first;          /* global index of this rank's first instance */
  crm_exec exec;
  long chunk;          /* CRMs a block of every phase's loop nests covers (the last block may be less) */
  crm_view host;       /* host arrays (from the pool) */
  mapp_pool pool;
  const crm_ops *ops;
  void *backend;       /* backend-private data (FFTW plans, device view) */
  crm_group_max_fn group_max;
  void *group_ctx;
  int ab_order, ab_slot; /* Adams-Bashforth start-up and rotation */
  double ab_dt;          /* sub-step of the history (a change restarts it) */
  long crm_step;         /* CRM steps done */
  int max_cycles, max_fall_cycles; /* worst sub-cycle counts seen */
  double divergence;     /* worst relative divergence after a projection */
  long launches;         /* cuda: kernels and FFTs issued */
  long host_syncs;       /* cuda: waits of the host for the stream */
  double host_work_s;    /* CPU time spent for --host-work-us */
} crm_state;

/* Allocates one rank's state from a pool sized for it (one allocation per
 * run) and fills it from the columns: reference profiles, the pressure
 * solver's factorisation, the initial CRM fields. */
int crm_state_create(const crm_config *cfg, const crm_columns *cols, const crm_exec *exec, crm_state *s);
void crm_state_free(crm_state *s);
/* A rank whose CRMs are charged, not computed (--sampled-ranks): the
 * config and grid, no instances, no arrays, no backend. */
int crm_state_charged(const crm_config *cfg, long first, crm_state *s);
/* Puts the state back where crm_state_create left it, from the same
 * columns, for a repeated run (--min-time): every array as created, the
 * step counters, and the backend's copy (to_device); the pool, the FFT
 * plans and the device allocation stay as they are. */
int crm_state_restart(crm_state *s, const crm_columns *cols);
/* CRMs a block covers for this rank's n CRMs: the exec's chunk, or the
 * variant's (1 percrm, n batched), never above n. */
long crm_block_size(const crm_exec *exec, long n);
/* The backends crm_state_create attaches: CPU (serial, or OpenMP when
 * parallel) and CUDA (s->exec says sync, alloc and memory). */
int crm_cpu_attach(crm_state *s, bool parallel);
int crm_cuda_attach(crm_state *s);
/* Input error when `bytes` of state on grid g (plus the FFTs' workspace)
 * cannot fit in the free memory of the device this rank uses. */
int crm_cuda_check_fits(size_t bytes, const crm_grid *g);

/* One CRM step of cfg.dt: forcing, sub-cycled dynamics, microphysics with
 * sub-cycled rain fall, NaN guard (a verification failure naming the
 * field, CRM, position and step). */
int crm_step(crm_state *s);
/* One global step: cfg.crm_steps CRM steps; the tendencies (change of the
 * CRM mean minus the large-scale forcing) and the surface rain rate land
 * in `tend` ([3][instance][row]: t, qt, u) and `rain` ([instance], kg/m^2/s). */
int crm_global_step(crm_state *s, double *tend, double *rain);
/* Only the projection, on the current velocities (for tests). */
int crm_project(crm_state *s);

/* Columns: synthetic soundings and their HDF5 form. */
typedef enum { CRM_SOUNDING_TROPICAL, CRM_SOUNDING_DRY_STABLE, CRM_SOUNDING_DRY_NEUTRAL } crm_sounding;
int crm_columns_alloc(crm_columns *c, long count, long nz, long first);
/* A copy of `from` into `to` (allocated here; crm_columns_free frees it). */
int crm_columns_copy(const crm_columns *from, crm_columns *to);
void crm_columns_free(crm_columns *c);
/* Column j (global index first + j) depends on its global index only. */
int crm_columns_synthesize(crm_columns *c, crm_sounding kind, double dz, double wind);
int crm_columns_write(MPI_Comm comm, const char *path, const crm_columns *c, long global_count,
                      double dz);
/* Reads this rank's slab; a file of other level count or column count is
 * an input error naming both. */
int crm_columns_read(MPI_Comm comm, const char *path, long global_count, long nz, crm_columns *c);

/* Hydrostatic reference state of one column (t, qt over nz levels):
 * pressure, density and (when not NULL) the Exner function. */
void crm_reference_profile(const double *t, const double *qt, long nz, double dz, double *pres,
                           double *rho, double *exner);
/* Uniform in [-1, 1) from a key: seeds every perturbation by global index. */
double crm_hash_unit(unsigned long long key);

/* Diagnostics and verification. */
/* Total water per instance: vapour, cloud, rain and what reached the
 * surface, minus what forcing added (kg/m^2 per x-column; host view). */
void crm_water_budget(const crm_state *s, double *per_instance);
/* max |div(rho v)| * dx / max |rho u| over the rank (host view). */
double crm_relative_divergence(const crm_state *s);
/* Column integral of cloud water [instance][x] (prefix sums in z). */
void crm_cloud_water_path(const crm_state *s, double *cwp);
/* Final fields, tendencies and rain to HDF5, one slab per rank; collective. */
/* answered: the instances the file holds (the ranks' slabs from 0; a rank
 * whose CRMs were charged, not computed, writes none of them). */
int crm_write_output(const crm_state *s, MPI_Comm comm, const char *path, const double *tend,
                     const double *rain, long answered, const mapp_record *rec);

/* ------------------------------------------------ crm as a mapp app (crm_app.c) */

/* The variants (percrm, batched): kind is the crm_variant. */
extern const mapp_variant_info crm_variants[];

/* Where simulated years per wall-clock day are stated: the global model's
 * spectral-element cubed sphere neN (4 x 4 points an element, 54 N^2 + 2
 * columns: 6 N^2 elements, each owning 3 x 3 of its points (the rest shared),
 * and 2 for the cube's corners; ne30 48,602) on `nodes` nodes, one CRM a
 * column. */
typedef struct {
  long ne, nodes;
  double columns_per_node;
} crm_sypd_at;
/* "neN/NODES" (e.g. ne30/64); an input error names the text. */
int crm_sypd_parse(const char *text, crm_sypd_at *at);
/* Simulated years per wall-clock day of the CRMs alone if a node ran
 * at.columns_per_node CRMs at `column_steps_per_s` (CRM x-columns x CRM
 * steps a second) with cfg's CRM and steps. */
double crm_sypd(const crm_config *cfg, const crm_sypd_at *at, double column_steps_per_s);

/* The dycore's halo exchanges between global steps (crm_dycore.c). */
typedef struct {
  MPI_Comm comm;
  long exchanges;   /* per global step; 0: none */
  int peer[8];      /* neighbours: 4 edges, then 4 corners */
  long count[8];    /* doubles to each */
  long total;
  double *send, *recv;
} crm_dycore;
int crm_dycore_create(MPI_Comm comm, const crm_sypd_at *at, long exchanges, crm_dycore *d);
int crm_dycore_exchange(crm_dycore *d);
void crm_dycore_free(crm_dycore *d);

/* On a simulated cluster (crm_sim.c): whether this build is the simulated
 * one, the real clock, stopping and resuming SMPI's charging of compute,
 * and a charge of seconds measured here. No-ops elsewhere. */
bool crm_sim_available(void);
double crm_sim_real_now(void);
void crm_sim_pause(void);
void crm_sim_resume(void);
void crm_sim_charge(double seconds);

typedef struct {
  crm_exec exec;        /* variant and backend: the run's */
  bool cycle_group_all; /* sub-cycles from every rank's CRMs, not this task's */
  crm_sypd_at sypd_at;
  long sampled_ranks;   /* simulated: ranks that compute; the others are charged (0: all compute) */
  long dycore_exchanges;
} crm_run_options;

/* One run's state behind the driver's hooks. */
typedef struct {
  crm_state s;
  crm_columns columns;          /* this rank's columns, which the reset hook starts from again */
  double *water0, *tend, *rain; /* budget at the start; last global step's answer */
  crm_run_options opt;
  crm_dycore dycore;
  /* --sampled-ranks: this rank only charges (no CRM state), the charge of
   * each global step (the fastest of the sampled ranks' measured bursts),
   * and the answer's extent (the sampled ranks' CRMs). */
  bool charged;
  double *charge;
  long answered_instances;
} crm_run;

/* The setup hook's work once main.c has the config and this rank's columns. */
int crm_run_create(mapp_run *run, const crm_config *cfg, const crm_columns *cols, const crm_run_options *opt,
                   void **state);
/* name, variants, the run's hooks but setup: main.c copies them. */
extern const mapp_app crm_app_hooks;

#endif
