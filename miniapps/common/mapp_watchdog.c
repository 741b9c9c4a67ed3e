#include "mapp_watchdog.h"

#include <stdio.h>
#include <unistd.h>

#include "mapp_error.h"
#include "mapp_timer.h"

enum { TURN_MS = 50, QUIET_LEAVE_S = 5 };

/* Sleep a turn or until stopped; false once stopped. */
static bool next_turn(mapp_watchdog *w) {
  struct timespec until = mapp_deadline(CLOCK_MONOTONIC, TURN_MS * 1e-3);
  pthread_mutex_lock(&w->lock);
  while (!w->stopped && pthread_cond_timedwait(&w->wake, &w->lock, &until) == 0) continue;
  bool running = !w->stopped;
  pthread_mutex_unlock(&w->lock);
  return running;
}

static void *watch(void *arg) {
  mapp_watchdog *w = arg;
  char line[640];
  while (next_turn(w)) {
    if (!w->check(w->arg, line, sizeof line)) continue;
    if (!w->report) {
      mapp_sleep(QUIET_LEAVE_S);
      _exit(w->exit_status);
    }
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    _exit(w->exit_status);
  }
  return NULL;
}

int mapp_watchdog_start(mapp_watchdog *w, mapp_watchdog_check check, void *arg, bool report) {
  return mapp_watchdog_start_status(w, check, arg, report, 3);
}

int mapp_watchdog_start_status(mapp_watchdog *w, mapp_watchdog_check check, void *arg, bool report, int exit_status) {
  *w = (mapp_watchdog){.check = check, .arg = arg, .report = report, .exit_status = exit_status};
  /* Under SimGrid SMPI a thread that is not a rank cannot read the clock
   * (it is the simulation's), and the simulator ends a deadlocked run
   * itself: no watchdog thread. */
  if (MAPP_SIMULATED) return MAPP_OK;
  if (pthread_mutex_init(&w->lock, NULL) != 0) return mapp_fail(MAPP_ERR_SYSTEM, "cannot create a watchdog's mutex");
  pthread_condattr_t attr;
  bool made = pthread_condattr_init(&attr) == 0 && pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
              pthread_cond_init(&w->wake, &attr) == 0;
  pthread_condattr_destroy(&attr);
  if (made && pthread_create(&w->thread, NULL, watch, w) == 0) {
    w->started = true;
    return MAPP_OK;
  }
  if (made) pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->lock);
  return mapp_fail(MAPP_ERR_SYSTEM, "cannot start a watchdog thread");
}

void mapp_watchdog_stop(mapp_watchdog *w) {
  if (!w->started) return;
  pthread_mutex_lock(&w->lock);
  w->stopped = true;
  pthread_cond_broadcast(&w->wake);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->lock);
  w->started = false;
}
