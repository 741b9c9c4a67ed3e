/* What sg_graph.c (the definition, the replay) and sg_graph_compile.c
 * share: the compiled subgraph and the instance it is replayed as. Not
 * part of the API. */
#ifndef SG_GRAPH_INTERNAL_H
#define SG_GRAPH_INTERNAL_H

#include "sg_internal.h"

typedef struct {
  sg_op_kind kind;
  sg_running_op running; /* names, for the contract check */
  char *name;
  sg_task_fn fn;
  size_t payload_size, payload_off; /* in the template */
  long patched_off;                 /* in the instance's patched image, or -1 */
  int worker, counter;              /* counter: -1 when every predecessor is on this worker */
  int phase;                        /* sg_op_def's: the schedules' order among ready ops */
  int first_xsucc, nxsucc;          /* counters to decrement after running (cross-worker successors) */
  int first_post, npost;            /* postcondition ports to trigger after running (a device op: after its device side) */
  /* asynchronous effects (sg_op_def.device, .stream_ordered) */
  bool device, respects;
  bool on_copy_stream;    /* a device copy: its work goes to the subgraph's copy stream */
  int token;              /* its token's index in an instance, or -1 (no other stream waits on it) */
  int first_dwait, ndwait; /* tokens (of ops on other streams) its stream waits on before its work */
  int first_asucc, nasucc; /* counters its device side decrements (async edges) */
  int note;               /* its notification's index in an instance, or -1 (none: its device side tells nobody) */
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
  int done;   /* its schedule ran to the end (read by sg_subgraph_pending) */
} sg_item;

typedef struct {
  sg_waiter w;
  sg_instance *inst;
  int port;
} port_waiter;

/* A device op's completion, handed to its stream's notification. */
typedef struct {
  sg_instance *inst;
  int op;
  uint64_t delivered; /* the instantiation it was last delivered in (sg_subgraph_pending) */
} sg_note;

struct sg_instance {
  sg_subgraph *sg;
  sg_instance *next_free; /* in the subgraph's list of blocks to reuse */
  atomic_int refs; /* the finish path + each pending waiter (the seed's use-after-free fix) */
  atomic_int finish_left;
  sg_event finish;
  sg_waiter start_waiter;
  sg_item *items;
  port_waiter *port_waiters;
  sg_counter *counters;
  sg_event *post;
  unsigned char *args, *patched;
  uint64_t seq;     /* the instantiation's number: its tokens' generation */
  sg_token *tokens;
  sg_note *notes;
  sg_token *port_tokens;  /* plant_early_issue: one per precondition port */
  sg_instance *next_all;  /* every block the subgraph has made (sg_subgraph_pending) */
};

struct sg_subgraph {
  sg_runtime *rt;
  char *name;
  int compiled;
  /* What every instantiation's launch and end touch, on one cache line:
   * the references (the user's + one per live instantiation) and the
   * blocks of ended instantiations, kept for the next ones with their
   * events reserved (no allocation per launch, no slot-table lock for its
   * events). */
  struct {
    _Alignas(64) atomic_int refs;
    atomic_flag free_lock;
    sg_instance *free_blocks;
  };
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
  int *asucc;           /* counter ids (async edges), grouped per op */
  int *dwaits;          /* token ids, grouped per op */
  int *token_op;        /* token id -> the op that records it */
  int ntokens, nnotes;
  sg_stream *copy_stream; /* the subgraph's own, when it has device copies */
  sg_instance *all_blocks;
  int *op_port_first, *op_ports; /* op -> the precondition ports it consumes (CSR), for plant_early_issue */
  int *port_first_op;            /* port -> its first consumer op, for plant_early_issue */
  int *post_list;       /* ports, grouped per op */
  int *port_first, *port_counters; /* pre port -> consumer counter ids (CSR) */
  unsigned char *patch_image;
  size_t patch_bytes;
  long *replan; /* offsets in the patched image of the copies to plan per instantiation */
  int nreplan;
  size_t inst_bytes, off_items, off_waiters, off_counters, off_post, off_args, off_patched, off_tokens, off_notes,
      off_port_tokens;
  sg_subgraph_stats stats;
};

static inline size_t sg_align16(size_t n) { return (n + 15) & ~(size_t)15; }

#endif
