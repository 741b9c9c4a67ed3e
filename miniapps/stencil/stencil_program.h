/* The step as data: the list of stencil calls (inputs with the offsets they
 * read, the output, the extent, the horizontal regions) that both the eager
 * interpreter and the generator read, and the whole-program analysis the
 * generator makes of it (halo schedule, region removal, fusion, transient
 * demotion and pooling, compulsory traffic). */
#ifndef STENCIL_PROGRAM_H
#define STENCIL_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>

#include "stencil_kernels.h"

/* ---- fields: the state, then the step's temporaries ---- */
enum {
  ST_F_H, ST_F_U, ST_F_V, /* state */
  ST_T_DIV, ST_T_KE, ST_T_ZETA, ST_T_HFX, ST_T_FX, ST_T_HX, ST_T_HFY, ST_T_FY, ST_T_HQ, ST_T_Q,
  ST_T_UM, ST_T_VM, ST_T_B, ST_T_CU, ST_T_CV, ST_T_DU, ST_T_DV, ST_T_TU, ST_T_TV,
  ST_NFIELDS
};
#define ST_NSTATE 3
extern const char *const st_field_names[ST_NFIELDS];
/* The field called name, or -1. */
int st_field_find(const char *name);

/* ---- boxes ---- */

/* A local span [lo, n + hi) of a dimension with n interior cells. */
typedef struct {
  int lo, hi;
} st_span;
typedef struct {
  st_span i, j;
} st_extent;

/* A global range of a dimension: each end anchored at -inf/+inf (NONE),
 * at global 0 (LO) or at global n (HI), plus an offset. */
enum { ST_AT_NONE = 0, ST_AT_LO, ST_AT_HI };
typedef struct {
  signed char lo_at, hi_at;
  int lo, hi;
} st_grange;

typedef struct {
  const char *body; /* ST_CALL_<body> in stencil_kernels.h */
  st_grange i, j;
} st_region;

typedef struct {
  int field;
  signed char di_lo, di_hi, dj_lo, dj_hi; /* offsets read around each point */
} st_input;

#define ST_MAX_IN 3
#define ST_MAX_REGIONS 8
#define ST_MAX_CALLS 40

typedef struct {
  const char *name; /* unique within the step */
  const char *body; /* the main computation's body, NULL for region-only stencils */
  int out;
  int nin;
  st_input in[ST_MAX_IN];
  st_extent extent;
  int nregions;
  st_region regions[ST_MAX_REGIONS];
} st_call;

typedef struct {
  int ncalls;
  st_call calls[ST_MAX_CALLS];
} st_program;

/* The shallow-water step. `drop` names a stencil left out (a test-only hook
 * that plants "the step list changed"), or NULL. */
int st_program_build(st_program *p, const char *drop);

/* ---- code-path classes: which domain edges a rank's subdomain touches ---- */
enum { ST_EDGE_W = 1, ST_EDGE_E = 2, ST_EDGE_S = 4, ST_EDGE_N = 8 };
#define ST_NCLASSES 16
/* "interior", "w", "ws", "wesn", ... into buf. */
void st_class_name(int cls, char *buf, size_t len);
int st_class_of(long i0, long lx, long nx, long j0, long ly, long ny);

/* Can region r of a stencil touch a rank of class cls? (Static: the
 * generator removes those that cannot; eager intersects boxes at run time.
 * They agree because every rank is at least ST_HALO cells across.) */
bool st_region_touches_class(const st_region *r, int cls);

/* A region's box in local indices clipped to the call's extent; false when
 * empty (the eager run-time test). */
bool st_region_box(const st_region *r, const st_extent *ext, const stencil_args *a, long box[4]);

/* ---- validity and the halo schedule ---- */

/* Where each field holds valid data, as spans; lo > n + hi is empty. */
typedef struct {
  bool valid[ST_NFIELDS];
  st_extent box[ST_NFIELDS];
} st_validity;

/* State valid on the interior, temporaries nowhere: the start of a step. */
void st_validity_start(st_validity *v);
/* The fields call c reads outside where they are valid (to exchange first);
 * returns how many, into fields[]. Reading a temporary outside where it was
 * computed is a program error (-1). */
int st_halo_needs(const st_call *c, const st_validity *v, int fields[ST_NFIELDS]);
void st_validity_after_exchange(st_validity *v, int field);
void st_validity_after_call(st_validity *v, const st_call *c);

/* ---- the generator's plan for one class ---- */

typedef struct {
  int before; /* exchange before this call */
  int nfields;
  int fields[ST_NFIELDS];
} st_exchange;

typedef struct {
  int first, count; /* consecutive calls */
} st_group;

/* Consecutive fused loops swept together row by row (the serial backend's
 * plan): in sweep step t, group first + m runs its row t - lag[m]. The lags
 * make every row a group reads already written by the loops before it, and
 * every row it overwrites already read by them, so the answer is the one
 * loop after loop gives, bit for bit; what flows between the loops is read
 * back while it is still in cache. */
typedef struct {
  int first, count; /* groups */
  int lag[ST_MAX_CALLS];
} st_pipe;

#define ST_MAX_LAG 4 /* rows a loop may trail the first of its pipe by */

typedef enum {
  ST_PLAN_SEPARATE, /* every stencil its own loop (debug passes check after each) */
  ST_PLAN_FUSED,    /* consecutive stencils fused into loops */
  ST_PLAN_ROWS,     /* fused, and consecutive loops swept together by rows (serial) */
} st_plan_level;

typedef struct {
  int cls;
  bool fuse;                /* off when debug passes want every stencil on its own */
  int nexchanges;
  st_exchange exchanges[ST_MAX_CALLS];
  bool region_kept[ST_MAX_CALLS][ST_MAX_REGIONS];
  int nregions_removed, nregions_kept;
  int ngroups;
  st_group groups[ST_MAX_CALLS];
  bool demoted[ST_NFIELDS]; /* a local of its fused loop, no array */
  int slot[ST_NFIELDS];     /* pool slot of a temporary array (-1: state or demoted) */
  int nslots;
  int ntemps;               /* temporaries of the step (what eager allocates) */
  int ndemoted;
  int npipes;
  st_pipe pipes[ST_MAX_CALLS]; /* every group in exactly one, in order (most alone) */
} st_plan;

int st_plan_make(const st_program *p, int cls, st_plan_level level, st_plan *plan);

/* Compulsory traffic of one step in bytes (fields read and written once per
 * loop, from the extents) for a rank of lx x ly cells: eager (every stencil
 * reads its inputs and writes its output) and the plan (once per pipe of
 * fused loops, demoted temporaries never). */
double st_traffic_eager(const st_program *p, long lx, long ly);
double st_traffic_plan(const st_program *p, const st_plan *plan, long lx, long ly);

/* Can call c's regions be applied inside its (fused) loop, right after its
 * body at each point? Yes when it has a body and does not read its own
 * output at an offset (then the region's value at a point is the one
 * eager's region pass leaves). */
bool st_regions_inline(const st_call *c);

/* The group of a plan holding call c. */
int st_plan_group_of(const st_plan *plan, int c);

#endif
