/* A sleep another thread can cut short: the turns of a watchdog thread,
 * which must end at once when its owner stops it (a join that waited out a
 * turn would add up to a turn to whatever the owner times). */
#ifndef MAPP_NAP_H
#define MAPP_NAP_H

#include <pthread.h>
#include <stdbool.h>

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  bool stopped;
} mapp_nap;

int mapp_nap_init(mapp_nap *n);
void mapp_nap_destroy(mapp_nap *n);
/* Sleep for `seconds` or until stopped; false once stopped. */
bool mapp_nap_take(mapp_nap *n, double seconds);
void mapp_nap_stop(mapp_nap *n);

#endif
