/* Phase timers on the monotonic clock (serial; reduced across ranks by
 * mapp_timers_reduce, mapp_reduce.h). */
#ifndef MAPP_TIMER_H
#define MAPP_TIMER_H

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

#include <time.h>

double mapp_now(void); /* seconds, CLOCK_MONOTONIC */
/* Sleep for `seconds` (nothing for 0 or less). */
void mapp_sleep(double seconds);
/* The time `seconds` from now on `clock`, for a timed wait. */
struct timespec mapp_deadline(clockid_t clock, double seconds);
const char *mapp_phase_name(mapp_phase phase);
void mapp_timers_init(mapp_timers *t);
void mapp_timer_start(mapp_timers *t, mapp_phase phase);
void mapp_timer_stop(mapp_timers *t, mapp_phase phase);

#endif
