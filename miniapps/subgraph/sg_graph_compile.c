/* A subgraph compiled once, before its first instantiation: its
 * references checked, its ops ordered, each worker's static schedule, the
 * countdown counters (only where predecessors are on other workers or
 * behind precondition ports), the port lists, the payload patch image and
 * the layout of one instantiation's single allocation. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "sg_graph_internal.h"

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

/* Among ready ops, does a go before b? The lower phase, then the lower
 * index (sg_op_def.phase). A first-in first-out order instead let an op of
 * a later timestep, waiting on another rank, overtake one of an earlier
 * timestep that another rank waited on: each rank's worker parked on its
 * own, and neither ever ran the other's input (a deadlock, seen with
 * --copy-bytes, whose copies make the tasks' depths uneven). */
static bool goes_first(const sg_subgraph *sg, int a, int b) {
  int pa = sg->ops[a].phase, pb = sg->ops[b].phase;
  return pa != pb ? pa < pb : a < b;
}

/* The ready ops: a binary heap, the one that goes first on top. */
typedef struct {
  int *v, n;
} ready_heap;

static void ready_push(const sg_subgraph *sg, ready_heap *h, int op) {
  int i = h->n++;
  for (; i > 0 && goes_first(sg, op, h->v[(i - 1) / 2]); i = (i - 1) / 2) h->v[i] = h->v[(i - 1) / 2];
  h->v[i] = op;
}

static int ready_pop(const sg_subgraph *sg, ready_heap *h) {
  int top = h->v[0], last = h->v[--h->n], i = 0;
  for (int c = 1; c < h->n; i = c, c = 2 * c + 1) {
    if (c + 1 < h->n && goes_first(sg, h->v[c + 1], h->v[c])) ++c;
    if (!goes_first(sg, h->v[c], last)) break;
    h->v[i] = h->v[c];
  }
  if (h->n) h->v[i] = last;
  return top;
}

/* Kahn's algorithm, the ready op that goes first each time; a cycle is
 * named by an op on it. */
static int topological_order(sg_subgraph *sg, const int *sfirst, const int *slist, const int *pfirst,
                             const int *plist, int *order) {
  int n = sg->nops, *indeg, tail = 0;
  ready_heap ready = {0};
  MAPP_TRY(mapp_calloc((void **)&indeg, (size_t)n, sizeof(int), "in-degrees"));
  int status = mapp_calloc((void **)&ready.v, (size_t)n, sizeof(int), "ready ops");
  if (status != MAPP_OK) {
    free(indeg);
    return status;
  }
  for (int v = 0; v < n; ++v) indeg[v] = pfirst[v + 1] - pfirst[v];
  for (int v = 0; v < n; ++v)
    if (!indeg[v]) ready_push(sg, &ready, v);
  while (ready.n) {
    int v = order[tail++] = ready_pop(sg, &ready);
    for (int k = sfirst[v]; k < sfirst[v + 1]; ++k)
      if (--indeg[slist[k]] == 0) ready_push(sg, &ready, slist[k]);
  }
  free(ready.v);
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

/* Realm's rule: an edge from an op with asynchronous effects (a device
 * op) to a consumer that does not respect them is also an async edge: the
 * consumer waits for the producer's device side as well. */
static inline bool async_edge(const cop *producer, const cop *consumer) {
  return producer->device && !consumer->respects;
}

/* Workers, schedules, counters only where predecessors are elsewhere (or
 * on a device the consumer does not let run ahead of it). */
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
      bool cross = sg->ops[plist[k]].worker != sg->ops[v].worker, async = async_edge(&sg->ops[plist[k]], &sg->ops[v]);
      external[v] += cross + async;
      sg->stats.cross_edges += cross;
      sg->stats.local_edges += !cross;
      sg->stats.control_edges++;
      sg->stats.async_edges += async;
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

/* Do two device ops put their work on one stream (their worker's, or the
 * subgraph's copy stream, which every worker's copies share)? */
static bool same_stream(const cop *a, const cop *b) {
  return a->on_copy_stream == b->on_copy_stream && (a->on_copy_stream || a->worker == b->worker);
}

/* Whether op v is the last of its worker's schedule to put work on its
 * stream: its notification tells the finish counter that the worker's
 * work there is done (on the shared copy stream, so is all enqueued before
 * it). */
static bool last_device_op(const sg_subgraph *sg, int v) {
  int w = sg->ops[v].worker;
  for (int k = sg->nsched[w] - 1; k >= 0; --k) {
    const cop *c = &sg->ops[sg->sched[w][k]];
    if (c->device && c->on_copy_stream == sg->ops[v].on_copy_stream) return sg->sched[w][k] == v;
  }
  return false;
}

/* The device side of the edges: per op, the counters its device side
 * releases (async edges), the tokens its stream waits on (a consumer that
 * respects a producer on another stream; on the same stream the order is
 * enough), its own token when another stream waits on it, and its
 * notification when anyone needs its device side: an async edge, a
 * postcondition port (ports are opaque: no runahead across them), or the
 * finish counter (its stream's last device op). */
static int plan_effects(sg_subgraph *sg, const int *sfirst, const int *slist, const int *pfirst, const int *plist) {
  int n = sg->nops;
  MAPP_TRY(mapp_calloc((void **)&sg->asucc, (size_t)sg->nedges + 1, sizeof(int), "async successors"));
  MAPP_TRY(mapp_calloc((void **)&sg->dwaits, (size_t)sg->nedges + 1, sizeof(int), "device waits"));
  MAPP_TRY(mapp_calloc((void **)&sg->token_op, (size_t)n + 1, sizeof(int), "tokens"));
  int na = 0, nd = 0;
  for (int v = 0; v < n; ++v) {
    cop *c = &sg->ops[v];
    c->first_asucc = na;
    for (int k = sfirst[v]; k < sfirst[v + 1]; ++k)
      if (async_edge(c, &sg->ops[slist[k]])) sg->asucc[na++] = sg->ops[slist[k]].counter;
    c->nasucc = na - c->first_asucc;
    c->first_dwait = nd;
    for (int k = pfirst[v]; k < pfirst[v + 1]; ++k) {
      cop *p = &sg->ops[plist[k]];
      if (!p->device || !c->respects || !c->device) continue; /* a host op's promise has no stream to order */
      if (same_stream(p, c)) {
        sg->stats.stream_order_edges++;
        continue;
      }
      if (p->token < 0) sg->token_op[p->token = sg->ntokens++] = plist[k];
      sg->dwaits[nd++] = p->token;
      sg->stats.device_waits++;
    }
    c->ndwait = nd - c->first_dwait;
  }
  for (int v = 0; v < n; ++v) {
    cop *c = &sg->ops[v];
    if (c->device && (c->nasucc || c->npost || last_device_op(sg, v))) c->note = sg->nnotes++;
  }
  sg->stats.tokens = sg->ntokens;
  sg->stats.notifications = sg->nnotes;
  bool copies = false;
  for (int v = 0; v < n; ++v) copies |= sg->ops[v].on_copy_stream;
  return copies ? sg_stream_create(sg->rt, sg->rt->nworkers, &sg->copy_stream) : MAPP_OK;
}

/* plant_early_issue: each op's precondition ports (CSR) and each port's
 * first consumer, on whose stream the port's trigger records its token. */
static int plan_port_consumers(sg_subgraph *sg) {
  MAPP_TRY(mapp_calloc((void **)&sg->op_port_first, (size_t)sg->nops + 1, sizeof(int), "op ports"));
  MAPP_TRY(mapp_calloc((void **)&sg->op_ports, (size_t)sg->npre_edges + 1, sizeof(int), "op ports"));
  MAPP_TRY(mapp_alloc((void **)&sg->port_first_op, sizeof(int) * ((size_t)sg->npre + 1), "port consumers"));
  for (int p = 0; p < sg->npre; ++p) sg->port_first_op[p] = -1;
  for (int e = 0; e < sg->npre_edges; ++e) sg->op_port_first[sg->pre_edges[e].op + 1]++;
  for (int v = 0; v < sg->nops; ++v) sg->op_port_first[v + 1] += sg->op_port_first[v];
  int *fill;
  MAPP_TRY(mapp_calloc((void **)&fill, (size_t)sg->nops + 1, sizeof(int), "op ports"));
  for (int e = 0; e < sg->npre_edges; ++e) {
    sg_port_edge pe = sg->pre_edges[e];
    sg->op_ports[sg->op_port_first[pe.op] + fill[pe.op]++] = pe.port;
    if (sg->port_first_op[pe.port] < 0) sg->port_first_op[pe.port] = pe.op;
  }
  free(fill);
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
  return sg->rt->plant_early_issue ? plan_port_consumers(sg) : MAPP_OK;
}

/* Ops that interpolations patch get a slot in a contiguous image that an
 * instantiation copies with one memcpy and patches, on the host, in
 * parallel with the workers running the previous instantiations (measured
 * faster than patching on the worker, which puts the copy on its critical
 * path). The image keeps a patched copy's descriptor unplanned: the
 * instantiation plans it after patching. Every other copy is planned here,
 * once, and reused by every replay (the seed's reusable transfer
 * descriptors). */
static int plan_payloads(sg_subgraph *sg) {
  for (int i = 0; i < sg->ninterps; ++i) {
    cop *c = &sg->ops[sg->interps[i].op];
    if (c->patched_off >= 0) continue;
    c->patched_off = (long)sg->patch_bytes;
    sg->patch_bytes += sg_align16(c->payload_size);
    sg->stats.patched_ops++;
    sg->nreplan += c->kind == SG_OP_COPY;
  }
  MAPP_TRY(mapp_alloc((void **)&sg->patch_image, sg->patch_bytes + 1, "the patch image"));
  MAPP_TRY(mapp_calloc((void **)&sg->replan, (size_t)sg->nreplan + 1, sizeof(long), "patched copies"));
  int nreplan = 0;
  for (int v = 0; v < sg->nops; ++v) {
    cop *c = &sg->ops[v];
    if (c->patched_off >= 0) {
      memcpy(sg->patch_image + c->patched_off, sg->payloads + c->payload_off, c->payload_size);
      if (c->kind == SG_OP_COPY) sg->replan[nreplan++] = c->patched_off;
    } else if (c->kind == SG_OP_COPY) {
      sg_copy_plan((sg_copy_desc *)(sg->payloads + c->payload_off));
    }
  }
  /* one allocation per instantiation: header, items, waiters, counters, post events, args, image */
  int W = sg->rt->nworkers;
  size_t at = sg_align16(sizeof(sg_instance));
  sg->off_items = at = (at + 63) & ~(size_t)63, at += sizeof(sg_item) * (size_t)W;
  sg->off_waiters = at, at += sg_align16(sizeof(port_waiter) * (size_t)sg->npre);
  sg->off_counters = at = (at + 63) & ~(size_t)63, at += sizeof(sg_counter) * (size_t)sg->ncounters;
  sg->off_post = at, at += sg_align16(sizeof(sg_event) * (size_t)sg->npost);
  sg->off_args = at, at += sg_align16(sg->arg_size);
  sg->off_patched = at, at += sg_align16(sg->patch_bytes);
  sg->off_tokens = at, at += sg_align16(sizeof(sg_token) * (size_t)sg->ntokens);
  sg->off_notes = at, at += sg_align16(sizeof(sg_note) * (size_t)sg->nnotes);
  sg->off_port_tokens = at, at += sg_align16(sizeof(sg_token) * (size_t)(sg->rt->plant_early_issue ? sg->npre : 0));
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
  if (status == MAPP_OK) status = plan_effects(sg, sfirst, slist, pfirst, plist);
  if (status == MAPP_OK) status = plan_payloads(sg);
  free(sfirst), free(slist), free(pfirst), free(plist), free(order);
  if (status == MAPP_OK) sg->compiled = 1;
  return status;
}

void sg_subgraph_get_stats(const sg_subgraph *sg, sg_subgraph_stats *out) { *out = sg->stats; }
