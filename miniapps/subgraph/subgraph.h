/* The subgraph mini-app: Task Bench's patterns run on the sg runtime, op by
 * op (eager) or recorded once and replayed (subgraph), measured by tasks/s,
 * ns per task and METG (the minimum effective task granularity).
 *
 * A point p at timestep t is one task. It checks the (timestep, point) tag
 * of each of its inputs (the outputs of deps(t, p) at t - 1), runs its
 * kernel and writes its own tag, as Task Bench does, so a missing or wrong
 * dependence fails the run. Outputs live in a ring of ring_steps timesteps;
 * at most in_flight chunks of graph_steps timesteps are in flight, which
 * keeps every slot alive until its readers are done. */
#ifndef SUBGRAPH_H
#define SUBGRAPH_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mapp.h"
#include "sg.h"
#include "tb_cuda_plan.h"
#include "tb_kernel.h"

/* Parse a pattern name; -1 when unknown. */
int tb_pattern_from_name(const char *name);
const char *tb_pattern_name(tb_pattern p);
bool tb_pattern_takes_radix(tb_pattern p);
/* Checks ranges and combinations; input errors name the flag. */
int tb_config_check(const tb_config *cfg, int nranks);
/* Largest dependence count of any task. */
long tb_max_deps(const tb_config *cfg);
/* deps(t, p) into out (tb_max_deps entries), ascending, distinct; their count. */
static inline int tb_deps(const tb_config *cfg, long t, long p, long *out) { return tb_deps_of(cfg, t, p, out); }

typedef struct tb_comm tb_comm;

/* One rank's run. */
typedef struct tb_state {
  tb_config cfg;
  sg_runtime *rt;
  MPI_Comm comm;
  int rank, nranks;
  long first, count;     /* this rank's points */
  long ring_steps;        /* a power of two */
  long max_deps;          /* tb_max_deps(&cfg) */
  /* Every table is sized by this rank's points and the points it
   * exchanges, never by the global width: under SimGrid every rank is a
   * thread of one process, and width-sized tables grew as ranks squared
   * (tb_halo.c). */
  long nhalo, *halo;      /* points of other ranks this rank's tasks read (at some timestep), ascending */
  long *readers_first, *readers; /* per own point (CSR): the points of other ranks that read it, ascending */
  /* A ring row: dense, every point of [ring_lo, ring_lo + ring_width)
   * where the own points and the halo are that compact (a point's column is
   * q - ring_lo, as cheap to find as the global width's was); else the own
   * points (ring_lo = first), then the halo's (found by a search). */
  bool ring_dense;
  long ring_lo, ring_width;
  tb_tag *ring;           /* ring[(t % ring_steps) * ring_width + tb_slot(p)] */
  unsigned char *scratch; /* memory kernel: scratch_bytes per worker */
  long *dep_buf;          /* tb_max_deps per worker, and one for the host */
  atomic_long errors;
  atomic_int error_claimed;
  char first_error[256];
  double *sink;           /* per worker: keeps the kernels' results alive */
  atomic_long *tasks_done; /* per buffer slot, a cache line apart (stride 8): the watchdog's clock */
  /* --copy-bytes: each own point's output and input buffers, one per
   * timestep parity; an input buffer has a slot per own point in the window
   * it may copy from at some timestep, [copy_lo, copy_lo + span) (the
   * recorded graph may copy from a point that is a dependence of some
   * instantiations only); point pl's slots start at copy_at[pl], the span
   * is (copy_at[pl + 1] - copy_at[pl]) / 2 */
  unsigned char *copy_out, *copy_in;
  long *copy_lo, *copy_at;
  tb_comm *comm_state;    /* cross-rank dependences (NULL on one rank) */
  tb_task_view view;      /* a CUDA device's tasks read this (tb_cuda_task.cu) */
  void *view_arrays[2];   /* its managed copies of copy_lo and copy_at */
  struct tb_graph *graph; /* the subgraph variant's recorded, compiled graph */
  /* phases measured by the variants (seconds) */
  double record_s, compile_s;
  long instantiations;
  int cpus[SG_MAX_WORKERS]; /* worker i's CPU when pinned */
  bool pinned;
  bool host_runs; /* the host thread is worker 0 (cfg.host_worker resolved) */
  int host_cpu;   /* where the host runs when it is not worker 0 and pinned: a CPU of its own; else -1 */
} tb_state;

int tb_state_create(const tb_config *cfg, MPI_Comm comm, tb_state **out);
void tb_state_destroy(tb_state *st);
/* Back to the state a run starts from: the ring, the copy buffers, the
 * error and instantiation counts (between METG runs and --min-time's
 * iterations). */
void tb_state_reset(tb_state *st);
int tb_owner(const tb_state *st, long p);

/* The halo, the readers and the copy windows (tb_halo.c); freed by tb_state_destroy. */
int tb_halo_create(tb_state *st);
/* q's index in the halo, or -1 when no task of this rank reads it. */
long tb_halo_index(const tb_state *st, long q);
/* q's column in a ring row (see ring_dense); -1 when a row has none. */
static inline long tb_slot(const tb_state *st, long q) {
  long col = q - st->ring_lo;
  if (st->ring_dense) return col >= 0 && col < st->ring_width ? col : -1;
  if (col >= 0 && col < st->count) return col; /* an own point: ring_lo is first */
  long h = tb_halo_index(st, q);
  return h < 0 ? -1 : st->count + h;
}
/* (t, p)'s entry in the ring: p one of this rank's points or of its halo. */
static inline tb_tag *tb_tag_at(const tb_state *st, long t, long p) {
  return st->ring + (t & (st->ring_steps - 1)) * st->ring_width + tb_slot(st, p);
}
/* Tasks done so far, on every thread (the watchdog's clock). */
long tb_tasks_done(const tb_state *st);
/* The failure of a run: errors seen by tasks, or a runtime contract violation. */
int tb_state_status(tb_state *st);
/* How many launches the host issues between its waits when a wait would
 * otherwise cover `natural` of them: 1 where the host is worker 0 (it runs
 * its share in every wait, and a long run of launches would leave the
 * other workers waiting for it), else natural (a sleeping host is woken
 * once per batch). */
long tb_wait_batch(const tb_state *st, long natural);

/* --copy-bytes: does (t, p)'s dependence on q go through a copy op? (q is
 * another point of this rank; a point of another rank is a message.) */
static inline bool tb_copies_from(const tb_state *st, long p, long q) {
  return st->cfg.copy_bytes > 0 && q != p && q >= st->first && q < st->first + st->count;
}
/* The buffer (t, p) writes its copy pattern to, and the slot of (t, p)'s
 * input buffer that the copy from q fills. */
unsigned char *tb_copy_out(const tb_state *st, long t, long p);
unsigned char *tb_copy_in(const tb_state *st, long t, long p, long q);

/* The task every variant runs (tb_task.c). */
void tb_run_task(tb_state *st, long t, long p, int worker);
/* Per-thread buffers (dependences, sinks, scratch): a worker's, the
 * host's, and each device thread's. */
static inline long tb_buffer_slots(int workers) { return 2L * workers + 1; }
static inline int tb_host_slot(int workers) { return workers; }
/* With a device: does (s, p)'s task run on it? Every other step's tasks
 * are host tasks with --stream-ordered alternate (s: the step in its chunk
 * or graph, so both variants split alike). */
static inline bool tb_on_device(const tb_config *cfg, long s) {
  return cfg->device && (cfg->stream_ordered != TB_STREAM_ORDERED_ALTERNATE || s % 2 == 0);
}
/* Does (s, p)'s op promise stream order? Device tasks but with
 * --stream-ordered none; host tasks only by the planted bug. */
static inline bool tb_promises_order(const tb_config *cfg, long s) {
  if (!tb_on_device(cfg, s)) return cfg->device && cfg->plant == TB_PLANT_HOST_RUNAHEAD;
  return cfg->stream_ordered != TB_STREAM_ORDERED_NONE;
}
/* A task's host side: on a stream, it enqueues the task (its inputs, its
 * kernel, its output all on the device); else it runs it here, after
 * --check-peek's look at its inputs. */
void tb_task_body(tb_state *st, long t, long p, const sg_task_ctx *ctx);
/* The kernel alone (for calibration): K iterations on worker 0's scratch. */
void tb_kernel_run(tb_state *st, int worker);

/* A variant: runs all steps once. */
typedef int (*tb_variant_fn)(tb_state *st);
int tb_run_eager(tb_state *st);
int tb_run_subgraph(tb_state *st);
/* The subgraph variant's record and compile, once (timed apart from the run). */
int tb_subgraph_prepare(tb_state *st);
void tb_subgraph_release(tb_state *st);
/* What a stalled replay still waits for (sg_subgraph_pending). */
void tb_subgraph_pending(const tb_state *st, char *buf, size_t len);
/* The compiled graph's statistics (zero before tb_subgraph_prepare). */
void tb_subgraph_stats(const tb_state *st, sg_subgraph_stats *out);

/* Cross-rank dependences (tb_comm.c): the host thread drives MPI (FUNNELED). */
int tb_comm_create(tb_state *st, tb_comm **out);
void tb_comm_destroy(tb_comm *c);
int tb_comm_begin(tb_comm *c);
/* The event that triggers when (t, q) from another rank has arrived (its
 * tag is then in the ring); SG_NO_EVENT when it already has. */
int tb_comm_expect(tb_comm *c, long t, long q, sg_event *ev);
/* Sends (t, p) to every rank whose points read it at t + 1, when ev triggers. */
int tb_comm_send_after(tb_comm *c, long t, long p, sg_event ev);
/* Host wait that keeps messages moving. */
int tb_comm_wait(tb_comm *c, sg_event ev);
/* All sends complete, receives cancelled, ranks agreed. */
int tb_comm_end(tb_comm *c);
/* Does (t, p) (p one of this rank's points) feed any point of another rank at t + 1? */
bool tb_feeds_remote(const tb_state *st, long t, long p);
/* Does q read p at timestep t? deps: tb_max_deps entries of scratch. */
bool tb_reads(const tb_state *st, long t, long q, long p, long *deps);

/* Wait on ev from the host (through the comm layer when there is one). */
int tb_host_wait(tb_state *st, sg_event ev);

/* ---- the mapp app (subgraph_app.c) ---- */
typedef struct {
  const char *name;
  long width, steps, iterations, graph_steps;
} subgraph_preset;
extern const subgraph_preset subgraph_presets[4];
extern const mapp_variant_info subgraph_variants[];

typedef struct {
  tb_config cfg;
  bool metg;      /* sweep K down and report METG(50 %) */
  long metg_max;  /* the sweep's largest K */
  int metg_repeats; /* runs of each point, interleaved; the point is their median */
} subgraph_options;

int subgraph_setup(mapp_run *run, const subgraph_options *opt, void **state);
extern const mapp_app subgraph_app_hooks;

/* ---- --broken-graph's probes (subgraph_broken.c) ---- */
/* Compiles a deliberately broken definition ("cycle", "dangling-port",
 * "interpolation"): returns its compile error (an input error); or
 * ("contract") runs an op that launches: the violation (MAPP_ERR_VERIFY). */
int subgraph_compile_broken(const char *kind);


#endif
