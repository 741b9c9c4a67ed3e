/* The receivers' data across ranks. Each rank holds the data of its own
 * receivers only: they lie along x, so a rank's are consecutive (rec_first
 * .. rec_first + nrec_local - 1). Every receiver's data on every rank (the
 * observed, the recorded and the residual) was 3 x nt x nrec doubles per
 * rank: 590 MB at 1,024 ranks of weak tiny, 600 GB for a simulated run
 * whose ranks share one process. What needs them all, the objective's sum
 * and the answer file, gathers them on rank 0 a block of time rows at a
 * time. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots.h"

/* Values one gather brings to rank 0 (8 MiB): rank 0's buffers bounded
 * whatever the rank count, and few gathers. */
#define SNAP_GATHER_VALUES (1L << 20)
/* The gathers' point-to-point tag (the halo exchange uses 71 and 72). */
#define SNAP_GATHER_TAG 0x5245

/* Where rank's receivers start: ranks [lo, hi) hold receivers [cut(lo),
 * cut(hi)) (receiver r sits at x = nbl + r). */
static long cut(const snap_problem *p, int rank) {
  long x = rank < p->grid.nranks ? mapp_split_even(p->grid.global[0], p->grid.nranks, rank).first : p->grid.global[0];
  long r = x - p->cfg.nbl;
  return r < 0 ? 0 : r > p->nrec ? p->nrec : r;
}

mapp_range snap_receivers_of(const snap_problem *p, int rank) {
  long first = cut(p, rank);
  return (mapp_range){.first = first, .count = cut(p, rank + 1) - first};
}

/* The row-block gathers go up a binomial tree of point-to-point messages
 * (rank r receives from r + 1, r + 2, r + 4, ... below its lowest set bit,
 * then sends to its parent), not through MPI_Gatherv: SimGrid SMPI's
 * Gatherv and Gather post one receive per rank at the root and wait for
 * them together, which at 1,024 simulated ranks cost 11 s of real time per
 * MPI_Gather of 80 doubles (a run making 50 MPI_Gatherv calls had not ended
 * after 28 minutes); the tree costs 0.1 s. Every block stays in rank
 * order, so rank 0 ends with every rank's rows, rank after rank. */
typedef struct {
  const snap_problem *p;
  long rows;  /* time rows per gather */
  int last;   /* one past the last rank of this rank's subtree */
  double *buf; /* rows x the subtree's receivers, rank after rank */
} row_gather;

static void gather_close(row_gather *gt) {
  free(gt->buf);
  *gt = (row_gather){0};
}

/* Time rows per gather: SNAP_GATHER_VALUES at most, at least one row. */
static long gather_block_rows(const snap_problem *p) {
  long rows = p->nrec > 0 ? SNAP_GATHER_VALUES / p->nrec : 1;
  if (rows < 1) rows = 1;
  return rows > p->cfg.nt ? p->cfg.nt : rows;
}

/* One past the last rank of this rank's subtree. */
static int subtree_end(const snap_problem *p) {
  int rank = p->grid.rank, size = p->grid.nranks, below = rank ? rank & -rank : size;
  return size - rank < below ? size : rank + below;
}

size_t snap_gather_bytes(const snap_problem *p) {
  long rows = gather_block_rows(p);
  long buffer = rows * (cut(p, subtree_end(p)) - cut(p, p->grid.rank));
  long root_rows = p->grid.rank == 0 ? rows * p->nrec : 0;
  return sizeof(double) * (size_t)((buffer > 0 ? buffer : 1) + root_rows);
}

/* Collective. */
static int gather_open(const snap_problem *p, row_gather *gt) {
  *gt = (row_gather){.p = p};
  if (p->nrec > INT_MAX) /* one row must fit a message's int count */
    return mapp_fail(MAPP_ERR_INPUT, "%ld receivers: more than one message can count (%d)", p->nrec, INT_MAX);
  gt->rows = gather_block_rows(p);
  gt->last = subtree_end(p);
  long values = gt->rows * (cut(p, gt->last) - cut(p, p->grid.rank));
  int status = mapp_alloc((void **)&gt->buf, sizeof(double) * (size_t)(values > 0 ? values : 1),
                          "the receivers' gather buffer");
  status = mapp_agree_alloc(p->grid.comm, status, "the receivers' gather buffer");
  if (status) gather_close(gt);
  return status;
}

/* Rank 0's n x nrec block from every rank's n rows, rank after rank. */
static void arrange_rows(const row_gather *gt, long n, double *out) {
  const snap_problem *p = gt->p;
  for (int s = 0; s < p->grid.nranks; s++) {
    mapp_range r = snap_receivers_of(p, s);
    const double *from = gt->buf + n * r.first;
    for (long k = 0; k < n; k++)
      memcpy(out + k * p->nrec + r.first, from + k * r.count, sizeof(double) * (size_t)r.count);
  }
}

/* Collective. Rows [k0, k0 + n) of every rank's data (nt x its receivers)
 * into rank 0's n x nrec block `out`, receivers in global order. */
static int gather_rows(row_gather *gt, const double *mine, long k0, long n, double *out) {
  const snap_problem *p = gt->p;
  int rank = p->grid.rank, size = p->grid.nranks;
  long base = cut(p, rank), nl = p->nrec_local;
  memcpy(gt->buf, mine + k0 * nl, sizeof(double) * (size_t)(n * nl));
  for (int step = 1; step < size; step <<= 1) {
    if (rank & step) { /* the subtree is complete: up to the parent */
      long count = n * (cut(p, gt->last) - base);
      MAPP_MPI(MPI_Send(gt->buf, (int)count, MPI_DOUBLE, rank - step, SNAP_GATHER_TAG, p->grid.comm));
      return MAPP_OK;
    }
    int child = rank + step;
    if (child >= size) continue;
    int end = size - child < step ? size : child + step;
    long at = n * (cut(p, child) - base), count = n * (cut(p, end) - cut(p, child));
    MAPP_MPI(MPI_Recv(gt->buf + at, (int)count, MPI_DOUBLE, child, SNAP_GATHER_TAG, p->grid.comm, MPI_STATUS_IGNORE));
  }
  arrange_rows(gt, n, out); /* rank 0: the tree's root */
  return MAPP_OK;
}

static long block_rows(const row_gather *gt, long k0) {
  long left = gt->p->cfg.nt - k0;
  return left < gt->rows ? left : gt->rows;
}

int snap_objective_sum(const snap_problem *p, const double *residual, double *J) {
  row_gather gt;
  MAPP_TRY(gather_open(p, &gt));
  bool root = p->grid.rank == 0;
  double *rows = NULL, sum = 0.0;
  int status = root ? mapp_alloc((void **)&rows, sizeof(double) * (size_t)(gt.rows * p->nrec), "the objective's rows")
                    : MAPP_OK;
  status = mapp_agree_alloc(p->grid.comm, status, "the objective's rows");
  for (long k0 = 0; !status && k0 < p->cfg.nt; k0 += gt.rows) {
    long n = block_rows(&gt, k0);
    status = gather_rows(&gt, residual, k0, n, rows);
    /* The order and the arithmetic one rank used on all the data. */
    for (long i = 0; !status && root && i < n * p->nrec; i++) {
      double r = rows[i];
      sum += 0.5 * r * r;
    }
  }
  free(rows);
  gather_close(&gt);
  MAPP_TRY(status);
  MAPP_MPI(MPI_Bcast(&sum, 1, MPI_DOUBLE, 0, p->grid.comm));
  *J = sum;
  return MAPP_OK;
}

int snap_receivers_gather(const snap_problem *p, const double *rec, double **all) {
  *all = NULL;
  row_gather gt;
  MAPP_TRY(gather_open(p, &gt));
  bool root = p->grid.rank == 0;
  int status = root ? mapp_alloc((void **)all, sizeof(double) * (size_t)(p->cfg.nt * p->nrec), "the receivers' data")
                    : MAPP_OK;
  status = mapp_agree_alloc(p->grid.comm, status, "the receivers' data");
  for (long k0 = 0; !status && k0 < p->cfg.nt; k0 += gt.rows)
    status = gather_rows(&gt, rec, k0, block_rows(&gt, k0), root ? *all + k0 * p->nrec : NULL);
  gather_close(&gt);
  if (status) free(*all), *all = NULL;
  return status;
}
