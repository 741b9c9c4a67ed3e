#include "mapp_timer.h"

#include <time.h>

double mapp_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void mapp_sleep(double seconds) {
  if (seconds <= 0) return;
  struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&pause, NULL);
}

struct timespec mapp_deadline(clockid_t clock, double seconds) {
  struct timespec at;
  /* the real clock even under SimGrid SMPI, whose smpicc turns clock_gettime
   * into its simulated one: pthread_cond_timedwait waits in real time, and
   * a watchdog's thread, not a simulated rank, cannot call into SMPI */
  (clock_gettime)(clock, &at);
  long long ns = (long long)at.tv_nsec + (long long)(seconds * 1e9);
  at.tv_sec += (time_t)(ns / 1000000000LL);
  at.tv_nsec = (long)(ns % 1000000000LL);
  return at;
}

const char *mapp_phase_name(mapp_phase phase) {
  static const char *names[MAPP_PHASE_COUNT] = {"setup", "compute", "communication", "io"};
  return phase < MAPP_PHASE_COUNT ? names[phase] : "unknown";
}

void mapp_timers_init(mapp_timers *t) {
  for (int p = 0; p < MAPP_PHASE_COUNT; ++p) {
    t->total[p] = 0.0;
    t->started[p] = -1.0;
  }
}

void mapp_timer_start(mapp_timers *t, mapp_phase phase) { t->started[phase] = mapp_now(); }

void mapp_timer_stop(mapp_timers *t, mapp_phase phase) {
  if (t->started[phase] < 0) return; /* stop without start: nothing to add */
  t->total[phase] += mapp_now() - t->started[phase];
  t->started[phase] = -1.0;
}
