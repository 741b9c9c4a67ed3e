/* The subgraph path: a definition compiled once to static per-worker
 * schedules and replayed (the seed's SubgraphImpl). What an instantiation
 * costs: a block taken from the subgraph's list of ended ones (allocated
 * only when the list is empty), the argument block and the patched
 * payloads copied, the countdown counters reset, its events (one per
 * postcondition port, one finish) re-armed in their reserved slots. Per
 * op: no event, no queue, no lock; an atomic decrement only where an edge
 * crosses workers.
 *
 * Here: the definition copied in, the subgraph's life and the replay.
 * Compiling it (checks, order, schedules, counters, the instance layout) is
 * sg_graph_compile.c's; what both share is in sg_graph_internal.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "sg_graph_internal.h"

static void free_ended_blocks(sg_subgraph *sg) {
  for (sg_instance *inst = sg->free_blocks, *next; inst; inst = next) {
    next = inst->next_free;
    for (int t = 0; t < sg->ntokens; ++t) sg_token_free(sg->rt, &inst->tokens[t]);
    sg_event_unreserve(sg->rt, inst->finish);
    for (int p = 0; p < sg->npost; ++p) sg_event_unreserve(sg->rt, inst->post[p]);
    free(inst);
  }
}

static void subgraph_free(sg_subgraph *sg) {
  sg_stream_destroy(sg->copy_stream); /* drained: every instantiation has ended */
  free_ended_blocks(sg);
  for (int i = 0; sg->ops && i < sg->nops; ++i) free(sg->ops[i].name);
  free(sg->ops);
  free(sg->name);
  free(sg->payloads);
  free(sg->edges);
  free(sg->pre_edges);
  free(sg->post_edges);
  free(sg->interps);
  free(sg->sched_store);
  free(sg->counter_init);
  free(sg->counter_worker);
  free(sg->xsucc);
  free(sg->asucc);
  free(sg->dwaits);
  free(sg->token_op);
  free(sg->op_port_first);
  free(sg->op_ports);
  free(sg->port_first_op);
  free(sg->post_list);
  free(sg->port_first);
  free(sg->port_counters);
  free(sg->patch_image);
  free(sg->replan);
  free(sg);
}

static void subgraph_release(sg_subgraph *sg) {
  if (atomic_fetch_sub_explicit(&sg->refs, 1, memory_order_acq_rel) == 1) subgraph_free(sg);
}

void sg_subgraph_destroy(sg_subgraph *sg) {
  if (sg) subgraph_release(sg);
}

static int dup_array(void **dst, const void *src, size_t count, size_t size, const char *what) {
  *dst = NULL;
  if (!count) return MAPP_OK;
  MAPP_TRY(mapp_alloc(dst, count * size, what));
  memcpy(*dst, src, count * size);
  return MAPP_OK;
}

static size_t payload_size_of(const sg_op_def *o) {
  return o->kind == SG_OP_TASK ? o->arg_size : o->kind == SG_OP_COPY ? sizeof(sg_copy_desc) : sizeof(sg_barrier *);
}

static int copy_definition(sg_subgraph *sg, const sg_graph_def *def) {
  if (def->nops < 1) return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s' has no ops", sg->name);
  if (def->nedges < 0 || def->npre_ports < 0 || def->npost_ports < 0 || def->npre_edges < 0 ||
      def->npost_edges < 0 || def->ninterps < 0)
    return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': a negative count in its definition", sg->name);
  sg->nops = def->nops, sg->nedges = def->nedges;
  sg->npre = def->npre_ports, sg->npost = def->npost_ports;
  sg->npre_edges = def->npre_edges, sg->npost_edges = def->npost_edges, sg->ninterps = def->ninterps;
  sg->arg_size = def->arg_size;
  MAPP_TRY(mapp_calloc((void **)&sg->ops, (size_t)sg->nops, sizeof(cop), "subgraph ops"));
  size_t bytes = 0;
  for (int i = 0; i < sg->nops; ++i) {
    const sg_op_def *o = &def->ops[i];
    if (o->kind == SG_OP_TASK && !o->fn)
      return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': task op %d has no function", sg->name, i);
    if (o->kind == SG_OP_ARRIVE && !o->barrier)
      return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': arrival op %d has no barrier", sg->name, i);
    if (o->device && (o->kind == SG_OP_ARRIVE || sg->rt->device == SG_DEVICE_NONE))
      return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': op %d is a device op, %s", sg->name, i,
                       o->kind == SG_OP_ARRIVE ? "but only tasks and copies may be" : "on a runtime without a device");
    cop *c = &sg->ops[i];
    c->kind = o->kind, c->fn = o->fn;
    c->payload_size = payload_size_of(o);
    c->payload_off = bytes;
    bytes += sg_align16(c->payload_size);
    c->worker = o->affinity; /* resolved at compile */
    c->phase = o->phase;
    c->patched_off = -1;
    c->device = o->device;
    c->on_copy_stream = o->device && o->kind == SG_OP_COPY;
    c->respects = o->stream_ordered || c->on_copy_stream; /* the promise, trusted (--check-peek tests it) */
    c->token = c->note = -1;
    char fallback[32];
    snprintf(fallback, sizeof fallback, "op#%d", i);
    if (!(c->name = strdup(o->name ? o->name : fallback)))
      return mapp_fail(MAPP_ERR_SYSTEM, "out of memory copying op names");
    c->running = (sg_running_op){.op = c->name, .subgraph = sg->name};
  }
  MAPP_TRY(mapp_calloc((void **)&sg->payloads, bytes ? bytes : 1, 1, "subgraph payloads"));
  for (int i = 0; i < sg->nops; ++i) {
    const sg_op_def *o = &def->ops[i];
    unsigned char *p = sg->payloads + sg->ops[i].payload_off;
    if (o->kind == SG_OP_TASK && o->arg_size) memcpy(p, o->args, o->arg_size);
    else if (o->kind == SG_OP_COPY) memcpy(p, &o->copy, sizeof o->copy);
    else if (o->kind == SG_OP_ARRIVE) memcpy(p, &o->barrier, sizeof o->barrier);
  }
  MAPP_TRY(dup_array((void **)&sg->edges, def->edges, (size_t)sg->nedges, sizeof *def->edges, "subgraph edges"));
  MAPP_TRY(dup_array((void **)&sg->pre_edges, def->pre_edges, (size_t)sg->npre_edges, sizeof *def->pre_edges,
                     "subgraph precondition edges"));
  MAPP_TRY(dup_array((void **)&sg->post_edges, def->post_edges, (size_t)sg->npost_edges, sizeof *def->post_edges,
                     "subgraph postcondition edges"));
  MAPP_TRY(dup_array((void **)&sg->interps, def->interps, (size_t)sg->ninterps, sizeof *def->interps,
                     "subgraph interpolations"));
  return MAPP_OK;
}

int sg_subgraph_create(sg_runtime *rt, const sg_graph_def *def, sg_subgraph **out) {
  *out = NULL;
  if (sg_tls_running) return sg_contract_violation(rt, "sg_subgraph_create");
  sg_subgraph *sg;
  size_t bytes = (sizeof *sg + 63) & ~(size_t)63; /* its launch fields on a line of their own */
  sg = aligned_alloc(64, bytes);
  if (!sg) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating a subgraph");
  memset(sg, 0, bytes);
  sg->rt = rt;
  atomic_init(&sg->refs, 1);
  atomic_flag_clear(&sg->free_lock);
  sg->name = strdup(def->name ? def->name : "subgraph");
  int status = sg->name ? copy_definition(sg, def) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory naming a subgraph");
  if (status != MAPP_OK) {
    subgraph_free(sg);
    return status;
  }
  *out = sg;
  return MAPP_OK;
}

/* ------------------------------------------------------------ replay */

static inline void blocks_lock(sg_subgraph *sg) {
  while (atomic_flag_test_and_set_explicit(&sg->free_lock, memory_order_acquire)) sg_cpu_relax();
}
static inline void blocks_unlock(sg_subgraph *sg) { atomic_flag_clear_explicit(&sg->free_lock, memory_order_release); }

/* The last reference: the block goes back to the subgraph for reuse. */
static void instance_release(sg_instance *inst) {
  if (atomic_fetch_sub_explicit(&inst->refs, 1, memory_order_acq_rel) != 1) return;
  sg_subgraph *sg = inst->sg;
  blocks_lock(sg);
  inst->next_free = sg->free_blocks;
  sg->free_blocks = inst;
  blocks_unlock(sg);
  subgraph_release(sg);
}

/* A block's parts laid out in its one allocation (sg_graph_compile.c's plan_payloads). */
static void lay_out_block(const sg_subgraph *sg, unsigned char *mem) {
  sg_instance *inst = (sg_instance *)mem;
  inst->sg = (sg_subgraph *)sg;
  inst->items = (sg_item *)(mem + sg->off_items);
  inst->port_waiters = (port_waiter *)(mem + sg->off_waiters);
  inst->counters = (sg_counter *)(mem + sg->off_counters);
  inst->post = (sg_event *)(mem + sg->off_post);
  inst->args = mem + sg->off_args;
  inst->patched = mem + sg->off_patched;
  inst->tokens = (sg_token *)(mem + sg->off_tokens);
  inst->notes = (sg_note *)(mem + sg->off_notes);
  inst->port_tokens = (sg_token *)(mem + sg->off_port_tokens);
  atomic_init(&inst->finish_left, 0); /* not in flight, for sg_subgraph_pending */
  for (int v = 0; v < sg->nops; ++v)
    if (sg->ops[v].note >= 0) inst->notes[sg->ops[v].note] = (sg_note){.inst = inst, .op = v, .delivered = 0};
  for (int p = 0; sg->rt->plant_early_issue && p < sg->npre; ++p)
    atomic_init(&inst->port_tokens[p].recorded, 0), atomic_init(&inst->port_tokens[p].done, 0);
}

/* Its tokens' device handles and its events; false (nothing kept) when
 * out of them. */
static bool arm_block(sg_subgraph *sg, sg_instance *inst) {
  sg_runtime *rt = sg->rt;
  int made = 0;
  while (made < sg->ntokens && sg_token_init(rt, &inst->tokens[made]) == MAPP_OK) ++made;
  inst->finish = sg_event_reserve(rt);
  bool ok = made == sg->ntokens && inst->finish != SG_NO_EVENT;
  for (int p = 0; p < sg->npost; ++p) ok &= (inst->post[p] = sg_event_reserve(rt)) != SG_NO_EVENT;
  if (ok) return true;
  for (int t = 0; t < made; ++t) sg_token_free(rt, &inst->tokens[t]);
  sg_event_unreserve(rt, inst->finish);
  for (int p = 0; p < sg->npost; ++p) sg_event_unreserve(rt, inst->post[p]);
  return false;
}

/* A block for a new instantiation: a reused one (its events re-armed) or a
 * fresh one (its events reserved); NULL when out of memory or events. */
static sg_instance *instance_block(sg_subgraph *sg) {
  blocks_lock(sg);
  sg_instance *inst = sg->free_blocks;
  if (inst) sg->free_blocks = inst->next_free;
  blocks_unlock(sg);
  sg_runtime *rt = sg->rt;
  if (inst) {
    inst->finish = sg_event_rearm(rt, inst->finish);
    for (int p = 0; p < sg->npost; ++p) inst->post[p] = sg_event_rearm(rt, inst->post[p]);
    return inst;
  }
  unsigned char *mem = aligned_alloc(64, (sg->inst_bytes + 63) & ~(size_t)63); /* counters on their own lines */
  if (!mem) return NULL;
  lay_out_block(sg, mem);
  inst = (sg_instance *)mem;
  if (!arm_block(sg, inst)) {
    free(mem);
    return NULL;
  }
  blocks_lock(sg);
  inst->next_all = sg->all_blocks;
  sg->all_blocks = inst;
  blocks_unlock(sg);
  return inst;
}

static void resume_counter(sg_runtime *rt, sg_instance *inst, int counter) {
  if (atomic_fetch_sub_explicit(&inst->counters[counter].value, 1, memory_order_acq_rel) == 1) {
    int w = inst->sg->counter_worker[counter];
    sg_push_worker(rt, w, &inst->items[w].hdr);
  }
}

/* Before the instance is published: a precondition port whose event has
 * already triggered (the previous instantiation's output, usually) counts
 * as arrived in the counters' first values, with no waiter, reference or
 * atomic decrement; such a port is marked by port -1 in its waiter slot.
 * Returns the ports still pending. */
static int count_triggered_ports(const sg_subgraph *sg, sg_instance *inst, const sg_event *pre) {
  int pending = 0;
  bool plant = sg->rt->plant_early_issue; /* the consumers do not wait for the ports: they issue at once */
  for (int p = 0; p < sg->npre; ++p) {
    bool arrived = sg_event_has_triggered(sg->rt, pre[p]);
    inst->port_waiters[p].port = arrived ? -1 : p;
    pending += !arrived;
    if (plant && arrived) atomic_store(&inst->port_tokens[p].done, inst->seq);
    for (int k = sg->port_first[p]; (arrived || plant) && k < sg->port_first[p + 1]; ++k) {
      atomic_int *c = &inst->counters[sg->port_counters[k]].value;
      atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) - 1, memory_order_relaxed);
    }
  }
  return pending;
}

static void port_fired(sg_waiter *self, sg_runtime *rt) {
  port_waiter *pw = (port_waiter *)self;
  sg_instance *inst = pw->inst;
  const sg_subgraph *sg = inst->sg;
  for (int k = sg->port_first[pw->port]; k < sg->port_first[pw->port + 1]; ++k)
    resume_counter(rt, inst, sg->port_counters[k]);
  instance_release(inst);
}

/* plant_early_issue: the port's trigger records its token on the first
 * consumer's stream, behind whatever that stream was given meanwhile. */
static void port_fired_late(sg_waiter *self, sg_runtime *rt) {
  port_waiter *pw = (port_waiter *)self;
  sg_instance *inst = pw->inst;
  const sg_subgraph *sg = inst->sg;
  int op = sg->op_port_first ? sg->port_first_op[pw->port] : -1;
  sg_stream *stream = op >= 0 ? sg_worker_stream(rt, sg->ops[op].worker) : NULL;
  if (stream) sg_stream_record(stream, &inst->port_tokens[pw->port], inst->seq);
  else atomic_store(&inst->port_tokens[pw->port].done, inst->seq);
  instance_release(inst);
}

static void start_fired(sg_waiter *self, sg_runtime *rt) {
  sg_instance *inst = (sg_instance *)((char *)self - offsetof(sg_instance, start_waiter));
  const sg_subgraph *sg = inst->sg;
  for (int w = 0; w < rt->nworkers; ++w)
    if (sg->nsched[w]) sg_push_worker(rt, w, &inst->items[w].hdr);
  instance_release(inst);
}

/* One of the instantiation's ends: a worker's schedule done, or a device
 * op's notification. The last triggers the one finish event. */
static void finish_one(sg_runtime *rt, sg_instance *inst) {
  if (atomic_fetch_sub_explicit(&inst->finish_left, 1, memory_order_acq_rel) == 1) {
    sg_event_trigger(rt, inst->finish);
    instance_release(inst);
  }
}

/* A device op's device side is done (its stream's notification): the
 * consumers that waited for it (async edges) and its postcondition ports. */
static void device_done(void *arg) {
  sg_note *n = arg;
  sg_instance *inst = n->inst;
  __atomic_store_n(&n->delivered, inst->seq, __ATOMIC_RELAXED);
  const sg_subgraph *sg = inst->sg;
  const cop *c = &sg->ops[n->op];
  sg_runtime *rt = sg->rt;
  for (int k = 0; k < c->nasucc; ++k) resume_counter(rt, inst, sg->asucc[c->first_asucc + k]);
  for (int k = 0; k < c->npost; ++k) sg_event_trigger(rt, inst->post[sg->post_list[c->first_post + k]]);
  finish_one(rt, inst);
}

/* A device op's host side: its stream waits on the tokens of its
 * producers on other streams, its function enqueues its work, its token
 * is recorded (before its control successors are released: a consumer
 * reads it only after that), and its notification follows. A token that
 * was not recorded in this instantiation is a runtime error naming both
 * ops, never a wait that silently passes. */
static void issue_device_op(sg_runtime *rt, const sg_subgraph *sg, sg_instance *inst, const cop *c, int worker,
                            const unsigned char *payload) {
  long t0 = sg_now_ns(); /* the host side, all of it: waits, work, record, notification */
  sg_stream *stream = c->on_copy_stream ? sg->copy_stream : sg_worker_stream(rt, worker);
  for (int k = 0; k < c->ndwait; ++k) {
    int token = sg->dwaits[c->first_dwait + k];
    sg_token *t = &inst->tokens[token];
    if (atomic_load_explicit(&t->recorded, memory_order_acquire) != inst->seq) {
      sg_device_violation(rt, c->name, sg->ops[sg->token_op[token]].name, sg->name);
      continue;
    }
    if (!rt->skip_device_waits) sg_stream_wait(stream, t, inst->seq);
  }
  for (int k = 0; rt->plant_early_issue && k < sg->op_port_first[c - sg->ops + 1] - sg->op_port_first[c - sg->ops]; ++k)
    sg_stream_wait(stream, &inst->port_tokens[sg->op_ports[sg->op_port_first[c - sg->ops] + k]], inst->seq);
  if (c->on_copy_stream) {
    sg_stream_copy(stream, (const sg_copy_desc *)payload);
  } else {
    sg_task_ctx ctx = {.rt = rt, .worker = worker, .instance_args = inst->args, .stream = stream};
    c->fn(payload, c->payload_size, &ctx);
  }
  if (c->token >= 0) sg_stream_record(stream, &inst->tokens[c->token], inst->seq);
  if (c->note >= 0) sg_stream_notify(stream, device_done, &inst->notes[c->note]);
  sg_count_issue(rt, worker, sg_now_ns() - t0);
}

static inline void run_op(sg_runtime *rt, const sg_subgraph *sg, sg_instance *inst, const cop *c, int worker) {
  const unsigned char *payload =
      c->patched_off >= 0 ? inst->patched + c->patched_off : sg->payloads + c->payload_off;
  sg_tls_running = &c->running;
  if (c->device) {
    issue_device_op(rt, sg, inst, c, worker, payload);
    sg_tls_running = NULL;
    return;
  }
  switch (c->kind) {
  case SG_OP_TASK: {
    sg_task_ctx ctx = {.rt = rt, .worker = worker, .instance_args = inst->args};
    c->fn(payload, c->payload_size, &ctx);
    break;
  }
  case SG_OP_COPY: sg_copy_run((const sg_copy_desc *)payload); break;
  case SG_OP_ARRIVE: {
    sg_barrier *b;
    memcpy(&b, payload, sizeof b);
    sg_barrier_arrive_now(rt, b);
    break;
  }
  }
  sg_tls_running = NULL;
}

/* The seed's sg_sched_spin, made safe: wait a little for the other
 * workers' inputs (the counter down to our own arrival) instead of parking,
 * but only while no work the inputs may wait for is queued (an eager op, or
 * a re-queued item of an earlier instantiation: spinning over it is the
 * unbounded-spin deadlock the seed's review warns of) and at most the
 * worker's adaptive budget (sg_spin_feedback). Items of later
 * instantiations, queued while several are in flight, do not stop the spin: parking for
 * them would cost a queue trip per cross-worker edge. Then park. */
static void spin_for_inputs(sg_runtime *rt, atomic_int *counter, int worker, uint64_t seq) {
  if (atomic_load_explicit(counter, memory_order_acquire) <= 1) return;
  long deadline = 0; /* read the clock only once the spin is not a short one */
  uint32_t seen = atomic_load_explicit(&rt->epoch, memory_order_acquire) - 1; /* scan the queues once at least */
  for (unsigned i = 1; atomic_load_explicit(counter, memory_order_acquire) > 1; ++i) {
    uint32_t epoch = atomic_load_explicit(&rt->epoch, memory_order_acquire);
    if (epoch != seen) { /* something was pushed: rescan */
      seen = epoch;
      if (sg_older_work_queued(rt, worker, seq)) return;
    }
    if (i == 256) deadline = sg_now_ns() + rt->spin_budget[worker].ns;
    if ((i & 255) == 0 && sg_now_ns() > deadline) {
      sg_spin_feedback(rt, worker, false);
      return;
    }
    sg_cpu_relax();
  }
  sg_spin_feedback(rt, worker, true);
}

/* One worker's share of an instantiation, in its static order. An op with
 * a counter is where the worker may have to park: it counts its own
 * arrival, and whoever brings the counter to zero re-queues the item. */
void sg_item_run(sg_runtime *rt, sg_work *work, int worker) {
  sg_item *it = (sg_item *)work;
  sg_instance *inst = it->inst;
  const sg_subgraph *sg = inst->sg;
  const int *sched = sg->sched[it->worker];
  int n = sg->nsched[it->worker];
  int resumed = it->resume;
  for (int pos = it->pos; pos < n; ++pos) {
    const cop *c = &sg->ops[sched[pos]];
    if (c->counter >= 0) {
      atomic_int *counter = &inst->counters[c->counter].value;
      if (resumed) {
        resumed = 0;
      } else if (atomic_load_explicit(counter, memory_order_acquire) == 1) {
        /* every input has arrived; only this worker's arrival is left,
         * and nobody else touches the counter again: no decrement */
      } else {
        /* The host alone (a host_runs runtime with no thread) never spins:
         * no other worker can bring what it waits for. */
        if (rt->spin_ns > 0 && !(rt->host_runs && rt->nworkers == 1))
          spin_for_inputs(rt, counter, worker, it->hdr.seq);
        it->pos = pos, it->resume = 1; /* before the decrement: the resumer may run us at once */
        if (atomic_fetch_sub_explicit(counter, 1, memory_order_acq_rel) != 1) return;
      }
      it->resume = 0;
    }
    run_op(rt, sg, inst, c, worker);
    /* the control side is done: for a device op, its device side may still run (the runahead) */
    for (int k = 0; k < c->nxsucc; ++k) resume_counter(rt, inst, sg->xsucc[c->first_xsucc + k]);
    if (!c->device)
      for (int k = 0; k < c->npost; ++k) sg_event_trigger(rt, inst->post[sg->post_list[c->first_post + k]]);
  }
  /* One finish event from one counter, not one per worker (the seed's
   * fix); device ops' notifications count in it too. */
  __atomic_store_n(&it->done, 1, __ATOMIC_RELAXED);
  finish_one(rt, inst);
}

int sg_subgraph_instantiate(sg_subgraph *sg, const void *args, size_t size, sg_event start, const sg_event *pre,
                            sg_event *post, sg_event *finish) {
  sg_runtime *rt = sg->rt;
  if (sg_tls_running) return sg_contract_violation(rt, "sg_subgraph_instantiate");
  if (!sg->compiled) return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s' is instantiated before it is compiled", sg->name);
  if (size != sg->arg_size)
    return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s' takes a %zu-byte argument block, got %zu", sg->name,
                     sg->arg_size, size);
  if ((sg->npre && !pre) || (sg->npost && !post))
    return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s' has %d pre- and %d postcondition ports: arrays needed", sg->name,
                     sg->npre, sg->npost);
  sg_instance *inst = instance_block(sg);
  if (!inst)
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory or event slots instantiating '%s' (%zu bytes)", sg->name,
                     sg->inst_bytes);
  if (size) memcpy(inst->args, args, size);
  if (sg->patch_bytes) {
    memcpy(inst->patched, sg->patch_image, sg->patch_bytes);
    for (int i = 0; i < sg->ninterps; ++i) {
      const sg_interp_def *d = &sg->interps[i];
      memcpy(inst->patched + sg->ops[d->op].patched_off + d->op_offset, inst->args + d->arg_offset, d->size);
    }
    for (int i = 0; i < sg->nreplan; ++i) sg_copy_plan((sg_copy_desc *)(inst->patched + sg->replan[i]));
  }
  for (int c = 0; c < sg->ncounters; ++c) atomic_init(&inst->counters[c].value, sg->counter_init[c]);
  uint64_t seq = atomic_fetch_add_explicit(&rt->next_seq, 1, memory_order_relaxed) + 1;
  inst->seq = seq;
  int pending_ports = count_triggered_ports(sg, inst, pre);
  for (int w = 0; w < rt->nworkers; ++w)
    inst->items[w] = (sg_item){.hdr = {.kind = SG_WORK_ITEM, .seq = seq}, .inst = inst, .worker = w, .pos = 0,
                               .resume = 0, .done = 0};
  for (int p = 0; p < sg->npost; ++p) post[p] = inst->post[p];
  *finish = inst->finish;
  atomic_init(&inst->finish_left, sg->nactive + sg->nnotes);
  atomic_init(&inst->refs, 1 + pending_ports + 1);
  atomic_fetch_add_explicit(&sg->refs, 1, memory_order_relaxed);
  /* From here the instance may run and finish on other threads: no more
   * reads of it but through the waiters, which hold references. */
  for (int p = 0; p < sg->npre; ++p) {
    if (inst->port_waiters[p].port < 0) continue; /* counted above */
    inst->port_waiters[p] = (port_waiter){.w.fn = rt->plant_early_issue ? port_fired_late : port_fired, .inst = inst,
                                          .port = p};
    sg_event_add_waiter(rt, pre[p], &inst->port_waiters[p].w);
  }
  inst->start_waiter.fn = start_fired;
  sg_event_add_waiter(rt, start, &inst->start_waiter);
  return MAPP_OK;
}

/* ------------------------------------------------------------ a stalled run */

static size_t append(char *buf, size_t len, size_t at, const char *fmt, ...) {
  if (at >= len) return at;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + at, len - at, fmt, ap);
  va_end(ap);
  return n < 0 ? at : at + (size_t)n;
}

void sg_subgraph_pending(const sg_subgraph *sg, char *buf, size_t len) {
  size_t at = 0;
  int shown = 0;
  buf[0] = 0;
  sg_subgraph *list = (sg_subgraph *)sg; /* its lock only: blocks are prepended, never freed before the subgraph */
  blocks_lock(list);
  sg_instance *first = list->all_blocks;
  blocks_unlock(list);
  sg_instance *flight[64]; /* the oldest first: the list is newest first */
  int nflight = 0;
  for (sg_instance *inst = first; inst; inst = inst->next_all)
    if (atomic_load_explicit(&inst->finish_left, memory_order_relaxed) > 0) {
      if (nflight == 64) memmove(flight, flight + 1, sizeof flight[0] * 63), nflight = 63;
      flight[nflight++] = inst;
    }
  for (int f = nflight - 1; f >= 0 && at < len; --f) {
    sg_instance *inst = flight[f];
    at = append(buf, len, at, "%sinstantiation %llu:", shown++ ? "; " : "", (unsigned long long)inst->seq);
    int running = 0;
    for (int w = 0; w < sg->rt->nworkers; ++w) {
      if (!sg->nsched[w]) continue;
      const sg_item *it = &inst->items[w];
      if (__atomic_load_n(&it->done, __ATOMIC_RELAXED)) continue;
      running++;
      int pos = __atomic_load_n(&it->pos, __ATOMIC_RELAXED);
      const cop *c = &sg->ops[sg->sched[w][pos < sg->nsched[w] ? pos : sg->nsched[w] - 1]];
      int inputs = c->counter >= 0 ? atomic_load_explicit(&inst->counters[c->counter].value, memory_order_relaxed) : 0;
      at = append(buf, len, at, " worker %d at op '%s' (%d inputs missing)", w, c->name, inputs > 1 ? inputs - 1 : 0);
    }
    int outstanding = 0;
    for (int k = 0; k < sg->nnotes; ++k) {
      const sg_note *n = &inst->notes[k];
      if (__atomic_load_n(&n->delivered, __ATOMIC_RELAXED) == inst->seq) continue;
      if (outstanding++ < 3) at = append(buf, len, at, "%s op '%s'", outstanding > 1 ? "," : " device side of", sg->ops[n->op].name);
    }
    if (outstanding > 3) at = append(buf, len, at, " and %d more", outstanding - 3);
    if (!running && !outstanding) at = append(buf, len, at, " ending");
  }
  if (!shown) snprintf(buf, len, "none in flight");
}
