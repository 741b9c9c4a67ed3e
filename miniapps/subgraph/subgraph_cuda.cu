// The CUDA variants of Task Bench (the seed's stream-ordered GPU tasks).
//
//   eager     every task is a kernel launch on its point's stream; a
//             dependence on another stream is an event recorded after the
//             producer and waited on by the consumer's stream; the last
//             timestep's tags come back with cudaMemcpyAsync.
//   subgraph  graph_steps timesteps are captured once into a CUDA graph
//             (the events become graph edges), instantiated once and
//             replayed with cudaGraphLaunch. The base timestep, the
//             replay's one changing argument, is a device word every task
//             reads; a one-thread kernel sets it on the replay's stream
//             before each launch, so one launch replaces a parameter update
//             in every kernel node (cudaGraphExecKernelNodeSetParams cost
//             about 0.7 us a node on an H200, most of a replayed task's
//             cost). Launches are stream-ordered, so replays run ahead of
//             the host and each replay reads the base set just before it.
//
// Each task checks its inputs' tags and writes its own, as on the host, with
// the dependence patterns and the kernel of tb_kernel.h (written once).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
extern "C" {
#include "mapp_error.h"
}
#include "tb_cuda_plan.h"
#include "tb_kernel.h"

namespace {

constexpr int kMaxDeps = TB_CUDA_MAX_DEPS;
constexpr int kMaxStreams = TB_CUDA_MAX_STREAMS;

__global__ void task_kernel(tb_tag *ring, long ring_steps, tb_config cfg, long s, long p, const long *base_t,
                            unsigned long long *errors, double *sink) {
  long t = *base_t + s, deps[kMaxDeps];
  int n = tb_deps_of(&cfg, t, p, deps);
  const tb_tag *prev = ring + ((t - 1 + ring_steps) % ring_steps) * cfg.width;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    if (prev[deps[i]].t != t - 1 || prev[deps[i]].p != deps[i]) atomicAdd(errors, 1ull);
    sum += prev[deps[i]].v;
  }
  sink[p] += tb_compute_kernel(cfg.iterations, (double)p);
  tb_tag mine = {t, p, tb_value(t, p, cfg.width, sum, n)};
  ring[(t % ring_steps) * cfg.width + p] = mine;
}

__global__ void set_base_kernel(long *base_t, long value) { *base_t = value; }

int check(cudaError_t err, const char *what) {
  if (err == cudaSuccess) return MAPP_OK;
  return mapp_fail(MAPP_ERR_SYSTEM, "%s failed: %s", what, cudaGetErrorString(err));
}
#define CUDA_TRY(call) MAPP_TRY(check((call), #call))

struct device_run {
  tb_config cfg;
  tb_cuda_plan plan;
  long ring_steps = 0;
  int nstreams = 1;
  tb_tag *ring = nullptr;
  unsigned long long *errors = nullptr;
  double *sink = nullptr;
  long *base_t = nullptr;      // the timestep a task's s counts from (eager: 0)
  tb_tag *host_last = nullptr; // pinned
  cudaStream_t streams[kMaxStreams] = {};
  std::vector<cudaEvent_t> done; // per (t % 2, p)
  cudaEvent_t fork = nullptr;
  tb_cuda_times times = {};
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int stream_of(const device_run &d, long p) { return tb_cuda_stream_of(&d.plan, p); }

int setup(device_run &d, const tb_config *cfg) {
  d.cfg = *cfg;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    return mapp_fail(MAPP_ERR_INPUT, "--backend cuda: no CUDA device here (%s)",
                     err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
  long W = cfg->width;
  MAPP_TRY(tb_cuda_plan_make(cfg, &d.plan));
  d.ring_steps = d.plan.ring_steps;
  d.nstreams = d.plan.nstreams;
  CUDA_TRY(cudaMalloc(&d.ring, sizeof(tb_tag) * (size_t)(d.ring_steps * W)));
  CUDA_TRY(cudaMemset(d.ring, 0xff, sizeof(tb_tag) * (size_t)(d.ring_steps * W)));
  CUDA_TRY(cudaMalloc(&d.errors, sizeof *d.errors));
  CUDA_TRY(cudaMemset(d.errors, 0, sizeof *d.errors));
  CUDA_TRY(cudaMalloc(&d.sink, sizeof(double) * (size_t)W));
  CUDA_TRY(cudaMemset(d.sink, 0, sizeof(double) * (size_t)W));
  CUDA_TRY(cudaMalloc(&d.base_t, sizeof *d.base_t));
  CUDA_TRY(cudaMemset(d.base_t, 0, sizeof *d.base_t));
  CUDA_TRY(cudaMallocHost(&d.host_last, sizeof(tb_tag) * (size_t)W));
  for (int i = 0; i < d.nstreams; ++i) CUDA_TRY(cudaStreamCreateWithFlags(&d.streams[i], cudaStreamNonBlocking));
  d.done.resize((size_t)d.plan.events);
  for (auto &e : d.done) CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  CUDA_TRY(cudaEventCreateWithFlags(&d.fork, cudaEventDisableTiming));
  return MAPP_OK;
}

void teardown(device_run &d) {
  for (auto &e : d.done) cudaEventDestroy(e);
  if (d.fork) cudaEventDestroy(d.fork);
  for (int i = 0; i < d.nstreams; ++i)
    if (d.streams[i]) cudaStreamDestroy(d.streams[i]);
  cudaFree(d.ring);
  cudaFree(d.errors);
  cudaFree(d.sink);
  cudaFree(d.base_t);
  cudaFreeHost(d.host_last);
}

// One task: wait for inputs produced on other streams, launch, record.
// t is the timestep whose dependences it waits for; the kernel runs
// timestep *d.base_t + s.
int launch_task(device_run &d, long t, long s, long p) {
  long waits[kMaxDeps];
  cudaStream_t st = d.streams[stream_of(d, p)];
  int n = tb_cuda_cross_waits(&d.cfg, &d.plan, t, p, waits);
  for (int i = 0; i < n; ++i) CUDA_TRY(cudaStreamWaitEvent(st, d.done[(size_t)waits[i]], 0));
  task_kernel<<<1, 1, 0, st>>>(d.ring, d.ring_steps, d.cfg, s, p, d.base_t, d.errors, d.sink);
  CUDA_TRY(cudaGetLastError());
  CUDA_TRY(cudaEventRecord(d.done[(size_t)tb_cuda_event_slot(&d.cfg, t, p)], st));
  return MAPP_OK;
}

// All streams after everything on all of them (a join on stream 0).
int join_streams(device_run &d) {
  for (int i = 1; i < d.nstreams; ++i) {
    CUDA_TRY(cudaEventRecord(d.fork, d.streams[i]));
    CUDA_TRY(cudaStreamWaitEvent(d.streams[0], d.fork, 0));
  }
  return MAPP_OK;
}

int fork_streams(device_run &d) {
  CUDA_TRY(cudaEventRecord(d.fork, d.streams[0]));
  for (int i = 1; i < d.nstreams; ++i) CUDA_TRY(cudaStreamWaitEvent(d.streams[i], d.fork, 0));
  return MAPP_OK;
}

int run_eager(device_run &d) {
  auto t0 = std::chrono::steady_clock::now();
  for (long t = 0; t < d.cfg.steps; ++t)
    for (long p = 0; p < d.cfg.width; ++p) MAPP_TRY(launch_task(d, t, t, p));
  MAPP_TRY(join_streams(d));
  d.times.launch_s = seconds_since(t0);
  d.times.launches = d.cfg.steps * d.cfg.width;
  return MAPP_OK;
}

// Capture graph_steps timesteps once; replay with the base timestep set.
int run_graph(device_run &d) {
  long S = d.cfg.graph_steps, W = d.cfg.width;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  CUDA_TRY(cudaStreamBeginCapture(d.streams[0], cudaStreamCaptureModeGlobal));
  int status = fork_streams(d);
  for (long s = 0; status == MAPP_OK && s < S; ++s)
    for (long p = 0; status == MAPP_OK && p < W; ++p) status = launch_task(d, s, s, p);
  if (status == MAPP_OK) status = join_streams(d);
  cudaError_t end = cudaStreamEndCapture(d.streams[0], &graph);
  MAPP_TRY(status);
  CUDA_TRY(end);
  CUDA_TRY(cudaGraphInstantiate(&exec, graph, 0));
  d.times.prepare_s = seconds_since(t0);
  for (long base = 0; status == MAPP_OK && base < d.cfg.steps; base += S) {
    auto update0 = std::chrono::steady_clock::now();
    set_base_kernel<<<1, 1, 0, d.streams[0]>>>(d.base_t, base); // the interpolation
    status = check(cudaGetLastError(), "the base timestep's kernel launch");
    auto launch0 = std::chrono::steady_clock::now();
    if (status == MAPP_OK) status = check(cudaGraphLaunch(exec, d.streams[0]), "cudaGraphLaunch");
    d.times.update_s += std::chrono::duration<double>(launch0 - update0).count();
    d.times.launch_s += seconds_since(launch0);
    d.times.launches++;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return status;
}

} // namespace

extern "C" int tb_cuda_run_timed(const tb_config *cfg, bool graph, tb_cuda_times *times, long *bad_tags,
                                 double *last_values) {
  device_run d;
  int status = setup(d, cfg);
  auto t0 = std::chrono::steady_clock::now();
  if (status == MAPP_OK) status = graph ? run_graph(d) : run_eager(d);
  long W = cfg->width, last = cfg->steps - 1;
  if (status == MAPP_OK)
    status = check(cudaMemcpyAsync(d.host_last, d.ring + (last % d.ring_steps) * W, sizeof(tb_tag) * (size_t)W,
                                   cudaMemcpyDeviceToHost, d.streams[0]),
                   "cudaMemcpyAsync");
  if (status == MAPP_OK) status = check(cudaStreamSynchronize(d.streams[0]), "cudaStreamSynchronize");
  d.times.total_s = seconds_since(t0);
  d.times.run_s = d.times.total_s - d.times.prepare_s;
  *times = d.times;
  unsigned long long errors = 0;
  if (status == MAPP_OK) status = check(cudaMemcpy(&errors, d.errors, sizeof errors, cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (status == MAPP_OK)
    for (long p = 0; p < W; ++p) {
      errors += d.host_last[p].t != last || d.host_last[p].p != p;
      last_values[p] = d.host_last[p].v;
    }
  *bad_tags = (long)errors;
  teardown(d);
  return status;
}

extern "C" int tb_cuda_run(const tb_config *cfg, bool graph, double *seconds, long *bad_tags, double *last_values) {
  tb_cuda_times times = {};
  int status = tb_cuda_run_timed(cfg, graph, &times, bad_tags, last_values);
  *seconds = times.total_s;
  return status;
}
