/* The runtime's life: create (the ready queues, the host's CPU, the worker
 * threads) and destroy; the clock, sleeping and waking, and the record of a
 * contract violation. The rest of the dynamic machinery (Realm's normal
 * path, which subgraphs bypass) is in sg_queue.c (ready queues), sg_event.c
 * (events), sg_eager.c (the eager path, barriers) and sg_worker.c (the
 * workers, the host's waits); sg_runtime_internal.h is what they share. */
#define _GNU_SOURCE /* syscall (futex), CPU_SET, pthread_*affinity_np */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#include "mapp_error.h"
#include "sg_runtime_internal.h"

_Thread_local const sg_running_op *sg_tls_running;

/* The real clock even under SimGrid SMPI (whose smpicc turns clock_gettime
 * into its simulated one): the runtime's own threads (device streams, the
 * watchdog) read it, and a thread that is not a simulated rank cannot call
 * into SMPI. The timed phases use the app's clock (mapp_timer.h). */
long sg_now_ns(void) {
  struct timespec ts;
  (clock_gettime)(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Sleeping and waking on one 32-bit word: a futex on Linux, so a wake
 * costs one system call and nothing when nobody sleeps (a mutex and a
 * condition variable cost two or three, and the waker may block on the
 * mutex). Elsewhere, a polling sleep. Both tolerate spurious returns:
 * callers re-check their condition. */
void sg_park_on(_Atomic uint32_t *word, uint32_t expected) {
#ifdef __linux__
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
#else
  if (atomic_load(word) == expected) nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
#endif
}

void sg_unpark_all(_Atomic uint32_t *word) {
#ifdef __linux__
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
  (void)word;
#endif
}

static void record_violation(sg_runtime *rt, const char *text) {
  pthread_mutex_lock(&rt->violation_lock);
  if (!atomic_load(&rt->violated)) {
    snprintf(rt->violation, sizeof rt->violation, "%s", text);
    atomic_store(&rt->violated, 1);
  }
  pthread_mutex_unlock(&rt->violation_lock);
}

int sg_contract_violation(sg_runtime *rt, const char *call) {
  const sg_running_op *running = sg_tls_running;
  char text[256];
  snprintf(text, sizeof text,
           "op '%s' of subgraph '%s' called %s: ops inside a subgraph must not launch operations or wait on "
           "events (contract violation)",
           running->op, running->subgraph, call);
  record_violation(rt, text);
  return MAPP_ERR_VERIFY;
}

void sg_record_failure(sg_runtime *rt, const char *text) { record_violation(rt, text); }

void sg_device_violation(sg_runtime *rt, const char *consumer, const char *producer, const char *subgraph) {
  char text[256];
  snprintf(text, sizeof text,
           "op '%s' of subgraph '%s' was issued with a wait on the device token of op '%s', which was never recorded "
           "in this instantiation (issued before its producer)",
           consumer, subgraph, producer);
  record_violation(rt, text);
}

int sg_runtime_status(sg_runtime *rt) {
  if (!atomic_load(&rt->violated)) return MAPP_OK;
  pthread_mutex_lock(&rt->violation_lock);
  int status = mapp_fail(MAPP_ERR_VERIFY, "%s", rt->violation);
  pthread_mutex_unlock(&rt->violation_lock);
  return status;
}

/* ------------------------------------------------------------ create, destroy */

/* A worker thread, bound to cpu from its first instruction when cpu >= 0. */
static int start_worker(pthread_t *thread, int cpu, sg_worker_arg *a) {
  pthread_attr_t attr;
  int err = pthread_attr_init(&attr);
  if (err) return err;
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    err = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
  }
  if (!err) err = pthread_create(thread, &attr, sg_worker_main, a);
  pthread_attr_destroy(&attr);
  return err;
}

/* Binds the calling (host) thread to cpu, keeping its mask for destroy. */
static int pin_host(sg_runtime *rt, int cpu) {
  int err = pthread_getaffinity_np(pthread_self(), sizeof rt->host_mask, &rt->host_mask);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (!err) err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (err) return mapp_fail(MAPP_ERR_SYSTEM, "binding the host thread (worker 0) to cpu %d failed: %s", cpu, strerror(err));
  rt->host_pinned = true;
  return MAPP_OK;
}

int sg_runtime_create(const sg_config *cfg, sg_runtime **out) {
  *out = NULL;
  /* Said in the runtime's terms: an app names its own flags in its config check, before this. */
  if (cfg->workers < 1 || cfg->workers > SG_MAX_WORKERS)
    return mapp_fail(MAPP_ERR_INPUT, "a worker count of %d is outside [1, %d]", cfg->workers, SG_MAX_WORKERS);
  if (cfg->spin_us < 0) return mapp_fail(MAPP_ERR_INPUT, "a spin time of %ld us is negative", cfg->spin_us);
  if (cfg->device_poll_ns < 0)
    return mapp_fail(MAPP_ERR_INPUT, "a device notification latency of %ld ns is negative", cfg->device_poll_ns);
  sg_runtime *rt;
  MAPP_TRY(mapp_calloc((void **)&rt, 1, sizeof *rt, "the runtime"));
  rt->nworkers = cfg->workers;
  rt->host_runs = cfg->host_runs;
  rt->spin_ns = cfg->spin_us * 1000;
  rt->device = cfg->device;
  rt->device_poll_ns = cfg->device_poll_ns;
  rt->skip_device_waits = cfg->skip_device_waits;
  rt->plant_early_issue = cfg->plant_early_issue && cfg->device == SG_DEVICE_EMULATED;
  /* A host thread spinning beside as many spinning workers as cores steals
   * their time slices: it sleeps at once instead (a brief spin, 5 us, was
   * measured slower: 5.8-6.2 us against 2.8-3.4 us a one-op launch with
   * two workers, docs/subgraph-performance.md). */
  long cores = sysconf(_SC_NPROCESSORS_ONLN), threads = cfg->workers - (cfg->host_runs ? 1 : 0);
  rt->host_spin_ns = threads < cores ? rt->spin_ns : 0;
  for (int i = 0; i < SG_MAX_WORKERS; ++i) rt->spin_budget[i].ns = rt->spin_ns;
  pthread_mutex_init(&rt->violation_lock, NULL);
  int status = sg_queue_init(&rt->shared);
  for (int i = 0; status == MAPP_OK && i < rt->nworkers; ++i) status = sg_queue_init(&rt->own[i]);
  const int *host_cpu = rt->host_runs ? cfg->cpus : cfg->host_cpu; /* worker 0's CPU, or one of its own */
  if (status == MAPP_OK && host_cpu) status = pin_host(rt, *host_cpu);
  for (int i = rt->host_runs ? 1 : 0; status == MAPP_OK && i < rt->nworkers; ++i) {
    sg_worker_arg *a = malloc(sizeof *a);
    if (!a) {
      status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory starting worker %d", i);
      break;
    }
    a->rt = rt, a->id = i;
    int err = start_worker(&rt->threads[rt->started], cfg->cpus ? cfg->cpus[i] : -1, a);
    if (err) {
      free(a);
      status = mapp_fail(MAPP_ERR_SYSTEM, "starting worker %d (cpu %d) failed: %s", i, cfg->cpus ? cfg->cpus[i] : -1,
                         strerror(err));
      break;
    }
    rt->started++;
  }
  if (status == MAPP_OK) status = sg_devices_start(rt);
  *out = rt;
  if (status != MAPP_OK) {
    sg_runtime_destroy(rt);
    *out = NULL;
  }
  return status;
}

int sg_runtime_workers(const sg_runtime *rt) { return rt->nworkers; }

void sg_runtime_destroy(sg_runtime *rt) {
  if (!rt) return;
  sg_host_drain(rt);
  sg_devices_stop(rt); /* its last notifications may queue work: drained below */
  sg_host_drain(rt);
  atomic_store(&rt->shutdown, true);
  sg_wake_workers(rt);
  for (int i = 0; i < rt->started; ++i) pthread_join(rt->threads[i], NULL);
  sg_host_drain(rt); /* what the threads' last ops queued for worker 0 */
  if (rt->host_pinned) pthread_setaffinity_np(pthread_self(), sizeof rt->host_mask, &rt->host_mask);
  sg_queue_free(&rt->shared);
  for (int i = 0; i < rt->nworkers; ++i)
    if (rt->own[i].ring) sg_queue_free(&rt->own[i]);
  for (uint32_t c = 0; c < SG_EV_MAX_CHUNKS && rt->chunks[c]; ++c) free(rt->chunks[c]);
  for (int list = 0; list < 2; ++list)
    for (void *block = list ? rt->op_cache : atomic_load(&rt->freed_ops), *next; block; block = next) {
      next = *(void **)block;
      free(block);
    }
  pthread_mutex_destroy(&rt->violation_lock);
  free(rt);
}
