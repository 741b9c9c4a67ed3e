/* What the sg runtime's unit tests share (test_sg.c, test_sg_contract.c):
 * the two groups' modes (worker threads only, the host as worker 0), a
 * runtime of the group's mode, and tasks that log when they ran. */
#ifndef TEST_SG_LIB_H
#define TEST_SG_LIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "sg.h"

/* The group runs twice: with worker threads only, then with the host as
 * worker 0 (host_runs; with 1 worker, no thread at all). */
static bool host_mode;

static inline int threads_only(void **unused) {
  (void)unused;
  host_mode = false;
  return 0;
}

static inline int host_as_worker(void **unused) {
  (void)unused;
  host_mode = true;
  return 0;
}

static inline sg_runtime *make_runtime(int workers, long spin_us) {
  sg_runtime *rt = NULL;
  sg_config cfg = {.workers = workers, .spin_us = spin_us, .host_runs = host_mode};
  assert_int_equal(sg_runtime_create(&cfg, &rt), MAPP_OK);
  return rt;
}

/* ---- a log of which task ran when ---- */
static atomic_int clock_tick;
static int ran_at[256];

typedef struct {
  int id;
} id_args;

static inline void log_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)ctx;
  assert_int_equal(size, sizeof(id_args));
  ran_at[((const id_args *)args)->id] = atomic_fetch_add(&clock_tick, 1) + 1;
}

static inline void reset_log(void) {
  atomic_store(&clock_tick, 0);
  memset(ran_at, 0, sizeof ran_at);
}

/* Tasks that append their value to a shared log, in the order they ran. */
typedef struct {
  int64_t *log;
  atomic_int *at;
  int64_t value;
} append_args;

static inline void append_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)size, (void)ctx;
  const append_args *a = args;
  a->log[atomic_fetch_add(a->at, 1)] = a->value;
}

#endif
