/* Timers and disturbance reduced across ranks (mapp_reduce.h). */
#include "mapp_reduce.h"

#include "mapp_error_mpi.h"

/* ------------------------------------------------------------ timers */

int mapp_timers_reduce(const mapp_timers *t, MPI_Comm comm, mapp_phase_stats out[MAPP_PHASE_COUNT]) {
  double mx[MAPP_PHASE_COUNT], mn[MAPP_PHASE_COUNT], sum[MAPP_PHASE_COUNT];
  int nranks;
  MAPP_MPI(MPI_Comm_size(comm, &nranks));
  MAPP_MPI(MPI_Allreduce(t->total, mx, MAPP_PHASE_COUNT, MPI_DOUBLE, MPI_MAX, comm));
  MAPP_MPI(MPI_Allreduce(t->total, mn, MAPP_PHASE_COUNT, MPI_DOUBLE, MPI_MIN, comm));
  MAPP_MPI(MPI_Allreduce(t->total, sum, MAPP_PHASE_COUNT, MPI_DOUBLE, MPI_SUM, comm));
  for (int p = 0; p < MAPP_PHASE_COUNT; ++p) {
    out[p].max = mx[p];
    out[p].min = mn[p];
    out[p].mean = sum[p] / nranks;
  }
  return MAPP_OK;
}

/* ------------------------------------------------------------ disturbance between two samples */

static int thread_index(const mapp_disturb_sample *s, int tid) {
  for (int t = 0; t < s->nthreads; ++t)
    if (s->tids[t] == tid) return t;
  return -1;
}

/* This rank's threads between the samples: a thread born in between counts
 * from zero; one that ended in between is lost (Linux keeps no schedstat of
 * dead threads), which undercounts only. */
typedef struct {
  long long on_cpu, waiting, migrations;
} thread_totals;

static thread_totals threads_between(const mapp_disturb_sample *a, const mapp_disturb_sample *b) {
  thread_totals sum = {0, 0, 0};
  for (int t = 0; t < b->nthreads; ++t) {
    int s = thread_index(a, b->tids[t]);
    long long cpu0 = s >= 0 ? a->on_cpu_ns[s] : 0, wait0 = s >= 0 ? a->waiting_ns[s] : 0;
    long long mig0 = s >= 0 ? a->migrations[s] : 0;
    if (b->on_cpu_ns[t] < 0 || cpu0 < 0) sum.on_cpu = -1;
    if (sum.on_cpu >= 0) sum.on_cpu += b->on_cpu_ns[t] - cpu0, sum.waiting += b->waiting_ns[t] - wait0;
    if (b->migrations[t] < 0 || mig0 < 0) sum.migrations = -1;
    if (sum.migrations >= 0) sum.migrations += b->migrations[t] - mig0;
  }
  return sum;
}

int mapp_disturbance_between(const mapp_disturb_sample *a, const mapp_disturb_sample *b, MPI_Comm comm,
                             mapp_disturbance *out) {
  thread_totals threads = threads_between(a, b);
  long long all = b->cpu_ticks[0] - a->cpu_ticks[0], stolen = b->cpu_ticks[1] - a->cpu_ticks[1];
  bool ticks_known = a->cpu_ticks[0] >= 0 && b->cpu_ticks[0] >= 0;
  double steal = ticks_known && all > 0 ? (double)stolen / (double)all : (ticks_known ? 0.0 : -1.0);
  long long busy = threads.on_cpu + threads.waiting;
  double delay = threads.on_cpu < 0 ? -1.0 : busy > 0 ? (double)threads.waiting / (double)busy : 0.0;
  /* Maxima: the interval, steal and its ticks, run delay; unknown (-1) loses to any known value. */
  double mx[3] = {b->when - a->when, steal, delay}, max_out[3];
  double sums[3] = {threads.waiting > 0 ? 1e-9 * (double)threads.waiting : 0.0,
                    (double)(b->involuntary - a->involuntary), (double)threads.migrations};
  double sum_out[3], unknown_migrations = threads.migrations < 0 ? 1.0 : 0.0, any_unknown;
  MAPP_MPI(MPI_Allreduce(mx, max_out, 3, MPI_DOUBLE, MPI_MAX, comm));
  MAPP_MPI(MPI_Allreduce(sums, sum_out, 3, MPI_DOUBLE, MPI_SUM, comm));
  MAPP_MPI(MPI_Allreduce(&unknown_migrations, &any_unknown, 1, MPI_DOUBLE, MPI_MAX, comm));
  /* The ticks of the rank whose node saw the most steal. */
  struct {
    double steal;
    int rank;
  } mine = {steal, 0}, worst;
  MPI_Comm_rank(comm, &mine.rank);
  MAPP_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  long long ticks[2] = {all, stolen};
  MAPP_MPI(MPI_Bcast(ticks, 2, MPI_LONG_LONG, worst.rank, comm));
  double loads[2] = {a->load, b->load};
  MAPP_MPI(MPI_Bcast(loads, 2, MPI_DOUBLE, 0, comm));
  *out = (mapp_disturbance){.measured = true, .interval_s = max_out[0], .steal_fraction = max_out[1],
                            .all_ticks = ticks[0], .steal_ticks = ticks[1], .run_delay_fraction = max_out[2],
                            .run_delay_s = sum_out[0], .involuntary_switches = (long)sum_out[1],
                            .migrations = any_unknown > 0 ? -1 : (long long)sum_out[2], .load_before = loads[0],
                            .load_after = loads[1]};
  return MAPP_OK;
}
