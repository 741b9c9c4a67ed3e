/* Program tables (lookup in the registry, checks, the text the cache key hashes),
 * code-path classes, regions, and the validity of fields through a step
 * (what the halo schedule of eager and of the plan follow). */
#include "stencil_program.h"

#include <stdio.h>
#include <string.h>

#include "mapp_error.h"

/* ------------------------------------------------------------ tables */

const st_program_entry *st_program_find(const char *name) {
  for (const st_program_entry *e = st_programs; e->name; ++e)
    if (!strcmp(e->name, name)) return e;
  return NULL;
}

int st_add_field(st_program *p, const char *name, int dims, st_stagger stagger) {
  if (p->nfields < ST_MAX_FIELDS) p->fields[p->nfields] = (st_field){name, dims, ST_HALO, stagger};
  return p->nfields++;
}

void st_add_fields(st_program *p, const st_field_def *defs, int n, int dims) {
  for (int f = 0; f < n; ++f) st_add_field(p, defs[f].name, dims, defs[f].stagger);
}

void st_add_call(st_program *p, st_call c) {
  if (p->ncalls < ST_MAX_CALLS) p->calls[p->ncalls] = c;
  ++p->ncalls;
}

int st_field_find(const st_program *p, const char *name) {
  for (int f = 0; f < p->nfields; ++f)
    if (!strcmp(p->fields[f].name, name)) return f;
  return -1;
}

static int check_field_ref(const st_program *p, const st_call *c, int f) {
  if (f < 0 || f >= p->nfields)
    return mapp_fail(MAPP_ERR_INPUT, "program %s: stencil %s names field %d of %d", p->name, c->name, f, p->nfields);
  return MAPP_OK;
}

/* Are the vertical parts of call c consistent: its fields all of its
 * dimension; in a 2-D call no order, levels or vertical offsets; in a 3-D
 * one a body and no horizontal regions, and its own output read across
 * levels only where its order has already written them (below going
 * forward, above going backward), and then at its own column. */
static int check_vertical(const st_program *p, const st_call *c) {
  int dims = p->fields[c->out].dims;
  for (int n = 0; n < c->nin; ++n)
    if (p->fields[c->in[n].field].dims != dims)
      return mapp_fail(MAPP_ERR_INPUT, "program %s: stencil %s mixes 2-D and 3-D fields", p->name, c->name);
  bool vertical = c->order != ST_K_PARALLEL || c->k.lo_at != ST_AT_NONE || c->k.hi_at != ST_AT_NONE;
  for (int n = 0; n < c->nin; ++n) vertical |= c->in[n].dk_lo || c->in[n].dk_hi;
  if (dims == 2 && vertical)
    return mapp_fail(MAPP_ERR_INPUT, "program %s: 2-D stencil %s has a vertical order, interval or offset", p->name, c->name);
  if (dims == 3 && (c->nregions || !c->body))
    return mapp_fail(MAPP_ERR_INPUT, "program %s: 3-D stencil %s has horizontal regions (2-D calls only)", p->name, c->name);
  for (int n = 0; n < c->nin; ++n) {
    const st_input *in = &c->in[n];
    if (in->field != c->out || (!in->dk_lo && !in->dk_hi)) continue;
    bool ordered = (c->order == ST_K_FORWARD && in->dk_hi < 0) || (c->order == ST_K_BACKWARD && in->dk_lo > 0);
    bool column = !in->di_lo && !in->di_hi && !in->dj_lo && !in->dj_hi;
    if (!ordered || !column)
      return mapp_fail(MAPP_ERR_INPUT, "program %s: stencil %s reads its own output at levels its order has not written",
                       p->name, c->name);
  }
  return MAPP_OK;
}

static int check_call(const st_program *p, int k) {
  const st_call *c = &p->calls[k];
  if (!c->name || (!c->body && !c->nregions))
    return mapp_fail(MAPP_ERR_INPUT, "program %s: call %d has no name, or neither a body nor regions", p->name, k);
  for (int m = 0; m < k; ++m)
    if (!strcmp(p->calls[m].name, c->name))
      return mapp_fail(MAPP_ERR_INPUT, "program %s: two stencils are called %s", p->name, c->name);
  if (c->nin < 0 || c->nin > ST_MAX_IN || c->nregions < 0 || c->nregions > ST_MAX_REGIONS)
    return mapp_fail(MAPP_ERR_INPUT, "program %s: stencil %s has %d inputs and %d regions (at most %d and %d)",
                     p->name, c->name, c->nin, c->nregions, ST_MAX_IN, ST_MAX_REGIONS);
  MAPP_TRY(check_field_ref(p, c, c->out));
  for (int n = 0; n < c->nin; ++n) MAPP_TRY(check_field_ref(p, c, c->in[n].field));
  const st_extent *e = &c->extent;
  if (e->i.lo < -ST_HALO || e->i.hi > ST_HALO || e->j.lo < -ST_HALO || e->j.hi > ST_HALO)
    return mapp_fail(MAPP_ERR_INPUT, "program %s: the extent of stencil %s leaves the padded arrays", p->name, c->name);
  return check_vertical(p, c);
}

int st_program_check(const st_program *p) {
  if (p->nfields > ST_MAX_FIELDS || p->ncalls > ST_MAX_CALLS)
    return mapp_fail(MAPP_ERR_INPUT, "program %s: %d fields and %d calls (at most %d and %d)", p->name, p->nfields,
                     p->ncalls, ST_MAX_FIELDS, ST_MAX_CALLS);
  if (p->nstate < 1 || p->nstate > p->nfields)
    return mapp_fail(MAPP_ERR_INPUT, "program %s: %d state fields of %d", p->name, p->nstate, p->nfields);
  for (int f = 0; f < p->nfields; ++f) {
    const st_field *x = &p->fields[f];
    if (!x->name || st_field_find(p, x->name) != f)
      return mapp_fail(MAPP_ERR_INPUT, "program %s: field %d has no name or a name used before", p->name, f);
    /* the arrays (each level of a 3-D one) are padded by ST_HALO */
    if ((x->dims != 2 && x->dims != 3) || x->halo != ST_HALO)
      return mapp_fail(MAPP_ERR_INPUT, "program %s: field %s is %d-D with a halo of %d (2-D or 3-D, halo %d)", p->name,
                       x->name, x->dims, x->halo, ST_HALO);
  }
  for (int k = 0; k < p->ncalls; ++k) MAPP_TRY(check_call(p, k));
  return MAPP_OK;
}

static int drop_call(st_program *p, const char *drop) {
  int k = 0;
  while (k < p->ncalls && strcmp(p->calls[k].name, drop)) ++k;
  if (k == p->ncalls) return mapp_fail(MAPP_ERR_INPUT, "no stencil '%s' to drop from the step", drop);
  memmove(&p->calls[k], &p->calls[k + 1], (size_t)(p->ncalls - k - 1) * sizeof p->calls[0]);
  --p->ncalls;
  return MAPP_OK;
}

int st_program_make(st_program *p, const char *name, const char *drop) {
  memset(p, 0, sizeof *p);
  const st_program_entry *e = st_program_find(name);
  if (!e) return mapp_fail(MAPP_ERR_INPUT, "unknown program '%s' (choose one of %s)", name, st_program_choices);
  p->name = e->name;
  MAPP_TRY(e->build(p));
  MAPP_TRY(st_program_check(p));
  if (drop) MAPP_TRY(drop_call(p, drop));
  return MAPP_OK;
}

static void write_grange(FILE *o, const st_grange *g) { fprintf(o, " %d%+d:%d%+d", g->lo_at, g->lo, g->hi_at, g->hi); }

void st_program_write(const st_program *p, FILE *o) {
  fprintf(o, "program %s bodies %s state %d\n", p->name, p->bodies, p->nstate);
  for (int f = 0; f < p->nfields; ++f) {
    const st_field *x = &p->fields[f];
    fprintf(o, "field %s dims %d halo %d stagger %d\n", x->name, x->dims, x->halo, (int)x->stagger);
  }
  for (int k = 0; k < p->ncalls; ++k) {
    const st_call *c = &p->calls[k];
    fprintf(o, "call %s body %s out %d extent %d:%d,%d:%d order %d levels", c->name, c->body ? c->body : "-", c->out,
            c->extent.i.lo, c->extent.i.hi, c->extent.j.lo, c->extent.j.hi, (int)c->order);
    write_grange(o, &c->k);
    fprintf(o, " in");
    for (int n = 0; n < c->nin; ++n)
      fprintf(o, " %d[%d:%d,%d:%d,%d:%d]", c->in[n].field, c->in[n].di_lo, c->in[n].di_hi, c->in[n].dj_lo,
              c->in[n].dj_hi, c->in[n].dk_lo, c->in[n].dk_hi);
    for (int r = 0; r < c->nregions; ++r) {
      fprintf(o, " region %s", c->regions[r].body);
      write_grange(o, &c->regions[r].i);
      write_grange(o, &c->regions[r].j);
    }
    fprintf(o, "\n");
  }
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

static const st_extent padded = ST_EXT_PADDED;

void st_validity_start(st_validity *v, const st_program *p) {
  memset(v, 0, sizeof *v);
  for (int f = 0; f < p->nstate; ++f) {
    v->valid[f] = true;
    v->box[f] = (st_extent)ST_EXT_0;
    v->levels[f] = ST_K_ALL;
  }
}

static bool span_within(st_span inner, st_span outer) { return inner.lo >= outer.lo && inner.hi <= outer.hi; }

/* ---- levels: ranges whose ends are anchored at 0 or at nz ---- */

/* End a is at or below end b for every nz >= ST_NZ_MIN. */
static bool end_le(signed char a_at, int a, signed char b_at, int b) {
  if (a_at == b_at) return a <= b;
  return a_at == ST_AT_LO ? a <= ST_NZ_MIN + b : false;
}
static bool lo_le(const st_grange *a, const st_grange *b) { return end_le(a->lo_at, a->lo, b->lo_at, b->lo); }
static bool hi_le(const st_grange *a, const st_grange *b) { return end_le(a->hi_at, a->hi, b->hi_at, b->hi); }
static bool levels_empty(const st_grange *r) { return end_le(r->hi_at, r->hi, r->lo_at, r->lo); }
static bool levels_within(const st_grange *inner, const st_grange *outer) {
  return levels_empty(inner) || (lo_le(outer, inner) && hi_le(inner, outer));
}

bool st_levels_disjoint(const st_grange *a, const st_grange *b) {
  return end_le(a->hi_at, a->hi, b->lo_at, b->lo) || end_le(b->hi_at, b->hi, a->lo_at, a->lo);
}

st_grange st_call_levels(const st_call *c) {
  st_grange r = c->k;
  if (r.lo_at == ST_AT_NONE) r.lo_at = ST_AT_LO, r.lo = 0;
  if (r.hi_at == ST_AT_NONE) r.hi_at = ST_AT_HI, r.hi = 0;
  return r;
}

void st_call_level_bounds(const st_call *c, long nz, long *lo, long *hi) {
  st_grange k = st_call_levels(c);
  *lo = k.lo_at == ST_AT_LO ? k.lo : nz + k.lo;
  *hi = k.hi_at == ST_AT_LO ? k.hi : nz + k.hi;
}

/* The levels call c reads of input n before it runs, clipped to the
 * column. A sequential call reading its own output below (forward) or
 * above (backward) needs only the levels beyond its interval: it writes
 * the others itself, before it reads them. */
static st_grange read_levels(const st_call *c, int n) {
  const st_input *in = &c->in[n];
  st_grange k = st_call_levels(c), r = k;
  r.lo += in->dk_lo, r.hi += in->dk_hi;
  if (in->field == c->out && c->order == ST_K_FORWARD && in->dk_hi < 0) r.hi_at = k.lo_at, r.hi = k.lo;
  if (in->field == c->out && c->order == ST_K_BACKWARD && in->dk_lo > 0) r.lo_at = k.hi_at, r.lo = k.hi;
  if (r.lo_at == ST_AT_LO && r.lo < 0) r.lo = 0;
  if (r.hi_at == ST_AT_HI && r.hi > 0) r.hi = 0;
  return r;
}

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

int st_halo_needs(const st_call *c, const st_validity *v, int fields[ST_MAX_FIELDS]) {
  int n = 0;
  static const st_grange column = ST_K_ALL;
  for (int k = 0; k < c->nin; ++k) {
    int f = c->in[k].field;
    st_extent need = read_box(c, k);
    st_grange levels = read_levels(c, k);
    if (!v->valid[f]) return -1; /* never written: a program error */
    if (!levels_within(&levels, &v->levels[f])) return -1; /* levels never written */
    if (span_within(need.i, v->box[f].i) && span_within(need.j, v->box[f].j)) continue;
    /* Only data valid on the whole interior of every level can be
     * completed by an exchange. */
    if (!span_within(ST_EXT_0.i, v->box[f].i) || !span_within(ST_EXT_0.j, v->box[f].j) ||
        !levels_within(&column, &v->levels[f]))
      return -1;
    bool listed = false;
    for (int m = 0; m < n; ++m) listed |= fields[m] == f;
    if (!listed) fields[n++] = f;
  }
  return n;
}

void st_validity_after_exchange(st_validity *v, int field) { v->box[field] = padded; }

/* A call writing levels next to or over those already written extends
 * them (the boundary intervals and the inner one of one field); otherwise
 * its levels replace them. */
void st_validity_after_call(st_validity *v, const st_call *c) {
  if (!c->body) return; /* regions only: fills ghosts of data already valid */
  st_grange mine = st_call_levels(c), *old = &v->levels[c->out];
  bool touching = v->valid[c->out] && end_le(mine.lo_at, mine.lo, old->hi_at, old->hi) &&
                  end_le(old->lo_at, old->lo, mine.hi_at, mine.hi);
  if (touching) {
    if (!lo_le(old, &mine)) old->lo_at = mine.lo_at, old->lo = mine.lo;
    if (!hi_le(&mine, old)) old->hi_at = mine.hi_at, old->hi = mine.hi;
  } else {
    *old = mine;
  }
  v->valid[c->out] = true;
  v->box[c->out] = c->extent;
}
