/* The subgraph variant: graph_steps timesteps of this rank's points are
 * recorded once as a subgraph definition and compiled; the run instantiates
 * it steps / graph_steps times.
 *
 * Ports: an instantiation's first timestep reads the previous one's last
 * (precondition ports fed by the previous instantiation's postcondition
 * ports, so instantiations pipeline point by point, several in flight), and every
 * input from another rank is a precondition port its message triggers;
 * every output another rank reads is a postcondition port that sends it.
 * The base timestep is an interpolation patched into every op
 * (--interpolate) or read from the instantiation's argument block.
 *
 * With --copy-bytes, every dependence on another point q of this rank is
 * also a copy op, recorded with the same edges as the eager variant's
 * copies (tb_eager.c): from (s - 1, q) and (s - 1, p) to the copy, from the
 * copy to (s, p) and to (s + 1, q) (which overwrites the copy's source),
 * and (s - 1, p) to (s, p). Edges out of the last step go through ports to
 * the next instantiation. Copies are planned at compile; with an odd
 * graph-steps the timestep parity of a step alternates between
 * instantiations, so the copies' addresses are interpolations (from one of
 * two argument blocks, by the base timestep's parity) and the runtime plans
 * those copies again per instantiation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subgraph.h"

typedef struct {
  tb_state *st;
  int32_t s, p;
  int64_t base_t; /* patched per instantiation with --interpolate */
} graph_args;

static void task_interpolated(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)size;
  const graph_args *a = args;
  tb_task_body(a->st, a->base_t + a->s, a->p, ctx);
}

static void task_from_instance(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)size;
  const graph_args *a = args;
  int64_t base;
  memcpy(&base, ctx->instance_args, sizeof base);
  tb_task_body(a->st, base + a->s, a->p, ctx);
}

typedef struct {
  int s;  /* the reading op's step */
  long q; /* the point read at s - 1 */
  bool local;
  int src_op;    /* local: the op of the previous instantiation whose postcondition port feeds this one */
  int prev_post; /* local: that port */
} pre_port;

typedef struct {
  int s;
  long p;
  bool remote; /* sends to other ranks (some instantiation) */
} post_port;

typedef struct {
  int s;
  long p, q; /* (s, p)'s copy from q */
} copy_op;

struct tb_graph {
  sg_subgraph *sg;
  int npre, npost;
  pre_port *pre;
  post_port *post;
  int *first_consumer, *consumers; /* pre port -> op indices (CSR), to check which exist per instantiation */
  int ntasks, ncopies;             /* ops: the tasks (s * count + point), then the copies */
  copy_op *copies;
  /* the argument block by the base timestep's parity: the base, then the
   * copies' source and destination when they are interpolated */
  unsigned char *args[2];
  size_t arg_size;
};

/* Instantiations whose dependences the recorded graph must cover: all of
 * them for patterns that vary with the timestep, else a representative. */
static void chunk_sample(const tb_config *cfg, long *k0, long *k1) {
  long n = cfg->steps / cfg->graph_steps;
  bool varies = cfg->pattern == TB_FFT || cfg->pattern == TB_RANDOM_NEAREST;
  *k0 = 0; /* chunk 0 (no inputs at t = 0) and a typical one, or all */
  *k1 = varies ? n : (n < 2 ? n : 2);
}

typedef struct {
  sg_op_def *ops;
  graph_args *args;
  sg_edge_def *edges;
  sg_port_edge *pre_edges, *post_edges;
  sg_interp_def *interps;
  int nedges, npre_edges, npost_edges, cap_edges, cap_pre, ninterps, nops;
  /* By a point's column in a ring row (tb_slot: the own points and the
   * halo), L = ring_width of them, not by the width. */
  long L;
  unsigned char *mark; /* per task op x column: dependence recorded */
  char (*names)[48];   /* per task op: "task(s=S, p=P)", so a stalled replay's line names it */
  int *post_of;        /* op -> its postcondition port, or -1 */
  int *pre_of;         /* (s, column of q) -> pre port or -1 */
} recorder;

static int grow(void **arr, int *cap, int need, size_t size) {
  if (need <= *cap) return MAPP_OK;
  int cap2 = *cap ? 2 * *cap : 1024;
  while (cap2 < need) cap2 *= 2;
  void *bigger = realloc(*arr, (size_t)cap2 * size);
  if (!bigger) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory recording %d graph edges", cap2);
  *arr = bigger, *cap = cap2;
  return MAPP_OK;
}

static int new_pre_port(struct tb_graph *g, pre_port port, int *index) {
  pre_port *bigger = realloc(g->pre, sizeof *g->pre * (size_t)(g->npre + 1));
  if (!bigger) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory recording ports");
  g->pre = bigger;
  g->pre[*index = g->npre++] = port;
  return MAPP_OK;
}

static int add_port_edge(recorder *r, int port, int op) {
  MAPP_TRY(grow((void **)&r->pre_edges, &r->cap_pre, r->npre_edges + 1, sizeof *r->pre_edges));
  r->pre_edges[r->npre_edges++] = (sg_port_edge){.port = port, .op = op};
  return MAPP_OK;
}

/* op reads (s - 1, q) from before this instantiation: one port per (s, q),
 * fed by the previous instantiation's last step (q local) or a message. */
static int add_pre_edge(tb_state *st, struct tb_graph *g, recorder *r, int s, long q, int op) {
  long C = st->count, S = st->cfg.graph_steps;
  int *port = &r->pre_of[(long)s * r->L + tb_slot(st, q)];
  if (*port < 0) {
    bool local = q >= st->first && q < st->first + C;
    pre_port pp = {.s = s, .q = q, .local = local, .src_op = local ? (int)((S - 1) * C + (q - st->first)) : -1};
    MAPP_TRY(new_pre_port(g, pp, port));
  }
  return add_port_edge(r, *port, op);
}

static int add_edge(recorder *r, int src, int dst) {
  MAPP_TRY(grow((void **)&r->edges, &r->cap_edges, r->nedges + 1, sizeof *r->edges));
  r->edges[r->nedges++] = (sg_edge_def){.src = src, .dst = dst};
  return MAPP_OK;
}

/* Edges and precondition ports: the union of deps over the sampled chunks. */
static int record_dependences(tb_state *st, struct tb_graph *g, recorder *r) {
  const tb_config *cfg = &st->cfg;
  long S = cfg->graph_steps, C = st->count, k0, k1;
  long *deps = st->dep_buf + (long)cfg->workers * tb_max_deps(cfg);
  chunk_sample(cfg, &k0, &k1);
  for (long k = k0; k < k1; ++k)
    for (long s = 0; s < S; ++s)
      for (long pl = 0; pl < C; ++pl) {
        int op = (int)(s * C + pl), n = tb_deps(cfg, k * S + s, st->first + pl, deps);
        for (int i = 0; i < n; ++i) {
          long q = deps[i];
          long slot = tb_slot(st, q);
          if (slot < 0) /* the halo covers every timestep's dependences: a pattern it does not know */
            return mapp_fail(MAPP_ERR_SYSTEM, "(%ld, %ld) reads point %ld, outside rank %d's halo", k * S + s,
                             st->first + pl, q, st->rank);
          unsigned char *mark = &r->mark[(long)op * r->L + slot];
          if (*mark) continue;
          *mark = 1;
          bool local = q >= st->first && q < st->first + C;
          if (local && s > 0) {
            MAPP_TRY(add_edge(r, (int)((s - 1) * C + (q - st->first)), op));
          } else {
            MAPP_TRY(add_pre_edge(st, g, r, (int)s, q, op));
          }
        }
      }
  return MAPP_OK;
}

/* --break-dependence: reverse the first in-graph edge into (1, first point). */
static int break_one_edge(tb_state *st, recorder *r) {
  long C = st->count;
  for (int e = 0; e < r->nedges; ++e)
    if (r->edges[e].dst == (int)C) { /* op (s = 1, first point) */
      int src = r->edges[e].src;
      r->edges[e].src = (int)C, r->edges[e].dst = src;
      return MAPP_OK;
    }
  return mapp_fail(MAPP_ERR_INPUT, "--break-dependence: no in-graph edge into (1, %ld) to reverse (needs "
                   "--graph-steps >= 2 and a pattern with dependences)", st->first);
}

/* Postcondition ports: every op a port of the next instantiation reads
 * (each point's last step; with copies, the last step's copies), and any
 * step whose output another rank reads. */
static int record_outputs(tb_state *st, struct tb_graph *g, recorder *r) {
  const tb_config *cfg = &st->cfg;
  long S = cfg->graph_steps, C = st->count, k0, k1;
  chunk_sample(cfg, &k0, &k1);
  MAPP_TRY(mapp_alloc((void **)&r->post_of, sizeof(int) * (size_t)r->nops, "op ports"));
  for (int op = 0; op < r->nops; ++op) r->post_of[op] = -1;
  MAPP_TRY(mapp_calloc((void **)&r->post_edges, (size_t)r->nops, sizeof *r->post_edges, "post edges"));
  MAPP_TRY(mapp_calloc((void **)&g->post, (size_t)r->nops, sizeof *g->post, "post ports"));
  for (long s = 0; s < S; ++s)
    for (long pl = 0; pl < C; ++pl) {
      bool remote = false;
      for (long k = k0; k < k1 && !remote; ++k) remote = tb_feeds_remote(st, k * S + s, st->first + pl);
      if (!remote && s != S - 1) continue;
      int op = (int)(s * C + pl);
      r->post_of[op] = g->npost;
      g->post[g->npost] = (post_port){.s = (int)s, .p = st->first + pl, .remote = remote};
      r->post_edges[r->npost_edges++] = (sg_port_edge){.port = g->npost++, .op = op};
    }
  for (int c = 0; c < g->ncopies; ++c) {
    if (g->copies[c].s != S - 1) continue;
    int op = g->ntasks + c;
    r->post_of[op] = g->npost;
    g->post[g->npost] = (post_port){.s = (int)(S - 1), .p = g->copies[c].p, .remote = false};
    r->post_edges[r->npost_edges++] = (sg_port_edge){.port = g->npost++, .op = op};
  }
  for (int i = 0; i < g->npre; ++i)
    if (g->pre[i].local) g->pre[i].prev_post = r->post_of[g->pre[i].src_op];
  return MAPP_OK;
}

static int record_ops(tb_state *st, recorder *r) {
  const tb_config *cfg = &st->cfg;
  long S = cfg->graph_steps, C = st->count, n = S * C;
  MAPP_TRY(mapp_calloc((void **)&r->ops, (size_t)n, sizeof *r->ops, "graph ops"));
  MAPP_TRY(mapp_calloc((void **)&r->args, (size_t)n, sizeof *r->args, "graph op arguments"));
  MAPP_TRY(mapp_calloc((void **)&r->names, (size_t)n, sizeof *r->names, "graph op names"));
  r->nops = (int)n;
  if (cfg->interpolate) MAPP_TRY(mapp_calloc((void **)&r->interps, (size_t)n, sizeof *r->interps, "interpolations"));
  r->ninterps = cfg->interpolate ? (int)n : 0;
  for (long s = 0; s < S; ++s)
    for (long pl = 0; pl < C; ++pl) {
      long op = s * C + pl;
      r->args[op] = (graph_args){.st = st, .s = (int32_t)s, .p = (int32_t)(st->first + pl), .base_t = 0};
      /* points in blocks per worker: neighbours share a worker, few edges
       * cross; scheduled step by step, as every rank's, so that no rank
       * parks on a later step's input ahead of an earlier step's output
       * another rank waits for (sg_op_def.phase) */
      snprintf(r->names[op], sizeof r->names[op], "task(s=%ld, p=%ld)", s, st->first + pl);
      r->ops[op] = (sg_op_def){.name = r->names[op], .kind = SG_OP_TASK, .affinity = (int)(pl * cfg->workers / C),
                               .fn = cfg->interpolate ? task_interpolated : task_from_instance,
                               .args = &r->args[op], .arg_size = sizeof(graph_args), .phase = (int)s,
                               .device = tb_on_device(cfg, s), .stream_ordered = tb_promises_order(cfg, s)};
      if (cfg->interpolate)
        r->interps[op] = (sg_interp_def){.arg_offset = 0, .size = sizeof(int64_t), .op = (int)op,
                                         .op_offset = offsetof(graph_args, base_t)};
    }
  return MAPP_OK;
}

/* (s, p)'s copy from q, as the eager variant's (see the top): the
 * template holds the addresses of an even base timestep. */
static int add_copy(tb_state *st, struct tb_graph *g, recorder *r, int s, long pl, long q) {
  long C = st->count, S = st->cfg.graph_steps, p = st->first + pl;
  int op = r->nops++, c = g->ncopies++, task = (int)(s * C + pl);
  g->copies[c] = (copy_op){.s = s, .p = p, .q = q};
  r->ops[op] = (sg_op_def){.name = "copy", .kind = SG_OP_COPY, .affinity = r->ops[task].affinity,
                           .copy = {.dst = tb_copy_in(st, s, p, q), .src = tb_copy_out(st, s - 1, q),
                                    .row_bytes = (size_t)st->cfg.copy_bytes, .rows = 1},
                           .phase = s, .device = st->cfg.device};
  if (s > 0) {
    MAPP_TRY(add_edge(r, (int)((s - 1) * C + (q - st->first)), op));
    MAPP_TRY(add_edge(r, (int)((s - 1) * C + pl), op));
  } else {
    MAPP_TRY(add_pre_edge(st, g, r, 0, q, op));
    MAPP_TRY(add_pre_edge(st, g, r, 0, p, op));
  }
  MAPP_TRY(add_edge(r, op, task));
  if (s + 1 < S) return add_edge(r, op, (int)((s + 1) * C + (q - st->first)));
  /* the next instantiation's (0, q) overwrites the source: a port from this copy */
  int port = -1;
  MAPP_TRY(new_pre_port(g, (pre_port){.s = 0, .q = q, .local = true, .src_op = op}, &port));
  return add_port_edge(r, port, (int)(q - st->first));
}

/* --copy-bytes: a copy op per recorded dependence on another local point,
 * and (s - 1, p) before (s, p). */
static int record_copies(tb_state *st, struct tb_graph *g, recorder *r) {
  /* the own points' marks: C adjacent columns from the first's */
  long S = st->cfg.graph_steps, C = st->count, n = 0, own = tb_slot(st, st->first);
  for (long op = 0; op < S * C; ++op)
    for (long ql = 0; ql < C; ++ql) n += r->mark[op * r->L + own + ql] && ql != op % C;
  sg_op_def *ops = realloc(r->ops, sizeof *ops * (size_t)(S * C + n + 1));
  if (!ops) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory recording %ld copies", n);
  r->ops = ops;
  MAPP_TRY(mapp_calloc((void **)&g->copies, (size_t)n + 1, sizeof *g->copies, "copies"));
  for (long s = 0; s < S; ++s)
    for (long pl = 0; pl < C; ++pl) {
      long p = st->first + pl;
      for (long ql = 0; ql < C; ++ql)
        if (ql != pl && r->mark[(s * C + pl) * r->L + own + ql])
          MAPP_TRY(add_copy(st, g, r, (int)s, pl, st->first + ql));
      if (s > 0) MAPP_TRY(add_edge(r, (int)((s - 1) * C + pl), (int)(s * C + pl)));
      else MAPP_TRY(add_pre_edge(st, g, r, 0, p, (int)pl));
    }
  return MAPP_OK;
}

/* The argument blocks of an even and an odd base timestep. With an odd
 * graph-steps a copy's buffers alternate between instantiations: each
 * copy's source and destination are then interpolated from the block. */
static int record_arg_blocks(tb_state *st, struct tb_graph *g, recorder *r) {
  bool patch_copies = g->ncopies && st->cfg.graph_steps % 2;
  g->arg_size = sizeof(int64_t) + (patch_copies ? 2 * sizeof(void *) * (size_t)g->ncopies : 0);
  for (int parity = 0; parity < 2; ++parity) {
    MAPP_TRY(mapp_calloc((void **)&g->args[parity], g->arg_size, 1, "argument blocks"));
    for (int c = 0; patch_copies && c < g->ncopies; ++c) {
      const copy_op *co = &g->copies[c];
      void *ends[2] = {tb_copy_out(st, parity + co->s - 1, co->q), tb_copy_in(st, parity + co->s, co->p, co->q)};
      memcpy(g->args[parity] + sizeof(int64_t) + 2 * sizeof(void *) * (size_t)c, ends, sizeof ends);
    }
  }
  if (!patch_copies) return MAPP_OK;
  sg_interp_def *more = realloc(r->interps, sizeof *more * (size_t)(r->ninterps + 2 * g->ncopies));
  if (!more) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory recording copy interpolations");
  r->interps = more;
  for (int c = 0; c < g->ncopies; ++c) {
    size_t at = sizeof(int64_t) + 2 * sizeof(void *) * (size_t)c;
    r->interps[r->ninterps++] = (sg_interp_def){.arg_offset = at, .size = sizeof(void *), .op = g->ntasks + c,
                                                .op_offset = offsetof(sg_copy_desc, src)};
    r->interps[r->ninterps++] = (sg_interp_def){.arg_offset = at + sizeof(void *), .size = sizeof(void *),
                                                .op = g->ntasks + c, .op_offset = offsetof(sg_copy_desc, dst)};
  }
  return MAPP_OK;
}

static int build_consumers(struct tb_graph *g, const recorder *r) {
  MAPP_TRY(mapp_calloc((void **)&g->first_consumer, (size_t)g->npre + 1, sizeof(int), "port consumers"));
  MAPP_TRY(mapp_calloc((void **)&g->consumers, (size_t)r->npre_edges + 1, sizeof(int), "port consumers"));
  for (int e = 0; e < r->npre_edges; ++e) g->first_consumer[r->pre_edges[e].port + 1]++;
  for (int p = 0; p < g->npre; ++p) g->first_consumer[p + 1] += g->first_consumer[p];
  int *fill;
  MAPP_TRY(mapp_calloc((void **)&fill, (size_t)g->npre + 1, sizeof(int), "port consumers"));
  for (int e = 0; e < r->npre_edges; ++e) {
    int p = r->pre_edges[e].port;
    g->consumers[g->first_consumer[p] + fill[p]++] = r->pre_edges[e].op;
  }
  free(fill);
  return MAPP_OK;
}

static int record_and_compile(tb_state *st, struct tb_graph *g, recorder *r) {
  const tb_config *cfg = &st->cfg;
  long S = cfg->graph_steps, C = st->count;
  r->L = st->ring_width;
  MAPP_TRY(mapp_calloc((void **)&r->mark, (size_t)(S * C * r->L), 1, "dependence marks"));
  MAPP_TRY(mapp_alloc((void **)&r->pre_of, sizeof(int) * (size_t)(S * r->L), "port map"));
  for (long i = 0; i < S * r->L; ++i) r->pre_of[i] = -1;
  MAPP_TRY(record_ops(st, r));
  g->ntasks = r->nops;
  MAPP_TRY(record_dependences(st, g, r));
  if (cfg->break_dependence) MAPP_TRY(break_one_edge(st, r));
  if (cfg->copy_bytes) MAPP_TRY(record_copies(st, g, r));
  MAPP_TRY(record_arg_blocks(st, g, r));
  MAPP_TRY(record_outputs(st, g, r));
  MAPP_TRY(build_consumers(g, r));
  char name[64];
  snprintf(name, sizeof name, "%s x %ld steps", tb_pattern_name(cfg->pattern), S);
  sg_graph_def def = {.name = name, .ops = r->ops, .nops = r->nops, .edges = r->edges, .nedges = r->nedges,
                      .npre_ports = g->npre, .pre_edges = r->pre_edges, .npre_edges = r->npre_edges,
                      .npost_ports = g->npost, .post_edges = r->post_edges, .npost_edges = r->npost_edges,
                      .arg_size = g->arg_size, .interps = r->interps, .ninterps = r->ninterps};
  MAPP_TRY(sg_subgraph_create(st->rt, &def, &g->sg));
  long t0 = sg_now_ns();
  MAPP_TRY(sg_subgraph_compile(g->sg));
  st->compile_s = (double)(sg_now_ns() - t0) * 1e-9;
  return MAPP_OK;
}

void tb_subgraph_pending(const tb_state *st, char *buf, size_t len) {
  if (st->graph) sg_subgraph_pending(st->graph->sg, buf, len);
  else snprintf(buf, len, "no graph");
}

void tb_subgraph_stats(const tb_state *st, sg_subgraph_stats *out) {
  if (st->graph) sg_subgraph_get_stats(st->graph->sg, out);
  else *out = (sg_subgraph_stats){0};
}

void tb_subgraph_release(tb_state *st) {
  struct tb_graph *g = st->graph;
  if (!g) return;
  sg_subgraph_destroy(g->sg);
  free(g->pre), free(g->post), free(g->first_consumer), free(g->consumers), free(g->copies);
  free(g->args[0]), free(g->args[1]);
  free(g);
  st->graph = NULL;
}

int tb_subgraph_prepare(tb_state *st) {
  if (st->graph) return MAPP_OK;
  long t0 = sg_now_ns();
  struct tb_graph *g;
  MAPP_TRY(mapp_calloc((void **)&g, 1, sizeof *g, "the graph"));
  st->graph = g;
  recorder r = {0};
  int status = record_and_compile(st, g, &r);
  free(r.ops), free(r.args), free(r.edges), free(r.pre_edges), free(r.post_edges), free(r.interps);
  free(r.mark), free(r.pre_of), free(r.post_of), free(r.names);
  st->record_s = (double)(sg_now_ns() - t0) * 1e-9 - st->compile_s;
  if (status != MAPP_OK) tb_subgraph_release(st);
  return status;
}

/* Does some consumer of pre port `port` read it in the instantiation at base t0? */
static bool port_live(tb_state *st, const struct tb_graph *g, int port, long t0) {
  const pre_port *pp = &g->pre[port];
  long t = t0 + pp->s, *deps = st->dep_buf + (long)st->cfg.workers * tb_max_deps(&st->cfg);
  if (t - 1 < 0) return false;
  for (int k = g->first_consumer[port]; k < g->first_consumer[port + 1]; ++k) {
    long p = st->first + g->consumers[k] % st->count;
    int n = tb_deps(&st->cfg, t, p, deps);
    for (int i = 0; i < n; ++i)
      if (deps[i] == pp->q) return true;
  }
  return false;
}

static int instantiate_chunk(tb_state *st, long k, sg_event start, sg_event *prev_post, sg_event *pre, sg_event *post,
                             sg_event *finish) {
  const struct tb_graph *g = st->graph;
  long S = st->cfg.graph_steps, t0 = k * S;
  for (int i = 0; i < g->npre; ++i) {
    const pre_port *pp = &g->pre[i];
    if (pp->local) pre[i] = prev_post[pp->prev_post]; /* the previous instantiation's port */
    else if (port_live(st, g, i, t0)) MAPP_TRY(tb_comm_expect(st->comm_state, t0 + pp->s - 1, pp->q, &pre[i]));
    else pre[i] = SG_NO_EVENT;
  }
  unsigned char *args = g->args[t0 & 1];
  int64_t base = t0;
  memcpy(args, &base, sizeof base);
  MAPP_TRY(sg_subgraph_instantiate(g->sg, args, g->arg_size, start, pre, post, finish));
  st->instantiations++;
  memcpy(prev_post, post, sizeof *post * (size_t)g->npost);
  if (st->comm_state)
    for (int i = 0; i < g->npost; ++i)
      if (g->post[i].remote) MAPP_TRY(tb_comm_send_after(st->comm_state, t0 + g->post[i].s, g->post[i].p, post[i]));
  return MAPP_OK;
}

int tb_run_subgraph(tb_state *st) {
  MAPP_TRY(tb_subgraph_prepare(st));
  const struct tb_graph *g = st->graph;
  long D = st->cfg.in_flight, nchunks = st->cfg.steps / st->cfg.graph_steps;
  sg_event *finish = NULL, *pre = NULL, *post = NULL, *prev_post = NULL;
  int status = mapp_calloc((void **)&finish, (size_t)D, sizeof(sg_event), "finish events");
  if (status == MAPP_OK) status = mapp_calloc((void **)&pre, (size_t)g->npre + 1, sizeof(sg_event), "ports");
  if (status == MAPP_OK) status = mapp_calloc((void **)&post, (size_t)g->npost + 1, sizeof(sg_event), "ports");
  if (status == MAPP_OK) status = mapp_calloc((void **)&prev_post, (size_t)g->npost + 1, sizeof(sg_event), "ports");
  if (status == MAPP_OK && st->comm_state) status = tb_comm_begin(st->comm_state);
  /* Refill in batches of half the ring: the host sleeps until the newest
   * of the batch has finished, so it is woken (a futex on the finishing
   * worker, and a worker's core taken) once per D/2 instantiations, not
   * once per instantiation. A host that is worker 0 never sleeps while
   * its share is queued: it waits after every launch (tb_wait_batch). */
  long batch = tb_wait_batch(st, D > 1 ? D / 2 : 1);
  sg_event last_finish = SG_NO_EVENT;
  for (long k = 0; status == MAPP_OK && k < nchunks; ++k) {
    if (k >= D && (k - D) % batch == 0) status = tb_host_wait(st, finish[(k + batch - 1) % D]);
    if (k >= D && status == MAPP_OK) status = tb_host_wait(st, finish[k % D]); /* in order: already done */
    sg_event start = st->cfg.chain_finish ? last_finish : SG_NO_EVENT;
    if (status == MAPP_OK) status = instantiate_chunk(st, k, start, prev_post, pre, post, &finish[k % D]);
    last_finish = finish[k % D];
  }
  for (long k = 0; k < D && finish; ++k) {
    int s = tb_host_wait(st, finish[k]);
    if (status == MAPP_OK) status = s;
  }
  if (status == MAPP_OK && st->comm_state) status = tb_comm_end(st->comm_state);
  free(finish), free(pre), free(post), free(prev_post);
  MAPP_TRY(status);
  return tb_state_status(st);
}
