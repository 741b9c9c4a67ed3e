/* The CUDA backend against the CPU one where a GPU exists (skipped, exit
 * 77, elsewhere): the dot test on the device, and the gradient streamed
 * through pinned staging buffers (host and disk layers) within 1e-9 of the
 * CPU's (the GPU contracts multiply-adds, so bits may differ). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots.h"

static int fail(const char *what) {
  fprintf(stderr, "FAIL: %s (%s)\n", what, mapp_error_message());
  return 1;
}

static int gradient(const snap_ops *ops, const snap_config *cfg, unsigned layers, double *grad) {
  snap_problem p;
  snap_engine *e;
  if (snap_problem_create(MPI_COMM_WORLD, cfg, &p) || snap_engine_create(&e, &p, ops)) return 1;
  long n = p.grid.interior, nd = cfg->nt * p.nrec;
  double *m = malloc(8 * n), *obs = malloc(8 * nd), *rec = malloc(8 * nd), *uf = malloc(8 * n);
  snap_model_true(&p, m);
  snap_source src = {.wavelet = p.wavelet};
  if (snap_engine_set_model(e, m) || snap_forward(e, &src, obs, NULL, NULL)) return 1;
  snap_model_smooth(&p, m);
  snap_strategy st = {.mode = layers ? SNAP_MODE_STREAM : SNAP_MODE_MEMORY};
  st.store = (snap_store_config){.layers = layers, .budget = {0, (size_t)n * 8 * (size_t)cfg->nt / 3, 1ul << 34},
                                 .io_threads = 2, .prefetch_depth = 3, .disk_dir = "/tmp", .direct_io = true,
                                 .prog = "test-snapshots-cuda"};
  snap_store *store;
  snap_result res;
  if (snap_store_create(&store, &st.store, &p.grid, &p.cfg, cfg->nt)) return 1;
  int status = snap_gradient(e, &st, store, m, obs, grad, rec, uf, &res);
  snap_store_destroy(store);
  snap_engine_free(e);
  snap_problem_free(&p);
  free(m), free(obs), free(rec), free(uf);
  return status;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (mapp_cuda_device_count() == 0 || !snap_cuda_ops()) {
    printf("skip: no CUDA device\n");
    MPI_Finalize();
    return 77;
  }
  snap_config cfg = {.dims = 2, .n = {64, 1, 48}, .space_order = 8, .nt = 200, .save_every = 1, .h = 10, .f0 = 15,
                     .nbl = 8};
  snap_problem p;
  if (snap_problem_create(MPI_COMM_WORLD, &cfg, &p)) return fail("problem");
  long n = p.grid.interior;
  snap_problem_free(&p);
  double *cpu = malloc(8 * n), *gpu = malloc(8 * n);
  int status = 0;
  if (gradient(&snap_cpu_ops, &cfg, 0, cpu)) status = fail("cpu gradient");
  unsigned settings[2] = {0u, 6u};
  for (int k = 0; !status && k < 2; k++) {
    if (gradient(snap_cuda_ops(), &cfg, settings[k], gpu)) {
      status = fail("cuda gradient");
      break;
    }
    double err = 0, gmax = 0;
    for (long i = 0; i < n; i++) err = fmax(err, fabs(gpu[i] - cpu[i])), gmax = fmax(gmax, fabs(cpu[i]));
    printf("cuda %s: max |g_gpu - g_cpu| / max |g| = %.3e\n", settings[k] ? "disk-host" : "memory", err / gmax);
    if (!(err <= 1e-9 * gmax)) status = fail("cuda gradient differs from the cpu's beyond 1e-9");
  }
  free(cpu), free(gpu);
  MPI_Finalize();
  return status;
}
