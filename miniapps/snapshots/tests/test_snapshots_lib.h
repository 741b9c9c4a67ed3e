/* What the snapshots unit tests share (test_snapshots.c,
 * test_snapshots_store.c): a small problem, the fixture of its gradient
 * (model, observed data, a perturbation) and the streamed store's
 * settings. */
#ifndef TEST_SNAPSHOTS_LIB_H
#define TEST_SNAPSHOTS_LIB_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "snapshots.h"

static inline snap_config small_config(int dims, int so) {
  snap_config c = {.dims = dims, .n = {48, dims == 3 ? 24 : 1, 40}, .space_order = so, .nt = 160, .save_every = 1,
                   .h = 10.0, .f0 = 15.0, .nbl = 8};
  if (dims == 3) c.n[0] = 28, c.n[2] = 28, c.nt = 60;
  return c;
}

typedef struct {
  snap_problem p;
  snap_engine *e;
  double *m0, *obs, *grad, *rec, *uf, *dm;
} fixture;

static inline void fixture_open(fixture *f, const snap_config *cfg) {
  memset(f, 0, sizeof *f);
  assert_int_equal(snap_problem_create(MPI_COMM_WORLD, cfg, &f->p), MAPP_OK);
  assert_int_equal(snap_engine_create(&f->e, &f->p, &snap_cpu_ops), MAPP_OK);
  long n = f->p.grid.interior, nd = (long)snap_rec_values(&f->p); /* this rank's receivers */
  f->m0 = malloc(sizeof(double) * n), f->grad = malloc(sizeof(double) * n), f->uf = malloc(sizeof(double) * n);
  f->dm = malloc(sizeof(double) * n);
  f->obs = malloc(sizeof(double) * nd), f->rec = malloc(sizeof(double) * nd);
  snap_model_true(&f->p, f->m0);
  assert_int_equal(snap_engine_set_model(f->e, f->m0), MAPP_OK);
  snap_source src = {.wavelet = f->p.wavelet};
  assert_int_equal(snap_forward(f->e, &src, f->obs, NULL, NULL), MAPP_OK);
  snap_model_smooth(&f->p, f->m0);
  const snap_grid *g = &f->p.grid;
  /* dm: a smooth bump below the source, 10 % of m. */
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++)
      for (long z = 0; z < g->n[2]; z++) {
        double dx = (double)(g->first + i) - g->global[0] / 2.0, dz = (double)z - g->global[2] * 0.4;
        long at = (i * g->n[1] + j) * g->n[2] + z;
        f->dm[at] = 0.1 * f->m0[at] * exp(-(dx * dx + dz * dz) / 40.0);
      }
}

static inline void fixture_close(fixture *f) {
  free(f->m0), free(f->obs), free(f->grad), free(f->rec), free(f->uf), free(f->dm);
  snap_engine_free(f->e);
  snap_problem_free(&f->p);
}

static inline void gradient_with(fixture *f, snap_strategy *st, double *grad, snap_result *res) {
  snap_store *store = NULL;
  if (st->mode != SNAP_MODE_REVOLVE)
    assert_int_equal(snap_store_create(&store, &st->store, &f->p.grid, &f->p.cfg, f->p.cfg.nt / f->p.cfg.save_every),
                     MAPP_OK);
  int status = snap_gradient(f->e, st, store, f->m0, f->obs, grad, f->rec, f->uf, res);
  if (status) print_message("gradient failed: %s\n", mapp_error_message());
  assert_int_equal(status, MAPP_OK);
  snap_store_destroy(store);
}

/* The in-memory gradient of the fixture's problem, into f->grad: the
 * reference every streamed setting must equal bit for bit. */
static inline void reference_gradient(fixture *f, snap_result *ref) {
  snap_strategy memory = {.mode = SNAP_MODE_MEMORY};
  gradient_with(f, &memory, f->grad, ref);
}

/* A gradient bit for bit the reference's, with the reference's objective. */
static inline void assert_reference(const fixture *f, const double *g, const snap_result *res, const snap_result *ref) {
  assert_memory_equal(g, f->grad, sizeof(double) * (size_t)f->p.grid.interior);
  assert_true(res->objective == ref->objective);
}

static inline snap_store_config stream_config(unsigned layers, size_t host, size_t disk) {
  return (snap_store_config){.layers = layers, .budget = {0, host, disk}, .compression = SNAP_COMP_NONE,
                             .zstd_level = 1, .io_threads = 1, .prefetch_depth = 2, .disk_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                             .direct_io = true, .prog = "test-snapshots"};
}

#endif
