/* A watchdog thread: every 50 ms it asks its owner's check whether the
 * owner has stalled (a task graph that completes nothing, a rank that does
 * not answer). When it has, nothing collective can end the run, so the
 * reporting process (one rank) prints the check's line and exits 3 without
 * MPI_Finalize; the others wait 5 s more, so the line is out before the
 * launcher tears the job down, and leave quietly. Between turns the thread
 * sleeps on a condition variable that mapp_watchdog_stop cuts short: a join
 * that waited out a turn would add up to 50 ms to whatever the owner times.
 * The simulated build starts no thread: SimGrid ends a deadlocked run itself. */
#ifndef MAPP_WATCHDOG_H
#define MAPP_WATCHDOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* True when stalled, with the line to print (no newline) in line[len]. */
typedef bool (*mapp_watchdog_check)(void *arg, char *line, size_t len);

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t thread;
  bool stopped, started, report;
  int exit_status;
  mapp_watchdog_check check;
  void *arg;
} mapp_watchdog;

int mapp_watchdog_start(mapp_watchdog *w, mapp_watchdog_check check, void *arg, bool report);
/* The same, exiting with exit_status instead of 3 (a stall that is the
 * run's failed verification, not the system's). */
int mapp_watchdog_start_status(mapp_watchdog *w, mapp_watchdog_check check, void *arg, bool report, int exit_status);
/* Stops and joins the thread at once; nothing for one never started. */
void mapp_watchdog_stop(mapp_watchdog *w);

#endif
