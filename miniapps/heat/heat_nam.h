/* Snapshots of the heat matrix in a persistent "NAM" region (the seed's
 * network-attached memory), with standard MPI: a file mapped into memory
 * and exposed as an RMA window, written with MPI_Put, read back later by
 * mapp-heat-animate with any rank count.
 *
 * Layout (the seed's managed-contiguous layout): a header, then one
 * subregion per rank, in rank order, each at a page-aligned offset so each
 * rank maps only its own. Rank r's subregion holds all its snapshots one
 * after the other; a snapshot of rank r is its blocks in block order (block
 * rows top down, each left to right), each block contiguous and row-major:
 * the seed's `snapshotOffset + B`, so every put has one contiguous target.
 * A block row of R rows then holds R x cols doubles, and block (i, j) of a
 * part starts at (its first row) x cols + R x (its first column); the
 * header's block sizes and each rank's rows give every block's place, so a
 * reader with any rank count rebuilds the frames.
 *
 * The header holds the grid, block sizes, heat sources (so a reader rebuilds
 * the fixed boundary), rank count, each rank's rows and subregion, the
 * timestep and CRC-32 of every snapshot (of the ranks' parts as stored,
 * in rank order: computed per block by the writer, combined), the number
 * of complete snapshots and a CRC-32 of the header itself. That number is
 * written last, after the data and table are synced to the file, so a run
 * that stops early leaves a region that claims nothing it did not write. */
#ifndef HEAT_NAM_H
#define HEAT_NAM_H

#include <stdbool.h>
#include <stdint.h>

#include "heat.h"

#define HEAT_NAM_MAGIC "MAPPNAM1"
#define HEAT_NAM_VERSION 2 /* 1: parts row-major, not by block */

/* The file's first bytes, native byte order; then nranks heat_nam_share,
 * then capacity heat_nam_snapshot entries. */
typedef struct {
  char magic[8];
  uint64_t version;
  uint64_t header_crc; /* CRC-32 of the header area with this field 0 */
  uint64_t saved;      /* complete snapshots: published last */
  uint64_t rows, cols, block_rows, block_cols;
  uint64_t steps, every, capacity, nranks;
  uint64_t header_bytes; /* offset of rank 0's subregion */
  uint64_t file_bytes;
  uint64_t nsources;
  double sources[HEAT_MAX_SOURCES][4]; /* row, col, range, temperature */
} heat_nam_header;

typedef struct {
  uint64_t first_row, row_count; /* interior rows, 0-based */
  uint64_t offset, bytes;        /* subregion in the file (bytes >= used) */
} heat_nam_share;

typedef struct {
  uint64_t timestep, crc;
} heat_nam_snapshot;

/* ---- writer (collective over the domain's communicator) ---- */

/* Rank mode, where the compute ranks stopped before heat_nam_create:
 * tells the memory rank (waiting in heat_nam_serve) there is no region. */
void heat_nam_cancel(MPI_Comm comm, MPI_Comm world, int status);
/* Creates (truncating) the region for d's run and exposes it as an RMA
 * window. In rank mode d->comm holds the compute ranks and `world` them and
 * the memory rank, which calls heat_nam_serve at the same time; in file
 * mode world is MPI_COMM_NULL. */
int heat_nam_create(const char *path, const heat_domain *d, MPI_Comm world, const heat_nam_options *opt,
                    heat_nam **out);
/* The memory rank's whole part of a run (rank mode, heat_nam_rank.c): take
 * the layout from compute rank 0, allocate the region as window memory,
 * wait for the compute ranks' end, then checksum and publish the region to
 * the file (only if they succeeded) and answer compute rank 0. */
int heat_nam_serve(const char *path, MPI_Comm world, const heat_nam_options *opt);
/* After all snapshots (status: the solve's, agreed over the compute ranks):
 * sync, checksum, publish the count; in rank mode, hand the run's end to
 * the memory rank, which publishes, and free the window with it. A failed
 * status publishes nothing. */
int heat_nam_finish(heat_nam *n, int status);
void heat_nam_free(heat_nam *n);

/* Timestep t takes a snapshot (false for a NULL region). */
bool heat_nam_due(const heat_nam *n, long t);
/* The blocking save of the mpi and forkjoin variants: if t is due, an
 * epoch around, per block, its copy-out and one MPI_Put: active target
 * (MPI_Win_fence) in file mode, a passive-target lock of the memory rank in
 * rank mode (a fence would need the memory rank to take part). */
int heat_nam_save_if_due(heat_nam *n, heat_domain *d, long t, mapp_timers *timers);

/* The pieces of a save, for the task variant, which opens a passive-target
 * epoch (lock: exclusive on its own window in file mode, shared on the
 * memory rank in rank mode), puts each block with a request and closes it
 * (unlock, which completes the puts at the target).
 * Block b is block (b / nbc, b % nbc) of the rank, as in heat_block_cells. */
long heat_nam_claim_slot(heat_nam *n, long t); /* the slot snapshot t goes to */
int heat_nam_lock(heat_nam *n);
/* Copy-out: block b of the grid into the staging snapshot, the puts'
 * origin; after it the grid's block may change. One staging snapshot: the
 * caller keeps the put of block b of one snapshot before the copy-out of
 * block b of the next. */
void heat_nam_stage_block(heat_nam *n, const heat_domain *d, long b);
/* The staged block b into slot `slot` (one contiguous MPI_Put; with req,
 * MPI_Rput), its CRC-32 recorded for heat_nam_finish when checksumming. */
int heat_nam_put_block(heat_nam *n, long slot, long b, MPI_Request *req);
int heat_nam_unlock(heat_nam *n);

/* ---- reader (serial, no MPI needed) ---- */

typedef struct {
  heat_nam_header h;
  const heat_nam_share *shares;
  const heat_nam_snapshot *snapshots;
  const unsigned char *map;
  size_t bytes;
} heat_nam_region;

/* Maps and validates a region: a missing, truncated, corrupted or
 * unfinished region is an input error naming what is wrong. */
int heat_nam_open(const char *path, heat_nam_region *r);
void heat_nam_close(heat_nam_region *r);
/* The run's configuration as the header records it. */
void heat_nam_config(const heat_nam_region *r, heat_config *cfg);
/* Snapshot s as the whole (rows+2) x (cols+2) matrix, boundary rebuilt from
 * the sources; its checksum is verified. */
int heat_nam_frame(const heat_nam_region *r, long s, double *matrix);

#endif
