/* mapp-snapshots-bench: what streaming costs, measured against this
 * machine's own limits in the same run (Google Benchmark via the C bridge).
 *
 *   disk/write, disk/read    the disk's bandwidth with the disk layer's own
 *                            pattern: snapshot-sized O_DIRECT blocks
 *                            appended, then read back in reverse
 *   disk/uring-write, disk/uring-read
 *                            the same blocks through io_uring, 4 in flight
 *                            (does it beat plain pwrite/pread? the store
 *                            uses whichever wins: so far pwrite)
 *   forward/nosave           the forward alone (the floor)
 *   forward/memory           the forward saving every step into the
 *                            pre-touched in-memory array (goal <= 1.1x nosave)
 *   gradient/<variant>/<layers>[/<compression>]
 *                            forward + adjoint, every variant of the table
 *                            and the layer settings; counters: stalls per
 *                            direction, snapshots on disk, compression
 *                            ratio, the disk throughput reached and its
 *                            fraction of disk/write + disk/read, the
 *                            gradient's max error against memory
 *
 * Problem: 2-D, space order 4, MAPP_SNAP_BENCH_NX x MAPP_SNAP_BENCH_NZ
 * (default 800 x 120), MAPP_SNAP_BENCH_NT steps (default 600): 0.77 MB
 * snapshots, 460 MB in all (the reflection returns within the run). The disk files go to $TMPDIR (else /tmp). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "mapp_bench.h"
#include "snapshots.h"

static snap_problem problem;
static snap_engine *engine;
static double *m0, *observed, *reference, *grad, *rec, *ufinal;
static const char *disk_dir;
static double disk_write_Bps, disk_read_Bps;

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  return v && *v ? atol(v) : fallback;
}

/* ---- the disk's own bandwidth with the disk layer's pattern ---- */

static size_t block_bytes(void) { return ((size_t)problem.grid.interior * 8 + 4095) / 4096 * 4096; }

static int open_scratch(char *path, size_t len) {
  snprintf(path, len, "%s/mapp-snapshots-bench.%ld.bin", disk_dir, (long)getpid());
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
  if (fd < 0) fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unlink(path);
  return fd;
}

static void bm_disk(mapp_bench_state *st, void *arg) {
  bool write_only = arg != NULL;
  size_t bs = block_bytes();
  long nblocks = problem.cfg.nt;
  char path[600];
  int fd = open_scratch(path, sizeof path);
  void *buf;
  if (fd < 0 || posix_memalign(&buf, 4096, bs)) {
    mapp_bench_skip_with_error(st, "cannot open a scratch file in the disk folder");
    return;
  }
  memset(buf, 1, bs);
  if (!write_only)
    for (long b = 0; b < nblocks; b++)
      if (pwrite(fd, buf, bs, (off_t)(b * bs)) != (ssize_t)bs) mapp_bench_skip_with_error(st, "pwrite failed");
  fdatasync(fd);
  while (mapp_bench_keep_running(st)) {
    for (long b = 0; b < nblocks; b++) {
      ssize_t n = write_only ? pwrite(fd, buf, bs, (off_t)(b * bs))
                             : pread(fd, buf, bs, (off_t)((nblocks - 1 - b) * bs)); /* reverse, as the adjoint */
      if (n != (ssize_t)bs) mapp_bench_skip_with_error(st, write_only ? "pwrite failed" : "pread failed");
    }
    if (write_only) fdatasync(fd);
  }
  double bytes = (double)mapp_bench_iterations(st) * (double)nblocks * (double)bs;
  mapp_bench_set_bytes_processed(st, (int64_t)bytes);
  free(buf);
  close(fd);
}

/* The same pattern through io_uring with `depth` requests in flight. */
static void bm_disk_uring(mapp_bench_state *st, void *arg) {
  bool write_only = arg != NULL;
  enum { depth = 4 };
  size_t bs = block_bytes();
  long nblocks = problem.cfg.nt;
  char path[600];
  int fd = open_scratch(path, sizeof path);
  struct io_uring ring;
  void *buf[depth];
  if (fd < 0 || io_uring_queue_init(depth, &ring, 0)) {
    mapp_bench_skip_with_error(st, "io_uring or the scratch file is not available");
    if (fd >= 0) close(fd);
    return;
  }
  for (int b = 0; b < depth; b++)
    if (posix_memalign(&buf[b], 4096, bs) == 0) memset(buf[b], 1, bs);
  if (!write_only)
    for (long b = 0; b < nblocks; b++) (void)!pwrite(fd, buf[0], bs, (off_t)(b * bs));
  fdatasync(fd);
  bool failed = false;
  while (mapp_bench_keep_running(st)) {
    long inflight = 0;
    for (long b = 0; b < nblocks || inflight > 0;) {
      while (b < nblocks && inflight < depth) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        off_t off = (off_t)((write_only ? b : nblocks - 1 - b) * bs);
        if (write_only) io_uring_prep_write(sqe, fd, buf[b % depth], (unsigned)bs, off);
        else io_uring_prep_read(sqe, fd, buf[b % depth], (unsigned)bs, off);
        b++, inflight++;
      }
      io_uring_submit(&ring);
      struct io_uring_cqe *cqe;
      if (io_uring_wait_cqe(&ring, &cqe) == 0) {
        if (cqe->res != (int)bs) failed = true;
        io_uring_cqe_seen(&ring, cqe);
        inflight--;
      }
    }
    if (write_only) fdatasync(fd);
  }
  if (failed) mapp_bench_skip_with_error(st, "an io_uring request moved fewer bytes than asked");
  mapp_bench_set_bytes_processed(st, (int64_t)((double)mapp_bench_iterations(st) * nblocks * bs));
  io_uring_queue_exit(&ring);
  for (int b = 0; b < depth; b++) free(buf[b]);
  close(fd);
}

static bool uring_available(void) {
  struct io_uring ring;
  if (io_uring_queue_init(4, &ring, 0)) return false;
  io_uring_queue_exit(&ring);
  return true;
}

/* ---- forward without and with saving ---- */

static void bm_forward(mapp_bench_state *st, void *arg) {
  snap_store *store = NULL;
  if (arg) {
    snap_store_config cfg = {.layers = 0};
    if (snap_store_create(&store, &cfg, &problem.grid, &problem.cfg, problem.cfg.nt)) {
      mapp_bench_skip_with_error(st, mapp_error_message());
      return;
    }
  }
  snap_engine_set_model(engine, m0);
  snap_source src = {.wavelet = problem.wavelet};
  while (mapp_bench_keep_running(st))
    if (snap_forward(engine, &src, rec, NULL, store)) mapp_bench_skip_with_error(st, mapp_error_message());
  mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * problem.cfg.nt * problem.grid.interior);
  snap_store_destroy(store);
}

/* ---- the gradient per variant and layer setting ---- */

typedef struct {
  char name[96];
  snap_strategy st;
} gradient_case;

static void bm_gradient(mapp_bench_state *st, void *arg) {
  gradient_case *c = arg;
  snap_store *store = NULL;
  long nsnap = problem.cfg.nt;
  if (c->st.mode != SNAP_MODE_REVOLVE && snap_store_create(&store, &c->st.store, &problem.grid, &problem.cfg, nsnap)) {
    mapp_bench_skip_with_error(st, mapp_error_message());
    return;
  }
  snap_result res = {0};
  double stall_fw = 0, stall_bw = 0, disk_bytes = 0, io_s = 0, fw_s = 0, bw_s = 0;
  while (mapp_bench_keep_running(st)) {
    if (store) snap_store_reset(store);
    if (snap_gradient(engine, &c->st, store, m0, observed, grad, rec, ufinal, &res)) {
      mapp_bench_skip_with_error(st, mapp_error_message());
      break;
    }
    stall_fw += res.store.stall_forward_s, stall_bw += res.store.stall_adjoint_s;
    disk_bytes += (double)(res.store.disk_written + res.store.disk_read);
    io_s += res.store.write_s + res.store.read_s;
    fw_s += res.forward_s, bw_s += res.adjoint_s;
  }
  double it = (double)mapp_bench_iterations(st), err = 0, gmax = 0;
  for (long i = 0; i < problem.grid.interior; i++)
    err = fmax(err, fabs(grad[i] - reference[i])), gmax = fmax(gmax, fabs(reference[i]));
  /* The disk time the snapshots' bytes would take at the bandwidth measured
   * above, over the I/O threads' actual time: 1 = the disk's own speed. */
  double ideal = res.store.disk_written / disk_write_Bps + res.store.disk_read / disk_read_Bps;
  double actual = res.store.write_s + res.store.read_s;
  mapp_bench_set_counter(st, "stall_fw_s", stall_fw / it, 0);
  mapp_bench_set_counter(st, "stall_bw_s", stall_bw / it, 0);
  mapp_bench_set_counter(st, "forward_s", fw_s / it, 0);
  mapp_bench_set_counter(st, "adjoint_s", bw_s / it, 0);
  mapp_bench_set_counter(st, "on_disk", (double)res.store.count[SNAP_LAYER_DISK], 0);
  mapp_bench_set_counter(st, "ratio", res.store.stored_bytes ? (double)res.store.raw_bytes / res.store.stored_bytes : 1, 0);
  mapp_bench_set_counter(st, "compress_s", res.store.compress_s + res.store.decompress_s, 0);
  mapp_bench_set_counter(st, "disk_GBps", io_s > 0 ? disk_bytes / io_s / 1e9 : 0, 0);
  mapp_bench_set_counter(st, "io_frac_of_disk", actual > 0 ? ideal / actual : 0, 0);
  mapp_bench_set_counter(st, "rel_err", gmax > 0 ? err / gmax : 0, 0);
  mapp_bench_set_counter(st, "recompute", (double)res.forward_steps / problem.cfg.nt, 0);
  mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * 2 * problem.cfg.nt * problem.grid.interior);
  snap_store_destroy(store);
}

static gradient_case cases[32];
static int ncases;

static void add_case(const char *variant, snap_mode mode, unsigned layers, size_t host_budget, snap_compression comp,
                     double zfp_tol, const char *label) {
  gradient_case *c = &cases[ncases++];
  snprintf(c->name, sizeof c->name, "gradient/%s/%s", variant, label);
  c->st.mode = mode;
  c->st.checkpoints = 20;
  c->st.store = (snap_store_config){.layers = layers, .budget = {0, host_budget, (size_t)1 << 40}, .compression = comp,
                                    .zstd_level = 1, .zfp_tolerance = zfp_tol, .io_threads = 1, .prefetch_depth = 4,
                                    .disk_dir = disk_dir, .direct_io = true, .in_place = true,
                                    .prog = "mapp-snapshots-bench"};
}

static int setup(void) {
  snap_config cfg = {.dims = 2, .n = {env_long("MAPP_SNAP_BENCH_NX", 800), 1, env_long("MAPP_SNAP_BENCH_NZ", 120)},
                     .space_order = 4, .nt = env_long("MAPP_SNAP_BENCH_NT", 600), .save_every = 1, .h = 10, .f0 = 15,
                     .nbl = 10};
  MAPP_TRY(snap_problem_create(MPI_COMM_WORLD, &cfg, &problem));
  MAPP_TRY(snap_engine_create(&engine, &problem, &snap_cpu_ops));
  size_t n = (size_t)problem.grid.interior, nd = (size_t)(cfg.nt * problem.nrec);
  m0 = malloc(8 * n), reference = malloc(8 * n), grad = malloc(8 * n), ufinal = malloc(8 * n);
  observed = malloc(8 * nd), rec = malloc(8 * nd);
  if (!m0 || !reference || !grad || !ufinal || !observed || !rec) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  snap_model_true(&problem, m0);
  MAPP_TRY(snap_engine_set_model(engine, m0));
  snap_source src = {.wavelet = problem.wavelet};
  MAPP_TRY(snap_forward(engine, &src, observed, NULL, NULL));
  snap_model_smooth(&problem, m0);
  /* The reference gradient (memory) for the error counters. */
  snap_strategy mem = {.mode = SNAP_MODE_MEMORY};
  snap_store *store;
  snap_result res;
  MAPP_TRY(snap_store_create(&store, &mem.store, &problem.grid, &problem.cfg, cfg.nt));
  MAPP_TRY(snap_gradient(engine, &mem, store, m0, observed, reference, rec, ufinal, &res));
  snap_store_destroy(store);
  if (!(res.objective > 0)) return mapp_fail(MAPP_ERR_INPUT, "the bench problem sees no reflection: raise MAPP_SNAP_BENCH_NT");
  return MAPP_OK;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *tmp = getenv("TMPDIR");
  disk_dir = tmp && *tmp ? tmp : "/tmp";
  int status = setup();
  const mapp_bench_options opt = {.use_real_time = true, .unit = MAPP_BENCH_MILLISECOND};
  size_t all = (size_t)problem.grid.interior * 8 * (size_t)problem.cfg.nt;
  for (const mapp_variant_info *v = snap_variants; !status && v->name; v++) {
    snap_mode mode = (snap_mode)v->kind;
    if (mode == SNAP_MODE_MEMORY) add_case(v->name, mode, 0, 0, SNAP_COMP_NONE, 0, "none");
    if (mode == SNAP_MODE_REVOLVE) add_case(v->name, mode, 0, 0, SNAP_COMP_NONE, 0, "20-checkpoints");
    if (mode != SNAP_MODE_STREAM) continue;
    add_case(v->name, mode, 2u, all, SNAP_COMP_NONE, 0, "host");
    add_case(v->name, mode, 6u, all / 2, SNAP_COMP_NONE, 0, "disk-host-half");
    add_case(v->name, mode, 6u, 32u << 20, SNAP_COMP_NONE, 0, "disk-host-32MiB");
    add_case(v->name, mode, 4u, 0, SNAP_COMP_NONE, 0, "disk");
    add_case(v->name, mode, 2u, all, SNAP_COMP_ZSTD, 0, "host/zstd");
    add_case(v->name, mode, 4u, 0, SNAP_COMP_ZSTD, 0, "disk/zstd");
    add_case(v->name, mode, 2u, all, SNAP_COMP_ZFP, 1e-4, "host/zfp-1e-4");
    add_case(v->name, mode, 2u, all, SNAP_COMP_ZFP, 1e-6, "host/zfp-1e-6");
    add_case(v->name, mode, 4u, 0, SNAP_COMP_ZFP, 1e-6, "disk/zfp-1e-6");
  }
  if (!status) status = mapp_bench_register("disk/write", bm_disk, (void *)1, &opt);
  if (!status) status = mapp_bench_register("disk/read", bm_disk, NULL, &opt);
  if (!status && uring_available()) {
    status = mapp_bench_register("disk/uring-write", bm_disk_uring, (void *)1, &opt);
    if (!status) status = mapp_bench_register("disk/uring-read", bm_disk_uring, NULL, &opt);
  }
  if (!status) status = mapp_bench_register("forward/nosave", bm_forward, NULL, &opt);
  if (!status) status = mapp_bench_register("forward/memory", bm_forward, (void *)1, &opt);
  for (int c = 0; !status && c < ncases; c++) status = mapp_bench_register(cases[c].name, bm_gradient, &cases[c], &opt);
  /* The bandwidths the fractions divide by: one untimed pass of each
   * pattern before the benchmarks (the disk rows report it properly). */
  if (!status) {
    size_t bs = block_bytes();
    char path[600];
    int fd = open_scratch(path, sizeof path);
    void *buf;
    if (fd >= 0 && !posix_memalign(&buf, 4096, bs)) {
      memset(buf, 1, bs);
      double t0 = mapp_now();
      for (long b = 0; b < problem.cfg.nt; b++) (void)!pwrite(fd, buf, bs, (off_t)(b * bs));
      fdatasync(fd);
      double t1 = mapp_now();
      for (long b = problem.cfg.nt - 1; b >= 0; b--) (void)!pread(fd, buf, bs, (off_t)(b * bs));
      double t2 = mapp_now();
      disk_write_Bps = (double)bs * problem.cfg.nt / (t1 - t0);
      disk_read_Bps = (double)bs * problem.cfg.nt / (t2 - t1);
      fprintf(stderr, "disk (same pattern, this run): write %.2f GB/s, read %.2f GB/s\n", disk_write_Bps / 1e9,
              disk_read_Bps / 1e9);
      free(buf);
      close(fd);
    }
  }
  if (!status) status = mapp_bench_main(argc, argv);
  status = mapp_report_error("mapp-snapshots-bench", status);
  MPI_Finalize();
  return status;
}
