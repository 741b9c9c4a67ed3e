/* mapp-stencil: a stencil program run stencil by stencil (eager) versus
 * generated as one program, compiled, cached and loaded (the orchestrated
 * modes build, build-and-run, run). Seed:
 * orchestrated-stencil--pace-dace-orchestration-primer.txt.
 *
 * This header is the app's API: configuration, state, the two ways to run a
 * step, the cache, the variant table and the driver hooks. */
#ifndef STENCIL_H
#define STENCIL_H

#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>

#include "mapp.h"
#include "mapp_halo2d.h"
#include "stencil_program.h"

/* The modes are the variants (the seed's FV3_DACEMODE). */
typedef enum {
  STENCIL_MODE_EAGER = 0,     /* Python: walk the list, one compiled stencil at a time */
  STENCIL_MODE_BUILD,         /* Build: generate, compile, cache, exit */
  STENCIL_MODE_BUILD_AND_RUN, /* BuildAndRun: build where stale (one rank per class), run */
  STENCIL_MODE_RUN,           /* Run: load from the cache only; refuse what is missing or stale */
} stencil_mode;

extern const mapp_variant_info stencil_variants[];

typedef struct {
  const char *name;
  long nx, ny; /* global cells (per rank with --scaling weak) */
  long steps;
  long nz;     /* levels of a 3-D program (a 2-D one has 1) */
} stencil_preset;
extern const stencil_preset stencil_presets[4];

typedef enum { STENCIL_INIT_BUMP = 0, STENCIL_INIT_REST, STENCIL_INIT_GEOSTROPHIC, STENCIL_INIT_CONSTANT } stencil_init;
#define STENCIL_INIT_CHOICES "bump|rest|geostrophic|constant"

/* Debug passes (the seed's PACE_DACE_DEBUG): interpreted by eager,
 * generated into the program by the orchestrated modes (part of the key). */
typedef struct {
  bool nan;
  char negative_names[256];        /* --check negative=...: resolved against the program */
  bool negative[ST_MAX_FIELDS];    /* by field, once resolved */
  bool trace;
  long trace_i, trace_j;
  bool progress;
} stencil_debug;

bool stencil_debug_any(const stencil_debug *d);
/* "nan,negative=h,trace,progress" or "none": what the key records. */
void stencil_debug_describe(const stencil_debug *d, const st_program *p, char *buf, size_t len);
/* --check VALUE: "nan" or "negative=FIELD[,FIELD...]"; the names are kept
 * until the program is known (the options come in any order). */
int stencil_debug_parse_check(stencil_debug *d, const char *value);
/* The negative= names as fields of p (an unknown one: input error). */
int stencil_debug_resolve(stencil_debug *d, const st_program *p);

/* What the environment changes of the toolchain the generated programs
 * are built with (each NULL: the configured one, stencil_build_config.h). */
typedef struct {
  const char *cc;      /* MAPP_STENCIL_CC: another C compiler */
  const char *nvcc;    /* MAPP_STENCIL_NVCC: another CUDA compiler */
  const char *cflags;  /* MAPP_STENCIL_CFLAGS: flags after the configured ones */
  const char *include; /* MAPP_STENCIL_INCLUDE (a test hook): another folder of the stencil headers */
} stencil_toolchain;

typedef struct {
  const char *program;    /* --program: a name in st_programs */
  long nx, ny, nz, steps; /* nz: levels of a 3-D program */
  int px, py;             /* process grid (0: from the rank count) */
  stencil_init init;
  double amplitude;       /* bump height as a fraction of the mean depth */
  double cfl;             /* gravity-wave Courant number of dt */
  const char *cache_dir;  /* --cache, else MAPP_CACHE_DIR/stencil, else .mapp-cache/stencil */
  stencil_debug debug;
  stencil_mode mode;
  mapp_backend backend;
  stencil_toolchain toolchain;
  /* test hooks (not in --help), from the environment */
  const char *brk;  /* MAPP_STENCIL_BREAK: the fault the physics plants to fail one check */
  const char *drop; /* MAPP_STENCIL_DROP: a stencil left out of the step */
} stencil_config;

/* The configuration before the options: the defaults, then what the
 * environment sets (stencil_config_read_env). */
void stencil_config_defaults(stencil_config *c);
/* The app's settings from the environment into c: the toolchain, the cache
 * folder, the test hooks (stencil_env.c, the one reader of the app's
 * MAPP_* variables). */
void stencil_config_read_env(stencil_config *c);

/* ---- the cache of generated programs ---- */

/* The inputs of a cache key, each recorded in the entry's manifest. */
typedef struct {
  char program[32], program_hash[17]; /* the table's name and its content (st_program_write) */
  char source_hash[17], header_hash[17];
  char compiler[512], compiler_version[256];
  char flags[1024];
  char cls[16], backend[16], debug[256];
  char key[17];
  /* not an input: the folder whose headers header_hash hashed, which the
   * build then includes (as long as the header paths built from it) */
  char include[1200];
} stencil_key;

/* A loaded program. */
typedef int (*stencil_step_fn)(const stencil_args *a, double *const *fields, stencil_hooks *hooks);
typedef struct {
  void *handle;
  stencil_step_fn step;
  const int *slot; /* pool slot of each field, -1 for state and demoted ones */
  int nslots;
  int nfields;      /* of the program it was generated from */
  char entry[1024]; /* the entry's folder */
} stencil_loaded;

typedef struct {
  int built;        /* this rank compiled an entry */
  double build_s;   /* generation + compile (when built) */
  double load_s;    /* key check + dlopen + symbols */
} stencil_cache_stats;

/* The key of source: the compiler, flags and headers it is built with (the
 * configured ones, as tc changes them), the program, class, backend and
 * debug passes. */
int stencil_key_make(const stencil_toolchain *tc, const st_program *p, const char *source, int cls,
                     mapp_backend backend, const char *debug, stencil_key *key);
/* Find the entry for key in dir and check it; with may_build a missing or
 * stale entry is (re)built from source first; with load it is loaded. */
int stencil_cache_get(const char *dir, const stencil_key *key, const char *source, bool may_build, bool load,
                      stencil_loaded *out, stencil_cache_stats *stats);
void stencil_loaded_close(stencil_loaded *l);
/* --cache's default: ROOT/stencil (ROOT: MAPP_CACHE_DIR), else, when root
 * is NULL, .mapp-cache/stencil. */
const char *stencil_cache_default(const char *root);

/* ---- the generator ---- */

/* The whole step for one class as one C (or CUDA C) translation unit;
 * malloc'd into *source. */
int stencil_generate(const st_program *p, const st_plan *plan, mapp_backend backend, const stencil_debug *debug,
                     char **source);
/* The CUDA C program: one kernel per fused loop and per kept region,
 * launched in order on one stream (stencil_codegen_cuda.c). */
int stencil_generate_cuda(const st_program *p, const st_plan *plan, const stencil_debug *debug, char **source);
/* Shared by both generators (stencil_codegen.c): a region's global bound as
 * C text (a literal from the low edge, a->nx + off from the high edge, or
 * `unbounded`), and the declaration of the region's box clipped to a loop's
 * box: out[k] from in[k] (i low, i high, j low, j high). */
void stencil_emit_gend(FILE *o, signed char at, int off, const char *n, const char *unbounded);
void stencil_emit_region_box(FILE *o, const st_region *g, const char *const in[4], const char *const out[4]);
/* The opening line of a loop over the levels [lo, hi) as `kz`, upward or
 * (down) downward, after `indent`. */
void stencil_emit_level_loop(FILE *o, const char *indent, st_level_end lo, st_level_end hi, bool down);
/* The P/V macros of every call, and call k at one point (its body, its
 * inline regions; those bounded in j only with row_regions), shared by both
 * generators. */
void stencil_emit_call_macros(FILE *o, const st_program *p, const st_plan *plan);
void stencil_emit_point_call(FILE *o, const st_program *p, const st_plan *plan, int k, bool row_regions);
/* The calls of group g active on all of the levels [lo, hi), in order, at
 * one point (stencil_emit_point_call). */
void stencil_emit_segment_calls(FILE *o, const st_program *p, const st_plan *plan, const st_group *g,
                                st_level_end lo, st_level_end hi, bool row_regions);

/* ---- state and steps ---- */

typedef struct stencil_state stencil_state;

struct stencil_state {
  stencil_config cfg;
  MPI_Comm comm;
  int rank, nranks;
  mapp_decomp2d decomp;
  mapp_halo2d halo;
  bool have_decomp, have_halo;
  stencil_args args;
  int cls;
  st_program program;
  size_t field_elems;
  const struct stencil_physics *physics;
  double *state_fields[ST_MAX_FIELDS];
  double *fields[ST_MAX_FIELDS]; /* the current step's field table */
  /* eager */
  mapp_pool pool;
  void *eager_kernels; /* per call: the compiled kernels */
  long eager_calls, eager_exchanges;
  /* orchestrated */
  st_plan plan;
  stencil_loaded loaded;
  double *slots[ST_MAX_FIELDS];
  stencil_key key;
  stencil_cache_stats cache;
  int builds_total;
  double build_s_max, load_s_max;
  stencil_hooks hooks;
  long steps_done;
  double conserved0[2]; /* what the physics conserves, at the start */
  double *initial;      /* the first state field at the start */
  double **halo_planes; /* a level's plane per entry, for the halo exchange */
};

/* What a program's step means beyond its table: the physical arguments,
 * the initial state and the invariants the run verifies
 * (stencil_physics_<program>.c; the registry links it to its program). */
typedef struct stencil_physics {
  const char *inits; /* the --init values it accepts */
  void (*arguments)(stencil_state *s);   /* spacing, time step, coefficients into s->args */
  int (*initialise)(stencil_state *s);   /* from global indices only: any layout starts the same */
  int (*verify)(mapp_run *run, stencil_state *s);
  void (*apply_break)(stencil_state *s, const char *what); /* cfg.brk (MAPP_STENCIL_BREAK), rank 0 */
} stencil_physics;
/* The physics of a program that has none of its own: a smooth initial
 * state from global indices, every answer finite (stencil_physics_generic.c). */
extern const stencil_physics stencil_physics_generic;

/* A state field by name (NULL when the program has none such). */
double *stencil_state_field(stencil_state *s, const char *name);
/* Sum (MPI_SUM) or largest (MPI_MAX, NaN wins) over every interior cell
 * and level of value(s, element). */
int stencil_reduce(stencil_state *s, MPI_Op op, double (*value)(const stencil_state *, long), double *out);

int stencil_state_create(MPI_Comm comm, const stencil_config *cfg, stencil_state **out);
/* Eager: resolve the kernels. Orchestrated: generate, build (build modes,
 * one rank per class), check and load from the cache. Collective. */
int stencil_prepare(stencil_state *s);
/* Zeros over a host field (s->field_elems doubles) written the way the
 * kernels sweep it: padded rows split statically among the threads, every
 * level of a row by that row's thread. The pages are then faulted in at
 * set-up, not inside the first timed step (at large a fault costs more than
 * the step's arithmetic on a page), and on a NUMA node they sit near the
 * thread that computes them. */
void stencil_field_first_touch(const stencil_state *s, double *x);
/* One time step in the configured mode (halo exchanges inside). With debug
 * checks, STENCIL_STOPPED when another rank's check failed (that rank
 * reports it; this one stops quietly). */
#define STENCIL_STOPPED 101
int stencil_step(stencil_state *s);
int stencil_run_steps(stencil_state *s, long steps);
/* Back to the state stencil_state_create left, for a repeated run
 * (--min-time): the fields zeroed and initialised again by the physics (its
 * conserved sums too), the step and call counters at zero. The prepared
 * program (kernels, or the generated one, loaded) stays. Collective. */
int stencil_state_restart(stencil_state *s);
void stencil_state_destroy(stencil_state *s);

/* Eager pieces, for the benchmark. */
int stencil_eager_init(stencil_state *s);
int stencil_eager_step(stencil_state *s);
void stencil_eager_free(stencil_state *s);


/* ---- driver hooks (stencil_app.c) ---- */
/* The report's headline pair (mapp_app.headline). */
extern const mapp_headline stencil_headline;
int stencil_hook_compute(mapp_run *run, void *state);
int stencil_hook_reset(mapp_run *run, void *state);
int stencil_hook_digest(mapp_run *run, void *state, uint64_t *digest);
int stencil_hook_verify(mapp_run *run, void *state);
int stencil_hook_describe(mapp_run *run, void *state);
int stencil_hook_write(mapp_run *run, void *state, const char *path);
void stencil_hook_destroy(void *state);

#endif
