/* The CUDA backend against the CPU one where a GPU exists (skipped, exit
 * 77, elsewhere): the gradient streamed through pinned staging buffers
 * (host and disk layers) within 1e-9 of the CPU's (the GPU contracts
 * multiply-adds, so bits may differ), and the device tier (snapshots kept
 * in the device pool, read in place by the adjoint) bit for bit equal to
 * the CUDA in-memory gradient, with the split the placement plan states. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots.h"

static int fail(const char *what) {
  fprintf(stderr, "FAIL: %s (%s)\n", what, mapp_error_message());
  return 1;
}

/* The gradient with `layers` (0: memory); the device budget holds
 * dev_snapshots raw snapshots, the host a third of them all. The split the
 * store made comes back in count. */
static int gradient(const snap_ops *ops, const snap_config *cfg, unsigned layers, long dev_snapshots, double *grad,
                    long count[SNAP_NLAYERS]) {
  snap_problem p;
  snap_engine *e;
  if (snap_problem_create(MPI_COMM_WORLD, cfg, &p) || snap_engine_create(&e, &p, ops)) return 1;
  long n = p.grid.interior, nd = (long)snap_rec_values(&p); /* this rank's receivers */
  size_t raw = (size_t)n * 8;
  double *m = malloc(8 * n), *obs = malloc(8 * nd), *rec = malloc(8 * nd), *uf = malloc(8 * n);
  snap_model_true(&p, m);
  snap_source src = {.wavelet = p.wavelet};
  if (snap_engine_set_model(e, m) || snap_forward(e, &src, obs, NULL, NULL)) return 1;
  snap_model_smooth(&p, m);
  snap_strategy st = {.mode = layers ? SNAP_MODE_STREAM : SNAP_MODE_MEMORY};
  st.store = (snap_store_config){
      .layers = layers,
      .budget = {(size_t)dev_snapshots * snap_layer_block_bytes(SNAP_LAYER_DEVICE, raw), raw * (size_t)cfg->nt / 3,
                 1ul << 34},
      .io_threads = 2, .prefetch_depth = 3, .disk_dir = "/tmp", .direct_io = true, .prog = "test-snapshots-cuda",
      .device = (layers & (1u << SNAP_LAYER_DEVICE)) ? snap_cuda_device_ops() : NULL};
  snap_store *store = NULL;
  snap_result res;
  int status = snap_store_create(&store, &st.store, &p.grid, &p.cfg, cfg->nt);
  if (!status) status = snap_gradient(e, &st, store, m, obs, grad, rec, uf, &res);
  if (!status)
    for (int l = 0; l < SNAP_NLAYERS; l++) count[l] = res.store.count[l];
  snap_store_destroy(store);
  snap_engine_free(e);
  snap_problem_free(&p);
  free(m), free(obs), free(rec), free(uf);
  return status;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (mapp_cuda_device_count() == 0 || !snap_cuda_ops() || !snap_cuda_device_ops()) {
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
  double *cpu = malloc(8 * n), *gpu_ref = malloc(8 * n), *gpu = malloc(8 * n);
  long count[SNAP_NLAYERS];
  int status = 0;
  if (gradient(&snap_cpu_ops, &cfg, 0, 0, cpu, count)) status = fail("cpu gradient");
  if (!status && gradient(snap_cuda_ops(), &cfg, 0, 0, gpu_ref, count)) status = fail("cuda memory gradient");
  struct {
    const char *name;
    unsigned layers;
    long dev_snapshots;
  } cases[] = {
      {"disk-host", 6u, 0},         {"disk-host-device", 7u, 50}, {"host-device", 3u, 150},
      {"device (all fit)", 1u, 200}, {"disk-host-device, no device budget", 7u, 0},
  };
  for (size_t k = 0; !status && k < sizeof cases / sizeof cases[0]; k++) {
    if (gradient(snap_cuda_ops(), &cfg, cases[k].layers, cases[k].dev_snapshots, gpu, count)) {
      status = fail(cases[k].name);
      break;
    }
    double err = 0, gmax = 0;
    for (long i = 0; i < n; i++) err = fmax(err, fabs(gpu[i] - cpu[i])), gmax = fmax(gmax, fabs(cpu[i]));
    bool same = !memcmp(gpu, gpu_ref, sizeof(double) * n);
    printf("cuda %-36s device %ld, host %ld, disk %ld: max |g_gpu - g_cpu| / max |g| = %.3e, %s the cuda memory "
           "gradient\n",
           cases[k].name, count[0], count[1], count[2], err / gmax, same ? "bit for bit" : "DIFFERS from");
    if (!(err <= 1e-9 * gmax)) status = fail("cuda gradient differs from the cpu's beyond 1e-9");
    if (!same) status = fail("streamed cuda gradient differs from the cuda memory gradient");
    /* Every rank holds all cfg.nt snapshots of its slab: the device keeps
     * the latest dev_snapshots (the budget is in whole slots). */
    long want = cases[k].dev_snapshots < cfg.nt ? cases[k].dev_snapshots : cfg.nt;
    if (count[SNAP_LAYER_DEVICE] != want) status = fail("device tier count differs from its budget's");
  }
  free(cpu), free(gpu_ref), free(gpu);
  MPI_Finalize();
  return status;
}
