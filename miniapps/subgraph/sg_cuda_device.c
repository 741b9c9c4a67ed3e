/* The CUDA device behind sg_stream (sg_config.device = SG_DEVICE_CUDA): a
 * cudaStream_t per worker (and per subgraph's copies), a token a cudaEvent_t
 * recorded with cudaEventRecord and waited on with cudaStreamWaitEvent,
 * and a completion learnt as Realm's GPU worker learns it: an event
 * recorded after the op, polled by one thread of the runtime's (the
 * poller) that calls the notification when it has completed. The stream is
 * never held by the host: cudaLaunchHostFunc would stop it until the host
 * function returned. Notifications run on the poller, outside any CUDA
 * callback, so they may free what holds CUDA handles. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "sg_cuda_api.h"
#include "sg_runtime_internal.h"

typedef struct {
  void *event;
  void (*fn)(void *arg);
  void *arg;
} cuda_note;

struct sg_cuda_stream {
  sg_runtime *rt;
  void *stream;
  sg_spinlock lock; /* its notes and its pool: the issuing worker and the poller */
  cuda_note *notes;
  size_t cap, head, count;
  void **pool; /* events of delivered notes, for the next */
  size_t npool, pool_cap;
  sg_cuda_stream *next; /* the runtime's registry */
};

/* A CUDA call that failed inside a replay has no caller to return to: the
 * run fails with its message (sg_runtime_status). */
static void failed(sg_runtime *rt, int status) {
  if (status == MAPP_OK) return;
  char text[256];
  snprintf(text, sizeof text, "the runtime's CUDA device: %s", mapp_error_message());
  mapp_error_clear();
  sg_record_failure(rt, text);
}

/* ------------------------------------------------------------ the poller */

/* Pops the first completed note of any stream (its event back to the
 * pool); false when none has. The stream's order is the notes' order, so
 * only each stream's first note is looked at. */
static bool take_completed(sg_runtime *rt, cuda_note *out) {
  bool found = false;
  sg_spin_lock(&rt->cuda_lock);
  for (sg_cuda_stream *s = rt->cuda_streams; s && !found; s = s->next) {
    sg_spin_lock(&s->lock);
    if (s->count) {
      cuda_note *n = &s->notes[s->head];
      int done = sg_cuda_api_query(n->event);
      if (done != 0) {
        if (done < 0) failed(rt, done); /* delivered anyway: the run must end, with the failure */
        *out = *n;
        s->head = (s->head + 1) % s->cap, s->count--;
        if (s->npool < s->pool_cap) s->pool[s->npool++] = n->event;
        else sg_cuda_api_event_destroy(n->event);
        found = true;
      }
    }
    sg_spin_unlock(&s->lock);
  }
  sg_spin_unlock(&rt->cuda_lock);
  return found;
}

static void *poller_main(void *p) {
  sg_runtime *rt = p;
  for (;;) {
    uint32_t seen = atomic_load_explicit(&rt->poll_word, memory_order_acquire);
    cuda_note n;
    if (take_completed(rt, &n)) {
      atomic_fetch_sub(&rt->cuda_pending, 1);
      atomic_fetch_add_explicit(&rt->dev_stats.notifications, 1, memory_order_relaxed);
      n.fn(n.arg); /* outside every lock: it may destroy a stream */
      continue;
    }
    if (atomic_load(&rt->cuda_pending) > 0) { /* work on the device: keep polling */
      sg_cpu_relax();
      continue;
    }
    if (atomic_load(&rt->poller_stop)) break;
    atomic_store(&rt->poller_sleeping, 1);
    if (atomic_load(&rt->cuda_pending) == 0 && !atomic_load(&rt->poller_stop)) sg_park_on(&rt->poll_word, seen);
    atomic_store(&rt->poller_sleeping, 0);
  }
  return NULL;
}

int sg_cuda_start(sg_runtime *rt) {
  MAPP_TRY(sg_cuda_api_device_check());
  pthread_attr_t attr;
  int err = pthread_attr_init(&attr);
  if (!err && rt->host_pinned) err = pthread_attr_setaffinity_np(&attr, sizeof rt->host_mask, &rt->host_mask);
  if (!err) err = pthread_create(&rt->poller, &attr, poller_main, rt);
  pthread_attr_destroy(&attr);
  if (err) return mapp_fail(MAPP_ERR_SYSTEM, "starting the CUDA device's poller failed: %s", strerror(err));
  rt->poller_started = true;
  return MAPP_OK;
}

void sg_cuda_stop(sg_runtime *rt) {
  if (!rt->poller_started) return;
  atomic_store(&rt->poller_stop, true);
  atomic_fetch_add(&rt->poll_word, 1);
  sg_unpark_all(&rt->poll_word);
  pthread_join(rt->poller, NULL); /* it ends once every note is delivered */
  rt->poller_started = false;
}

/* ------------------------------------------------------------ streams */

int sg_cuda_stream_create(sg_runtime *rt, sg_cuda_stream **out) {
  sg_cuda_stream *s;
  *out = NULL;
  MAPP_TRY(mapp_calloc((void **)&s, 1, sizeof *s, "a CUDA stream"));
  s->rt = rt;
  s->pool_cap = 64;
  int status = mapp_calloc((void **)&s->pool, s->pool_cap, sizeof *s->pool, "a CUDA stream's events");
  if (status == MAPP_OK) status = sg_cuda_api_stream_create(&s->stream);
  if (status != MAPP_OK) {
    free(s->pool), free(s);
    return status;
  }
  sg_spin_lock(&rt->cuda_lock);
  s->next = rt->cuda_streams;
  rt->cuda_streams = s;
  sg_spin_unlock(&rt->cuda_lock);
  *out = s;
  return MAPP_OK;
}

void sg_cuda_stream_destroy(sg_cuda_stream *s) {
  if (!s) return;
  sg_runtime *rt = s->rt;
  sg_cuda_api_stream_destroy(s->stream); /* drains it first */
  while (true) { /* its last notes: the poller delivers them */
    sg_spin_lock(&s->lock);
    size_t left = s->count;
    sg_spin_unlock(&s->lock);
    if (!left || (rt->poller_started && pthread_equal(pthread_self(), rt->poller))) break;
    sched_yield();
  }
  sg_spin_lock(&rt->cuda_lock);
  for (sg_cuda_stream **at = &rt->cuda_streams; *at; at = &(*at)->next)
    if (*at == s) {
      *at = s->next;
      break;
    }
  sg_spin_unlock(&rt->cuda_lock);
  for (size_t i = 0; i < s->npool; ++i) sg_cuda_api_event_destroy(s->pool[i]);
  for (size_t i = 0; i < s->count; ++i) sg_cuda_api_event_destroy(s->notes[(s->head + i) % s->cap].event);
  free(s->pool), free(s->notes), free(s);
}

void *sg_cuda_stream_native(sg_cuda_stream *s) { return s->stream; }

void sg_cuda_stream_record(sg_cuda_stream *s, sg_token *t) { failed(s->rt, sg_cuda_api_record(t->event, s->stream)); }

void sg_cuda_stream_wait(sg_cuda_stream *s, sg_token *t) { failed(s->rt, sg_cuda_api_wait(s->stream, t->event)); }

void sg_cuda_stream_copy(sg_cuda_stream *s, const sg_copy_desc *c) { failed(s->rt, sg_cuda_api_copy(s->stream, c)); }

void sg_cuda_stream_notify(sg_cuda_stream *s, void (*fn)(void *), void *arg) {
  sg_runtime *rt = s->rt;
  void *event = NULL;
  sg_spin_lock(&s->lock);
  if (s->npool) event = s->pool[--s->npool];
  sg_spin_unlock(&s->lock);
  int status = event ? MAPP_OK : sg_cuda_api_event_create(&event);
  if (status == MAPP_OK) status = sg_cuda_api_record(event, s->stream);
  if (status != MAPP_OK) { /* no event: tell at once, with the failure, so the run ends */
    failed(rt, status);
    sg_cuda_api_event_destroy(event);
    fn(arg);
    return;
  }
  sg_spin_lock(&s->lock);
  if (s->count == s->cap) { /* grow, unrolling the ring */
    size_t cap = s->cap ? 2 * s->cap : 256;
    cuda_note *bigger = malloc(cap * sizeof *bigger);
    if (!bigger) abort(); /* as the ready queues: no way to report from a replay */
    for (size_t i = 0; i < s->count; ++i) bigger[i] = s->notes[(s->head + i) % s->cap];
    free(s->notes);
    s->notes = bigger, s->head = 0, s->cap = cap;
  }
  s->notes[(s->head + s->count++) % s->cap] = (cuda_note){.event = event, .fn = fn, .arg = arg};
  sg_spin_unlock(&s->lock);
  atomic_fetch_add(&rt->cuda_pending, 1);
  atomic_fetch_add_explicit(&rt->poll_word, 1, memory_order_release);
  if (atomic_load(&rt->poller_sleeping)) sg_unpark_all(&rt->poll_word);
}

int sg_cuda_token_init(sg_token *t) { return sg_cuda_api_event_create(&t->event); }

void sg_cuda_token_free(sg_token *t) {
  sg_cuda_api_event_destroy(t->event);
  t->event = NULL;
}
