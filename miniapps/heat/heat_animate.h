/* The seed's "another program could retrieve all the matrix states ...
 * and produce a GIF animation": a NAM region written by mapp-heat (any rank
 * count) read back, checked (header and every snapshot's checksum), each
 * snapshot rebuilt as the whole matrix and written as a GIF animation
 * (gnuplot `set terminal gif animate`, one colour range for all frames, the
 * timestep in each title), PNG frames and/or an HDF5 export. Used by
 * mapp-heat-animate and by mapp-heat --gif. Serial; HDF5 output needs MPI
 * initialised (it writes through MPI_COMM_SELF). */
#ifndef HEAT_ANIMATE_H
#define HEAT_ANIMATE_H

#include <stdio.h>

#include "heat.h"

typedef struct {
  const char *gif;    /* animation file, NULL: none */
  const char *frames; /* existing directory for frame_<timestep>.png, NULL: none */
  const char *hdf5;   /* file with dataset /step_<timestep> per snapshot, NULL: none */
  long rows, cols;    /* the grid the region must hold, 0: any */
  long delay;         /* GIF frame delay, 1/100 s */
  FILE *summary;      /* one line about the region when done, NULL: none */
} heat_animate_options;

#define HEAT_ANIMATE_DEFAULT_DELAY 20

/* A missing, truncated, corrupted or unfinished region, or one of another
 * grid than asked, is MAPP_ERR_INPUT with one message. */
int heat_animate_region(const char *region, const heat_animate_options *opt);

#endif
