/* Programs as data: a program is a table of fields (the state, then the
 * step's temporaries) and of stencil calls (inputs with the offsets they
 * read, the output, the extent, the horizontal regions), which the eager
 * interpreter, both generators, the cache key and the debug passes read;
 * and the whole-program analysis the generator makes of it (halo schedule,
 * region removal, fusion, transient demotion and pooling, compulsory
 * traffic). Halo exchanges are not listed: they follow from the reads
 * (st_halo_needs), the same way for eager and for the plan, so a listed
 * exchange could never disagree with them. */
#ifndef STENCIL_PROGRAM_H
#define STENCIL_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "stencil_kernels.h"

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
  signed char dk_lo, dk_hi;               /* and across levels (3-D calls) */
} st_input;

#define ST_MAX_IN 5
#define ST_MAX_REGIONS 8
#define ST_MAX_CALLS 40
#define ST_MAX_FIELDS 32

/* Where a field's values sit in a cell (documentation for the table's
 * reader and the record; the bodies know their own staggering). */
typedef enum { ST_STAGGER_CENTRE = 0, ST_STAGGER_FACE_X, ST_STAGGER_FACE_Y, ST_STAGGER_CORNER } st_stagger;

typedef struct {
  const char *name;   /* unique within the program: the generated array is fld_<name> */
  int dims;           /* 2: (i, j); 3: (i, j, k), nz levels of 2-D planes */
  int halo;           /* cells of halo around the interior: ST_HALO */
  st_stagger stagger;
} st_field;

/* The order a 3-D call visits the levels of a column (GT4Py's
 * computation(PARALLEL|FORWARD|BACKWARD)): any order, or sequentially
 * upwards or downwards, each column independent. */
typedef enum { ST_K_PARALLEL = 0, ST_K_FORWARD, ST_K_BACKWARD } st_korder;

typedef struct {
  const char *name; /* unique within the step */
  const char *body; /* the main computation's body, NULL for region-only stencils */
  st_korder order;  /* 3-D calls */
  st_grange k;      /* 3-D calls: the levels (GT4Py's interval), anchored at 0 and nz; unbounded: all */
  int out;
  int nin;
  st_input in[ST_MAX_IN];
  st_extent extent;
  int nregions;
  st_region regions[ST_MAX_REGIONS];
} st_call;

/* A program: fields [0, nstate) are the state (carried from step to step,
 * the answer written to HDF5), the others the step's temporaries. */
typedef struct {
  const char *name;   /* --program NAME */
  const char *bodies; /* the header with the calls' bodies, #included by the generated program */
  int nfields, nstate;
  st_field fields[ST_MAX_FIELDS];
  int ncalls;
  st_call calls[ST_MAX_CALLS];
} st_program;

/* The programs this build knows (--program), each a function filling the
 * table; the first is the default. */
typedef struct {
  const char *name;
  const char *summary;
  int (*build)(st_program *p);
} st_program_entry;
extern const st_program_entry st_programs[];
#define ST_PROGRAM_CHOICES "shallow-water|vertical"

/* Program `name`, checked (st_program_check). `drop` names a stencil left
 * out (a test-only hook that plants "the step list changed"), or NULL. */
int st_program_make(st_program *p, const char *name, const char *drop);
/* Field and call references in range, names unique, the arrays' halo, a
 * call's fields all of its dimension, vertical offsets and orders only in
 * 3-D calls: a table error is an input error naming the entry. */
int st_program_check(const st_program *p);
/* The field called name, or -1. */
int st_field_find(const st_program *p, const char *name);
/* The table as text, every entry that changes what a step computes (the
 * cache key hashes it). */
void st_program_write(const st_program *p, FILE *o);

/* The shallow-water step (stencil_program_shallow_water.c). */
int st_program_shallow_water(st_program *p);
/* The 3-D step with vertical solves (stencil_program_vertical.c). */
int st_program_vertical(st_program *p);

/* ---- writing a table: extents, inputs and global ranges ---- */

/* Extents: EXT(i lo, i hi, j lo, j hi) as local spans [lo, n + hi). */
#define ST_EXT(ilo, ihi, jlo, jhi) ((st_extent){{ilo, ihi}, {jlo, jhi}})
#define ST_EXT_PADDED ST_EXT(-ST_HALO, ST_HALO, -ST_HALO, ST_HALO)
#define ST_EXT_0 ST_EXT(0, 0, 0, 0)

/* Levels [0, nz) by their anchored ends: K(ST_AT_LO, 1, ST_AT_HI, -1) is
 * [1, nz - 1); the bottom and top levels have their own. */
#define ST_KRANGE(lo_at, lo, hi_at, hi) ((st_grange){lo_at, hi_at, lo, hi})
#define ST_K_ALL ST_KRANGE(ST_AT_LO, 0, ST_AT_HI, 0)
#define ST_K_BOTTOM ST_KRANGE(ST_AT_LO, 0, ST_AT_LO, 1)
#define ST_K_INNER ST_KRANGE(ST_AT_LO, 1, ST_AT_HI, -1)
#define ST_K_TOP ST_KRANGE(ST_AT_HI, -1, ST_AT_HI, 0)
#define ST_K_ABOVE_BOTTOM ST_KRANGE(ST_AT_LO, 1, ST_AT_HI, 0)
#define ST_K_BELOW_TOP ST_KRANGE(ST_AT_LO, 0, ST_AT_HI, -1)
/* The fewest levels a program with vertical intervals runs on (--nz). */
#define ST_NZ_MIN 4

/* An input read at offsets [dil, dih] x [djl, djh] around each point. */
#define ST_IN(f, dil, dih, djl, djh) ((st_input){f, dil, dih, djl, djh, 0, 0})
#define ST_AT(f) ST_IN(f, 0, 0, 0, 0)
#define ST_IN_ALL(f) ST_IN(f, -ST_HALO, ST_HALO, -ST_HALO, ST_HALO)
/* An input of a 3-D call read at levels [k + dkl, k + dkh] of its column. */
#define ST_KIN(f, dkl, dkh) ((st_input){f, 0, 0, 0, 0, dkl, dkh})

/* Global ranges of regions. */
#define ST_G_ALL ((st_grange){ST_AT_NONE, ST_AT_NONE, 0, 0})
#define ST_G_BELOW ((st_grange){ST_AT_LO, ST_AT_LO, -ST_HALO, 0}) /* ghosts before 0 */
#define ST_G_ABOVE ((st_grange){ST_AT_HI, ST_AT_HI, 0, ST_HALO})  /* ghosts from n on */
#define ST_G_INSIDE ((st_grange){ST_AT_LO, ST_AT_HI, 0, 0})       /* [0, n) */
#define ST_G_FIRST ((st_grange){ST_AT_LO, ST_AT_LO, 0, 1})        /* the line 0 */
#define ST_G_LAST ((st_grange){ST_AT_HI, ST_AT_HI, 0, 1})         /* the line n */

/* Fields and calls appended to a table (bounds checked by st_program_check,
 * which counts what overflowed). */
int st_add_field(st_program *p, const char *name, int dims, st_stagger stagger);
/* A field as a program's table lists it: its name and staggering. */
typedef struct {
  const char *name;
  st_stagger stagger;
} st_field_def;
/* The n fields of defs, each with `dims` dimensions, in order. */
void st_add_fields(st_program *p, const st_field_def *defs, int n, int dims);
void st_add_call(st_program *p, st_call c);

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

/* The levels of a call, [0, nz) when unbounded (and for a 2-D call). */
st_grange st_call_levels(const st_call *c);
/* No level in both ranges (for every nz >= ST_NZ_MIN). */
bool st_levels_disjoint(const st_grange *a, const st_grange *b);
/* Its levels [lo, hi) in a column of nz. */
void st_call_level_bounds(const st_call *c, long nz, long *lo, long *hi);

/* ---- validity and the halo schedule ---- */

/* Where each field holds valid data, as spans; lo > n + hi is empty. */
typedef struct {
  bool valid[ST_MAX_FIELDS];
  st_extent box[ST_MAX_FIELDS];
  st_grange levels[ST_MAX_FIELDS]; /* the levels written, anchored at 0 and nz */
} st_validity;

/* State valid on the interior, temporaries nowhere: the start of a step. */
void st_validity_start(st_validity *v, const st_program *p);
/* The fields call c reads outside where they are valid (to exchange first);
 * returns how many, into fields[]. Reading a temporary outside where it was
 * computed is a program error (-1). */
int st_halo_needs(const st_call *c, const st_validity *v, int fields[ST_MAX_FIELDS]);
void st_validity_after_exchange(st_validity *v, int field);
void st_validity_after_call(st_validity *v, const st_call *c);

/* ---- the generator's plan for one class ---- */

typedef struct {
  int before; /* exchange before this call */
  int nfields;
  int fields[ST_MAX_FIELDS];
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
  bool demoted[ST_MAX_FIELDS]; /* a local of its fused loop, no array */
  int slot[ST_MAX_FIELDS];     /* pool slot of a temporary array (-1: state or demoted) */
  int nslots;
  int ntemps;               /* temporaries of the step (what eager allocates) */
  int ndemoted;
  bool buffered[ST_MAX_FIELDS]; /* a column buffer: only the swept row's columns, per thread */
  int nbuffered;
  int npipes;
  st_pipe pipes[ST_MAX_CALLS]; /* every group in exactly one, in order (most alone) */
} st_plan;

int st_plan_make(const st_program *p, int cls, st_plan_level level, st_plan *plan);

/* Compulsory traffic of one step in bytes (fields read and written once per
 * loop, from the extents) for a rank of lx x ly cells and nz levels: eager (every stencil
 * reads its inputs and writes its output) and the plan (once per pipe of
 * fused loops, demoted temporaries never). */
double st_traffic_eager(const st_program *p, long lx, long ly, long nz);
double st_traffic_plan(const st_program *p, const st_plan *plan, long lx, long ly, long nz);

/* Can call c's regions be applied inside its (fused) loop, right after its
 * body at each point? Yes when it has a body and does not read its own
 * output at an offset (then the region's value at a point is the one
 * eager's region pass leaves). */
bool st_regions_inline(const st_call *c);

/* The direction group g walks its columns: 0 level by level, +1 upwards,
 * -1 downwards (its sequential calls'). */
int st_group_direction(const st_program *p, const st_group *g);

/* The ends of the levels of group g's calls, sorted and distinct (at most
 * 2 per call), into ends[]; returns how many. Between two consecutive ends
 * the same calls are active: a generated loop over those levels runs
 * exactly them, with no test per level. */
typedef struct {
  signed char at; /* ST_AT_LO: from level 0; ST_AT_HI: from nz */
  int off;
} st_level_end;
int st_group_level_ends(const st_program *p, const st_group *g, st_level_end ends[2 * ST_MAX_CALLS]);
/* Does call c run on all levels [lo, hi)? */
bool st_call_covers(const st_call *c, st_level_end lo, st_level_end hi);

/* Is pipe q a column pipe (3-D loops swept row of columns by row of
 * columns, in parallel over rows)? */
bool st_pipe_is_column(const st_program *p, const st_plan *plan, const st_pipe *q);

/* The group of a plan holding call c. */
int st_plan_group_of(const st_plan *plan, int c);

#endif
