/* The generator: the whole step of one code-path class as one translation
 * unit that #includes stencil_kernels.h (the same bodies eager runs), with
 * the plan applied: halo exchanges as callbacks, regions that cannot touch
 * the class removed, consecutive stencils fused into one loop nest, fused
 * temporaries demoted to locals, debug passes after every stencil. Every
 * decomposition-dependent number stays an argument (a->...): the source
 * holds no size, offset or spacing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"

static const char *field(const st_program *p, int f) { return p->fields[f].name; }

/* P/V macros of every call: P_c<k>(n) the array of input n, V_c<k>(n) its
 * value at the point (the local it was demoted to, or the array element). */
void stencil_emit_call_macros(FILE *o, const st_program *p, const st_plan *plan) {
  for (int k = 0; k < p->ncalls; ++k) {
    const st_call *c = &p->calls[k];
    fprintf(o, "/* %s */\n#define P_c%d(n) P_c%d_##n\n#define V_c%d(n) V_c%d_##n\n", c->name, k, k, k, k);
    for (int n = 0; n < c->nin; ++n) {
      int f = c->in[n].field;
      if (plan->demoted[f]) {
        fprintf(o, "#define V_c%d_%d t_%s\n", k, n, field(p, f));
      } else {
        fprintf(o, "#define P_c%d_%d fld_%s\n", k, n, field(p, f));
        fprintf(o, "#define V_c%d_%d fld_%s[k]\n", k, n, field(p, f));
      }
    }
  }
}

static void emit_extent(FILE *o, const st_extent *e) {
  fprintf(o, "    const long i_lo = %d, i_hi = a->lx + %d, j_lo = %d, j_hi = a->ly + %d;\n", e->i.lo, e->i.hi,
          e->j.lo, e->j.hi);
}

/* A global range end as an expression of the arguments. */
void stencil_emit_gend(FILE *o, signed char at, int off, const char *n, const char *unbounded) {
  if (at == ST_AT_NONE)
    fprintf(o, "%s", unbounded);
  else if (at == ST_AT_LO)
    fprintf(o, "%dL", off);
  else
    fprintf(o, "a->%s + %d", n, off);
}

void stencil_emit_level_loop(FILE *o, const char *indent, st_level_end lo, st_level_end hi, bool down) {
  if (down) {
    fprintf(o, "%sfor (long kz = (", indent);
    stencil_emit_gend(o, hi.at, hi.off, "nz", "");
    fprintf(o, ") - 1; kz >= ");
    stencil_emit_gend(o, lo.at, lo.off, "nz", "");
    fprintf(o, "; --kz) {\n");
  } else {
    fprintf(o, "%sfor (long kz = ", indent);
    stencil_emit_gend(o, lo.at, lo.off, "nz", "");
    fprintf(o, "; kz < ");
    stencil_emit_gend(o, hi.at, hi.off, "nz", "");
    fprintf(o, "; ++kz) {\n");
  }
}

static void emit_point_prologue(FILE *o) {
  fprintf(o, "        const long k = a->origin + j * s + i, gi = a->i0 + i;\n"
             "        (void)k; (void)gi; (void)gj;\n");
}

void stencil_emit_region_box(FILE *o, const st_region *g, const char *const in[4], const char *const out[4]) {
  /* bound d: i low, i high, j low, j high */
  const signed char at[4] = {g->i.lo_at, g->i.hi_at, g->j.lo_at, g->j.hi_at};
  const int off[4] = {g->i.lo, g->i.hi, g->j.lo, g->j.hi};
  for (int d = 0; d < 4; ++d) {
    const char *origin = d < 2 ? "a->i0" : "a->j0";
    char unbounded[64];
    snprintf(unbounded, sizeof unbounded, "%s + %s", in[d], origin);
    fprintf(o, d % 2 ? ", %s = st_min(%s, " : "      const long %s = st_max(%s, ", out[d], in[d]);
    stencil_emit_gend(o, at[d], off[d], d < 2 ? "nx" : "ny", unbounded);
    fprintf(o, " - %s)%s", origin, d % 2 ? ";\n" : "");
  }
}

/* The local box ri_lo..rj_hi of region g of a call: its global range
 * clipped to the call's extent (i_lo..j_hi in scope). */
static void emit_region_box(FILE *o, const st_region *g) {
  static const char *const in[4] = {"i_lo", "i_hi", "j_lo", "j_hi"}, *const out[4] = {"ri_lo", "ri_hi", "rj_lo", "rj_hi"};
  stencil_emit_region_box(o, g, in, out);
}

/* The kept regions of call k, after its loop: in-place overrides. */
static void emit_regions(FILE *o, const st_program *p, const st_plan *plan, int k) {
  const st_call *c = &p->calls[k];
  for (int r = 0; r < c->nregions; ++r) {
    if (!plan->region_kept[k][r]) continue;
    const st_region *g = &c->regions[r];
    fprintf(o, "    { /* region %s */\n", g->body);
    emit_region_box(o, g);
    fprintf(o, "      for (long j = rj_lo; j < rj_hi; ++j) {\n        const long gj = a->j0 + j;\n"
               "        for (long i = ri_lo; i < ri_hi; ++i) {\n");
    fprintf(o, "          const long k = a->origin + j * s + i, gi = a->i0 + i;\n          (void)gi; (void)gj;\n");
    fprintf(o, "          fld_%s[k] = ST_CALL_%s(P_c%d, V_c%d);\n        }\n      }\n    }\n", field(p, c->out),
            g->body, k, k);
  }
}

/* One scan of field out over a box (the extent, or a region's box; of a
 * 3-D field, the level level_<out> in scope). */
static void emit_scans(FILE *o, const st_program *p, const st_call *c, const stencil_debug *d, const char *box) {
  const char *array = p->fields[c->out].dims == 3 ? "level" : "fld";
  if (d->nan)
    fprintf(o, "    st_debug_scan(a, hk, ST_CHECK_NAN, \"%s\", \"%s\", %s_%s, %s);\n", c->name, field(p, c->out),
            array, field(p, c->out), box);
  if (d->negative[c->out])
    fprintf(o, "    st_debug_scan(a, hk, ST_CHECK_NEGATIVE, \"%s\", \"%s\", %s_%s, %s);\n", c->name,
            field(p, c->out), array, field(p, c->out), box);
}

/* Debug passes after call k: checks over what it wrote (its extent and
 * levels; for a region-only stencil, each kept region's box), the trace
 * (of level 0), the progress. */
static void emit_debug_after(FILE *o, const st_program *p, const st_plan *plan, int k, const stencil_debug *d) {
  const st_call *c = &p->calls[k];
  if (c->body && p->fields[c->out].dims == 3 && (d->nan || d->negative[c->out])) {
    st_grange r = st_call_levels(c);
    fprintf(o, "    for (long kz = ");
    stencil_emit_gend(o, r.lo_at, r.lo, "nz", "0");
    fprintf(o, "; kz < ");
    stencil_emit_gend(o, r.hi_at, r.hi, "nz", "a->nz");
    fprintf(o, "; ++kz) {\n      double *level_%s = fld_%s + kz * a->plane;\n", field(p, c->out), field(p, c->out));
    fprintf(o, "      (void)level_%s;\n", field(p, c->out));
    emit_scans(o, p, c, d, "i_lo, i_hi, j_lo, j_hi");
    fprintf(o, "    }\n");
  } else if (c->body) {
    emit_scans(o, p, c, d, "i_lo, i_hi, j_lo, j_hi");
  } else if (d->nan || d->negative[c->out]) {
    for (int r = 0; r < c->nregions; ++r) {
      if (!plan->region_kept[k][r]) continue;
      fprintf(o, "    {\n");
      emit_region_box(o, &c->regions[r]);
      emit_scans(o, p, c, d, "ri_lo, ri_hi, rj_lo, rj_hi");
      fprintf(o, "    }\n");
    }
  }
  if (d->trace) fprintf(o, "    st_debug_trace(a, hk, \"%s\", \"%s\", fld_%s);\n", c->name, field(p, c->out), field(p, c->out));
  if (d->progress) fprintf(o, "    st_debug_progress(hk, \"%s\");\n", c->name);
}

/* Fields a group touches as arrays. */
static void group_fields(const st_program *p, const st_plan *plan, const st_group *g, bool used[ST_MAX_FIELDS]) {
  memset(used, 0, sizeof(bool) * ST_MAX_FIELDS);
  for (int k = g->first; k < g->first + g->count; ++k) {
    const st_call *c = &p->calls[k];
    if (!plan->demoted[c->out]) used[c->out] = true;
    for (int n = 0; n < c->nin; ++n)
      if (!plan->demoted[c->in[n].field]) used[c->in[n].field] = true;
  }
}

static bool region_has_j(const st_region *g) { return g->j.lo_at != ST_AT_NONE || g->j.hi_at != ST_AT_NONE; }

/* One bound of a region test, on 32-bit ints (global indices are at most
 * 2^30 + halo): SSE2, the baseline x86-64 target, has no 64-bit integer
 * compare, and one such test in a fused loop keeps the whole loop scalar. */
static void emit_bound(FILE *o, const char **sep, const char *index, const char *op, signed char at, int off,
                       const char *n) {
  if (at == ST_AT_NONE) return;
  fprintf(o, "%s((int)%s %s (int)(", *sep, index, op);
  stencil_emit_gend(o, at, off, n, "");
  fprintf(o, "))");
  *sep = " & "; /* no short circuit: no branch for if-conversion to undo */
}

/* Is the point (gi, gj) in region g: a test on the global index (its j
 * part only when only_j: the row test). */
static void emit_region_test(FILE *o, const st_region *g, bool only_j) {
  const char *sep = "";
  fprintf(o, "(");
  if (!only_j) {
    emit_bound(o, &sep, "gi", ">=", g->i.lo_at, g->i.lo, "nx");
    emit_bound(o, &sep, "gi", "<", g->i.hi_at, g->i.hi, "nx");
  }
  emit_bound(o, &sep, "gj", ">=", g->j.lo_at, g->j.lo, "ny");
  emit_bound(o, &sep, "gj", "<", g->j.hi_at, g->j.hi, "ny");
  fprintf(o, "%s)", *sep ? "" : "1");
}

/* Call k at the point: its body, then each kept region as a select on the
 * point's global index, in order (the value eager's region pass leaves).
 * Without row_regions, the regions bounded in j are left out: the caller
 * runs this version on rows none of them touches. */
void stencil_emit_point_call(FILE *o, const st_program *p, const st_plan *plan, int k, bool row_regions) {
  const st_call *c = &p->calls[k];
  const char *name = field(p, c->out);
  bool inline_regions = st_regions_inline(c);
  if (plan->demoted[c->out]) {
    fprintf(o, "        double v_%s = ST_CALL_%s(P_c%d, V_c%d);\n", name, c->body, k, k);
  } else {
    fprintf(o, "        fld_%s[k] = ST_CALL_%s(P_c%d, V_c%d);\n", name, c->body, k, k);
  }
  for (int r = 0; r < c->nregions && inline_regions; ++r) {
    if (!plan->region_kept[k][r] || (!row_regions && region_has_j(&c->regions[r]))) continue;
    const char *target = plan->demoted[c->out] ? "v_" : "fld_";
    const char *at = plan->demoted[c->out] ? "" : "[k]";
    fprintf(o, "        %s%s%s = ", target, name, at);
    emit_region_test(o, &c->regions[r], false);
    fprintf(o, " ? ST_CALL_%s(P_c%d, V_c%d) : %s%s%s; /* region */\n", c->regions[r].body, k, k, target, name, at);
  }
  if (plan->demoted[c->out]) fprintf(o, "        const double t_%s = v_%s;\n", name, name);
}

void stencil_emit_segment_calls(FILE *o, const st_program *p, const st_plan *plan, const st_group *g,
                                st_level_end lo, st_level_end hi, bool row_regions) {
  for (int k = g->first; k < g->first + g->count; ++k)
    if (st_call_covers(&p->calls[k], lo, hi)) stencil_emit_point_call(o, p, plan, k, row_regions);
}

/* Does any kept inline region of group g touch row gj: the regions bounded
 * in j, or'ed (into o; false and nothing written when there are none). */
static bool emit_row_test(FILE *o, const st_program *p, const st_plan *plan, const st_group *g) {
  bool any = false;
  for (int k = g->first; k < g->first + g->count; ++k)
    for (int r = 0; r < p->calls[k].nregions && st_regions_inline(&p->calls[k]); ++r) {
      if (!plan->region_kept[k][r] || !region_has_j(&p->calls[k].regions[r])) continue;
      fprintf(o, "%s", any ? " | " : "      const int row_regions = ");
      emit_region_test(o, &p->calls[k].regions[r], true);
      any = true;
    }
  if (any) fprintf(o, ";\n");
  return any;
}

/* The i loop of group g over one row (with or without its j regions). */
static void emit_row_loop(FILE *o, const st_program *p, const st_plan *plan, const st_group *g, bool row_regions) {
  fprintf(o, "      ST_IVDEP\n      for (long i = i_lo; i < i_hi; ++i) {\n");
  emit_point_prologue(o);
  for (int k = g->first; k < g->first + g->count; ++k) stencil_emit_point_call(o, p, plan, k, row_regions);
  fprintf(o, "      }\n");
}

/* Row j of group g (gj its global index, i_lo..i_hi its span). Rows a
 * j-bounded region touches (a wall's row or two) get the loop with every
 * region; the others one without those row-invariant selects, which GCC 12
 * cannot vectorise. */
static void emit_row(FILE *o, const st_program *p, const st_plan *plan, const st_group *g) {
  if (emit_row_test(o, p, plan, g)) {
    fprintf(o, "      if (row_regions) {\n");
    emit_row_loop(o, p, plan, g, true);
    fprintf(o, "      } else {\n");
    emit_row_loop(o, p, plan, g, false);
    fprintf(o, "      }\n");
  } else {
    emit_row_loop(o, p, plan, g, false);
  }
}

/* Row j of 3-D group g: its levels in the group's direction, segment by
 * segment (between consecutive ends of its calls' intervals), each
 * segment a loop over its levels whose i loop runs the calls active on
 * all of them, in order. i is innermost: with levels of padded planes it
 * is the unit stride, so every segment's loop vectorises; a sequential
 * call walks its column in order because the level loop is outside. */
static void emit_levels(FILE *o, const st_program *p, const st_plan *plan, const st_group *g) {
  st_level_end lo[2 * ST_MAX_CALLS], hi[2 * ST_MAX_CALLS];
  bool down;
  int n = st_group_segments(p, g, lo, hi, &down);
  for (int m = 0; m < n; ++m) {
    fprintf(o, "      /* levels [");
    stencil_emit_gend(o, lo[m].at, lo[m].off, "nz", "");
    fprintf(o, ", ");
    stencil_emit_gend(o, hi[m].at, hi[m].off, "nz", "");
    fprintf(o, ") */\n");
    stencil_emit_level_loop(o, "      ", lo[m], hi[m], down);
    fprintf(o, "      ST_IVDEP\n      for (long i = i_lo; i < i_hi; ++i) {\n"
               "        const long k = a->origin + kz * a->plane + j * s + i, gi = a->i0 + i;\n"
               "        (void)k; (void)gi; (void)gj;\n");
    stencil_emit_segment_calls(o, p, plan, g, lo[m], hi[m], false);
    fprintf(o, "      }\n      }\n");
  }
}

/* The head of function <kind><index> (into fo) over the arrays in used,
 * and its call from the step (into o). Each copies the arguments into a
 * local: stores through the field pointers cannot alias it, so its scalars
 * stay in registers. */
static void emit_function(FILE *fo, FILE *o, const st_program *p, const char *kind, int index,
                          const bool used[ST_MAX_FIELDS]) {
  fprintf(fo, "static void %s%d(const stencil_args *args, stencil_hooks *hk", kind, index);
  for (int f = 0; f < p->nfields; ++f)
    if (used[f]) fprintf(fo, ", double *restrict fld_%s", field(p, f));
  fprintf(fo, ") {\n  const stencil_args local_args = *args;\n  const stencil_args *const a = &local_args;\n"
              "  const long s = a->stride;\n  (void)s; (void)hk;\n");
  fprintf(o, "  %s%d(a, hk", kind, index);
  for (int f = 0; f < p->nfields; ++f)
    if (used[f]) fprintf(o, ", f[%d]", f);
  fprintf(o, ");\n");
}

/* Group gidx as a function of its own (into fo), called from the step
 * (into o): its arrays are restrict parameters, which compilers honour
 * (they often ignore restrict on local pointers), so the fused loop needs no
 * run-time alias checks and vectorises. No two arrays of a group share a
 * pool slot (slots were assigned by liveness), so restrict holds. */
static void emit_group(FILE *fo, FILE *o, const st_program *p, const st_plan *plan, int gidx, mapp_backend backend,
                       const stencil_debug *d) {
  const st_group *g = &plan->groups[gidx];
  const st_call *c0 = &p->calls[g->first];
  bool any_region = false;
  for (int k = g->first; k < g->first + g->count; ++k)
    for (int r = 0; r < p->calls[k].nregions; ++r) any_region |= plan->region_kept[k][r];
  fprintf(o, "  /* group %d:", gidx);
  for (int k = g->first; k < g->first + g->count; ++k) fprintf(o, " %s", p->calls[k].name);
  fprintf(o, " */\n");
  if (!c0->body && !any_region) {
    fprintf(o, "  /* %s: every region removed for this class */\n", c0->name);
    if (d->progress || d->trace) {
      fprintf(o, "  {\n    double *fld_%s = f[%d];\n    (void)fld_%s;\n", field(p, c0->out), c0->out, field(p, c0->out));
      emit_debug_after(o, p, plan, g->first, d);
      fprintf(o, "  }\n");
    }
    return;
  }
  bool used[ST_MAX_FIELDS];
  group_fields(p, plan, g, used);
  emit_function(fo, o, p, "group", gidx, used);
  fprintf(fo, "  {\n");
  emit_extent(fo, c0->body ? &c0->extent : &(st_extent){{-ST_HALO, ST_HALO}, {-ST_HALO, ST_HALO}});
  if (c0->body) {
    if (backend == MAPP_BACKEND_OMP) fprintf(fo, "#pragma omp parallel for schedule(static)\n");
    fprintf(fo, "    for (long j = j_lo; j < j_hi; ++j) {\n      const long gj = a->j0 + j;\n");
    if (p->fields[c0->out].dims == 3) emit_levels(fo, p, plan, g);
    else emit_row(fo, p, plan, g);
    fprintf(fo, "    }\n");
  }
  for (int k = g->first; k < g->first + g->count; ++k)
    if (!st_regions_inline(&p->calls[k])) emit_regions(fo, p, plan, k);
  for (int k = g->first; k < g->first + g->count; ++k) emit_debug_after(fo, p, plan, k, d);
  fprintf(fo, "    (void)i_lo; (void)i_hi; (void)j_lo; (void)j_hi;\n  }\n}\n\n");
}

/* A pipe of several groups as one function: one sweep over rows in which
 * each group runs its row `lag` rows behind the first (st_pipe). Its arrays
 * are restrict parameters as for a group: no two share a pool slot. */
/* A pipe's comment (its groups' calls, `how` it is swept) and, in used[],
 * the fields any of its groups touches. */
static void pipe_fields(FILE *o, const st_program *p, const st_plan *plan, const st_pipe *pipe, const char *how,
                        bool used[ST_MAX_FIELDS]) {
  bool mine[ST_MAX_FIELDS];
  for (int f = 0; f < ST_MAX_FIELDS; ++f) used[f] = false;
  fprintf(o, "  /* groups %d to %d, swept together by %s:", pipe->first, pipe->first + pipe->count - 1, how);
  for (int m = 0; m < pipe->count; ++m) {
    const st_group *g = &plan->groups[pipe->first + m];
    for (int k = g->first; k < g->first + g->count; ++k) fprintf(o, " %s", p->calls[k].name);
    fprintf(o, "%s", m + 1 < pipe->count ? " |" : " */\n");
    group_fields(p, plan, g, mine);
    for (int f = 0; f < p->nfields; ++f) used[f] |= mine[f];
  }
}

static void emit_pipe(FILE *fo, FILE *o, const st_program *p, const st_plan *plan, int q) {
  const st_pipe *pipe = &plan->pipes[q];
  bool used[ST_MAX_FIELDS];
  pipe_fields(o, p, plan, pipe, "rows", used);
  emit_function(fo, o, p, "pipe", q, used);
  /* the sweep covers every group's rows, shifted by its lag */
  int lo = 0, hi = 0;
  for (int m = 0; m < pipe->count; ++m) {
    const st_extent *e = &p->calls[plan->groups[pipe->first + m].first].extent;
    if (m == 0 || e->j.lo + pipe->lag[m] < lo) lo = e->j.lo + pipe->lag[m];
    if (m == 0 || e->j.hi + pipe->lag[m] > hi) hi = e->j.hi + pipe->lag[m];
  }
  fprintf(fo, "  for (long sweep = %d; sweep < a->ly + %d; ++sweep) {\n", lo, hi);
  for (int m = 0; m < pipe->count; ++m) {
    const st_group *g = &plan->groups[pipe->first + m];
    const st_extent *e = &p->calls[g->first].extent;
    fprintf(fo, "    { /* group %d, %d rows behind */\n      const long j = sweep - %d;\n", pipe->first + m,
            pipe->lag[m], pipe->lag[m]);
    fprintf(fo, "      if (j >= %d && j < a->ly + %d) {\n      const long i_lo = %d, i_hi = a->lx + %d;\n"
                "      const long gj = a->j0 + j;\n", e->j.lo, e->j.hi, e->i.lo, e->i.hi);
    emit_row(fo, p, plan, g);
    fprintf(fo, "      }\n    }\n");
  }
  fprintf(fo, "  }\n}\n\n");
}

/* A column pipe as one function: rows of columns, each running every
 * group's levels in turn, group m on row sweep - lag[m] (st_pipe_is_column).
 * With OpenMP the rows are cut into one block per thread, and each block
 * sweeps its own rows; with lags, a block's first `most` sweep steps (the
 * largest lag) run before a barrier and the rest after it, so a block
 * writes the rows its lower neighbour reads of it, and reads the rows of
 * its lower neighbour that it needs, before that neighbour goes on (the
 * plan keeps only such dependences across rows: blocks_keep). A block has
 * at least 2 most + 1 rows, so its steps before the barrier never reach its
 * upper end; a narrow domain gets fewer blocks than threads.
 * A column buffer keeps its pool array but each thread uses only one padded
 * row of every level of it (padded row t, the thread's number: a thread
 * that sweeps rows is numbered below the rows swept, at most the padded
 * rows): fld_<x> is shifted by the group's row (every group using a buffer
 * has the same lag), so the bodies' indices k, k - plane, k + plane land in
 * that row and stay in cache. With OpenMP, thread t takes padded row 2t
 * where the rows allow: adjacent threads' rows would share a cache line at
 * their ends (a padded row is rarely a whole number of lines), written by
 * both at every level of every row. */
static void emit_column_pipe(FILE *fo, FILE *o, const st_program *p, const st_plan *plan, int q,
                             mapp_backend backend) {
  const st_pipe *pipe = &plan->pipes[q];
  bool used[ST_MAX_FIELDS];
  pipe_fields(o, p, plan, pipe, "rows of columns", used);
  int lo = 0, hi = 0, most = st_pipe_max_lag(pipe);
  for (int m = 0; m < pipe->count; ++m) {
    const st_extent *e = &p->calls[plan->groups[pipe->first + m].first].extent;
    if (m == 0 || e->j.lo < lo) lo = e->j.lo;
    if (m == 0 || e->j.hi > hi) hi = e->j.hi;
  }
  bool omp = backend == MAPP_BACKEND_OMP;
  /* The block's sweep, a function of its own with restrict arrays: in the
   * region OpenMP outlines they would reach the loops through a shared
   * struct, without restrict, and the loops would test for overlap. */
  fprintf(fo, "static void pipe%d_rows(const stencil_args *args, long row, long b_lo, long b_hi", q);
  for (int f = 0; f < p->nfields; ++f)
    if (used[f]) fprintf(fo, ", double *restrict fld_%s", field(p, f));
  fprintf(fo, ") {\n  const stencil_args local_args = *args;\n  const stencil_args *const a = &local_args;\n"
              "  const long s = a->stride;\n  (void)s; (void)row;\n");
  for (int f = 0; f < p->nfields; ++f)
    if (used[f] && plan->buffered[f])
      fprintf(fo, "  double *const col_%s = fld_%s + (row - ST_HALO) * s; /* padded row `row` */\n", field(p, f),
              field(p, f));
  fprintf(fo, "  for (long sweep = b_lo; sweep < b_hi + %d; ++sweep) {\n", most);
  if (omp && most) fprintf(fo, "    if (sweep == b_lo + %d) {\n#pragma omp barrier\n    }\n", most);
  for (int m = 0; m < pipe->count; ++m) {
    const st_group *g = &plan->groups[pipe->first + m];
    const st_extent *e = &p->calls[g->first].extent;
    fprintf(fo, "    { /* group %d, lag %d */\n      const long j = sweep - %d, gj = a->j0 + j;\n", pipe->first + m,
            pipe->lag[m], pipe->lag[m]);
    fprintf(fo, "      if (j >= b_lo && j < b_hi && j >= %d && j < a->ly + %d) {\n", e->j.lo, e->j.hi);
    bool mine[ST_MAX_FIELDS];
    group_fields(p, plan, g, mine);
    for (int f = 0; f < p->nfields; ++f)
      if (mine[f] && plan->buffered[f])
        fprintf(fo, "      double *restrict const fld_%s = col_%s - j * s; /* column buffer */\n", field(p, f),
                field(p, f));
    fprintf(fo, "      const long i_lo = %d, i_hi = a->lx + %d;\n", e->i.lo, e->i.hi);
    emit_levels(fo, p, plan, g);
    fprintf(fo, "      }\n    }\n");
  }
  fprintf(fo, "  }\n");
  if (omp && most) fprintf(fo, "  if (b_hi == b_lo) {\n#pragma omp barrier\n  }\n");
  fprintf(fo, "}\n\n");
  /* The pipe: one block per thread. */
  emit_function(fo, o, p, "pipe", q, used);
  if (omp)
    fprintf(fo, "#pragma omp parallel\n  {\n    const long t = omp_get_thread_num();\n"
                "    const long row = 2 * omp_get_num_threads() <= a->ly + 2 * ST_HALO ? 2 * t : t; /* a row apart */\n"
                "    const long rows = a->ly + %d, blocks = st_min(omp_get_num_threads(), st_max(1, rows / %d));\n"
                "    const long b_lo = %d + (t < blocks ? rows * t / blocks : rows);\n"
                "    const long b_hi = %d + (t < blocks ? rows * (t + 1) / blocks : rows);\n",
            hi - lo, 2 * most + 1, lo, lo);
  else
    fprintf(fo, "  {\n    const long row = 0, b_lo = %d, b_hi = a->ly + %d;\n", lo, hi);
  fprintf(fo, "    pipe%d_rows(a, row, b_lo, b_hi", q);
  for (int f = 0; f < p->nfields; ++f)
    if (used[f]) fprintf(fo, ", fld_%s", field(p, f));
  fprintf(fo, ");\n  }\n}\n\n");
}

static void emit_exchange(FILE *o, const st_program *p, const st_exchange *e) {
  fprintf(o, "  { /* halo exchange:");
  for (int m = 0; m < e->nfields; ++m) fprintf(o, " %s", field(p, e->fields[m]));
  fprintf(o, " */\n    static const int xf[] = {");
  for (int m = 0; m < e->nfields; ++m) fprintf(o, "%s%d", m ? ", " : "", e->fields[m]);
  fprintf(o, "};\n    if (hk->halo(hk->halo_ctx, xf, %d)) return 3;\n  }\n", e->nfields);
}

int stencil_generate(const st_program *p, const st_plan *plan, mapp_backend backend, const stencil_debug *debug,
                     char **source) {
  if (backend == MAPP_BACKEND_CUDA) return stencil_generate_cuda(p, plan, debug, source);
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  if (!o) return mapp_fail(MAPP_ERR_SYSTEM, "cannot open a memory stream for the generated source");
  char cls[16], dbg[256];
  st_class_name(plan->cls, cls, sizeof cls);
  stencil_debug_describe(debug, p, dbg, sizeof dbg);
  fprintf(o, "/* Generated by mapp-stencil: the whole %s step for code-path class '%s',\n"
             " * backend %s, debug passes %s. %d stencil calls in %d loops (%d passes over the rows), %d regions\n"
             " * kept, %d removed, %d of %d temporaries demoted to locals, the rest in %d pooled arrays. */\n",
          p->name, cls, mapp_backend_name(backend), dbg, p->ncalls, plan->ngroups, plan->npipes, plan->nregions_kept,
          plan->nregions_removed, plan->ndemoted, plan->ntemps, plan->nslots);
  fprintf(o, "#include \"%s\"\n", p->bodies);
  bool columns = false;
  for (int q = 0; q < plan->npipes; ++q) columns |= st_pipe_is_column(p, plan, &plan->pipes[q]);
  fprintf(o, "%s\n", columns && backend == MAPP_BACKEND_OMP ? "#include <omp.h>\n" : "");
  fprintf(o, "const int stencil_generated_nfields = %d;\n", p->nfields);
  fprintf(o, "const int stencil_generated_nslots = %d;\n", plan->nslots);
  fprintf(o, "const int stencil_generated_slot[%d] = {", p->nfields);
  for (int f = 0; f < p->nfields; ++f) fprintf(o, "%s%d", f ? ", " : "", plan->slot[f]);
  fprintf(o, "};\n\n");
  stencil_emit_call_macros(o, p, plan);
  /* The group functions first, then the step that calls them in order.
   * Each group copies the arguments into a local: stores through the field
   * pointers cannot alias it, so its scalars stay in registers. */
  char *body = NULL;
  size_t body_len = 0;
  FILE *b = open_memstream(&body, &body_len);
  if (!b) {
    fclose(o);
    free(buf);
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot open a memory stream for the generated source");
  }
  int e = 0;
  for (int q = 0; q < plan->npipes; ++q) {
    const st_pipe *pipe = &plan->pipes[q];
    /* exchanges come only before a pipe's first group (make_pipes) */
    while (e < plan->nexchanges && plan->exchanges[e].before == plan->groups[pipe->first].first)
      emit_exchange(b, p, &plan->exchanges[e++]);
    if (st_pipe_is_column(p, plan, pipe)) emit_column_pipe(o, b, p, plan, q, backend);
    else if (pipe->count > 1) emit_pipe(o, b, p, plan, q);
    else emit_group(o, b, p, plan, pipe->first, backend, debug);
  }
  fclose(b);
  fprintf(o, "\nint stencil_generated_step(const stencil_args *args, double *const *f, stencil_hooks *hk);\n"
             "int stencil_generated_step(const stencil_args *args, double *const *f, stencil_hooks *hk) {\n"
             "  const stencil_args *const a = args;\n  (void)a;\n%s", body ? body : "");
  free(body);
  fprintf(o, "  return 0;\n}\n");
  if (fclose(o) != 0) {
    free(buf);
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot write the generated source");
  }
  *source = buf;
  return MAPP_OK;
}
