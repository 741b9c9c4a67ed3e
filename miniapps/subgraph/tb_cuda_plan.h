/* The host-side plan of the CUDA variants (subgraph_cuda.cu), in plain C
 * so it is tested without a device: how many streams, which stream runs a
 * point, which event slot a task records, which events a task waits for
 * (the cross-stream edges that stream capture turns into graph edges), and
 * the limits that make a configuration an input error. */
#ifndef TB_CUDA_PLAN_H
#define TB_CUDA_PLAN_H

#include <stddef.h>

#include "tb_kernel.h"

#define TB_CUDA_MAX_DEPS 64   /* the device-side dependence buffer of a task */
#define TB_CUDA_MAX_STREAMS 4
#define TB_CUDA_MAX_RING_BYTES 1e9

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int nstreams;     /* min(width, TB_CUDA_MAX_STREAMS); point p runs on p % nstreams */
  long ring_steps;  /* every timestep its own tag slot: streams may drift apart */
  size_t ring_bytes;
  long events;      /* done events: one per (t % 2, point) */
} tb_cuda_plan;

/* The plan of cfg, or an input error naming the limit it breaks. */
int tb_cuda_plan_make(const tb_config *cfg, tb_cuda_plan *plan);

static inline int tb_cuda_stream_of(const tb_cuda_plan *plan, long p) { return (int)(p % plan->nstreams); }

/* The done event task (t, p) records: two timesteps of slots suffice
 * because a task only reads the timestep before it. */
static inline long tb_cuda_event_slot(const tb_config *cfg, long t, long p) { return (t & 1) * cfg->width + p; }

/* The event slots task (t, p) waits for before its launch: one per input
 * produced on another stream (inputs on its own stream are ordered by the
 * stream). Returns their count; slots holds TB_CUDA_MAX_DEPS. */
int tb_cuda_cross_waits(const tb_config *cfg, const tb_cuda_plan *plan, long t, long p, long *slots);

/* The cross-stream edges one capture of graph_steps timesteps holds. */
long tb_cuda_capture_edges(const tb_config *cfg, const tb_cuda_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
