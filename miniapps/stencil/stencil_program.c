/* The shallow-water step as a list of stencil calls, and the analysis the
 * generator makes of it. */
#include "stencil_program.h"

#include <stdio.h>
#include <string.h>

#include "mapp_error.h"

const char *const st_field_names[ST_NFIELDS] = {
    "h", "u", "v", "div", "ke", "zeta", "h_face_x", "flux_x", "h_x", "h_face_y", "flux_y",
    "h_corner", "pv", "mass_flux_u", "mass_flux_v", "bernoulli", "coriolis_u", "coriolis_v",
    "damping_u", "damping_v", "tendency_u", "tendency_v"};

int st_field_find(const char *name) {
  for (int f = 0; f < ST_NFIELDS; ++f)
    if (!strcmp(st_field_names[f], name)) return f;
  return -1;
}

/* ------------------------------------------------------------ the step */

/* Extents: padded (the whole array), interior, one cell out, and the
 * advection's x-flux and y-flux shapes (the x pass runs 2 rows into the
 * halo so the y pass needs no exchange in between). */
#define EXT(ilo, ihi, jlo, jhi) ((st_extent){{ilo, ihi}, {jlo, jhi}})
#define EXT_PADDED EXT(-ST_HALO, ST_HALO, -ST_HALO, ST_HALO)
#define EXT_0 EXT(0, 0, 0, 0)
#define EXT_1 EXT(-1, 1, -1, 1)
#define EXT_FX EXT(0, 1, -2, 2)
#define EXT_AX EXT(0, 0, -2, 2)
#define EXT_FY EXT(0, 0, 0, 1)

#define IN(f, dil, dih, djl, djh) ((st_input){f, dil, dih, djl, djh})
#define AT(f) IN(f, 0, 0, 0, 0)
#define IN_ALL(f) IN(f, -ST_HALO, ST_HALO, -ST_HALO, ST_HALO)

/* Global ranges. */
#define G_ALL ((st_grange){ST_AT_NONE, ST_AT_NONE, 0, 0})
#define G_BELOW ((st_grange){ST_AT_LO, ST_AT_LO, -ST_HALO, 0})  /* ghosts before 0 */
#define G_ABOVE ((st_grange){ST_AT_HI, ST_AT_HI, 0, ST_HALO})   /* ghosts from n on */
#define G_INSIDE ((st_grange){ST_AT_LO, ST_AT_HI, 0, 0})        /* [0, n) */
#define G_FIRST ((st_grange){ST_AT_LO, ST_AT_LO, 0, 1})         /* the line 0 */
#define G_LAST ((st_grange){ST_AT_HI, ST_AT_HI, 0, 1})          /* the line n */

static void add(st_program *p, st_call c) { p->calls[p->ncalls++] = c; }

/* Ghost cells beyond the walls of field f, with the bodies ghost_<q>_*. */
static st_call ghost_fill(const char *name, int f, const char *q) {
  static char bodies[3][8][16];
  int slot = f; /* h, u, v */
  const char *where[8] = {"w", "e", "s", "n", "sw", "se", "nw", "ne"};
  st_grange gi[8] = {G_BELOW, G_ABOVE, G_INSIDE, G_INSIDE, G_BELOW, G_ABOVE, G_BELOW, G_ABOVE};
  st_grange gj[8] = {G_INSIDE, G_INSIDE, G_BELOW, G_ABOVE, G_BELOW, G_BELOW, G_ABOVE, G_ABOVE};
  st_call c = {.name = name, .body = NULL, .out = f, .nin = 1, .in = {IN_ALL(f)}, .extent = EXT_PADDED,
               .nregions = 8};
  for (int r = 0; r < 8; ++r) {
    snprintf(bodies[slot][r], sizeof bodies[slot][r], "ghost_%s_%s", q, where[r]);
    c.regions[r] = (st_region){bodies[slot][r], gi[r], gj[r]};
  }
  return c;
}

int st_program_build(st_program *p, const char *drop) {
  memset(p, 0, sizeof *p);
  /* Ghost cells beyond the walls (regions on edges and corners). */
  add(p, ghost_fill("ghost_h", ST_F_H, "h"));
  add(p, ghost_fill("ghost_u", ST_F_U, "u"));
  add(p, ghost_fill("ghost_v", ST_F_V, "v"));
  /* Mass: flux-limited advection in x, then in y. */
  add(p, (st_call){.name = "h_face_x", .body = "h_face_x", .out = ST_T_HFX, .nin = 2,
                   .in = {IN(ST_F_H, -2, 1, 0, 0), AT(ST_F_U)}, .extent = EXT_FX});
  add(p, (st_call){.name = "flux_x", .body = "flux_x", .out = ST_T_FX, .nin = 2,
                   .in = {AT(ST_F_U), AT(ST_T_HFX)}, .extent = EXT_FX});
  add(p, (st_call){.name = "advect_x", .body = "advect_x", .out = ST_T_HX, .nin = 2,
                   .in = {AT(ST_F_H), IN(ST_T_FX, 0, 1, 0, 0)}, .extent = EXT_AX});
  add(p, (st_call){.name = "h_face_y", .body = "h_face_y", .out = ST_T_HFY, .nin = 2,
                   .in = {IN(ST_T_HX, 0, 0, -2, 1), AT(ST_F_V)}, .extent = EXT_FY});
  add(p, (st_call){.name = "flux_y", .body = "flux_y", .out = ST_T_FY, .nin = 2,
                   .in = {AT(ST_F_V), AT(ST_T_HFY)}, .extent = EXT_FY});
  add(p, (st_call){.name = "advect_y", .body = "advect_y", .out = ST_F_H, .nin = 2,
                   .in = {AT(ST_T_HX), IN(ST_T_FY, 0, 0, 0, 1)}, .extent = EXT_0});
  /* Momentum, with the new depth (forward-backward). */
  add(p, ghost_fill("ghost_h_new", ST_F_H, "h"));
  /* Diagnostics of the old winds (u and v are unchanged until update_u, so
   * they run here, in one loop with the new depth's uses): divergence,
   * kinetic energy, depth at corners, mass flux in y, Bernoulli, vorticity
   * (zero on the free-slip walls: regions), potential vorticity. */
  add(p, (st_call){.name = "divergence", .body = "divergence", .out = ST_T_DIV, .nin = 2,
                   .in = {IN(ST_F_U, 0, 1, 0, 0), IN(ST_F_V, 0, 0, 0, 1)}, .extent = EXT_1});
  add(p, (st_call){.name = "kinetic_energy", .body = "kinetic_energy", .out = ST_T_KE, .nin = 2,
                   .in = {IN(ST_F_U, 0, 1, 0, 0), IN(ST_F_V, 0, 0, 0, 1)}, .extent = EXT_1});
  add(p, (st_call){.name = "h_at_corners", .body = "h_at_corners", .out = ST_T_HQ, .nin = 1,
                   .in = {IN(ST_F_H, -1, 0, -1, 0)}, .extent = EXT_1});
  add(p, (st_call){.name = "mass_flux_v", .body = "mass_flux_v", .out = ST_T_VM, .nin = 2,
                   .in = {AT(ST_F_V), IN(ST_F_H, 0, 0, -1, 0)}, .extent = EXT_1});
  add(p, (st_call){.name = "bernoulli", .body = "bernoulli", .out = ST_T_B, .nin = 2,
                   .in = {AT(ST_F_H), AT(ST_T_KE)}, .extent = EXT_1});
  add(p, (st_call){.name = "vorticity", .body = "vorticity", .out = ST_T_ZETA, .nin = 2,
                   .in = {IN(ST_F_U, 0, 0, -1, 0), IN(ST_F_V, -1, 0, 0, 0)}, .extent = EXT_1, .nregions = 4,
                   .regions = {{"wall_vorticity", G_FIRST, G_ALL}, {"wall_vorticity", G_LAST, G_ALL},
                               {"wall_vorticity", G_ALL, G_FIRST}, {"wall_vorticity", G_ALL, G_LAST}}});
  add(p, (st_call){.name = "potential_vorticity", .body = "potential_vorticity", .out = ST_T_Q, .nin = 2,
                   .in = {AT(ST_T_ZETA), AT(ST_T_HQ)}, .extent = EXT_1});
  /* u first, then v from the new u (forward-backward Coriolis: stable). */
  add(p, (st_call){.name = "coriolis_u", .body = "coriolis_u", .out = ST_T_CU, .nin = 2,
                   .in = {IN(ST_T_Q, 0, 0, 0, 1), IN(ST_T_VM, -1, 0, 0, 1)}, .extent = EXT_0});
  add(p, (st_call){.name = "damping_u", .body = "damping_u", .out = ST_T_DU, .nin = 1,
                   .in = {IN(ST_T_DIV, -1, 0, 0, 0)}, .extent = EXT_0});
  add(p, (st_call){.name = "damping_v", .body = "damping_v", .out = ST_T_DV, .nin = 1,
                   .in = {IN(ST_T_DIV, 0, 0, -1, 0)}, .extent = EXT_0});
  add(p, (st_call){.name = "tendency_u", .body = "tendency_u", .out = ST_T_TU, .nin = 3,
                   .in = {AT(ST_T_CU), IN(ST_T_B, -1, 0, 0, 0), AT(ST_T_DU)}, .extent = EXT_0});
  add(p, (st_call){.name = "update_u", .body = "update_u", .out = ST_F_U, .nin = 2,
                   .in = {AT(ST_F_U), AT(ST_T_TU)}, .extent = EXT_0, .nregions = 1,
                   .regions = {{"wall_velocity", G_FIRST, G_ALL}}});
  add(p, ghost_fill("ghost_u_new", ST_F_U, "u"));
  add(p, (st_call){.name = "mass_flux_u", .body = "mass_flux_u", .out = ST_T_UM, .nin = 2,
                   .in = {AT(ST_F_U), IN(ST_F_H, -1, 0, 0, 0)}, .extent = EXT_1});
  add(p, (st_call){.name = "coriolis_v", .body = "coriolis_v", .out = ST_T_CV, .nin = 2,
                   .in = {IN(ST_T_Q, 0, 1, 0, 0), IN(ST_T_UM, 0, 1, -1, 0)}, .extent = EXT_0});
  add(p, (st_call){.name = "tendency_v", .body = "tendency_v", .out = ST_T_TV, .nin = 3,
                   .in = {AT(ST_T_CV), IN(ST_T_B, 0, 0, -1, 0), AT(ST_T_DV)}, .extent = EXT_0});
  add(p, (st_call){.name = "update_v", .body = "update_v", .out = ST_F_V, .nin = 2,
                   .in = {AT(ST_F_V), AT(ST_T_TV)}, .extent = EXT_0, .nregions = 1,
                   .regions = {{"wall_velocity", G_ALL, G_FIRST}}});
  if (drop) {
    int k = 0;
    while (k < p->ncalls && strcmp(p->calls[k].name, drop)) ++k;
    if (k == p->ncalls) return mapp_fail(MAPP_ERR_INPUT, "no stencil '%s' to drop from the step", drop);
    memmove(&p->calls[k], &p->calls[k + 1], (size_t)(p->ncalls - k - 1) * sizeof p->calls[0]);
    --p->ncalls;
  }
  return MAPP_OK;
}

/* ------------------------------------------------------------ classes */

void st_class_name(int cls, char *buf, size_t len) {
  if (!cls) {
    snprintf(buf, len, "interior");
    return;
  }
  snprintf(buf, len, "%s%s%s%s", cls & ST_EDGE_W ? "w" : "", cls & ST_EDGE_E ? "e" : "",
           cls & ST_EDGE_S ? "s" : "", cls & ST_EDGE_N ? "n" : "");
}

int st_class_of(long i0, long lx, long nx, long j0, long ly, long ny) {
  return (i0 == 0 ? ST_EDGE_W : 0) | (i0 + lx == nx ? ST_EDGE_E : 0) | (j0 == 0 ? ST_EDGE_S : 0) |
         (j0 + ly == ny ? ST_EDGE_N : 0);
}

/* A range pinned near one end only reaches the ranks on that edge. */
static bool range_touches(const st_grange *g, bool at_lo_edge, bool at_hi_edge) {
  if (g->lo_at == ST_AT_LO && g->hi_at == ST_AT_LO) return at_lo_edge;
  if (g->lo_at == ST_AT_HI && g->hi_at == ST_AT_HI) return at_hi_edge;
  return true;
}

bool st_region_touches_class(const st_region *r, int cls) {
  return range_touches(&r->i, cls & ST_EDGE_W, cls & ST_EDGE_E) &&
         range_touches(&r->j, cls & ST_EDGE_S, cls & ST_EDGE_N);
}

static long grange_end(signed char at, int off, long n, long unbounded) {
  return at == ST_AT_NONE ? unbounded : at == ST_AT_LO ? off : n + off;
}

bool st_region_box(const st_region *r, const st_extent *ext, const stencil_args *a, long box[4]) {
  /* local [lo, hi) of i and j: the extent, clipped by the region */
  long ilo = ext->i.lo, ihi = a->lx + ext->i.hi, jlo = ext->j.lo, jhi = a->ly + ext->j.hi;
  long gilo = grange_end(r->i.lo_at, r->i.lo, a->nx, -(1L << 40)) - a->i0;
  long gihi = grange_end(r->i.hi_at, r->i.hi, a->nx, 1L << 40) - a->i0;
  long gjlo = grange_end(r->j.lo_at, r->j.lo, a->ny, -(1L << 40)) - a->j0;
  long gjhi = grange_end(r->j.hi_at, r->j.hi, a->ny, 1L << 40) - a->j0;
  box[0] = ilo > gilo ? ilo : gilo;
  box[1] = ihi < gihi ? ihi : gihi;
  box[2] = jlo > gjlo ? jlo : gjlo;
  box[3] = jhi < gjhi ? jhi : gjhi;
  return box[0] < box[1] && box[2] < box[3];
}

/* ------------------------------------------------------------ validity */

static const st_extent padded = EXT_PADDED;

void st_validity_start(st_validity *v) {
  memset(v, 0, sizeof *v);
  for (int f = 0; f < ST_NSTATE; ++f) {
    v->valid[f] = true;
    v->box[f] = (st_extent)EXT_0;
  }
}

static bool span_within(st_span inner, st_span outer) { return inner.lo >= outer.lo && inner.hi <= outer.hi; }

/* The box call c reads of input n, clipped to the padded array. */
static st_extent read_box(const st_call *c, int n) {
  const st_input *in = &c->in[n];
  st_extent r = {{c->extent.i.lo + in->di_lo, c->extent.i.hi + in->di_hi},
                 {c->extent.j.lo + in->dj_lo, c->extent.j.hi + in->dj_hi}};
  if (r.i.lo < padded.i.lo) r.i.lo = padded.i.lo;
  if (r.i.hi > padded.i.hi) r.i.hi = padded.i.hi;
  if (r.j.lo < padded.j.lo) r.j.lo = padded.j.lo;
  if (r.j.hi > padded.j.hi) r.j.hi = padded.j.hi;
  return r;
}

int st_halo_needs(const st_call *c, const st_validity *v, int fields[ST_NFIELDS]) {
  int n = 0;
  for (int k = 0; k < c->nin; ++k) {
    int f = c->in[k].field;
    st_extent need = read_box(c, k);
    if (!v->valid[f]) return -1; /* never written: a program error */
    if (span_within(need.i, v->box[f].i) && span_within(need.j, v->box[f].j)) continue;
    /* Only data valid on the whole interior can be completed by an exchange. */
    if (!span_within(EXT_0.i, v->box[f].i) || !span_within(EXT_0.j, v->box[f].j)) return -1;
    bool listed = false;
    for (int m = 0; m < n; ++m) listed |= fields[m] == f;
    if (!listed) fields[n++] = f;
  }
  return n;
}

void st_validity_after_exchange(st_validity *v, int field) { v->box[field] = padded; }

void st_validity_after_call(st_validity *v, const st_call *c) {
  if (!c->body) return; /* regions only: fills ghosts of data already valid */
  v->valid[c->out] = true;
  v->box[c->out] = c->extent;
}

/* ------------------------------------------------------------ the plan */

static bool same_extent(const st_extent *a, const st_extent *b) {
  return a->i.lo == b->i.lo && a->i.hi == b->i.hi && a->j.lo == b->j.lo && a->j.hi == b->j.hi;
}

static bool zero_offsets(const st_input *in) { return !in->di_lo && !in->di_hi && !in->dj_lo && !in->dj_hi; }


/* May call k join the group [first, k)? Same extent, a body (no region-only
 * stencil), no exchange in between, what it reads from the group read at its
 * own point only, and nothing the group reads at an offset written by it.
 * The kept regions of a stencil with a body are applied inside the fused
 * loop, as a select on the point's global index (the value eager's region
 * pass leaves), so they do not end a group. */
static bool can_join(const st_program *p, int first, int k, const bool *exchange_before) {
  const st_call *c = &p->calls[k];
  if (!c->body || exchange_before[k]) return false;
  for (int m = first; m < k; ++m) {
    const st_call *prev = &p->calls[m];
    if (!same_extent(&prev->extent, &c->extent)) return false;
    if (!st_regions_inline(prev)) return false; /* its regions run after the loop */
    for (int n = 0; n < c->nin; ++n)
      if (c->in[n].field == prev->out && !zero_offsets(&c->in[n])) return false;
    for (int n = 0; n < prev->nin; ++n)
      if (prev->in[n].field == c->out && !zero_offsets(&prev->in[n])) return false;
  }
  for (int n = 0; n < c->nin; ++n)
    if (c->in[n].field == c->out && !zero_offsets(&c->in[n])) return false;
  return true;
}

bool st_regions_inline(const st_call *c) {
  if (!c->body) return false;
  for (int n = 0; n < c->nin; ++n)
    if (c->in[n].field == c->out && !zero_offsets(&c->in[n])) return false;
  return true;
}

int st_plan_group_of(const st_plan *plan, int c) {
  for (int g = 0; g < plan->ngroups; ++g)
    if (c >= plan->groups[g].first && c < plan->groups[g].first + plan->groups[g].count) return g;
  return -1;
}

static int halo_schedule(const st_program *p, st_plan *plan) {
  st_validity v;
  st_validity_start(&v);
  for (int k = 0; k < p->ncalls; ++k) {
    int need[ST_NFIELDS];
    int n = st_halo_needs(&p->calls[k], &v, need);
    if (n < 0) return mapp_fail(MAPP_ERR_INPUT, "stencil %s reads a field where it was never computed", p->calls[k].name);
    for (int m = 0; m < n; ++m) {
      /* Join the latest exchange if nothing since has written the field:
       * the same data, fewer messages. */
      st_exchange *e = plan->nexchanges ? &plan->exchanges[plan->nexchanges - 1] : NULL;
      bool written = false;
      if (e)
        for (int q = e->before; q < k; ++q) written |= p->calls[q].out == need[m] && p->calls[q].body;
      if (!e || written) {
        e = &plan->exchanges[plan->nexchanges++];
        *e = (st_exchange){.before = k};
      }
      e->fields[e->nfields++] = need[m];
      st_validity_after_exchange(&v, need[m]);
    }
    st_validity_after_call(&v, &p->calls[k]);
  }
  return MAPP_OK;
}

static int pipe_of_group(const st_plan *plan, int g) {
  for (int q = 0; q < plan->npipes; ++q)
    if (g >= plan->pipes[q].first && g < plan->pipes[q].first + plan->pipes[q].count) return q;
  return -1;
}

/* Pooled arrays by liveness in pipes (the loops of one pipe run together,
 * so their arrays must all be distinct). */
static void assign_slots(const st_program *p, st_plan *plan) {
  int first[ST_NFIELDS], last[ST_NFIELDS];
  for (int f = 0; f < ST_NFIELDS; ++f) first[f] = -1, last[f] = -1;
  for (int k = 0; k < p->ncalls; ++k) {
    int g = pipe_of_group(plan, st_plan_group_of(plan, k));
    const st_call *c = &p->calls[k];
    if (first[c->out] < 0) first[c->out] = g;
    if (last[c->out] < g) last[c->out] = g;
    for (int n = 0; n < c->nin; ++n)
      if (last[c->in[n].field] < g) last[c->in[n].field] = g;
  }
  /* Greedy interval colouring in order of first use: a slot is free again
   * after the last pipe that reads its current temporary. */
  int slot_free_after[ST_NFIELDS];
  plan->nslots = 0;
  for (int f = 0; f < ST_NFIELDS; ++f) plan->slot[f] = -1;
  for (int g = 0; g < plan->npipes; ++g)
    for (int f = ST_NSTATE; f < ST_NFIELDS; ++f) {
      if (first[f] != g || plan->demoted[f]) continue;
      int s = 0;
      while (s < plan->nslots && slot_free_after[s] >= g) ++s;
      if (s == plan->nslots) ++plan->nslots;
      plan->slot[f] = s;
      slot_free_after[s] = last[f];
    }
}

/* How group g touches each field: written (as an array), and the rows it
 * reads around its own (dj_lo..dj_hi); demoted temporaries never leave it. */
typedef struct {
  bool writes[ST_NFIELDS], reads[ST_NFIELDS];
  int dj_lo[ST_NFIELDS], dj_hi[ST_NFIELDS];
} group_access;

static void access_of(const st_program *p, const st_plan *plan, int g, group_access *x) {
  memset(x, 0, sizeof *x);
  const st_group *gr = &plan->groups[g];
  for (int k = gr->first; k < gr->first + gr->count; ++k) {
    const st_call *c = &p->calls[k];
    for (int n = 0; n < c->nin; ++n) {
      int f = c->in[n].field;
      if (plan->demoted[f]) continue;
      if (!x->reads[f] || c->in[n].dj_lo < x->dj_lo[f]) x->dj_lo[f] = c->in[n].dj_lo;
      if (!x->reads[f] || c->in[n].dj_hi > x->dj_hi[f]) x->dj_hi[f] = c->in[n].dj_hi;
      x->reads[f] = true;
    }
    if (!plan->demoted[c->out]) x->writes[c->out] = true;
  }
}

/* Can group g be swept row by row: a loop over its extent whose regions
 * all apply inside it (none runs after the loop)? */
static bool row_sweepable(const st_program *p, const st_plan *plan, int g) {
  const st_group *gr = &plan->groups[g];
  for (int k = gr->first; k < gr->first + gr->count; ++k) {
    if (!p->calls[k].body) return false;
    bool kept = false;
    for (int r = 0; r < p->calls[k].nregions; ++r) kept |= plan->region_kept[k][r];
    if (kept && !st_regions_inline(&p->calls[k])) return false;
  }
  return true;
}

/* The smallest lag of group g behind the pipe's first row that respects
 * every dependence on the groups before it in the pipe (lag[] theirs);
 * -1 beyond ST_MAX_LAG. Flow: g reads row r + dj_hi of what an earlier
 * group writes, so it trails by dj_hi. Anti: an earlier group reads row
 * r - dj_lo last of what g overwrites at r, so g trails by -dj_lo. Output:
 * not ahead. */
static int lag_for(const st_program *p, const st_plan *plan, const st_pipe *pipe, int g) {
  group_access mine, prev;
  access_of(p, plan, g, &mine);
  int lag = 0;
  for (int m = 0; m < pipe->count; ++m) {
    access_of(p, plan, pipe->first + m, &prev);
    int need = pipe->lag[m];
    for (int f = 0; f < ST_NFIELDS; ++f) {
      if (prev.writes[f] && mine.reads[f] && pipe->lag[m] + mine.dj_hi[f] > need) need = pipe->lag[m] + mine.dj_hi[f];
      if (prev.reads[f] && mine.writes[f] && pipe->lag[m] - prev.dj_lo[f] > need) need = pipe->lag[m] - prev.dj_lo[f];
    }
    if (need > lag) lag = need;
  }
  return lag <= ST_MAX_LAG ? lag : -1;
}

/* Pipes: each group alone, or (ST_PLAN_ROWS) consecutive row-sweepable
 * groups with no halo exchange between them swept together. */
static void make_pipes(const st_program *p, st_plan *plan, bool rows, const bool *exchange_before) {
  plan->npipes = 0;
  for (int g = 0; g < plan->ngroups; ++g) {
    st_pipe *q = plan->npipes ? &plan->pipes[plan->npipes - 1] : NULL;
    int lag = -1;
    if (rows && q && !exchange_before[plan->groups[g].first] && row_sweepable(p, plan, g) &&
        row_sweepable(p, plan, q->first + q->count - 1))
      lag = lag_for(p, plan, q, g);
    if (lag >= 0) {
      q->lag[q->count++] = lag;
    } else {
      q = &plan->pipes[plan->npipes++];
      *q = (st_pipe){.first = g, .count = 1};
    }
  }
}

int st_plan_make(const st_program *p, int cls, st_plan_level level, st_plan *plan) {
  memset(plan, 0, sizeof *plan);
  bool fuse = level != ST_PLAN_SEPARATE;
  plan->cls = cls;
  plan->fuse = fuse;
  MAPP_TRY(halo_schedule(p, plan));
  bool exchange_before[ST_MAX_CALLS] = {false};
  for (int e = 0; e < plan->nexchanges; ++e) exchange_before[plan->exchanges[e].before] = true;
  /* Region expansion: keep only the regions that can touch this class. */
  for (int k = 0; k < p->ncalls; ++k)
    for (int r = 0; r < p->calls[k].nregions; ++r) {
      plan->region_kept[k][r] = st_region_touches_class(&p->calls[k].regions[r], cls);
      plan->region_kept[k][r] ? ++plan->nregions_kept : ++plan->nregions_removed;
    }
  /* Fusion of consecutive stencils. */
  for (int k = 0; k < p->ncalls; ++k) {
    st_group *g = plan->ngroups ? &plan->groups[plan->ngroups - 1] : NULL;
    if (fuse && g && p->calls[g->first].body && can_join(p, g->first, k, exchange_before))
      ++g->count;
    else
      plan->groups[plan->ngroups++] = (st_group){k, 1};
  }
  /* Transients: demoted to a local where written and read only inside one
   * fused loop at the point itself; the rest share pooled arrays. */
  bool used[ST_NFIELDS] = {false};
  for (int k = 0; k < p->ncalls; ++k) used[p->calls[k].out] = true;
  for (int f = ST_NSTATE; f < ST_NFIELDS; ++f) {
    if (!used[f]) continue;
    ++plan->ntemps;
    int writer = -1, writes = 0;
    bool local = fuse;
    for (int k = 0; k < p->ncalls; ++k)
      if (p->calls[k].out == f) writer = k, ++writes;
    for (int k = 0; k < p->ncalls && local; ++k)
      for (int n = 0; n < p->calls[k].nin; ++n)
        if (p->calls[k].in[n].field == f &&
            (st_plan_group_of(plan, k) != st_plan_group_of(plan, writer) || !zero_offsets(&p->calls[k].in[n])))
          local = false;
    plan->demoted[f] = local && writes == 1 && p->calls[writer].body;
    plan->ndemoted += plan->demoted[f];
  }
  make_pipes(p, plan, level == ST_PLAN_ROWS, exchange_before);
  assign_slots(p, plan);
  return MAPP_OK;
}

/* ------------------------------------------------------------ traffic */

static double cells(const st_extent *e, long lx, long ly) {
  return (double)(lx + e->i.hi - e->i.lo) * (double)(ly + e->j.hi - e->j.lo);
}

double st_traffic_eager(const st_program *p, long lx, long ly) {
  double bytes = 0;
  for (int k = 0; k < p->ncalls; ++k) {
    const st_call *c = &p->calls[k];
    if (!c->body) continue; /* ghost fills touch only the halo: not counted */
    bytes += 8.0 * (c->nin + 1) * cells(&c->extent, lx, ly);
  }
  return bytes;
}

/* Fields group g moves that its pipe has not touched yet (read[] and
 * written[] carry what the pipe's earlier loops touched: in cache). */
static int group_moves(const st_program *p, const st_plan *plan, const st_group *gr, bool read[ST_NFIELDS],
                       bool written[ST_NFIELDS]) {
  int moved = 0;
  for (int k = gr->first; k < gr->first + gr->count; ++k) {
    const st_call *c = &p->calls[k];
    for (int n = 0; n < c->nin; ++n) {
      int f = c->in[n].field;
      if (plan->demoted[f] || read[f] || written[f]) continue; /* in registers or cache */
      read[f] = true, ++moved;
    }
    if (!plan->demoted[c->out] && !written[c->out]) written[c->out] = true, ++moved;
  }
  return moved;
}

double st_traffic_plan(const st_program *p, const st_plan *plan, long lx, long ly) {
  double bytes = 0;
  for (int q = 0; q < plan->npipes; ++q) {
    const st_pipe *pipe = &plan->pipes[q];
    bool read[ST_NFIELDS] = {false}, written[ST_NFIELDS] = {false};
    for (int g = pipe->first; g < pipe->first + pipe->count; ++g) {
      const st_group *gr = &plan->groups[g];
      const st_call *c0 = &p->calls[gr->first];
      if (c0->body) bytes += 8.0 * group_moves(p, plan, gr, read, written) * cells(&c0->extent, lx, ly);
    }
  }
  return bytes;
}
