/* The CUDA variants' plan (tb_cuda_plan.h): no CUDA here, so every build
 * compiles it and the unit tests run it without a device. */
#include "tb_cuda_plan.h"

#include "mapp_error.h"

int tb_cuda_plan_make(const tb_config *cfg, tb_cuda_plan *plan) {
  long W = cfg->width;
  long max_deps = cfg->pattern == TB_ALL_TO_ALL ? W : cfg->radix + 1;
  if (max_deps > TB_CUDA_MAX_DEPS)
    return mapp_fail(MAPP_ERR_INPUT, "--backend cuda: at most %d dependences per task, pattern needs %ld",
                     TB_CUDA_MAX_DEPS, max_deps);
  plan->ring_steps = cfg->steps + 1;
  if ((double)plan->ring_steps * (double)W * sizeof(tb_tag) > TB_CUDA_MAX_RING_BYTES)
    return mapp_fail(MAPP_ERR_INPUT, "--backend cuda: %ld steps x %ld points of tags exceed 1 GB", cfg->steps, W);
  plan->ring_bytes = sizeof(tb_tag) * (size_t)(plan->ring_steps * W);
  plan->nstreams = (int)(W < TB_CUDA_MAX_STREAMS ? W : TB_CUDA_MAX_STREAMS);
  plan->events = 2 * W;
  return MAPP_OK;
}

int tb_cuda_cross_waits(const tb_config *cfg, const tb_cuda_plan *plan, long t, long p, long *slots) {
  long deps[TB_CUDA_MAX_DEPS];
  int n = tb_deps_of(cfg, t, p, deps), waits = 0;
  for (int i = 0; i < n; ++i)
    if (tb_cuda_stream_of(plan, deps[i]) != tb_cuda_stream_of(plan, p))
      slots[waits++] = tb_cuda_event_slot(cfg, t - 1, deps[i]);
  return waits;
}

long tb_cuda_capture_edges(const tb_config *cfg, const tb_cuda_plan *plan) {
  long slots[TB_CUDA_MAX_DEPS], edges = 0;
  for (long s = 0; s < cfg->graph_steps; ++s)
    for (long p = 0; p < cfg->width; ++p) edges += tb_cuda_cross_waits(cfg, plan, s, p, slots);
  return edges;
}
