#include "mapp_nap.h"

#include <time.h>

#include "mapp_error.h"

int mapp_nap_init(mapp_nap *n) {
  n->stopped = false;
  if (pthread_mutex_init(&n->lock, NULL) != 0) return mapp_fail(MAPP_ERR_SYSTEM, "cannot create a watchdog's mutex");
  pthread_condattr_t attr;
  int ok = pthread_condattr_init(&attr) == 0 && pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
           pthread_cond_init(&n->wake, &attr) == 0;
  pthread_condattr_destroy(&attr);
  if (!ok) {
    pthread_mutex_destroy(&n->lock);
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot create a watchdog's condition variable");
  }
  return MAPP_OK;
}

void mapp_nap_destroy(mapp_nap *n) {
  pthread_cond_destroy(&n->wake);
  pthread_mutex_destroy(&n->lock);
}

bool mapp_nap_take(mapp_nap *n, double seconds) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  long ns = until.tv_nsec + (long)(seconds * 1e9);
  until.tv_sec += ns / 1000000000L;
  until.tv_nsec = ns % 1000000000L;
  pthread_mutex_lock(&n->lock);
  while (!n->stopped && pthread_cond_timedwait(&n->wake, &n->lock, &until) == 0) continue;
  bool running = !n->stopped;
  pthread_mutex_unlock(&n->lock);
  return running;
}

void mapp_nap_stop(mapp_nap *n) {
  pthread_mutex_lock(&n->lock);
  n->stopped = true;
  pthread_cond_broadcast(&n->wake);
  pthread_mutex_unlock(&n->lock);
}
