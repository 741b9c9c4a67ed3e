/* The subgraph path: a definition compiled once to static per-worker
 * schedules and replayed (the seed's SubgraphImpl). What an instantiation
 * costs: one allocation, the argument block and the patched payloads
 * copied, the countdown counters reset, one event per postcondition port
 * and one finish event. Per op: no event, no queue, no lock; an atomic
 * decrement only where an edge crosses workers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "sg_internal.h"

void sg_barrier_arrive_now(sg_runtime *rt, sg_barrier *b);

typedef struct {
  sg_op_kind kind;
  sg_running_op running; /* names, for the contract check */
  char *name;
  sg_task_fn fn;
  size_t payload_size, payload_off; /* in the template */
  long patched_off;                 /* in the instance's patched image, or -1 */
  int worker, counter;              /* counter: -1 when every predecessor is on this worker */
  int first_xsucc, nxsucc;          /* counters to decrement after running (cross-worker successors) */
  int first_post, npost;            /* postcondition ports to trigger after running */
} cop;

typedef struct sg_instance sg_instance;

/* One countdown counter per cache line: counters are decremented by
 * different workers, and sharing a line would make them ping-pong. */
typedef struct {
  _Alignas(64) atomic_int value;
} sg_counter;

typedef struct {
  _Alignas(64) sg_work hdr; /* a line per worker's item: each worker writes its own */
  sg_instance *inst;
  int worker, pos;
  int resume; /* parked at pos after its own arrival: the last decrement re-queued it */
} sg_item;

typedef struct {
  sg_waiter w;
  sg_instance *inst;
  int port;
} port_waiter;

struct sg_instance {
  sg_subgraph *sg;
  atomic_int refs; /* the finish path + each pending waiter (the seed's use-after-free fix) */
  atomic_int finish_left;
  sg_event finish;
  sg_waiter start_waiter;
  sg_item *items;
  port_waiter *port_waiters;
  sg_counter *counters;
  sg_event *post;
  unsigned char *args, *patched;
};

struct sg_subgraph {
  sg_runtime *rt;
  char *name;
  atomic_int refs; /* the user's + one per live instantiation */
  int compiled;
  /* the definition */
  int nops, nedges, npre, npost, npre_edges, npost_edges, ninterps;
  cop *ops;
  unsigned char *payloads;
  sg_edge_def *edges;
  sg_port_edge *pre_edges, *post_edges;
  sg_interp_def *interps;
  size_t arg_size;
  /* compiled */
  int *sched[SG_MAX_WORKERS];
  int nsched[SG_MAX_WORKERS];
  int *sched_store;
  int nactive, ncounters;
  int *counter_init, *counter_worker;
  int *xsucc;           /* counter ids */
  int *post_list;       /* ports, grouped per op */
  int *port_first, *port_counters; /* pre port -> consumer counter ids (CSR) */
  unsigned char *patch_image;
  size_t patch_bytes;
  size_t inst_bytes, off_items, off_waiters, off_counters, off_post, off_args, off_patched;
  sg_subgraph_stats stats;
};

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

static void subgraph_free(sg_subgraph *sg) {
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
  free(sg->post_list);
  free(sg->port_first);
  free(sg->port_counters);
  free(sg->patch_image);
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
    cop *c = &sg->ops[i];
    c->kind = o->kind, c->fn = o->fn;
    c->payload_size = payload_size_of(o);
    c->payload_off = bytes;
    bytes += align16(c->payload_size);
    c->worker = o->affinity; /* resolved at compile */
    c->patched_off = -1;
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
  MAPP_TRY(mapp_calloc((void **)&sg, 1, sizeof *sg, "a subgraph"));
  sg->rt = rt;
  atomic_init(&sg->refs, 1);
  sg->name = strdup(def->name ? def->name : "subgraph");
  int status = sg->name ? copy_definition(sg, def) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory naming a subgraph");
  if (status != MAPP_OK) {
    subgraph_free(sg);
    return status;
  }
  *out = sg;
  return MAPP_OK;
}

/* ------------------------------------------------------------ compile */

static int check_references(sg_subgraph *sg) {
  for (int e = 0; e < sg->nedges; ++e) {
    sg_edge_def d = sg->edges[e];
    if (d.src < 0 || d.src >= sg->nops || d.dst < 0 || d.dst >= sg->nops)
      return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': edge %d (%d -> %d) names an op outside [0, %d)", sg->name, e,
                       d.src, d.dst, sg->nops);
  }
  int *uses;
  int n = sg->npre > sg->npost ? sg->npre : sg->npost;
  MAPP_TRY(mapp_calloc((void **)&uses, (size_t)n + 1, sizeof(int), "port counts"));
  int status = MAPP_OK;
  for (int pass = 0; pass < 2 && status == MAPP_OK; ++pass) {
    const sg_port_edge *pe = pass ? sg->post_edges : sg->pre_edges;
    int count = pass ? sg->npost_edges : sg->npre_edges, nports = pass ? sg->npost : sg->npre;
    const char *what = pass ? "postcondition" : "precondition";
    memset(uses, 0, sizeof(int) * ((size_t)n + 1));
    for (int e = 0; e < count && status == MAPP_OK; ++e) {
      if (pe[e].port < 0 || pe[e].port >= nports)
        status = mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': dangling port: %s edge %d names port %d of %d", sg->name,
                           what, e, pe[e].port, nports);
      else if (pe[e].op < 0 || pe[e].op >= sg->nops)
        status = mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': %s port %d names op %d outside [0, %d)", sg->name, what,
                           pe[e].port, pe[e].op, sg->nops);
      else
        uses[pe[e].port]++;
    }
    for (int p = 0; p < nports && status == MAPP_OK; ++p) {
      if (uses[p] == 0)
        status = mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': dangling port: %s port %d is connected to no op",
                           sg->name, what, p);
      else if (pass && uses[p] > 1)
        status = mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': postcondition port %d has %d producers (one allowed)",
                           sg->name, p, uses[p]);
    }
  }
  free(uses);
  return status;
}

static int check_interpolations(sg_subgraph *sg) {
  for (int i = 0; i < sg->ninterps; ++i) {
    sg_interp_def d = sg->interps[i];
    if (d.size == 0 || d.arg_offset + d.size > sg->arg_size || d.arg_offset + d.size < d.arg_offset)
      return mapp_fail(MAPP_ERR_INPUT,
                       "subgraph '%s': interpolation %d reads bytes [%zu, %zu) outside the %zu-byte argument block",
                       sg->name, i, d.arg_offset, d.arg_offset + d.size, sg->arg_size);
    if (d.op < 0 || d.op >= sg->nops)
      return mapp_fail(MAPP_ERR_INPUT, "subgraph '%s': interpolation %d names op %d outside [0, %d)", sg->name, i,
                       d.op, sg->nops);
    size_t limit = sg->ops[d.op].payload_size;
    if (d.op_offset + d.size > limit || d.op_offset + d.size < d.op_offset)
      return mapp_fail(MAPP_ERR_INPUT,
                       "subgraph '%s': interpolation %d writes bytes [%zu, %zu) outside op '%s''s %zu-byte payload",
                       sg->name, i, d.op_offset, d.op_offset + d.size, sg->ops[d.op].name, limit);
  }
  return MAPP_OK;
}

/* Compressed adjacency: first[v]..first[v+1] in list. */
static int build_csr(int n, const sg_edge_def *edges, int m, bool by_dst, int **first, int **list) {
  MAPP_TRY(mapp_calloc((void **)first, (size_t)n + 1, sizeof(int), "adjacency"));
  MAPP_TRY(mapp_calloc((void **)list, (size_t)m + 1, sizeof(int), "adjacency"));
  for (int e = 0; e < m; ++e) (*first)[(by_dst ? edges[e].dst : edges[e].src) + 1]++;
  for (int v = 0; v < n; ++v) (*first)[v + 1] += (*first)[v];
  int *fill;
  MAPP_TRY(mapp_calloc((void **)&fill, (size_t)n + 1, sizeof(int), "adjacency"));
  for (int e = 0; e < m; ++e) {
    int v = by_dst ? edges[e].dst : edges[e].src;
    (*list)[(*first)[v] + fill[v]++] = by_dst ? edges[e].src : edges[e].dst;
  }
  free(fill);
  return MAPP_OK;
}

/* Kahn's algorithm, ops in index order among the ready ones; a cycle is
 * named by an op on it. */
static int topological_order(sg_subgraph *sg, const int *sfirst, const int *slist, const int *pfirst,
                             const int *plist, int *order) {
  int n = sg->nops, *indeg, head = 0, tail = 0;
  MAPP_TRY(mapp_calloc((void **)&indeg, (size_t)n, sizeof(int), "in-degrees"));
  for (int v = 0; v < n; ++v) indeg[v] = pfirst[v + 1] - pfirst[v];
  for (int v = 0; v < n; ++v)
    if (!indeg[v]) order[tail++] = v;
  while (head < tail) {
    int v = order[head++];
    for (int k = sfirst[v]; k < sfirst[v + 1]; ++k)
      if (--indeg[slist[k]] == 0) order[tail++] = slist[k];
  }
  int status = MAPP_OK;
  if (tail < n) {
    /* Walk back through unfinished predecessors: after n steps we are on a cycle. */
    int v = 0;
    while (!indeg[v]) v++;
    for (int step = 0; step < n; ++step)
      for (int k = pfirst[v]; k < pfirst[v + 1]; ++k)
        if (indeg[plist[k]]) {
          v = plist[k];
          break;
        }
    status = mapp_fail(MAPP_ERR_INPUT, "subgraph '%s' has a cycle through op '%s' (%d of %d ops are ordered)",
                       sg->name, sg->ops[v].name, tail, n);
  }
  free(indeg);
  return status;
}

/* Workers, schedules, counters only where predecessors are elsewhere. */
static int plan_schedules(sg_subgraph *sg, const int *order, const int *sfirst, const int *slist, const int *pfirst,
                          const int *plist) {
  int n = sg->nops, W = sg->rt->nworkers, rr = 0;
  for (int k = 0; k < n; ++k) {
    cop *c = &sg->ops[order[k]];
    c->worker = c->worker >= 0 ? c->worker % W : rr++ % W;
  }
  MAPP_TRY(mapp_calloc((void **)&sg->sched_store, (size_t)n, sizeof(int), "schedules"));
  for (int v = 0; v < n; ++v) sg->nsched[sg->ops[v].worker]++;
  int at = 0;
  for (int w = 0; w < W; ++w) {
    sg->sched[w] = sg->sched_store + at;
    at += sg->nsched[w];
    sg->nactive += sg->nsched[w] > 0;
    sg->nsched[w] = 0;
  }
  for (int k = 0; k < n; ++k) { /* topological order within each worker */
    int w = sg->ops[order[k]].worker;
    sg->sched[w][sg->nsched[w]++] = order[k];
  }
  /* counters: cross-worker predecessors plus precondition port edges */
  int *external;
  MAPP_TRY(mapp_calloc((void **)&external, (size_t)n, sizeof(int), "counter sizes"));
  for (int e = 0; e < sg->npre_edges; ++e) external[sg->pre_edges[e].op]++;
  for (int v = 0; v < n; ++v)
    for (int k = pfirst[v]; k < pfirst[v + 1]; ++k) {
      bool cross = sg->ops[plist[k]].worker != sg->ops[v].worker;
      external[v] += cross;
      sg->stats.cross_edges += cross;
      sg->stats.local_edges += !cross;
    }
  int status = mapp_calloc((void **)&sg->counter_init, (size_t)n, sizeof(int), "counters");
  if (status == MAPP_OK) status = mapp_calloc((void **)&sg->counter_worker, (size_t)n, sizeof(int), "counters");
  for (int v = 0; status == MAPP_OK && v < n; ++v) {
    sg->ops[v].counter = -1;
    if (!external[v]) continue;
    sg->ops[v].counter = sg->ncounters;
    sg->counter_init[sg->ncounters] = external[v] + 1; /* + the worker's own arrival */
    sg->counter_worker[sg->ncounters++] = sg->ops[v].worker;
  }
  free(external);
  MAPP_TRY(status);
  MAPP_TRY(mapp_calloc((void **)&sg->xsucc, (size_t)sg->nedges + 1, sizeof(int), "successor counters"));
  int nx = 0;
  for (int v = 0; v < n; ++v) {
    sg->ops[v].first_xsucc = nx;
    for (int k = sfirst[v]; k < sfirst[v + 1]; ++k)
      if (sg->ops[slist[k]].worker != sg->ops[v].worker) sg->xsucc[nx++] = sg->ops[slist[k]].counter;
    sg->ops[v].nxsucc = nx - sg->ops[v].first_xsucc;
  }
  sg->stats.workers_used = sg->nactive;
  sg->stats.counters = sg->ncounters;
  return MAPP_OK;
}

static int plan_ports(sg_subgraph *sg) {
  MAPP_TRY(mapp_calloc((void **)&sg->post_list, (size_t)sg->npost_edges + 1, sizeof(int), "postcondition lists"));
  int at = 0;
  for (int v = 0; v < sg->nops; ++v) {
    sg->ops[v].first_post = at;
    for (int e = 0; e < sg->npost_edges; ++e)
      if (sg->post_edges[e].op == v) sg->post_list[at++] = sg->post_edges[e].port;
    sg->ops[v].npost = at - sg->ops[v].first_post;
  }
  MAPP_TRY(mapp_calloc((void **)&sg->port_first, (size_t)sg->npre + 1, sizeof(int), "precondition lists"));
  MAPP_TRY(mapp_calloc((void **)&sg->port_counters, (size_t)sg->npre_edges + 1, sizeof(int), "precondition lists"));
  for (int e = 0; e < sg->npre_edges; ++e) sg->port_first[sg->pre_edges[e].port + 1]++;
  for (int p = 0; p < sg->npre; ++p) sg->port_first[p + 1] += sg->port_first[p];
  int *fill;
  MAPP_TRY(mapp_calloc((void **)&fill, (size_t)sg->npre + 1, sizeof(int), "precondition lists"));
  for (int e = 0; e < sg->npre_edges; ++e) {
    int p = sg->pre_edges[e].port;
    sg->port_counters[sg->port_first[p] + fill[p]++] = sg->ops[sg->pre_edges[e].op].counter;
  }
  free(fill);
  return MAPP_OK;
}

/* Copies planned once: a strided copy whose rows are adjacent is one run.
 * Ops that interpolations patch get a slot in a contiguous image that an
 * instantiation copies with one memcpy before patching. */
static int plan_payloads(sg_subgraph *sg) {
  for (int v = 0; v < sg->nops; ++v) {
    cop *c = &sg->ops[v];
    if (c->kind != SG_OP_COPY) continue;
    sg_copy_desc *d = (sg_copy_desc *)(sg->payloads + c->payload_off);
    if (d->rows > 1 && d->dst_stride == d->row_bytes && d->src_stride == d->row_bytes)
      d->row_bytes *= d->rows, d->rows = 1, d->dst_stride = d->src_stride = d->row_bytes;
  }
  /* Patched ops get a slot in a contiguous image: an instantiation copies
   * it with one memcpy and applies the patches on the host, in parallel
   * with the workers running the previous instantiations (measured faster
   * than patching on the worker, which puts the copy on its critical path). */
  for (int i = 0; i < sg->ninterps; ++i) {
    cop *c = &sg->ops[sg->interps[i].op];
    if (c->patched_off >= 0) continue;
    c->patched_off = (long)sg->patch_bytes;
    sg->patch_bytes += align16(c->payload_size);
    sg->stats.patched_ops++;
  }
  MAPP_TRY(mapp_alloc((void **)&sg->patch_image, sg->patch_bytes + 1, "the patch image"));
  for (int v = 0; v < sg->nops; ++v)
    if (sg->ops[v].patched_off >= 0)
      memcpy(sg->patch_image + sg->ops[v].patched_off, sg->payloads + sg->ops[v].payload_off, sg->ops[v].payload_size);
  /* one allocation per instantiation: header, items, waiters, counters, post events, args, image */
  int W = sg->rt->nworkers;
  size_t at = align16(sizeof(sg_instance));
  sg->off_items = at = (at + 63) & ~(size_t)63, at += sizeof(sg_item) * (size_t)W;
  sg->off_waiters = at, at += align16(sizeof(port_waiter) * (size_t)sg->npre);
  sg->off_counters = at = (at + 63) & ~(size_t)63, at += sizeof(sg_counter) * (size_t)sg->ncounters;
  sg->off_post = at, at += align16(sizeof(sg_event) * (size_t)sg->npost);
  sg->off_args = at, at += align16(sg->arg_size);
  sg->off_patched = at, at += align16(sg->patch_bytes);
  sg->inst_bytes = at;
  return MAPP_OK;
}

int sg_subgraph_compile(sg_subgraph *sg) {
  if (sg->compiled) return MAPP_OK;
  MAPP_TRY(check_references(sg));
  MAPP_TRY(check_interpolations(sg));
  int *sfirst = NULL, *slist = NULL, *pfirst = NULL, *plist = NULL, *order = NULL;
  int status = build_csr(sg->nops, sg->edges, sg->nedges, false, &sfirst, &slist);
  if (status == MAPP_OK) status = build_csr(sg->nops, sg->edges, sg->nedges, true, &pfirst, &plist);
  if (status == MAPP_OK) status = mapp_calloc((void **)&order, (size_t)sg->nops, sizeof(int), "the order");
  if (status == MAPP_OK) status = topological_order(sg, sfirst, slist, pfirst, plist, order);
  if (status == MAPP_OK) status = plan_schedules(sg, order, sfirst, slist, pfirst, plist);
  if (status == MAPP_OK) status = plan_ports(sg);
  if (status == MAPP_OK) status = plan_payloads(sg);
  free(sfirst), free(slist), free(pfirst), free(plist), free(order);
  if (status == MAPP_OK) sg->compiled = 1;
  return status;
}

void sg_subgraph_get_stats(const sg_subgraph *sg, sg_subgraph_stats *out) { *out = sg->stats; }

/* ------------------------------------------------------------ replay */

static void instance_release(sg_instance *inst) {
  if (atomic_fetch_sub_explicit(&inst->refs, 1, memory_order_acq_rel) != 1) return;
  sg_subgraph *sg = inst->sg;
  free(inst);
  subgraph_release(sg);
}

static void resume_counter(sg_runtime *rt, sg_instance *inst, int counter) {
  if (atomic_fetch_sub_explicit(&inst->counters[counter].value, 1, memory_order_acq_rel) == 1) {
    int w = inst->sg->counter_worker[counter];
    sg_push_worker(rt, w, &inst->items[w].hdr);
  }
}

static void port_fired(sg_waiter *self, sg_runtime *rt) {
  port_waiter *pw = (port_waiter *)self;
  sg_instance *inst = pw->inst;
  const sg_subgraph *sg = inst->sg;
  for (int k = sg->port_first[pw->port]; k < sg->port_first[pw->port + 1]; ++k)
    resume_counter(rt, inst, sg->port_counters[k]);
  instance_release(inst);
}

static void start_fired(sg_waiter *self, sg_runtime *rt) {
  sg_instance *inst = (sg_instance *)((char *)self - offsetof(sg_instance, start_waiter));
  const sg_subgraph *sg = inst->sg;
  for (int w = 0; w < rt->nworkers; ++w)
    if (sg->nsched[w]) sg_push_worker(rt, w, &inst->items[w].hdr);
  instance_release(inst);
}

static inline void run_op(sg_runtime *rt, const sg_subgraph *sg, const sg_instance *inst, const cop *c, int worker) {
  const unsigned char *payload =
      c->patched_off >= 0 ? inst->patched + c->patched_off : sg->payloads + c->payload_off;
  sg_tls_running = &c->running;
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
 * instantiations, queued by run-ahead, do not stop the spin: parking for
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
      if (resumed) {
        resumed = 0;
      } else {
        if (rt->spin_ns > 0) spin_for_inputs(rt, &inst->counters[c->counter].value, worker, it->hdr.seq);
        it->pos = pos, it->resume = 1; /* before the decrement: the resumer may run us at once */
        if (atomic_fetch_sub_explicit(&inst->counters[c->counter].value, 1, memory_order_acq_rel) != 1) return;
      }
      it->resume = 0;
    }
    run_op(rt, sg, inst, c, worker);
    for (int k = 0; k < c->nxsucc; ++k) resume_counter(rt, inst, sg->xsucc[c->first_xsucc + k]);
    for (int k = 0; k < c->npost; ++k) sg_event_trigger(rt, inst->post[sg->post_list[c->first_post + k]]);
  }
  /* One finish event from one counter, not one per worker (the seed's fix). */
  if (atomic_fetch_sub_explicit(&inst->finish_left, 1, memory_order_acq_rel) == 1) {
    sg_event_trigger(rt, inst->finish);
    instance_release(inst);
  }
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
  unsigned char *mem = aligned_alloc(64, (sg->inst_bytes + 63) & ~(size_t)63); /* counters on their own lines */
  if (!mem) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory instantiating '%s' (%zu bytes)", sg->name, sg->inst_bytes);
  sg_instance *inst = (sg_instance *)mem;
  inst->sg = sg;
  inst->items = (sg_item *)(mem + sg->off_items);
  inst->port_waiters = (port_waiter *)(mem + sg->off_waiters);
  inst->counters = (sg_counter *)(mem + sg->off_counters);
  inst->post = (sg_event *)(mem + sg->off_post);
  inst->args = mem + sg->off_args;
  inst->patched = mem + sg->off_patched;
  if (size) memcpy(inst->args, args, size);
  if (sg->patch_bytes) {
    memcpy(inst->patched, sg->patch_image, sg->patch_bytes);
    for (int i = 0; i < sg->ninterps; ++i) {
      const sg_interp_def *d = &sg->interps[i];
      memcpy(inst->patched + sg->ops[d->op].patched_off + d->op_offset, inst->args + d->arg_offset, d->size);
    }
  }
  for (int c = 0; c < sg->ncounters; ++c) atomic_init(&inst->counters[c].value, sg->counter_init[c]);
  uint64_t seq = atomic_fetch_add_explicit(&rt->next_seq, 1, memory_order_relaxed) + 1;
  for (int w = 0; w < rt->nworkers; ++w)
    inst->items[w] = (sg_item){.hdr = {.kind = SG_WORK_ITEM, .seq = seq}, .inst = inst, .worker = w, .pos = 0, .resume = 0};
  inst->finish = sg_event_alloc(rt);
  int ok = inst->finish != SG_NO_EVENT;
  for (int p = 0; p < sg->npost; ++p) ok &= (post[p] = inst->post[p] = sg_event_alloc(rt)) != SG_NO_EVENT;
  if (!ok) {
    free(mem);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of event slots instantiating '%s'", sg->name);
  }
  *finish = inst->finish;
  atomic_init(&inst->finish_left, sg->nactive);
  atomic_init(&inst->refs, 1 + sg->npre + 1);
  atomic_fetch_add_explicit(&sg->refs, 1, memory_order_relaxed);
  /* From here the instance may run and finish on other threads: no more
   * reads of it but through the waiters, which hold references. */
  for (int p = 0; p < sg->npre; ++p) {
    inst->port_waiters[p] = (port_waiter){.w.fn = port_fired, .inst = inst, .port = p};
    sg_event_add_waiter(rt, pre[p], &inst->port_waiters[p].w);
  }
  inst->start_waiter.fn = start_fired;
  sg_event_add_waiter(rt, start, &inst->start_waiter);
  return MAPP_OK;
}
