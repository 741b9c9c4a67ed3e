/* What the serial modules measure on one rank, reduced across ranks: the
 * phase timers (mapp_timer.h) and what disturbed the timed iterations
 * (mapp_disturb.h). Part of the MPI library (mapp_common); the serial core
 * that the harness links has the types and the rank-local halves. */
#ifndef MAPP_REDUCE_H
#define MAPP_REDUCE_H

#include <mpi.h>

#include "mapp_disturb.h"
#include "mapp_timer.h"

/* Collective: per phase max/min/mean across the ranks of comm. */
int mapp_timers_reduce(const mapp_timers *t, MPI_Comm comm, mapp_phase_stats out[MAPP_PHASE_COUNT]);

/* Collective over comm: the disturbance between before and after. */
int mapp_disturbance_between(const mapp_disturb_sample *before, const mapp_disturb_sample *after, MPI_Comm comm,
                             mapp_disturbance *out);

#endif
