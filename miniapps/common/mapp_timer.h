/* Phase timers on the monotonic clock, reduced across ranks. */
#ifndef MAPP_TIMER_H
#define MAPP_TIMER_H

#include <mpi.h>

typedef enum {
  MAPP_PHASE_SETUP,
  MAPP_PHASE_COMPUTE,
  MAPP_PHASE_COMM,
  MAPP_PHASE_IO,
  MAPP_PHASE_COUNT
} mapp_phase;

typedef struct {
  double total[MAPP_PHASE_COUNT];
  double started[MAPP_PHASE_COUNT]; /* < 0 when not running */
} mapp_timers;

typedef struct {
  double max, min, mean;
} mapp_phase_stats;

double mapp_now(void); /* seconds, CLOCK_MONOTONIC */
const char *mapp_phase_name(mapp_phase phase);
void mapp_timers_init(mapp_timers *t);
void mapp_timer_start(mapp_timers *t, mapp_phase phase);
void mapp_timer_stop(mapp_timers *t, mapp_phase phase);
/* Collective: per phase max/min/mean across the ranks of comm. */
int mapp_timers_reduce(const mapp_timers *t, MPI_Comm comm, mapp_phase_stats out[MAPP_PHASE_COUNT]);

#endif
