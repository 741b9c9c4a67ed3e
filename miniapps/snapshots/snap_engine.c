/* The propagators: forward saving snapshots, adjoint reading them back in
 * reverse, the gradient by the imaging condition, and the same gradient by
 * binomial checkpointing (recomputing the forward instead of saving it).
 * Backend-neutral: every field operation goes through the snap_ops table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots.h"

struct snap_engine {
  const snap_problem *p;
  const snap_ops *ops;
  /* prev, cur, next (backend memory); a backend that steps in place
   * writes next over prev and has no third field (NULL). */
  double *u[3], *v[3];
  bool in_place;
  double *grad_b, *abs_b;    /* accumulators (backend memory, padded) */
  snap_coeffs k;
  bool have_coeffs;
  double *host;              /* a padded host field (zeros, read-backs) */
  double *pack;              /* an interior host buffer */
  double *values;            /* injection values: interior-sized */
  long *all_idx;             /* padded index of every interior point */
  long src_interior;         /* the source point's index in a snapshot (its owner only) */
  snap_row_sources receivers;/* this rank's receivers by row (the adjoint's fused step) */
  snap_row_sources source;   /* the source point by row (the forward's paired step) */
};

/* Where a step writes u^k: over u^{k-2} when the backend steps in place. */
static double *next_of(const snap_engine *e, double *f[3]) { return e->in_place ? f[0] : f[2]; }

/* After a step: (prev, cur) = (cur, next). */
static void advance(const snap_engine *e, double *f[3]) {
  double *t = f[0];
  if (e->in_place) {
    f[0] = f[1], f[1] = t;
  } else {
    f[0] = f[1], f[1] = f[2], f[2] = t;
  }
}

int snap_engine_create(snap_engine **out, const snap_problem *p, const snap_ops *ops) {
  snap_engine *e;
  MAPP_TRY(mapp_calloc((void **)&e, 1, sizeof *e, "the propagator"));
  *out = e;
  e->p = p, e->ops = ops;
  const snap_grid *g = &p->grid;
  e->in_place = snap_ops_two_levels(ops);
  for (int t = 0; t < (e->in_place ? 2 : 3); t++) {
    MAPP_TRY(ops->alloc(g, &e->u[t]));
    MAPP_TRY(ops->alloc(g, &e->v[t]));
  }
  MAPP_TRY(ops->alloc(g, &e->grad_b));
  MAPP_TRY(ops->alloc(g, &e->abs_b));
  MAPP_TRY(mapp_calloc((void **)&e->host, (size_t)g->padded, sizeof(double), "a host field"));
  MAPP_TRY(mapp_calloc((void **)&e->pack, (size_t)g->interior, sizeof(double), "a snapshot buffer"));
  MAPP_TRY(mapp_calloc((void **)&e->values, (size_t)g->interior, sizeof(double), "source values"));
  MAPP_TRY(mapp_calloc((void **)&e->all_idx, (size_t)g->interior, sizeof(long), "source indices"));
  for (long i = 0, n = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++)
      for (long z = 0; z < g->n[2]; z++, n++) {
        e->all_idx[n] = snap_index(g, i, j, z);
        if (e->all_idx[n] == p->src_local) e->src_interior = n;
      }
  MAPP_TRY(snap_row_sources_create(g, &p->src_local, 1, &e->source));
  return snap_row_sources_create(g, p->rec_local, p->nrec_local, &e->receivers);
}

void snap_engine_free(snap_engine *e) {
  if (!e) return;
  for (int t = 0; t < 3; t++) {
    if (e->u[t]) e->ops->release(e->u[t]);
    if (e->v[t]) e->ops->release(e->v[t]);
  }
  if (e->grad_b) e->ops->release(e->grad_b);
  if (e->abs_b) e->ops->release(e->abs_b);
  if (e->have_coeffs) e->ops->free_coeffs(&e->k);
  free(e->host), free(e->pack), free(e->values), free(e->all_idx);
  snap_row_sources_free(&e->receivers);
  snap_row_sources_free(&e->source);
  free(e);
}

int snap_engine_set_model(snap_engine *e, const double *m) {
  if (e->have_coeffs) e->ops->free_coeffs(&e->k);
  e->have_coeffs = false;
  MAPP_TRY(e->ops->set_coeffs(e->p, m, &e->k));
  e->have_coeffs = true;
  return MAPP_OK;
}

/* Every field of `f` back to zero (the host buffer holds zeros); NULL
 * ones (a third time level an in-place backend does not have) skipped. */
static int zero_fields(snap_engine *e, double **f, int n) {
  memset(e->host, 0, sizeof(double) * (size_t)e->p->grid.padded);
  for (int t = 0; t < n; t++)
    if (f[t]) MAPP_TRY(e->ops->from_host(&e->p->grid, e->host, f[t]));
  return MAPP_OK;
}

/* u^k from u^{k-1}, u^{k-2} and the source q^{k-1}; this rank's
 * receivers' d^k into rec's row k-1.
 * With `snapshot` (a host buffer; the backend has step_save and the source
 * is a point) the step writes u^k's interior there as well, and the source
 * point, injected after the step, is copied again. */
static int forward_step(snap_engine *e, long k, const snap_source *src, double *rec, double *snapshot) {
  const snap_problem *p = e->p;
  const snap_grid *g = &p->grid;
  MAPP_TRY(e->ops->exchange(g, e->u[1]));
  double *next = next_of(e, e->u);
  if (snapshot) e->ops->step_save(g, &e->k, next, e->u[1], e->u[0], snapshot);
  else e->ops->step(g, &e->k, next, e->u[1], e->u[0]);
  double w = src->wavelet[k - 1];
  if (src->field) {
    for (long i = 0; i < g->interior; i++) e->values[i] = w * src->field[i];
    e->ops->inject(&e->k, next, e->all_idx, e->values, g->interior);
  } else if (p->src_local >= 0) {
    e->ops->inject(&e->k, next, &p->src_local, &w, 1);
    if (snapshot) e->ops->sample(next, &p->src_local, snapshot + e->src_interior, 1);
  }
  if (rec) e->ops->sample(next, p->rec_local, rec + (k - 1) * p->nrec_local, p->nrec_local);
  advance(e, e->u);
  return MAPP_OK;
}

/* v^j from v^{j+1}, v^{j+2} and the receivers' adjoint source of row j-1;
 * the imaging condition with u^j when a snapshot is given (in host memory,
 * or in the backend's own when in_place: the device tier). */
static int adjoint_step(snap_engine *e, long j, const double *rec_adj, const double *snapshot, bool in_place,
                        double *src_adj, bool abs_d2) {
  const snap_problem *p = e->p;
  const snap_grid *g = &p->grid;
  MAPP_TRY(e->ops->exchange(g, e->v[1]));
  const double *values = rec_adj + (j - 1) * p->nrec_local;
  double *next = next_of(e, e->v), *abs_b = abs_d2 ? e->abs_b : NULL;
  if (snapshot && e->ops->step_image && (!in_place || e->in_place)) {
    e->ops->step_image(g, &e->k, next, e->v[1], e->v[0], &e->receivers, values, snapshot, e->grad_b, abs_b);
  } else { /* not in place (snap_ops_two_levels): the imaging below reads u^{k-2} */
    e->ops->step(g, &e->k, next, e->v[1], e->v[0]);
    e->ops->inject(&e->k, next, p->rec_local, values, p->nrec_local);
    if (snapshot && in_place) {
      if (!e->ops->image_in_place)
        return mapp_fail(MAPP_ERR_SYSTEM, "snapshot of step %ld is on the device tier, which backend %s cannot read",
                         j, e->ops->name);
      MAPP_TRY(e->ops->image_in_place(g, e->grad_b, snapshot, next, e->v[1], e->v[0], abs_b));
    } else if (snapshot) {
      MAPP_TRY(e->ops->image(g, e->grad_b, snapshot, next, e->v[1], e->v[0], abs_b));
    }
  }
  if (src_adj) {
    MAPP_TRY(e->ops->to_host(g, next, e->host));
    double w = p->wavelet[j - 1];
    for (long i = 0; i < g->interior; i++) src_adj[i] += w * e->host[e->all_idx[i]];
  }
  advance(e, e->v);
  return MAPP_OK;
}

/* The recorded data as earlier revisions had them, bit for bit: they were
 * summed over the ranks (zeros from the ranks without the receiver), which
 * on more than one rank turns -0.0 into +0.0 and leaves every other value
 * as it is. Adding +0.0 does exactly that (no -ffast-math here). */
static void settle_receivers(const snap_problem *p, double *rec) {
  if (p->grid.nranks == 1) return;
  for (long i = 0; i < p->cfg.nt * p->nrec_local; i++) rec[i] += 0.0;
}

/* A backend field's interior into host memory. */
static int read_interior(snap_engine *e, const double *field, double *interior) {
  MAPP_TRY(e->ops->to_host(&e->p->grid, field, e->host));
  snap_pack(&e->p->grid, e->host, interior);
  return MAPP_OK;
}

/* Hands snapshot i to the store: the copy out runs while the next step
 * computes (asynchronous on CUDA), committed one step later. */
typedef struct {
  snap_store *store;
  long pending;
} snapshot_writer;

static int writer_flush(snap_engine *e, snapshot_writer *w) {
  if (w->pending < 0) return MAPP_OK;
  MAPP_TRY(e->ops->snapshot_wait());
  long i = w->pending;
  w->pending = -1;
  return snap_store_commit(w->store, i);
}

static int writer_save(snap_engine *e, snapshot_writer *w, long i) {
  /* The device tier's (the latest) stay on the device: no host buffer. */
  if (snap_store_on_device(w->store, i)) return snap_store_put_device(w->store, i, &e->p->grid, e->u[1]);
  double *buf;
  MAPP_TRY(snap_store_acquire(w->store, i, &buf));
  MAPP_TRY(e->ops->snapshot_out(&e->p->grid, e->u[1], buf));
  w->pending = i;
  return MAPP_OK;
}

/* Where the step saving snapshot i writes it itself (step_save), or NULL
 * when it cannot: a backend whose fields are not host memory, the device
 * tier, or a source over the whole field (the dot test). The previous
 * snapshot is committed first: its buffer may be the one acquired. */
static int writer_fused(snap_engine *e, snapshot_writer *w, const snap_source *src, long i, double **into) {
  *into = NULL;
  if (!e->ops->step_save || src->field || snap_store_on_device(w->store, i)) return MAPP_OK;
  MAPP_TRY(writer_flush(e, w));
  return snap_store_acquire(w->store, i, into);
}

/* MAPP_SNAP_SINGLE_STEPS=1: every step alone, so what stepping two at a
 * time gains can be told apart from what a store costs (and the two
 * compared bit for bit). */
static bool single_steps_forced(void) {
  const char *v = getenv("MAPP_SNAP_SINGLE_STEPS");
  return v && *v && *v != '0';
}

/* Whether two steps may run as one pass (the backend's step_pair), the
 * forward's or the adjoint's: a grid stepped in place, on one rank (no
 * halo exchange between them), unless MAPP_SNAP_SINGLE_STEPS says not. */
static bool steps_pair(const snap_engine *e) {
  return e->ops->step_pair && e->in_place && e->p->grid.nranks == 1 && !single_steps_forced();
}

/* Whether every step's snapshot goes to a store that takes (and hands
 * out) two at once (snap_store_holds_two). */
static bool saves_in_twos(const snap_store *store, long every) {
  return store && snap_store_holds_two(store) && every == 1;
}

/* Whether forward steps k and k + 1 may run as one pass: steps_pair, a
 * point source, and every step saved in twos or none. */
static bool pairable(const snap_engine *e, const snap_source *src, const snap_store *store, long every) {
  return steps_pair(e) && !src->field && (!store || saves_in_twos(store, every));
}

/* Steps k and k + 1 in one pass, saving snapshots k - 1 and k where a
 * store is given; the receivers' rows k - 1 and k. */
static int forward_pair(snap_engine *e, long k, const snap_source *src, double *rec, snap_store *store) {
  const snap_problem *p = e->p;
  snap_step_pair io = {.sources = &e->source, .values = {src->wavelet + k - 1, src->wavelet + k}};
  int saving = MAPP_OK; /* as in snap_forward: a store failure stops the saving, not the steps */
  if (store) {
    saving = snap_store_acquire(store, k - 1, &io.snapshot[0]);
    if (!saving) saving = snap_store_acquire(store, k, &io.snapshot[1]);
    if (saving) io.snapshot[0] = io.snapshot[1] = NULL;
  }
  e->ops->step_pair(&p->grid, &e->k, e->u[0], e->u[1], &io);
  for (long step = k; step <= k + 1; step++) {
    advance(e, e->u);
    if (rec) e->ops->sample(e->u[1], p->rec_local, rec + (step - 1) * p->nrec_local, p->nrec_local);
  }
  if (store && !saving) saving = snap_store_commit(store, k - 1);
  if (store && !saving) saving = snap_store_commit(store, k);
  return saving;
}

int snap_forward(snap_engine *e, const snap_source *src, double *rec, double *u_final, snap_store *store) {
  const snap_problem *p = e->p;
  long nt = p->cfg.nt, every = p->cfg.save_every;
  MAPP_TRY(zero_fields(e, e->u, 3));
  if (rec) memset(rec, 0, sizeof(double) * (size_t)(nt * p->nrec_local));
  snapshot_writer w = {.store = store, .pending = -1};
  /* A store failure on this rank stops its saving, not its steps: the
   * other ranks' halo exchanges still need it, and the status is returned
   * (and agreed) at the end. */
  int saving = MAPP_OK;
  const bool paired = pairable(e, src, store, every);
  for (long k = 1; k <= nt; k++) {
    if (paired && k < nt && !saving) {
      saving = forward_pair(e, k++, src, rec, store);
      continue;
    }
    long i = k / every - 1;
    bool save = store && !saving && k % every == 0;
    double *into = NULL;
    if (save) saving = writer_fused(e, &w, src, i, &into);
    MAPP_TRY(forward_step(e, k, src, rec, saving ? NULL : into));
    if (!store || saving) continue;
    saving = writer_flush(e, &w);
    if (!saving && save) saving = into ? snap_store_commit(store, i) : writer_save(e, &w, i);
  }
  if (store && !saving) saving = writer_flush(e, &w);
  if (rec) settle_receivers(p, rec);
  if (u_final) MAPP_TRY(read_interior(e, e->u[1], u_final));
  return saving;
}

/* grad = -every/dt^2 x the accumulated image (and the zfp bound's sum). */
static int finish_gradient(snap_engine *e, double *grad, double *abs_d2) {
  const snap_problem *p = e->p;
  double scale = (double)p->cfg.save_every / (p->dt * p->dt);
  long n = p->grid.interior;
  MAPP_TRY(read_interior(e, e->grad_b, grad));
  for (long i = 0; i < n; i++) grad[i] *= -scale;
  if (abs_d2) {
    MAPP_TRY(read_interior(e, e->abs_b, abs_d2));
    for (long i = 0; i < n; i++) abs_d2[i] *= scale;
  }
  return MAPP_OK;
}

/* Whether adjoint steps j and j - 1 may run as one pass: steps_pair,
 * every step's snapshot saved in twos, no source image (src_adj). */
static bool adjoint_pairable(const snap_engine *e, const snap_store *store, long every, const double *src_adj) {
  return steps_pair(e) && !src_adj && saves_in_twos(store, every);
}

/* Adjoint steps j and j - 1 in one pass, imaging with snapshots j - 1 and
 * j - 2 (snapshot i holds u^{i+1}). */
static int adjoint_pair(snap_engine *e, long j, const double *rec_adj, snap_store *store, bool abs_d2) {
  const snap_problem *p = e->p;
  snap_step_pair io = {.sources = &e->receivers,
                       .values = {rec_adj + (j - 1) * p->nrec_local, rec_adj + (j - 2) * p->nrec_local},
                       .grad = e->grad_b, .abs_d2 = abs_d2 ? e->abs_b : NULL};
  /* As in snap_adjoint: a failed read stops the imaging, not the steps. */
  int reading = snap_store_get(store, j - 1, &io.imaged[0]);
  if (!reading) reading = snap_store_get(store, j - 2, &io.imaged[1]);
  if (reading) io.grad = io.abs_d2 = NULL;
  e->ops->step_pair(&p->grid, &e->k, e->v[0], e->v[1], &io);
  advance(e, e->v), advance(e, e->v);
  if (!reading) reading = snap_store_release(store, j - 1);
  if (!reading) reading = snap_store_release(store, j - 2);
  return reading;
}

int snap_adjoint(snap_engine *e, const double *rec_adj, snap_store *store, double *grad, double *src_adj,
                 double *abs_d2) {
  const snap_problem *p = e->p;
  long nt = p->cfg.nt, every = p->cfg.save_every;
  double *acc[2] = {e->grad_b, e->abs_b};
  MAPP_TRY(zero_fields(e, e->v, 3));
  MAPP_TRY(zero_fields(e, acc, 2));
  if (src_adj) memset(src_adj, 0, sizeof(double) * (size_t)p->grid.interior);
  int reading = MAPP_OK; /* as in the forward: a failed read stops the imaging, not the steps */
  const bool paired = adjoint_pairable(e, store, every, src_adj);
  for (long j = nt; j >= 1; j--) {
    if (paired && j >= 2 && !reading) {
      reading = adjoint_pair(e, j--, rec_adj, store, abs_d2 != NULL);
      continue;
    }
    const double *snapshot = NULL;
    bool saved = store && j % every == 0 && !reading;
    if (saved) reading = snap_store_get(store, j / every - 1, &snapshot);
    bool in_place = saved && snap_store_on_device(store, j / every - 1);
    MAPP_TRY(adjoint_step(e, j, rec_adj, reading ? NULL : snapshot, in_place, src_adj, abs_d2 != NULL));
    if (saved && !reading) reading = snap_store_release(store, j / every - 1);
  }
  if (grad) MAPP_TRY(finish_gradient(e, grad, abs_d2));
  return reading;
}

/* Collective: this rank's residual rec - observed, and J = 1/2 |residual|^2
 * over all the receivers (summed on rank 0 in one rank's order). */
static int half_squared_residual(const snap_problem *p, const double *rec, const double *observed, double *residual,
                                 double *J) {
  for (long i = 0; i < p->cfg.nt * p->nrec_local; i++) residual[i] = rec[i] - observed[i];
  return snap_objective_sum(p, residual, J);
}

int snap_objective(snap_engine *e, const double *m, const double *observed, double *J) {
  const snap_problem *p = e->p;
  double *rec = NULL, *residual = NULL;
  size_t bytes = sizeof(double) * snap_rec_values(p);
  int status = mapp_alloc((void **)&rec, bytes, "receiver data");
  if (!status) status = mapp_alloc((void **)&residual, bytes, "the residual");
  if (!status) status = snap_engine_set_model(e, m);
  snap_source src = {.wavelet = p->wavelet};
  if (!status) status = snap_forward(e, &src, rec, NULL, NULL);
  if (!status) status = half_squared_residual(p, rec, observed, residual, J);
  free(rec), free(residual);
  return status;
}

/* zfp's fixed-accuracy mode keeps every value within the tolerance, so
 * the gradient moves by at most tolerance x sum_t |d2v/dt2| per point. */
static int zfp_bound(const snap_problem *p, const snap_strategy *st, const double *abs_d2, double *bound) {
  double worst = 0.0;
  for (long i = 0; i < p->grid.interior; i++)
    if (abs_d2[i] > worst) worst = abs_d2[i];
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, p->grid.comm));
  *bound = st->store.zfp_tolerance * worst;
  return MAPP_OK;
}

static int gradient_streamed(snap_engine *e, const snap_strategy *st, snap_store *store, const double *observed,
                             double *grad, double *rec, double *u_final, snap_result *res) {
  const snap_problem *p = e->p;
  size_t n = (size_t)p->grid.interior;
  bool zfp = st->store.compression == SNAP_COMP_ZFP && st->store.zfp_tolerance > 0 && st->mode == SNAP_MODE_STREAM;
  double *residual = NULL, *abs_d2 = NULL;
  int status = mapp_alloc((void **)&residual, sizeof(double) * snap_rec_values(p), "the residual");
  if (!status && zfp) status = mapp_calloc((void **)&abs_d2, n, sizeof(double), "the zfp bound's sum");
  snap_source src = {.wavelet = p->wavelet};
  res->steps_per_pass = pairable(e, &src, store, p->cfg.save_every) ? 2 : 1;
  res->adjoint_steps_per_pass = adjoint_pairable(e, store, p->cfg.save_every, NULL) ? 2 : 1;
  double t0 = mapp_now();
  if (!status) status = snap_forward(e, &src, rec, u_final, store);
  if (!status) status = snap_store_finish_forward(store);
  double t1 = mapp_now();
  /* Every rank learns whether any rank's store failed before the adjoint's
   * halo exchanges: the failing rank returns its error, the others stop
   * quietly (the driver agrees the statuses and reports the failure). */
  int worst = status;
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, p->grid.comm));
  if (worst) {
    free(residual), free(abs_d2);
    return status;
  }
  status = half_squared_residual(p, rec, observed, residual, &res->objective);
  if (!status) status = snap_adjoint(e, residual, store, grad, NULL, abs_d2);
  double t2 = mapp_now();
  if (zfp) {
    int bound = zfp_bound(p, st, abs_d2, &res->zfp_bound);
    if (!status) status = bound;
  }
  res->forward_s = t1 - t0, res->adjoint_s = t2 - t1;
  res->forward_steps = p->cfg.nt;
  if (!status) snap_store_get_stats(store, &res->store);
  free(residual), free(abs_d2);
  return status;
}

/* Checkpoint slots: the two time levels (u^{k-1}, u^k) of a state. */
static int take_shot(snap_engine *e, double *slot) {
  long n = e->p->grid.interior;
  MAPP_TRY(read_interior(e, e->u[0], slot));
  return read_interior(e, e->u[1], slot + n);
}

static int restore_shot(snap_engine *e, const double *slot) {
  const snap_grid *g = &e->p->grid;
  if (!slot) return zero_fields(e, e->u, 3); /* the initial state */
  for (int t = 0; t < 2; t++) {
    memset(e->host, 0, sizeof(double) * (size_t)g->padded);
    snap_unpack(g, slot + t * g->interior, e->host);
    MAPP_TRY(e->ops->from_host(g, e->host, e->u[t]));
  }
  return MAPP_OK;
}

typedef struct {
  snap_engine *e;
  const double *observed;
  double *rec, *residual, *u_final, *slots;
  long at, reached;   /* forward state's step; furthest step the data were recorded for */
  bool residual_ready;
  snap_result *res;
} revolve_run;

static int revolve_action(revolve_run *r, const snap_action *a) {
  snap_engine *e = r->e;
  const snap_problem *p = e->p;
  long n = p->grid.interior;
  snap_source src = {.wavelet = p->wavelet};
  switch (a->kind) {
  case SNAP_ACT_ADVANCE:
    for (; r->at < a->step; r->at++) {
      bool first = r->at + 1 > r->reached;
      MAPP_TRY(forward_step(e, r->at + 1, &src, first ? r->rec : NULL, NULL));
      if (first) r->reached = r->at + 1;
      r->res->forward_steps++;
    }
    return MAPP_OK;
  case SNAP_ACT_TAKESHOT: return take_shot(e, r->slots + (size_t)a->slot * 2 * n);
  case SNAP_ACT_RESTORE:
    r->at = a->step;
    return restore_shot(e, a->step == 0 ? NULL : r->slots + (size_t)a->slot * 2 * n);
  case SNAP_ACT_FREE: return MAPP_OK;
  case SNAP_ACT_ADJOINT:
    if (r->at != a->step) return mapp_fail(MAPP_ERR_SYSTEM, "revolve schedule: adjoint step %ld at forward step %ld",
                                           a->step, r->at);
    if (!r->residual_ready) { /* the first sweep reached the end */
      settle_receivers(p, r->rec);
      MAPP_TRY(half_squared_residual(p, r->rec, r->observed, r->residual, &r->res->objective));
      if (r->u_final) MAPP_TRY(read_interior(e, e->u[1], r->u_final));
      r->residual_ready = true;
    }
    bool saved = a->step % p->cfg.save_every == 0;
    if (saved) MAPP_TRY(read_interior(e, e->u[1], e->pack));
    return adjoint_step(e, a->step, r->residual, saved ? e->pack : NULL, false, NULL, false);
  }
  return MAPP_OK;
}

static int gradient_revolve(snap_engine *e, const snap_strategy *st, const double *observed, double *grad,
                            double *rec, double *u_final, snap_result *res) {
  const snap_problem *p = e->p;
  snap_schedule sched = {0};
  revolve_run r = {.e = e, .observed = observed, .rec = rec, .u_final = u_final, .res = res};
  int status = snap_revolve_schedule(p->cfg.nt, st->checkpoints, &sched);
  if (!status) status = mapp_alloc((void **)&r.residual, sizeof(double) * snap_rec_values(p), "the residual");
  if (!status)
    status = mapp_alloc((void **)&r.slots, sizeof(double) * 2 * (size_t)p->grid.interior * (size_t)st->checkpoints,
                        "the checkpoints");
  double *acc[2] = {e->grad_b, e->abs_b};
  if (!status) status = zero_fields(e, e->u, 3);
  if (!status) status = zero_fields(e, e->v, 3);
  if (!status) status = zero_fields(e, acc, 2);
  if (!status) memset(rec, 0, sizeof(double) * (size_t)(p->cfg.nt * p->nrec_local));
  double t0 = mapp_now();
  for (long i = 0; !status && i < sched.n; i++) status = revolve_action(&r, &sched.a[i]);
  if (!status) status = finish_gradient(e, grad, NULL);
  res->forward_s = 0, res->adjoint_s = mapp_now() - t0; /* interleaved: all counted as adjoint */
  res->checkpoints = st->checkpoints;
  free(r.residual), free(r.slots);
  snap_schedule_free(&sched);
  return status;
}

int snap_gradient(snap_engine *e, const snap_strategy *st, snap_store *store, const double *m,
                  const double *observed, double *grad, double *rec, double *u_final, snap_result *res) {
  memset(res, 0, sizeof *res);
  MAPP_TRY(snap_engine_set_model(e, m));
  if (st->mode == SNAP_MODE_REVOLVE) return gradient_revolve(e, st, observed, grad, rec, u_final, res);
  return gradient_streamed(e, st, store, observed, grad, rec, u_final, res);
}
