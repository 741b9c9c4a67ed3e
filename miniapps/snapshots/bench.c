/* mapp-snapshots-bench: what streaming costs, measured against this
 * machine's own limits in the same run (Google Benchmark via the C bridge).
 *
 *   disk/write, disk/read    the disk's bandwidth with the disk layer's own
 *                            pattern: snapshot-sized O_DIRECT blocks
 *                            appended, then read back in reverse
 *   disk/uring-write, disk/uring-read
 *                            the same blocks as --disk-io uring moves them:
 *                            each as 4 aligned pieces in flight (io_uring)
 *   disk/uring-deep-write, disk/uring-deep-read
 *                            4 whole blocks in flight (a deeper queue than
 *                            the store has: what several snapshots in
 *                            flight at once would give)
 *   forward/nosave           the forward alone (the floor)
 *   forward/memory           the forward saving every step into the
 *                            pre-touched in-memory array (goal <= 1.1x nosave)
 *   gradient/<variant>/<layers>[/<compression>]
 *                            forward + adjoint, every variant of the table
 *                            and the layer settings; counters: stalls per
 *                            direction, snapshots on disk, compression
 *                            ratio, the disk throughput reached and its
 *                            fraction of the disk's best (pwrite or
 *                            io_uring, an untimed pass per method), the
 *                            gradient's max error against memory
 *
 *   forward/cuda/nosave, forward/cuda/device
 *                            the CUDA forward alone, and saving every step
 *                            into the device tier (goal <= 1.1x nosave)
 *   gradient/cuda/memory/none, gradient/cuda/stream/disk-host-device
 *                            forward + adjoint on CUDA: every snapshot in
 *                            host memory, and half on the device, a quarter
 *                            in host memory, the earliest quarter on disk
 *                            (goal <= 1.15x none); registered only where a
 *                            device is present
 *
 *   stream/triad, machine/core_round_trip
 *                            the machine's bandwidth and core-to-core
 *                            round trip, measured in the same run
 *
 * Problem: 2-D, space order 4 (MAPP_SNAP_BENCH_SO: 2, 4 or 8),
 * MAPP_SNAP_BENCH_NX x MAPP_SNAP_BENCH_NZ
 * (default 800 x 120), MAPP_SNAP_BENCH_NT steps (default 600): 0.77 MB
 * snapshots, 460 MB in all (the reflection returns within the run). The disk files go to $TMPDIR (else /tmp).
 * MAPP_SNAP_BENCH_DIMS=3 (with MAPP_SNAP_BENCH_NY, default 100) runs it in
 * 3-D: NX=NY=NZ=100 NT=465 is Devito's reference point in the README. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "mapp_bench.h"
#include "mapp_latency.h"
#include "mapp_stream.h"
#include "snapshots.h"

static snap_problem problem;
static snap_engine *engine, *cuda_engine; /* cuda_engine: where a device is */
static double *m0, *observed, *reference, *grad, *rec, *ufinal;
static const char *disk_dir;
static double disk_write_Bps, disk_read_Bps;

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  return v && *v ? atol(v) : fallback;
}

/* ---- the disk's own bandwidth with the disk layer's pattern ---- */

static size_t block_bytes(void) { return ((size_t)problem.grid.interior * 8 + 4095) / 4096 * 4096; }

/* A scratch file in the disk folder (O_DIRECT where allowed, unlinked at
 * once) and one snapshot-sized aligned block, moved as the store moves it:
 * whole by pwrite/pread, or as 4 aligned pieces in flight through io_uring
 * (--disk-io uring). */
typedef struct {
  int fd;
  bool uring;
  struct io_uring ring;
  void *buf;
  size_t bs;
  long nblocks;
} scratch;

enum { uring_pieces = 4 };

static bool scratch_open(scratch *d, bool uring) {
  char path[600];
  *d = (scratch){.bs = block_bytes(), .nblocks = problem.cfg.nt, .uring = uring};
  snprintf(path, sizeof path, "%s/mapp-snapshots-bench.%ld.bin", disk_dir, (long)getpid());
  d->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
  if (d->fd < 0) d->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unlink(path);
  if (d->fd < 0 || posix_memalign(&d->buf, 4096, d->bs)) return false;
  memset(d->buf, 1, d->bs);
  if (uring && io_uring_queue_init(uring_pieces, &d->ring, 0) != 0) return d->uring = false, false;
  return true;
}

static void scratch_close(scratch *d) {
  if (d->uring) io_uring_queue_exit(&d->ring);
  free(d->buf);
  if (d->fd >= 0) close(d->fd);
}

static bool block_io(scratch *d, bool write, long b) {
  off_t off = (off_t)((size_t)b * d->bs);
  if (!d->uring)
    return (write ? pwrite(d->fd, d->buf, d->bs, off) : pread(d->fd, d->buf, d->bs, off)) == (ssize_t)d->bs;
  size_t piece = (d->bs / uring_pieces + 4095) / 4096 * 4096;
  int n = 0;
  for (size_t at = 0; at < d->bs; at += piece, n++) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
    size_t len = d->bs - at < piece ? d->bs - at : piece;
    if (write) io_uring_prep_write(sqe, d->fd, (char *)d->buf + at, (unsigned)len, off + (off_t)at);
    else io_uring_prep_read(sqe, d->fd, (char *)d->buf + at, (unsigned)len, off + (off_t)at);
    io_uring_sqe_set_data64(sqe, len);
  }
  bool ok = io_uring_submit(&d->ring) == n;
  for (int k = 0; ok && k < n; k++) { /* every piece moved whole, or the pass failed */
    struct io_uring_cqe *cqe;
    ok = io_uring_wait_cqe(&d->ring, &cqe) == 0;
    if (!ok) break;
    ok = cqe->res >= 0 && (uint64_t)cqe->res == io_uring_cqe_get_data64(cqe);
    io_uring_cqe_seen(&d->ring, cqe);
  }
  return ok;
}

/* Every block written in order (then synced), or read back in reverse as
 * the adjoint reads them. */
static bool scratch_pass(scratch *d, bool write) {
  for (long b = 0; b < d->nblocks; b++)
    if (!block_io(d, write, write ? b : d->nblocks - 1 - b)) return false;
  return !write || fdatasync(d->fd) == 0;
}

/* The same blocks with a deeper queue than the store has: uring_pieces
 * WHOLE blocks in flight at once through io_uring (each from its own
 * buffer), the pattern a store with several snapshots in flight would
 * give the disk. */
static bool scratch_pass_deep(scratch *d, bool write) {
  void *buf[uring_pieces] = {0};
  bool ok = true;
  for (int k = 0; k < uring_pieces && ok; k++) ok = posix_memalign(&buf[k], 4096, d->bs) == 0;
  long next = 0, inflight = 0;
  while (ok && (next < d->nblocks || inflight > 0)) {
    for (; next < d->nblocks && inflight < uring_pieces; next++, inflight++) {
      struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
      off_t off = (off_t)((size_t)(write ? next : d->nblocks - 1 - next) * d->bs);
      void *b = buf[next % uring_pieces];
      if (write) io_uring_prep_write(sqe, d->fd, b, (unsigned)d->bs, off);
      else io_uring_prep_read(sqe, d->fd, b, (unsigned)d->bs, off);
    }
    ok = io_uring_submit(&d->ring) >= 0;
    struct io_uring_cqe *cqe;
    ok = ok && io_uring_wait_cqe(&d->ring, &cqe) == 0;
    if (!ok) break;
    ok = cqe->res == (int)d->bs;
    io_uring_cqe_seen(&d->ring, cqe);
    inflight--;
  }
  for (int k = 0; k < uring_pieces; k++) free(buf[k]);
  return ok && (!write || fdatasync(d->fd) == 0);
}

/* arg: bit 0 write (else read), bit 1 io_uring, bit 2 whole blocks in flight. */
static void bm_disk(mapp_bench_state *st, void *arg) {
  bool write = (uintptr_t)arg & 1, uring = (uintptr_t)arg & 2, deep = (uintptr_t)arg & 4;
  scratch d;
  if (!scratch_open(&d, uring) || (!write && !scratch_pass(&d, true))) {
    mapp_bench_skip_with_error(st, "cannot open, prepare or (io_uring) set up a scratch file in the disk folder");
    scratch_close(&d);
    return;
  }
  while (mapp_bench_keep_running(st))
    if (!(deep ? scratch_pass_deep(&d, write) : scratch_pass(&d, write)))
      mapp_bench_skip_with_error(st, write ? "a write failed" : "a read failed");
  mapp_bench_set_bytes_processed(st, (int64_t)((double)mapp_bench_iterations(st) * (double)d.nblocks * (double)d.bs));
  scratch_close(&d);
}

/* The bandwidths the fractions divide by: one untimed write and read pass
 * per method, before the first benchmark that divides by them (so a bad
 * flag is refused before any disk is touched); the better method counts
 * (the disk's best with this pattern, the strictest reference). */
static void measure_disk(void) {
  static bool measured;
  if (measured) return;
  measured = true;
  for (int uring = 0; uring < 2; uring++) {
    scratch d;
    if (scratch_open(&d, uring)) {
      double t0 = mapp_now();
      bool ok = scratch_pass(&d, true);
      double t1 = mapp_now();
      ok = ok && scratch_pass(&d, false);
      double t2 = mapp_now(), bytes = (double)d.bs * (double)d.nblocks;
      if (ok) {
        fprintf(stderr, "disk (same pattern, this run, %s): write %.2f GB/s, read %.2f GB/s\n",
                uring ? "io_uring, 4 pieces in flight" : "pwrite/pread", bytes / (t1 - t0) / 1e9,
                bytes / (t2 - t1) / 1e9);
        disk_write_Bps = fmax(disk_write_Bps, bytes / (t1 - t0));
        disk_read_Bps = fmax(disk_read_Bps, bytes / (t2 - t1));
      }
    }
    scratch_close(&d);
  }
}

/* ---- forward without and with saving ---- */

typedef struct {
  snap_engine **engine;
  bool save;
  snap_store_config store; /* with save */
} forward_case;

static void bm_forward(mapp_bench_state *st, void *arg) {
  const forward_case *fc = arg;
  snap_engine *e = *fc->engine;
  snap_store *store = NULL;
  if (fc->save && snap_store_create(&store, &fc->store, &problem.grid, &problem.cfg, problem.cfg.nt)) {
    mapp_bench_skip_with_error(st, mapp_error_message());
    return;
  }
  snap_engine_set_model(e, m0);
  snap_source src = {.wavelet = problem.wavelet};
  while (mapp_bench_keep_running(st)) {
    if (store && fc->store.layers) snap_store_reset(store); /* the in-memory array is simply overwritten */
    if (snap_forward(e, &src, rec, NULL, store)) mapp_bench_skip_with_error(st, mapp_error_message());
  }
  mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * problem.cfg.nt * problem.grid.interior);
  snap_store_destroy(store);
}

/* ---- the gradient per variant and layer setting ---- */

typedef struct {
  char name[96];
  snap_strategy st;
  snap_engine **engine;
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
  measure_disk(); /* untimed: before the loop */
  while (mapp_bench_keep_running(st)) {
    if (store) snap_store_reset(store);
    if (snap_gradient(*c->engine, &c->st, store, m0, observed, grad, rec, ufinal, &res)) {
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
   * by measure_disk, over the I/O threads' actual time: 1 = the disk's own speed. */
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
  mapp_bench_set_counter(st, "uring", res.store.uring, 0); /* 1: io_uring carried the disk transfers */
  mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * 2 * problem.cfg.nt * problem.grid.interior);
  snap_store_destroy(store);
}

static gradient_case cases[32];
static int ncases;

static gradient_case *add_case(const char *variant, snap_mode mode, unsigned layers, size_t host_budget,
                               snap_compression comp, double zfp_tol, const char *label) {
  gradient_case *c = &cases[ncases++];
  snprintf(c->name, sizeof c->name, "gradient/%s/%s", variant, label);
  c->st.mode = mode;
  c->engine = &engine;
  c->st.checkpoints = 20;
  c->st.store = (snap_store_config){.layers = layers, .budget = {0, host_budget, (size_t)1 << 40}, .compression = comp,
                                    .zstd_level = 1, .zfp_tolerance = zfp_tol, .io_threads = 1, .prefetch_depth = 4,
                                    .disk_dir = disk_dir, .direct_io = true, .in_place = true,
                                    .prog = "mapp-snapshots-bench"};
  return c;
}

/* The CUDA rows: the forward alone and into the device tier, and the
 * gradient with every snapshot in host memory against the three layers.
 * Registered only where a device is present (a row that cannot run would
 * fail the bench), as crm's GPU rows are. */
static forward_case cuda_forwards[2];

static int register_cuda(const mapp_bench_options *opt) {
  if (!mapp_backend_built(MAPP_BACKEND_CUDA) || mapp_cuda_device_count() == 0 || !snap_cuda_ops()) return MAPP_OK;
  MAPP_TRY(snap_engine_create(&cuda_engine, &problem, snap_cuda_ops()));
  size_t all = (size_t)problem.grid.interior * 8 * (size_t)problem.cfg.nt;
  size_t device_all = snap_layer_block_bytes(SNAP_LAYER_DEVICE, (size_t)problem.grid.interior * 8) * problem.cfg.nt;
  cuda_forwards[0] = (forward_case){.engine = &cuda_engine};
  cuda_forwards[1] = (forward_case){.engine = &cuda_engine, .save = true,
                                    .store = {.layers = 1u << SNAP_LAYER_DEVICE, .budget = {device_all, 0, 0},
                                              .io_threads = 1, .prefetch_depth = 4, .disk_dir = disk_dir,
                                              .prog = "mapp-snapshots-bench", .device = snap_cuda_device_ops()}};
  MAPP_TRY(mapp_bench_register("forward/cuda/nosave", bm_forward, &cuda_forwards[0], opt));
  MAPP_TRY(mapp_bench_register("forward/cuda/device", bm_forward, &cuda_forwards[1], opt));
  gradient_case *none = add_case("cuda/memory", SNAP_MODE_MEMORY, 0, 0, SNAP_COMP_NONE, 0, "none");
  gradient_case *tiers = add_case("cuda/stream", SNAP_MODE_STREAM, 7u, all / 4, SNAP_COMP_NONE, 0, "disk-host-device");
  tiers->st.store.budget[SNAP_LAYER_DEVICE] = device_all / 2;
  tiers->st.store.device = snap_cuda_device_ops();
  for (gradient_case *c = none; c <= tiers; c++) {
    c->engine = &cuda_engine;
    c->st.store.in_place = false; /* the device's copies land in page-locked staging buffers */
    MAPP_TRY(mapp_bench_register(c->name, bm_gradient, c, opt));
  }
  return MAPP_OK;
}

static int setup(void) {
  int dims = (int)env_long("MAPP_SNAP_BENCH_DIMS", 2);
  if (dims != 2 && dims != 3) return mapp_fail(MAPP_ERR_INPUT, "MAPP_SNAP_BENCH_DIMS=%d: 2 or 3", dims);
  snap_config cfg = {.dims = dims,
                     .n = {env_long("MAPP_SNAP_BENCH_NX", 800), dims == 3 ? env_long("MAPP_SNAP_BENCH_NY", 100) : 1,
                           env_long("MAPP_SNAP_BENCH_NZ", 120)},
                     .space_order = (int)env_long("MAPP_SNAP_BENCH_SO", 4), .nt = env_long("MAPP_SNAP_BENCH_NT", 600), .save_every = 1, .h = 10, .f0 = 15,
                     .nbl = 10};
  MAPP_TRY(snap_problem_create(MPI_COMM_WORLD, &cfg, &problem));
  MAPP_TRY(snap_engine_create(&engine, &problem, &snap_cpu_ops));
  size_t n = (size_t)problem.grid.interior, nd = snap_rec_values(&problem); /* this rank's receivers */
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
    add_case(v->name, mode, 6u, 32u << 20, SNAP_COMP_NONE, 0, "disk-host-32MiB/uring")->st.store.uring = true;
    add_case(v->name, mode, 4u, 0, SNAP_COMP_NONE, 0, "disk/uring")->st.store.uring = true;
    add_case(v->name, mode, 2u, all, SNAP_COMP_ZSTD, 0, "host/zstd");
    add_case(v->name, mode, 4u, 0, SNAP_COMP_ZSTD, 0, "disk/zstd");
    add_case(v->name, mode, 2u, all, SNAP_COMP_ZFP, 1e-4, "host/zfp-1e-4");
    add_case(v->name, mode, 2u, all, SNAP_COMP_ZFP, 1e-6, "host/zfp-1e-6");
    add_case(v->name, mode, 4u, 0, SNAP_COMP_ZFP, 1e-6, "disk/zfp-1e-6");
  }
  /* This machine's anchors in the same run: memory bandwidth (the saved
   * snapshots' streaming stores compete for it) and the core-to-core round
   * trip (on this VM it switches between two modes, and so does the speed
   * of everything that hands work between threads). */
  if (!status) status = mapp_stream_register(0);
  if (!status) status = mapp_latency_register();
  if (!status) status = mapp_bench_register("disk/write", bm_disk, (void *)1, &opt);
  if (!status) status = mapp_bench_register("disk/read", bm_disk, (void *)0, &opt);
  if (!status) status = mapp_bench_register("disk/uring-write", bm_disk, (void *)3, &opt);
  if (!status) status = mapp_bench_register("disk/uring-read", bm_disk, (void *)2, &opt);
  if (!status) status = mapp_bench_register("disk/uring-deep-write", bm_disk, (void *)7, &opt);
  if (!status) status = mapp_bench_register("disk/uring-deep-read", bm_disk, (void *)6, &opt);
  static forward_case cpu_forwards[2] = {{.engine = &engine}, {.engine = &engine, .save = true, .store = {.layers = 0}}};
  if (!status) status = mapp_bench_register("forward/nosave", bm_forward, &cpu_forwards[0], &opt);
  if (!status) status = mapp_bench_register("forward/memory", bm_forward, &cpu_forwards[1], &opt);
  for (int c = 0; !status && c < ncases; c++) status = mapp_bench_register(cases[c].name, bm_gradient, &cases[c], &opt);
  if (!status) status = register_cuda(&opt);
  if (!status) status = mapp_bench_main(argc, argv);
  status = mapp_report_error("mapp-snapshots-bench", status);
  MPI_Finalize();
  return status;
}
