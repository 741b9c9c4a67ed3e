/* snapshots: acoustic forward and adjoint propagation whose saved
 * wavefields (snapshots) are streamed across device, host and disk under
 * memory budgets, asynchronously and optionally compressed (seed:
 * streamed-snapshots--devitopro-data-streaming.txt). This header is the
 * app's API; main.c is only the command line.
 *
 * Grid: dims 2 or 3, axis 0 horizontal (x, decomposed over MPI ranks in
 * slabs), axis 1 horizontal (y, 3-D only), the last axis depth (z,
 * contiguous). Every field is held padded by the stencil radius on every
 * side (zeros beyond the grid: the Laplacian stays symmetric); 2-D fields
 * have one y plane and no padding in y. */
#ifndef SNAPSHOTS_H
#define SNAPSHOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapp.h"
#include "snap_kernel.h"

/* ------------------------------------------------------------ problem */

typedef struct {
  int dims;          /* 2 or 3 */
  long n[3];         /* global points: x, y (1 in 2-D), z */
  int space_order;   /* 2, 4 or 8 */
  long nt;           /* time steps */
  long save_every;   /* keep every k-th snapshot (1: all) */
  double h;          /* grid spacing, m */
  double f0;         /* Ricker peak frequency, Hz */
  int nbl;           /* absorbing layer width, points */
} snap_config;

typedef struct {
  const char *name;
  int dims;
  long n[3];
  long nt;
  int space_order;
} snap_preset;
extern const snap_preset snap_presets[4];
void snap_config_from_preset(const snap_preset *p, snap_config *cfg);
/* Input errors for a grid the model cannot take. */
int snap_config_check(const snap_config *cfg, int nranks);

/* One rank's share of the grid and its neighbours along x. */
typedef struct {
  MPI_Comm comm;
  int rank, nranks, left, right; /* MPI_PROC_NULL at the ends */
  int dims, radius;
  long global[3];
  long first;        /* this rank's first x */
  long n[3];         /* interior points held: n[0] = this rank's x count */
  long pad[3];       /* padding in front per axis: radius, radius (0 in 2-D), a cache line (>= radius);
                        behind: radius, radius, the rest of the row's last cache line (>= radius) */
  long pn[3];        /* padded extents */
  long stride[3];    /* padded strides (stride[1] = 0 in 2-D: the kernel skips y) */
  long padded;       /* doubles per padded field */
  long interior;     /* doubles per interior (a snapshot) */
  double w[SNAP_MAX_RADIUS + 1]; /* stencil weights / h^2 */
} snap_grid;

int snap_grid_create(MPI_Comm comm, const snap_config *cfg, snap_grid *g);
static inline long snap_index(const snap_grid *g, long i, long j, long k) {
  return (i + g->pad[0]) * g->pn[1] * g->pn[2] + (j + g->pad[1]) * g->pn[2] + (k + g->pad[2]);
}
/* Interior <-> contiguous [x][y][z] copies (a snapshot is the interior). */
void snap_pack(const snap_grid *g, const double *padded, double *interior);
void snap_unpack(const snap_grid *g, const double *interior, double *padded);

/* Source, receivers, time step and the velocity models. */
typedef struct {
  snap_config cfg;
  snap_grid grid;
  double dt;
  double *wavelet;       /* nt + 1 Ricker values, w[k] = source at time k dt */
  long src_local;        /* padded index of the source on its owner, else -1 */
  long nrec;             /* receivers in all (along x from nbl; at the y centre in 3-D) */
  /* This rank's receivers, rec_first .. rec_first + nrec_local - 1 (they
   * lie along x, so each rank's are consecutive; none on a rank inside the
   * absorbing layer). A rank holds their data only: nt x nrec_local. */
  long rec_first, nrec_local;
  long *rec_local;       /* padded index of each of this rank's receivers */
  double vmin, vmax;
} snap_problem;

int snap_problem_create(MPI_Comm comm, const snap_config *cfg, snap_problem *p);
void snap_problem_free(snap_problem *p);

/* The receivers' data across ranks (snap_receivers.c). */
/* Doubles a buffer of one rank's receivers' data holds (nt x nrec_local),
 * at least 1: a rank without receivers still passes a buffer. */
static inline size_t snap_rec_values(const snap_problem *p) {
  long n = p->cfg.nt * p->nrec_local;
  return n > 0 ? (size_t)n : 1;
}
/* The receivers `rank` holds (its x range within the receivers' line). */
mapp_range snap_receivers_of(const snap_problem *p, int rank);
/* Collective: J = 1/2 sum of residual^2 over every rank's receivers (each
 * its nt x nrec_local), summed on rank 0 in the order one rank sums all
 * the data in (time, then receiver), so J is the same bits whatever the
 * rank count; every rank gets it. */
int snap_objective_sum(const snap_problem *p, const double *residual, double *J);
/* Bytes this rank holds while the objective is summed: its gather buffer
 * (its subtree's receivers, a block of time rows) and, on rank 0, the
 * block of every receiver's rows. Part of the rank's host budget. */
size_t snap_gather_bytes(const snap_problem *p);
/* Collective: every rank's receivers' data as the whole nt x nrec array,
 * allocated on rank 0 (*all; NULL on the others), for the answer file. */
int snap_receivers_gather(const snap_problem *p, const double *rec, double **all);

/* Squared slowness m = 1/v^2 on the interior (contiguous): the true model
 * (a dipping reflector) or the smoothed one the gradient is taken at. */
void snap_model_true(const snap_problem *p, double *m);
void snap_model_smooth(const snap_problem *p, double *m);

/* ------------------------------------------------------------ backends */

/* The model as the update reads it (snap_kernel.h): 1/a per padded
 * point, and r = b/a either per padded point (`ratio`: the CUDA backend)
 * or formed per point from the absorbing layer's damping (`layer`,
 * `row_depth`: the host backend, one model array streamed per step, not
 * two; NULL where unused). */
typedef struct {
  double *ratio, *inv_a;
  double *layer;  /* (nbl + 1) rows of pn[2]: eta/dt along z at depth class c (snap_fill_layer) */
  int *row_depth; /* each interior row's (i, j) depth into the layer across x and y: its class */
  long calm_from, calm_to; /* padded z offsets [from, to) where class 0's damping is 0 (snap_update_undamped) */
} snap_coeffs;

/* 1/a and (where ratio is not NULL) r = snap_ratio(eta/dt, 1/a) of the
 * update at every interior point of padded host arrays (the absorbing
 * layer's damping included). */
void snap_fill_coeffs(const snap_problem *p, const double *m, double *ratio, double *inv_a);
/* The damping as rows: layer[c * pn[2] + z] is eta/dt at padded z of a row
 * whose depth into the layer across x and y is c (0 ... nbl), the same
 * value snap_fill_coeffs forms there; row_depth[i * n[1] + j] is row
 * (i, j)'s c. */
void snap_fill_layer(const snap_problem *p, double *layer, int *row_depth);

/* Point sources of one step (the adjoint's receivers) grouped by the row
 * (i, j) they fall in, so a backend's row loop can inject a row's own
 * sources right after computing it. */
typedef struct snap_row_sources {
  long rows;   /* n[0] x n[1] */
  long *first; /* rows + 1 offsets into idx (CSR) */
  long *idx;   /* padded index per source, row by row */
  long *order; /* where each source of idx sits in the caller's list */
} snap_row_sources;
/* Groups the n padded indices idx (negative ones, not owned, left out). */
int snap_row_sources_create(const snap_grid *g, const long *idx, long n, snap_row_sources *s);
void snap_row_sources_free(snap_row_sources *s);

/* What a paired step (snap_ops.step_pair) injects, saves and images: the
 * sources by row and their values at each of the two steps, each step's
 * snapshot buffer (NULL: not saved); for the adjoint, the forward
 * snapshot each step images with (snap_image) into grad (and the zfp
 * bound's sum into abs_d2 where given); grad NULL: no imaging. */
typedef struct {
  const snap_row_sources *sources;
  const double *values[2];
  double *snapshot[2];
  const double *imaged[2];
  double *grad, *abs_d2;
} snap_step_pair;

/* A backend: where the fields live and how a step runs. The CPU table
 * (serial, omp) and the CUDA table hold the same operations. */
typedef struct snap_ops {
  const char *name;
  int (*alloc)(const snap_grid *g, double **field);           /* zeroed padded field */
  void (*release)(double *field);
  int (*set_coeffs)(const snap_problem *p, const double *m, snap_coeffs *k); /* allocates */
  void (*free_coeffs)(snap_coeffs *k);
  void (*step)(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev);
  /* As step, writing next's interior into the host buffer `snapshot` as
   * well, inside the step's own loop (no second pass). NULL where fields
   * are not host memory (CUDA): then snapshot_out after the step. */
  void (*step_save)(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev,
                    double *snapshot);
  /* field[idx] += value * inv_a[idx] for n points (owned points only). */
  void (*inject)(const snap_coeffs *k, double *field, const long *idx, const double *values, long n);
  void (*sample)(const double *field, const long *idx, double *out, long n);
  /* Halo planes along x: copy out to / in from the host buffers (the
   * CUDA table copies, the CPU one points into the field). */
  int (*exchange)(const snap_grid *g, double *field);
  /* The interior of field into a host buffer (the CUDA table copies
   * asynchronously on its own stream and waits in snapshot_wait). */
  int (*snapshot_out)(const snap_grid *g, const double *field, double *host);
  int (*snapshot_wait)(void);
  /* grad += snapshot (interior, host) x the adjoint's second difference. */
  int (*image)(const snap_grid *g, double *grad, const double *snapshot, const double *next, const double *cur,
               const double *prev, double *abs_d2);
  int (*to_host)(const snap_grid *g, const double *field, double *host_padded);
  int (*from_host)(const snap_grid *g, const double *host_padded, double *field);
  /* As image, with the snapshot already in this backend's memory (a slot
   * of the device tier's pool), read where it is: no copy. */
  int (*image_in_place)(const snap_grid *g, double *grad, const double *snapshot, const double *next,
                        const double *cur, const double *prev, double *abs_d2);
  /* The adjoint's step, injection (values[q] at sources' q-th point) and
   * imaging with a host snapshot (and the zfp bound's sum, abs_d2, where
   * given) in one pass: the same bits as step, inject and image run one
   * after another. NULL: those three are run. */
  void (*step_image)(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev,
                     const snap_row_sources *sources, const double *values, const double *snapshot, double *grad,
                     double *abs_d2);
  /* step, step_save and step_image may be given next == prev (the new
   * field written over the one two steps back): the engine then keeps two
   * time levels, not three. Needs step_image, which then images every
   * snapshot the store hands out (the device tier's stand-in included: the
   * fields are host memory), so no imaging reads u^{k-2} after a step. */
  bool step_in_place;
  /* The kernels that step grid g on this machine, for the record (e.g.
   * "avx512" or "portable": the same bits, not the same speed). */
  const char *(*kernels)(const snap_grid *g);
  /* Two steps in one pass over memory, in place: `a` holds u^{k-2} and
   * receives u^k, `b` holds u^{k-1} and receives u^{k+1}; each step's
   * sources injected, snapshot written and (the adjoint) imaging done as
   * `io` says. The same bits as step_save (or step_image) and inject
   * twice. One rank only: no halo exchange between the two steps. NULL:
   * not offered. */
  void (*step_pair)(const snap_grid *g, const snap_coeffs *k, double *a, double *b, const snap_step_pair *io);
} snap_ops;

extern const snap_ops snap_cpu_ops;
/* Whether the engine steps this backend in place (two time levels). */
static inline bool snap_ops_two_levels(const snap_ops *ops) { return ops->step_in_place && ops->step_image; }
/* The CUDA table, or NULL in a build without CUDA. */
const snap_ops *snap_cuda_ops(void);

/* The device tier's operations, which the store calls without knowing
 * CUDA: one pool allocated at setup, a snapshot put into a slot of it and
 * read from there. Every call returns a status. */
typedef struct snap_device_ops {
  /* Free device memory now (what --mem-perc takes its share of), bytes. */
  int (*available)(size_t *bytes);
  /* One allocation of `bytes` for every device-resident snapshot. */
  int (*pool_alloc)(size_t bytes, void **pool);
  void (*pool_free)(void *pool);
  /* The interior of the (device) field into `slot` (device): packed on
   * the compute stream after the step that produced the field, which is
   * where the imaging reads it; returns without waiting. */
  int (*put)(const snap_grid *g, const double *field, double *slot);
  /* Every put complete (their errors surface here). */
  int (*wait)(void);
  /* `slot` readable by the compute stream's next kernels: the pointer the
   * imaging reads in place (image_in_place). */
  int (*get)(const double *slot, const double **snapshot);
} snap_device_ops;

/* The CUDA device tier, or NULL in a build without CUDA (then the device
 * layer is refused, exit 2). */
const snap_device_ops *snap_cuda_device_ops(void);

/* ------------------------------------------------------------ snapshot store */

typedef enum { SNAP_LAYER_DEVICE, SNAP_LAYER_HOST, SNAP_LAYER_DISK, SNAP_NLAYERS } snap_layer;
typedef enum { SNAP_COMP_NONE, SNAP_COMP_ZSTD, SNAP_COMP_ZFP } snap_compression;

#define SNAP_LAYER_NAMES "disk-host-device|host-device|disk-host|host|device|disk|none"
/* The layer set --layers names as a bit mask of (1 << snap_layer); 0 for none. */
int snap_layers_parse(const char *name, unsigned *mask);
const char *snap_layer_name(snap_layer l);
const char *snap_compression_name(snap_compression c);

/* Bytes one uncompressed snapshot of `snapshot_bytes` takes in a layer: a
 * 256-byte-aligned slot of the device pool, a 64-byte-aligned block of the
 * host ring, a 4 KiB-aligned block of the disk file (direct I/O). */
size_t snap_layer_block_bytes(snap_layer l, size_t snapshot_bytes);

/* Placement for reverse reading: where nsnap uncompressed snapshots go
 * under the budgets of the layers in `layers`. The device keeps the latest
 * (the adjoint reads them first), the host the ones before, the disk the
 * earliest; the split points follow from the budgets alone. */
typedef struct {
  long count[SNAP_NLAYERS];  /* snapshots per layer */
  long first[SNAP_NLAYERS];  /* each layer's first snapshot (its range is [first, first + count)) */
  long unplaced;             /* the earliest snapshots no layer has room for; 0: everything fits */
} snap_placement;
void snap_placement_plan(unsigned layers, const size_t budget[SNAP_NLAYERS], size_t snapshot_bytes, long nsnap,
                         snap_placement *plan);

typedef struct {
  unsigned layers;                 /* mask; 0: everything in one in-memory array (none) */
  size_t budget[SNAP_NLAYERS];     /* bytes the snapshots may use per layer */
  snap_compression compression;
  int zstd_level;
  double zfp_tolerance;            /* absolute; 0 with zfp_rate > 0 means fixed rate */
  double zfp_rate;                 /* bits per value (fixed-rate mode) */
  int io_threads;                  /* writer threads (forward), as many prefetchers (adjoint) */
  int prefetch_depth;              /* adjoint: snapshots fetched ahead */
  const char *disk_dir;
  bool keep;                       /* keep the disk file (complete and verifiable) */
  bool direct_io;                  /* O_DIRECT where the file system allows it */
  bool uring;                      /* snapshots' disk transfers through io_uring, each as 4 requests in flight
                                      (the plain calls where the kernel refuses it) */
  /* The forward writes each snapshot into host memory itself (a backend
   * with step_save): acquire may hand out the snapshot's own block of the
   * host ring (stored raw) instead of a staging buffer, so it is never
   * copied; false: staging buffers (a backend's asynchronous copies, which
   * want page-locked memory, land there). */
  bool in_place;
  /* The layout for a host budget too small for two steps at a time: one
   * staging buffer per writer and one snapshot fetched ahead, so the store
   * holds one snapshot at a time (snap_store_holds_two is false) and the
   * steps run singly; false: one staging buffer more than the writers and
   * prefetch_depth ahead. */
  bool one_at_a_time;
  const char *prog;                /* for the disk file name */
  const snap_device_ops *device;   /* the device tier (snap_cuda_device_ops()); needed with the device layer */
} snap_store_config;

/* Statistics for the record. */
typedef struct {
  long count[SNAP_NLAYERS];        /* snapshots held per layer after the forward */
  size_t peak_bytes[SNAP_NLAYERS]; /* most bytes a layer held */
  size_t raw_bytes, stored_bytes;  /* totals before/after compression */
  double compress_s, decompress_s; /* thread time spent (de)compressing */
  double write_s, read_s;          /* thread time in disk writes and reads */
  size_t disk_written, disk_read;  /* bytes */
  double stall_forward_s, stall_adjoint_s; /* compute waiting on the store */
  long checksum_failures;
  bool direct_io;                  /* O_DIRECT was in force */
  bool uring;                      /* io_uring carried the snapshots' disk transfers */
  char disk_path[512];
} snap_store_stats;

typedef struct snap_store snap_store;

/* Header of the disk layer's files (one per rank). */
#define SNAP_FILE_MAGIC "MAPPSNAP"
#define SNAP_FILE_VERSION 1u
#define SNAP_FILE_HEADER_BYTES 4096
#define SNAP_FILE_COMPLETE 1u
typedef struct {
  char magic[8];
  uint32_t version, flags;          /* flags: SNAP_FILE_COMPLETE once the forward finished */
  uint32_t dims, space_order, compression, rank;
  uint32_t nranks, reserved;
  int64_t global[3], first, local[3];
  int64_t nt, save_every, nsnap;    /* time steps, spacing, snapshots in the run */
  int64_t on_disk;                  /* index entries */
  int64_t index_offset;             /* where the index starts */
  uint64_t raw_bytes;               /* bytes per snapshot before compression */
  double zfp_tolerance, zfp_rate;
  uint64_t index_checksum, header_checksum; /* header_checksum over all bytes before it */
} snap_file_header;

typedef struct {
  int64_t snapshot;                 /* snapshot number (time step = snapshot * save_every + save_every) */
  int64_t offset, stored;           /* bytes in the file */
  uint32_t codec, reserved;         /* snap_compression used (none when compressing did not pay) */
  uint64_t checksum;                /* of the stored bytes */
} snap_file_entry;

/* 64-bit checksum (FNV-1a over 8-byte words, then the tail bytes). */
uint64_t snap_checksum(const void *data, size_t bytes);

/* Creates a store for nsnap snapshots of `g->interior` doubles. */
int snap_store_create(snap_store **out, const snap_store_config *cfg, const snap_grid *g, const snap_config *pcfg,
                      long nsnap);
/* The snapshot-sized host buffers a store of this configuration holds at
 * most besides its host ring (staging, prefetch, a disk buffer per writer
 * and per prefetcher, a compression buffer per writer): what the host
 * budget must hold besides the wavefields. */
int snap_store_buffer_count(const snap_store_config *cfg);
/* Forward: a buffer for snapshot i (waits while every buffer is in
 * flight: the forward stall), then hand it over. Snapshots come in order. */
int snap_store_acquire(snap_store *s, long i, double **buf);
int snap_store_commit(snap_store *s, long i);
/* True when snapshot i belongs to the device tier (the latest ones). Such
 * a snapshot is not acquired: snap_store_put_device takes it from the
 * (device) field, and snap_store_get hands out a device pointer. */
bool snap_store_on_device(const snap_store *s, long i);
/* Whether the forward may acquire snapshots i and i + 1 before it
 * commits i, and the adjoint get two before it releases the first (a
 * paired step saves, and images with, two at once): one array in memory
 * (--layers none), or host and disk layers with two staging buffers or
 * ring slots and two prefetch slots. */
bool snap_store_holds_two(const snap_store *s);
int snap_store_put_device(snap_store *s, long i, const snap_grid *g, const double *field);
/* Forward done: waits for the writers, writes the disk file's index and
 * marks it complete. */
int snap_store_finish_forward(snap_store *s);
/* Adjoint: snapshot i (in reverse order), waiting for the prefetcher when
 * it is not there yet (the adjoint stall); release when used. A device-tier
 * snapshot (snap_store_on_device) comes back as its slot in the pool. */
int snap_store_get(snap_store *s, long i, const double **data);
int snap_store_release(snap_store *s, long i);
/* Ready for another forward (the bench repeats runs). */
int snap_store_reset(snap_store *s);
void snap_store_get_stats(const snap_store *s, snap_store_stats *st);
/* Joins the threads, frees, removes the disk file unless keep. */
void snap_store_destroy(snap_store *s);

/* (De)compression of one snapshot (snap_compress.c). */
typedef struct snap_codec snap_codec;
int snap_codec_create(snap_codec **out, const snap_store_config *cfg, const snap_grid *g);
void snap_codec_free(snap_codec *c);
size_t snap_codec_bound(const snap_codec *c);
/* Compresses raw into dst (capacity snap_codec_bound); *codec says what
 * was used (none when compression would not shrink it). */
int snap_codec_compress(snap_codec *c, const double *raw, void *dst, size_t *stored, uint32_t *codec);
int snap_codec_decompress(snap_codec *c, uint32_t codec, const void *src, size_t stored, double *raw);
/* Stand-alone decompression from a file header (the accessor). */
int snap_decompress_file_entry(const snap_file_header *hdr, uint32_t codec, const void *src, size_t stored,
                               double *raw);

/* ------------------------------------------------------------ checkpointing */

/* Binomial checkpointing (Griewank's revolve): the actions that reverse
 * nt steps with `slots` stored states. */
typedef enum { SNAP_ACT_ADVANCE, SNAP_ACT_TAKESHOT, SNAP_ACT_RESTORE, SNAP_ACT_ADJOINT, SNAP_ACT_FREE } snap_action_kind;
typedef struct {
  snap_action_kind kind;
  long step;   /* ADVANCE: to this step; ADJOINT: the step reversed; TAKESHOT/RESTORE/FREE: state at step */
  int slot;
} snap_action;
typedef struct {
  snap_action *a;
  long n, cap;
  long forward_steps; /* steps advanced in all (the first sweep included) */
  int slots_used;
} snap_schedule;
int snap_revolve_schedule(long nt, int slots, snap_schedule *s);
void snap_schedule_free(snap_schedule *s);
/* Fewest forward steps reversing nt steps with `slots` states takes. */
long snap_revolve_cost(long nt, int slots);

/* ------------------------------------------------------------ the gradient */

typedef enum { SNAP_MODE_MEMORY, SNAP_MODE_STREAM, SNAP_MODE_REVOLVE } snap_mode;

typedef struct {
  snap_mode mode;
  snap_store_config store;         /* STREAM */
  int checkpoints;                 /* REVOLVE: states kept (>= 1) */
} snap_strategy;

/* What a gradient run measured. */
typedef struct {
  double objective;
  double forward_s, adjoint_s;
  long forward_steps;              /* incl. recomputation */
  int steps_per_pass;              /* the forward's: 2 where it ran its steps two at a time (step_pair) */
  int adjoint_steps_per_pass;      /* the adjoint's, alike */
  snap_store_stats store;
  double zfp_bound;                /* max |gradient error| zfp's tolerance allows (0 without zfp) */
  int checkpoints;                 /* REVOLVE: states kept */
} snap_result;

/* Forward with the source `wavelet` at the source point, or (dot test)
 * wavelet x `field` over the whole interior; this rank's receivers' data
 * into rec (nt x nrec_local) and, when u_final, the last wavefield's
 * interior. Snapshots go to `store` when non-NULL. */
typedef struct {
  const double *wavelet;           /* nt + 1 values */
  const double *field;             /* interior, or NULL: the point source */
} snap_source;

typedef struct snap_engine snap_engine;
int snap_engine_create(snap_engine **out, const snap_problem *p, const snap_ops *ops);
void snap_engine_free(snap_engine *e);
int snap_engine_set_model(snap_engine *e, const double *m);
int snap_forward(snap_engine *e, const snap_source *src, double *rec, double *u_final, snap_store *store);
/* Adjoint from this rank's receivers' data `rec_adj` (nt x nrec_local): the gradient
 * -1/dt^2 sum_t u(t) d2v(t) (interior) from the snapshots in `store`, and,
 * when src_adj (dot test), sum_k w^{k-1} v^k over the interior. */
int snap_adjoint(snap_engine *e, const double *rec_adj, snap_store *store, double *grad, double *src_adj,
                 double *abs_d2);

/* The full gradient at model m: forward saving snapshots per strategy,
 * residual against `observed`, adjoint. grad (interior), rec (nt x
 * nrec_local, as observed) and u_final (interior; may be NULL) are
 * outputs. */
int snap_gradient(snap_engine *e, const snap_strategy *st, snap_store *store, const double *m,
                  const double *observed, double *grad, double *rec, double *u_final, snap_result *res);
/* The objective 0.5 sum (rec - observed)^2 alone. */
int snap_objective(snap_engine *e, const double *m, const double *observed, double *J);

/* Memory a run needs per layer (bytes per rank): the wavefields and model
 * (host, or device on CUDA), the snapshots' upper bound. */
typedef struct {
  size_t wavefields;   /* fields, model coefficients, gradient */
  size_t device;       /* CUDA: what the device holds besides snapshots (fields, model, accumulators, pack buffer) */
  size_t buffers;      /* staging and prefetch buffers */
  size_t observing;    /* the true model: held while setup observes, before the buffers exist */
  size_t snapshots;    /* nsnap x interior x 8 (upper bound) */
  size_t snapshot_bytes;
  long nsnap;
} snap_estimate;
/* two_levels: the backend steps in place (snap_ops_two_levels), so the
 * engine holds two time levels of each wavefield, not three. */
void snap_estimate_memory(const snap_grid *g, const snap_config *cfg, int buffers, bool two_levels,
                          snap_estimate *est);
/* What the host budget must hold besides snapshots: the wavefields and
 * the larger of the buffers and what observing held before them. */
size_t snap_estimate_host(const snap_estimate *est);

/* ------------------------------------------------------------ the app */

extern const mapp_variant_info snap_variants[];
extern const mapp_app snap_app_hooks;

/* Options main.c parses and the app's hooks read. */
typedef struct {
  snap_config cfg;
  const char *layers;                  /* NULL: the variant's and backend's default */
  snap_compression compression;
  int zstd_level;
  double zfp_tolerance, zfp_rate;
  int io_threads, prefetch_depth;
  const char *disk_dir;                /* NULL: $TMPDIR, else /tmp */
  bool keep, direct_io, uring;
  double mem_perc;                     /* --mem-perc; <= 0: not given */
  const char *budget[SNAP_NLAYERS];    /* --device-budget, --host-budget, --disk-budget */
  bool recompute, estimate;
  int checkpoints;                     /* revolve: states kept (0: from the host budget, at most 10) */
} snap_options;

int snap_app_setup(mapp_run *run, const snap_options *opt, void **state);

/* Size with a unit ("2GiB", "512MiB", "100k", "4096") into bytes. */
int snap_parse_size(const char *text, size_t *bytes);
/* This process's peak resident set (getrusage), bytes. */
size_t snap_peak_rss(void);
/* posix_memalign to `align` (a power of two), from 2 MiB up aligned to
 * 2 MiB and on transparent huge pages; not touched. */
int snap_alloc_large(void **out, size_t bytes, size_t align, const char *what);

#endif
