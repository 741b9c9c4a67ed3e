/* Eager mode (the seed's "Python" mode): walk the step's list and call each
 * stencil's own compiled kernel, one at a time. Each call validates its
 * arguments, exchanges the halos its reads need, takes its temporaries from
 * the pool, evaluates its regions against this rank's box at run time and
 * runs its own parallel loop. No artificial slowness: just no view of the
 * whole program. */
#include <stdlib.h>
#include <string.h>

#include "stencil.h"
#include "stencil_eager_kernels.h"

/* A body of the program by name: its kernels over one level and over levels. */
static const st_eager_body *kernel_find(const st_eager_body *bodies, const char *name) {
  for (const st_eager_body *e = bodies; e->name; ++e)
    if (!strcmp(e->name, name)) return e;
  return NULL;
}

/* The kernels of each call, resolved once (like stencils compiled at init). */
typedef struct {
  st_eager_kernel body[ST_MAX_CALLS];
  st_eager_kernel3 body3[ST_MAX_CALLS];
  st_eager_kernel region[ST_MAX_CALLS][ST_MAX_REGIONS];
} eager_table;

int stencil_eager_init(stencil_state *s) {
  eager_table *t = NULL;
  MAPP_TRY(mapp_calloc((void **)&t, 1, sizeof *t, "eager kernel table"));
  s->eager_kernels = t;
  const st_eager_body *bodies = st_program_find(s->program.name)->bodies;
  for (int k = 0; k < s->program.ncalls; ++k) {
    const st_call *c = &s->program.calls[k];
    bool vertical = s->program.fields[c->out].dims == 3;
    const st_eager_body *e = c->body ? kernel_find(bodies, c->body) : NULL;
    if (c->body && !e) return mapp_fail(MAPP_ERR_SYSTEM, "stencil %s: no kernel for body %s", c->name, c->body);
    if (e && vertical) t->body3[k] = e->fn3;
    else if (e) t->body[k] = e->fn;
    for (int r = 0; r < c->nregions; ++r) {
      e = kernel_find(bodies, c->regions[r].body);
      if (!e) return mapp_fail(MAPP_ERR_SYSTEM, "stencil %s: no kernel for region %s", c->name, c->regions[r].body);
      t->region[k][r] = e->fn;
    }
  }
  /* The pool holds every temporary of a step at once: eager cannot know
   * which ones could share memory. */
  int temporaries = s->program.nfields - s->program.nstate;
  size_t bytes = (size_t)temporaries * (s->field_elems * sizeof(double) + MAPP_POOL_ALIGN);
  MAPP_TRY(mapp_pool_init(&s->pool, bytes));
  /* Each temporary's slot is first-touched now, as the step will take it. */
  size_t mark = mapp_pool_mark(&s->pool);
  for (int f = 0; f < temporaries; ++f) {
    double *slot;
    MAPP_TRY(mapp_pool_alloc(&s->pool, s->field_elems * sizeof(double), (void **)&slot));
    stencil_field_first_touch(s, slot);
  }
  mapp_pool_release(&s->pool, mark);
  return MAPP_OK;
}

void stencil_eager_free(stencil_state *s) {
  free(s->eager_kernels);
  s->eager_kernels = NULL;
  mapp_pool_free(&s->pool);
}

/* The argument checks a stencil call makes before it runs. */
static int validate_call(const stencil_state *s, const st_call *c, int k) {
  if (c->out < 0 || c->out >= s->program.nfields || c->nin > ST_MAX_IN)
    return mapp_fail(MAPP_ERR_SYSTEM, "stencil %s (call %d): bad field arguments", c->name, k);
  for (int n = 0; n < c->nin; ++n)
    if (!s->fields[c->in[n].field])
      return mapp_fail(MAPP_ERR_SYSTEM, "stencil %s: input %s was never computed", c->name,
                       s->program.fields[c->in[n].field].name);
  const st_extent *e = &c->extent;
  if (e->i.lo < -ST_HALO || e->i.hi > ST_HALO || e->j.lo < -ST_HALO || e->j.hi > ST_HALO)
    return mapp_fail(MAPP_ERR_SYSTEM, "stencil %s: extent leaves the padded arrays", c->name);
  return MAPP_OK;
}

/* Levels [k_lo, k_hi) of box (a 2-D call: level 0). */
static void scan(stencil_state *s, const st_call *c, const long box[4], long k_lo, long k_hi) {
  const stencil_debug *d = &s->cfg.debug;
  const char *field = s->program.fields[c->out].name;
  for (long kz = k_lo; kz < k_hi; ++kz) {
    double *x = s->fields[c->out] + kz * s->args.plane;
    if (d->nan) st_debug_scan(&s->args, &s->hooks, ST_CHECK_NAN, c->name, field, x, box[0], box[1], box[2], box[3]);
    if (d->negative[c->out])
      st_debug_scan(&s->args, &s->hooks, ST_CHECK_NEGATIVE, c->name, field, x, box[0], box[1], box[2], box[3]);
  }
}

/* Checks over what the call wrote (its extent and levels; for a
 * region-only stencil, each region's box on this rank), then the trace (of
 * level 0) and the progress. */
static void debug_after(stencil_state *s, const st_call *c, const long box[6]) {
  const stencil_debug *d = &s->cfg.debug;
  double *x = s->fields[c->out];
  if (c->body) {
    scan(s, c, box, box[4], box[5]);
  } else {
    for (int r = 0; r < c->nregions; ++r) {
      long rbox[4];
      if (st_region_box(&c->regions[r], &c->extent, &s->args, rbox)) scan(s, c, rbox, 0, 1);
    }
  }
  if (d->trace) st_debug_trace(&s->args, &s->hooks, c->name, s->program.fields[c->out].name, x);
  if (d->progress) st_debug_progress(&s->hooks, c->name);
}

int stencil_eager_step(stencil_state *s) {
  const eager_table *t = s->eager_kernels;
  const stencil_args *a = &s->args;
  size_t mark = mapp_pool_mark(&s->pool);
  for (int f = s->program.nstate; f < s->program.nfields; ++f) s->fields[f] = NULL;
  st_validity valid;
  st_validity_start(&valid, &s->program);
  int status = MAPP_OK;
  for (int k = 0; k < s->program.ncalls && status == MAPP_OK; ++k) {
    const st_call *c = &s->program.calls[k];
    MAPP_TRY(validate_call(s, c, k));
    /* Halos this call reads that are not valid yet. */
    int need[ST_MAX_FIELDS];
    int n = st_halo_needs(c, &valid, need);
    if (n < 0) return mapp_fail(MAPP_ERR_SYSTEM, "stencil %s reads a field where it was never computed", c->name);
    if (n > 0) {
      MAPP_TRY(s->hooks.halo(s->hooks.halo_ctx, need, n));
      for (int m = 0; m < n; ++m) st_validity_after_exchange(&valid, need[m]);
      ++s->eager_exchanges;
    }
    /* The output of a temporary comes from the pool. */
    if (!s->fields[c->out])
      MAPP_TRY(mapp_pool_alloc(&s->pool, s->field_elems * sizeof(double), (void **)&s->fields[c->out]));
    double *in[ST_MAX_IN];
    for (int m = 0; m < c->nin; ++m) in[m] = s->fields[c->in[m].field];
    long box[6] = {c->extent.i.lo, a->lx + c->extent.i.hi, c->extent.j.lo, a->ly + c->extent.j.hi, 0, 1};
    if (t->body3[k]) {
      st_call_level_bounds(c, a->nz, &box[4], &box[5]);
      t->body3[k](a, box, c->order == ST_K_BACKWARD ? -1 : 1, in, s->fields[c->out]);
    } else if (c->body) {
      t->body[k](a, box, in, s->fields[c->out]);
    }
    for (int r = 0; r < c->nregions; ++r) {
      long rbox[4];
      if (st_region_box(&c->regions[r], &c->extent, a, rbox)) t->region[k][r](a, rbox, in, s->fields[c->out]);
    }
    st_validity_after_call(&valid, c);
    ++s->eager_calls;
    if (stencil_debug_any(&s->cfg.debug)) debug_after(s, c, box);
  }
  mapp_pool_release(&s->pool, mark);
  return status;
}
