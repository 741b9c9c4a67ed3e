/* heat: blocked Gauss-Seidel over MPI (the NAM heat seed). This header is
 * the app's API; main.c is only the command line. */
#ifndef HEAT_H
#define HEAT_H

#include "mapp.h"

#define HEAT_MAX_SOURCES 16

/* A heat source on the boundary: position as fractions of the grid's
 * height and width (0..1, boundary included), radius as a fraction of the
 * grid diagonal... see heat_boundary.c for the exact rule. */
typedef struct {
  double row, col;      /* position, fraction of (rows + 1) and (cols + 1) */
  double range;         /* radius of influence, fraction of the larger side */
  double temperature;   /* value at the source */
} heat_source;

typedef struct {
  long rows, cols;             /* interior cells of the whole grid */
  long block_rows, block_cols; /* block size */
  long steps;                  /* timesteps */
  int nsources;
  heat_source sources[HEAT_MAX_SOURCES];
} heat_config;

/* One rank's part: consecutive rows of blocks, stored with a ring of one
 * cell: row 0 is the boundary (rank 0) or the halo from the rank above,
 * row local_rows + 1 the boundary (last rank) or the halo from below;
 * columns 0 and cols + 1 are the fixed left/right boundary. */
typedef struct {
  heat_config cfg;
  mapp_blocking blocking;
  mapp_row_share share;
  MPI_Comm comm;
  int rank, nranks, above, below;
  long local_rows; /* interior rows of this rank */
  long stride;     /* cols + 2 */
  double *grid;    /* (local_rows + 2) x stride */
} heat_domain;

int heat_config_preset(const char *size, heat_config *cfg);
int heat_domain_create(MPI_Comm comm, const heat_config *cfg, heat_domain *d);
void heat_domain_free(heat_domain *d);
/* Interior to zero, boundary cells from the sources (same for any split). */
void heat_domain_init(heat_domain *d);
/* Value of global boundary cell (gr, gc) of the (rows+2) x (cols+2) grid. */
double heat_boundary_value(const heat_config *cfg, long gr, long gc);

/* The variants: run cfg.steps timesteps; communication time goes to the COMM phase. */
int heat_solve_mpi(heat_domain *d, mapp_timers *timers);

/* Every block of the rank for one timestep, in block order. */
void heat_update_blocks(heat_domain *d);

/* Invariants of the answer: every value finite and within the range of the
 * boundary values (the discrete maximum principle of the averaging). */
int heat_check_answer(const heat_domain *d, mapp_check *finite, mapp_check *bounded);

/* The whole (rows+2) x (cols+2) matrix, boundary included, as dataset
 * "temperature"; collective. */
int heat_write_output(const heat_domain *d, const char *path, const mapp_record *rec);

#endif
