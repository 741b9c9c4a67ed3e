// Task Bench's task on a CUDA device for the runtime's streams (the cuda
// backend's eager and subgraph variants): what tb_run_task does on the
// host, with tb_kernel.h's patterns, value, kernel and copy pattern written
// once for both. Buffers are managed memory, so the host's reset, checks
// and answer read the same ring.
#include <cuda_runtime.h>

extern "C" {
#include "mapp_error.h"
}
#include "tb_cuda_plan.h"
#include "tb_kernel.h"

namespace {

__device__ bool copies_from(const tb_task_view &v, long p, long q) {
  return v.cfg.copy_bytes > 0 && q != p && q >= v.first && q < v.first + v.count;
}

__device__ unsigned char *copy_out(const tb_task_view &v, long t, long p) {
  return v.copy_out + (size_t)((p - v.first) * 2 + (t & 1)) * (size_t)v.cfg.copy_bytes;
}

__device__ const unsigned char *copy_in(const tb_task_view &v, long t, long p, long q) {
  long pl = p - v.first, span = (v.copy_at[pl + 1] - v.copy_at[pl]) / 2;
  long slot = v.copy_at[pl] + (t & 1) * span + (q - v.copy_lo[pl]);
  return v.copy_in + (size_t)slot * (size_t)v.cfg.copy_bytes;
}

__global__ void runtime_task(tb_task_view v, long t, long p) {
  long deps[TB_CUDA_MAX_DEPS], mask = v.ring_steps - 1;
  int n = tb_deps_of(&v.cfg, t, p, deps);
  const tb_tag *prev = v.ring + ((t - 1) & mask) * v.ring_width - v.ring_lo;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    const tb_tag *in = &prev[deps[i]];
    if (in->t != t - 1 || in->p != deps[i]) atomicAdd(v.errors, 1ull);
    sum += in->v;
  }
  size_t bytes = (size_t)v.cfg.copy_bytes;
  for (int i = 0; bytes && i < n; ++i)
    if (copies_from(v, p, deps[i]) && tb_copy_pattern_mismatch(copy_in(v, t, p, deps[i]), bytes, t - 1, deps[i]) >= 0)
      atomicAdd(v.errors, 1ull);
  v.sink[p - v.first] += tb_compute_kernel(v.cfg.iterations, v.sink[p - v.first]);
  if (bytes) tb_copy_pattern_fill(copy_out(v, t, p), bytes, t, p);
  v.ring[(t & mask) * v.ring_width + (p - v.ring_lo)] = tb_tag{t, p, tb_value(t, p, v.cfg.width, sum, n)};
}

} // namespace

extern "C" int tb_cuda_managed_alloc(void **p, size_t bytes, const char *what) {
  *p = nullptr;
  cudaError_t err = cudaMallocManaged(p, bytes ? bytes : 1);
  if (err == cudaSuccess) err = cudaMemset(*p, 0, bytes ? bytes : 1);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) return mapp_fail(MAPP_ERR_SYSTEM, "cudaMallocManaged of %zu bytes (%s) failed: %s", bytes, what,
                                           cudaGetErrorString(err));
  return MAPP_OK;
}

extern "C" void tb_cuda_managed_free(void *p) {
  if (p) cudaFree(p);
}

extern "C" int tb_cuda_launch_task(void *stream, const tb_task_view *view, long t, long p) {
  runtime_task<<<1, 1, 0, (cudaStream_t)stream>>>(*view, t, p);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return mapp_fail(MAPP_ERR_SYSTEM, "launching task (t=%ld, p=%ld) failed: %s", t, p,
                                           cudaGetErrorString(err));
  return MAPP_OK;
}
