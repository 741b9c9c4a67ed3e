// The CUDA backend: the shared loop bodies of crm_kernel.h as one kernel
// per loop nest, every launch asynchronous on one stream (the report's
// answer to launch overhead; --sync synchronises after each launch to
// measure what that buys), cuFFT batched plans for the pressure, and the
// device memory one allocation laid out exactly as the host pool, so a
// device pointer is the host pointer's offset from the pool base.
//
// percrm launches each kernel once per instance; batched once for the
// group (or once per --chunk CRMs), one thread per (instance, level,
// column) point. --alloc per-phase allocates the advection's and the
// pressure's scratch on entry to each phase and frees it on exit, stream
// ordered (cudaMallocAsync / cudaFreeAsync, whose pool returns memory at
// every synchronisation: an allocation each time, as OpenACC's `enter data
// create` per subroutine); --memory managed puts the device copy in
// managed memory. Launches and host synchronisations are counted for the
// record.
#include <climits>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <cufft.h>

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
extern "C" {
#include "crm.h"
#include "crm_cuda_plan.h"
#include "crm_kernel.h"
}

namespace {

constexpr int kBlock = CRM_CUDA_BLOCK;

struct crm_cuda {
  bool sync;
  crm_alloc alloc;
  crm_memory memory;
  cudaStream_t stream;
  char *base;          // device copy of the pool
  crm_view dev;        // the host view's layout at device addresses
  cufftHandle forward_chunk, inverse_chunk, forward_tail, inverse_tail;
  unsigned long long *reduce; // device: max (double bits) or min (index)
  unsigned long long *pinned; // host copy of *reduce
};

crm_cuda *cuda_of(const crm_state *s) { return static_cast<crm_cuda *>(s->backend); }

int check(cudaError_t err, const char *what) {
  if (err == cudaSuccess) return MAPP_OK;
  return mapp_fail(MAPP_ERR_SYSTEM, "%s failed: %s", what, cudaGetErrorString(err));
}
#define CRM_CUDA(call) MAPP_TRY(check((call), #call))

int check_fft(cufftResult err, const char *what) {
  return err == CUFFT_SUCCESS ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "%s failed: cuFFT error %d", what, (int)err);
}
#define CRM_CUFFT(call) MAPP_TRY(check_fft((call), #call))

// ------------------------------------------------------------------ kernels

// Thread n of a launch over (instance c0 + .., row k in [k0, k0 + nk), column i).
struct cki {
  long c, k, i;
};
__device__ inline bool decompose(long nc, long k0, long nk, long nx, cki *p) {
  long n = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (n >= nc * nk * nx) return false;
  p->i = n % nx;
  p->k = k0 + n / nx % nk;
  p->c = n / nx / nk;
  return true;
}

// One thread per (instance, level) walking its row: the fallback for rows
// too long to stage in shared memory (below).
__global__ void k_forcing(crm_view v, long c0, long nc) {
  cki p;
  if (decompose(nc, 0, v.g.nz, 1, &p)) crm_force_level(&v, c0 + p.c, p.k);
}
__global__ void k_means(crm_view v, long c0, long nc) {
  cki p;
  if (decompose(nc, 0, v.g.nz, 1, &p)) crm_mean_theta_rho(&v, c0 + p.c, p.k);
}
__global__ void k_level_means(crm_view v, long c0, long nc) {
  cki p;
  if (decompose(nc, 0, v.g.nz, 1, &p)) crm_level_means(&v, c0 + p.c, p.k);
}

// ---- levels staged in shared memory ----
// Forcing and the level means reduce each (instance, level) row of nx
// columns in column order. A thread per row walking it made every warp load
// touch 32 rows at once: k_forcing took 3.64 ms and k_means 1.27 ms of a
// 29.7 ms step at 4096 CRMs, at 1.8 % of SM throughput (issue 9, Nsight
// Compute). Here a block stages up to CRM_CUDA_STAGE_ROWS rows (crm_cuda_plan_rows) with consecutive
// threads on consecutive columns (coalesced), one thread per row reduces its
// staged copy with the shared bodies in the same order (so the answer is
// the one-thread-per-row kernels'), and updates run column-parallel.

// The block's rows [r0, r0 + n) of a launch over nc instances x nz levels;
// a staged row is nx + 1 doubles long (the pad breaks bank conflicts
// between the row-reducing threads).
struct staged_rows {
  long r0, pitch;
  int n;
};
__device__ staged_rows block_rows(const crm_view &v, long nc, int per_block) {
  staged_rows b;
  b.r0 = (long)blockIdx.x * per_block;
  long left = nc * v.g.nz - b.r0;
  b.n = left < per_block ? (int)left : per_block;
  b.pitch = v.g.nx + 1;
  return b;
}
__device__ void row_at(const crm_view &v, long c0, long r, long *c, long *k) {
  *c = c0 + r / v.g.nz;
  *k = r % v.g.nz;
}
struct load_field {
  const double *field;
  __device__ double operator()(const crm_view &v, long c, long k, long i) const { return field[crm_ix(&v.g, c, k, i)]; }
};
struct load_theta_rho {
  __device__ double operator()(const crm_view &v, long c, long k, long i) const { return crm_theta_rho(&v, c, k, i); }
};
template <typename Load>
__device__ void stage(const crm_view &v, long c0, const staged_rows &b, double *rows, Load load) {
  long nx = v.g.nx;
  for (long e = threadIdx.x; e < b.n * nx; e += blockDim.x) {
    long row = e / nx, i = e % nx, c, k;
    row_at(v, c0, b.r0 + row, &c, &k);
    rows[row * b.pitch + i] = load(v, c, k, i);
  }
}

// Shared memory: t, qt, u rows, then one crm_forcing per row.
__global__ void k_forcing_staged(crm_view v, long c0, long nc, int per_block) {
  extern __shared__ double shared[];
  staged_rows b = block_rows(v, nc, per_block);
  long N = crm_field_size(&v.g), nx = v.g.nx, span = per_block * b.pitch;
  double *t = shared, *qt = shared + span, *u = shared + 2 * span;
  crm_forcing *f = reinterpret_cast<crm_forcing *>(shared + 3 * span);
  stage(v, c0, b, t, load_field{v.scal});
  stage(v, c0, b, qt, load_field{v.scal + N});
  stage(v, c0, b, u, load_field{v.u});
  __syncthreads();
  if (threadIdx.x < b.n) {
    long c, k, at = threadIdx.x * b.pitch;
    row_at(v, c0, b.r0 + threadIdx.x, &c, &k);
    f[threadIdx.x] = crm_forcing_of(&v, c, k, t + at, qt + at, u + at);
    crm_force_budget(&v, c, k, &f[threadIdx.x], qt + at);
  }
  __syncthreads();
  for (long e = threadIdx.x; e < b.n * nx; e += blockDim.x) {
    long row = e / nx, i = e % nx, c, k, at = row * b.pitch + i;
    row_at(v, c0, b.r0 + row, &c, &k);
    long n = crm_ix(&v.g, c, k, i);
    crm_force_point(&f[row], &t[at], &qt[at], &u[at]);
    v.scal[n] = t[at];
    v.scal[N + n] = qt[at];
    v.u[n] = u[at];
  }
}

__global__ void k_means_staged(crm_view v, long c0, long nc, int per_block) {
  extern __shared__ double shared[];
  staged_rows b = block_rows(v, nc, per_block);
  stage(v, c0, b, shared, load_theta_rho{});
  __syncthreads();
  if (threadIdx.x < b.n) {
    long c, k;
    row_at(v, c0, b.r0 + threadIdx.x, &c, &k);
    v.mean[crm_mean_ix(&v.g, CRM_MEAN_THR, c, k)] = crm_row_mean(shared + threadIdx.x * b.pitch, v.g.nx);
  }
}

// Shared memory: t, qt, u, qp rows.
__global__ void k_level_means_staged(crm_view v, long c0, long nc, int per_block) {
  extern __shared__ double shared[];
  staged_rows b = block_rows(v, nc, per_block);
  long N = crm_field_size(&v.g), span = per_block * b.pitch;
  stage(v, c0, b, shared, load_field{v.scal});
  stage(v, c0, b, shared + span, load_field{v.scal + N});
  stage(v, c0, b, shared + 2 * span, load_field{v.u});
  stage(v, c0, b, shared + 3 * span, load_field{v.scal + 2 * N});
  __syncthreads();
  if (threadIdx.x < b.n) {
    long c, k, at = threadIdx.x * b.pitch;
    row_at(v, c0, b.r0 + threadIdx.x, &c, &k);
    crm_store_level_means(&v, c, k, shared + at, shared + span + at, shared + 2 * span + at, shared + 3 * span + at);
  }
}
__global__ void k_momentum(crm_view v, crm_ab ab, long c0, long nc) {
  cki p;
  if (decompose(nc, 0, v.g.nz + 1, v.g.nx, &p)) crm_momentum_face(&v, &ab, c0 + p.c, p.k, p.i);
}
__global__ void k_pressure_rhs(crm_view v, long c0, long nc) {
  cki p;
  if (!decompose(nc, 0, v.g.rows, v.g.nx, &p)) return;
  if (p.k < v.g.nz) crm_pressure_rhs(&v, c0 + p.c, p.k, p.i);
  else v.phi[crm_ix(&v.g, c0 + p.c, p.k, p.i)] = 0.0; // FFT padding rows
}
__global__ void k_poisson(crm_view v, double dt, long c0, long nc) {
  cki p;
  if (decompose(nc, 0, v.g.nk, 1, &p)) crm_poisson_solve(&v, dt, c0 + p.c, p.k);
}
__global__ void k_correct(crm_view v, double dt, long c0, long nc) {
  cki p;
  if (decompose(nc, 0, v.g.nz + 1, v.g.nx, &p)) crm_pressure_correct(&v, dt, c0 + p.c, p.k, p.i);
}
// Scalars: the launch covers CRM_NSCALAR x nc instances; c indexes both.
__global__ void k_fluxes(crm_view v, double dt, long c0, long nc) {
  cki p;
  if (decompose(CRM_NSCALAR * nc, 0, v.g.nz + 1, v.g.nx, &p))
    crm_scalar_fluxes(&v, dt, (int)(p.c / nc), c0 + p.c % nc, p.k, p.i);
}
__global__ void k_limit(crm_view v, long c0, long nc) {
  cki p;
  if (decompose(CRM_NSCALAR * nc, 0, v.g.nz, v.g.nx, &p)) crm_scalar_limit(&v, (int)(p.c / nc), c0 + p.c % nc, p.k, p.i);
}
__global__ void k_update(crm_view v, long c0, long nc) {
  cki p;
  if (decompose(CRM_NSCALAR * nc, 0, v.g.nz, v.g.nx, &p)) crm_scalar_update(&v, (int)(p.c / nc), c0 + p.c % nc, p.k, p.i);
}
__global__ void k_micro(crm_view v, long c0, long nc) {
  cki p;
  if (decompose(nc, 0, v.g.nz, v.g.nx, &p)) crm_micro_cell(&v, c0 + p.c, p.k, p.i);
}
__global__ void k_fall(crm_view v, int cycles, long c0, long nc) {
  cki p;
  if (decompose(nc, 0, 1, v.g.nx, &p)) crm_fall_column(&v, c0 + p.c, p.i, cycles);
}

// Group maxima of non-negative values: IEEE order of non-negative doubles
// is the order of their bit patterns, so integer max reduces them (and a
// NaN, whose pattern is above infinity's, wins and reaches the guard).
// Each block reduces its threads' values with warp shuffles and shared
// memory and issues one atomic: a thread per cell each doing an atomic on
// one global word serialised there and took 65 % of a 4096-CRM step (issue
// 9, Nsight Compute). Max and min are exact in any order, so the answer
// does not change.
struct max_op {
  static constexpr unsigned long long identity = 0ull;
  __device__ static unsigned long long apply(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
  __device__ static void atomic(unsigned long long *out, unsigned long long v) { atomicMax(out, v); }
};
struct min_op {
  static constexpr unsigned long long identity = ULLONG_MAX;
  __device__ static unsigned long long apply(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
  __device__ static void atomic(unsigned long long *out, unsigned long long v) { atomicMin(out, v); }
};

// Every thread of the block must call this (out-of-range ones with Op::identity).
template <typename Op> __device__ void block_reduce_atomic(unsigned long long v, unsigned long long *out) {
  constexpr int kWarps = kBlock / 32;
  __shared__ unsigned long long partial[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) v = Op::apply(v, __shfl_down_sync(0xffffffffu, v, offset));
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp != 0) return;
  v = lane < kWarps ? partial[lane] : Op::identity;
  for (int offset = 16; offset > 0; offset /= 2) v = Op::apply(v, __shfl_down_sync(0xffffffffu, v, offset));
  if (lane == 0 && v != Op::identity) Op::atomic(out, v);
}

__global__ void k_max_cfl(crm_view v, unsigned long long *out) {
  cki p;
  unsigned long long bits = max_op::identity;
  if (decompose(v.g.ninst, 0, v.g.nz, v.g.nx, &p))
    bits = (unsigned long long)__double_as_longlong(crm_cfl_cell(&v, v.dt, p.c, p.k, p.i));
  block_reduce_atomic<max_op>(bits, out);
}
__global__ void k_max_fall_cfl(crm_view v, unsigned long long *out) {
  cki p;
  unsigned long long bits = max_op::identity;
  if (decompose(v.g.ninst, 0, v.g.nz, v.g.nx, &p))
    bits = (unsigned long long)__double_as_longlong(crm_fall_cfl_cell(&v, p.c, p.k, p.i));
  block_reduce_atomic<max_op>(bits, out);
}
__global__ void k_first_nonfinite(crm_view v, unsigned long long *out) {
  long n = blockIdx.x * (long)blockDim.x + threadIdx.x, N = crm_field_size(&v.g);
  unsigned long long first = min_op::identity;
  if (n < CRM_GUARDED_FIELDS * N && !isfinite(crm_guarded_field(&v, (int)(n / N))[n % N])) first = (unsigned long long)n;
  block_reduce_atomic<min_op>(first, out);
}

// ------------------------------------------------------------------ launches

// `blocks` blocks of kBlock threads with `shared` bytes of dynamic shared memory.
// The host waits for the stream (counted: the record's host_syncs).
int wait_stream(crm_state *s) {
  ++s->host_syncs;
  CRM_CUDA(cudaStreamSynchronize(cuda_of(s)->stream));
  return MAPP_OK;
}

// After each launch (kernel or FFT): counted, and waited for with --sync.
int launched(crm_state *s) {
  ++s->launches;
  return cuda_of(s)->sync ? wait_stream(s) : MAPP_OK;
}

template <typename... Kargs, typename... Args>
int launch_blocks(crm_state *s, void (*kernel)(Kargs...), long blocks, size_t shared, Args... args) {
  crm_cuda *b = cuda_of(s);
  if (blocks <= 0) return MAPP_OK;
  kernel<<<(unsigned)blocks, kBlock, shared, b->stream>>>(args...);
  CRM_CUDA(cudaGetLastError());
  return launched(s);
}

template <typename... Kargs, typename... Args>
int launch(crm_state *s, void (*kernel)(Kargs...), long threads, Args... args) {
  return launch_blocks(s, kernel, crm_cuda_blocks(threads), 0, args...);
}

// One device scalar reduced by `kernel`, back on the host (a sync point).
template <typename... Kargs>
int reduce(crm_state *s, void (*kernel)(Kargs...), long threads, unsigned long long init,
           unsigned long long *result) {
  crm_cuda *b = cuda_of(s);
  *b->pinned = init;
  CRM_CUDA(cudaMemcpyAsync(b->reduce, b->pinned, sizeof *b->reduce, cudaMemcpyHostToDevice, b->stream));
  MAPP_TRY(launch(s, kernel, threads, b->dev, b->reduce));
  CRM_CUDA(cudaMemcpyAsync(b->pinned, b->reduce, sizeof *b->reduce, cudaMemcpyDeviceToHost, b->stream));
  MAPP_TRY(wait_stream(s));
  *result = *b->pinned;
  return MAPP_OK;
}

long points(crm_range r, long rows, long cols) { return r.count * rows * cols; }

// The range's (instance, level) rows by a staged kernel, as many rows a
// block as its shared memory holds (each `fields` staged copies plus
// `extra` bytes), or by the thread-per-row fallback when not one fits.
template <typename... Sargs, typename... Fargs>
int launch_rows(crm_state *s, crm_range r, void (*staged)(Sargs...), void (*fallback)(Fargs...), int fields,
                size_t extra) {
  const crm_view &v = cuda_of(s)->dev;
  long rows = points(r, s->g.nz, 1);
  crm_cuda_rows_launch plan = crm_cuda_plan_rows(s->g.nx, rows, fields, extra);
  if (plan.rows_per_block == 0) return launch(s, fallback, rows, v, r.first, r.count);
  return launch_blocks(s, staged, plan.blocks, plan.shared_bytes, v, r.first, r.count, plan.rows_per_block);
}

int op_forcing(crm_state *s, crm_range r) {
  return launch_rows(s, r, k_forcing_staged, k_forcing, 3, sizeof(crm_forcing));
}
int op_means(crm_state *s, crm_range r) {
  return launch_rows(s, r, k_means_staged, k_means, 1, 0);
}
int op_momentum(crm_state *s, crm_range r, const crm_ab *ab) {
  return launch(s, k_momentum, points(r, s->g.nz + 1, s->g.nx), cuda_of(s)->dev, *ab, r.first, r.count);
}

// --alloc per-phase: `count` doubles for one of the phase's scratch arrays
// (*ptr, a device address of the view the phase's kernels take), and their
// release at the phase's end.
int phase_alloc(crm_state *s, double **ptr, long count) {
  crm_cuda *b = cuda_of(s);
  CRM_CUDA(cudaMallocAsync(reinterpret_cast<void **>(ptr), sizeof(double) * (size_t)count, b->stream));
  return MAPP_OK;
}
int phase_free(crm_state *s, double *const *ptrs, int n) {
  for (int i = 0; i < n; ++i) CRM_CUDA(cudaFreeAsync(ptrs[i], cuda_of(s)->stream));
  return MAPP_OK;
}

// The rows of block r (a chunk, or the shorter last block) by the plan of
// its size on its slab of v's arrays.
int transform(crm_state *s, const crm_view &v, crm_range r, bool forward) {
  crm_cuda *b = cuda_of(s);
  bool whole = r.count == s->chunk;
  double *x = v.phi + r.first * s->g.stride;
  cufftDoubleComplex *y = reinterpret_cast<cufftDoubleComplex *>(v.spec) + r.first * s->g.cstride;
  if (forward) CRM_CUFFT(cufftExecD2Z(whole ? b->forward_chunk : b->forward_tail, x, y));
  else CRM_CUFFT(cufftExecZ2D(whole ? b->inverse_chunk : b->inverse_tail, y, x));
  return launched(s);
}

int op_pressure(crm_state *s, crm_range r, double dt) {
  crm_cuda *b = cuda_of(s);
  crm_view v = b->dev;
  long F = crm_field_size(&s->g);
  bool own = b->alloc == CRM_ALLOC_PER_PHASE;
  if (own) {
    MAPP_TRY(phase_alloc(s, &v.phi, F));
    MAPP_TRY(phase_alloc(s, &v.spec, 2 * s->g.ninst * s->g.cstride));
  }
  MAPP_TRY(launch(s, k_pressure_rhs, points(r, s->g.rows, s->g.nx), v, r.first, r.count));
  MAPP_TRY(transform(s, v, r, true));
  MAPP_TRY(launch(s, k_poisson, points(r, s->g.nk, 1), v, dt, r.first, r.count));
  MAPP_TRY(transform(s, v, r, false));
  MAPP_TRY(launch(s, k_correct, points(r, s->g.nz + 1, s->g.nx), v, dt, r.first, r.count));
  double *const scratch[] = {v.phi, v.spec};
  return own ? phase_free(s, scratch, 2) : MAPP_OK;
}

int op_advect(crm_state *s, crm_range r, double dt) {
  crm_cuda *b = cuda_of(s);
  crm_view v = b->dev;
  double **scratch[] = {&v.low, &v.limit, &v.flux_x, &v.flux_z, &v.anti_x, &v.anti_z};
  bool own = b->alloc == CRM_ALLOC_PER_PHASE;
  if (own)
    for (double **p : scratch) MAPP_TRY(phase_alloc(s, p, CRM_NSCALAR * crm_field_size(&s->g)));
  long n = CRM_NSCALAR * r.count * s->g.nx;
  MAPP_TRY(launch(s, k_fluxes, n * (s->g.nz + 1), v, dt, r.first, r.count));
  MAPP_TRY(launch(s, k_limit, n * s->g.nz, v, r.first, r.count));
  MAPP_TRY(launch(s, k_update, n * s->g.nz, v, r.first, r.count));
  double *const owned[] = {v.low, v.limit, v.flux_x, v.flux_z, v.anti_x, v.anti_z};
  return own ? phase_free(s, owned, 6) : MAPP_OK;
}

int op_micro(crm_state *s, crm_range r) {
  return launch(s, k_micro, points(r, s->g.nz, s->g.nx), cuda_of(s)->dev, r.first, r.count);
}
int op_fall(crm_state *s, crm_range r, int cycles) {
  return launch(s, k_fall, points(r, 1, s->g.nx), cuda_of(s)->dev, cycles, r.first, r.count);
}

int as_double(unsigned long long bits, double *out) {
  memcpy(out, &bits, sizeof *out);
  return MAPP_OK;
}

int op_max_cfl(crm_state *s, double *cfl) {
  unsigned long long bits;
  MAPP_TRY(reduce(s, k_max_cfl, s->g.ninst * s->g.nz * s->g.nx, 0ull, &bits));
  return as_double(bits, cfl);
}
int op_max_fall_cfl(crm_state *s, double *cfl) {
  unsigned long long bits;
  MAPP_TRY(reduce(s, k_max_fall_cfl, s->g.ninst * s->g.nz * s->g.nx, 0ull, &bits));
  return as_double(bits, cfl);
}
int op_first_nonfinite(crm_state *s, long *where) {
  unsigned long long first;
  MAPP_TRY(reduce(s, k_first_nonfinite, CRM_GUARDED_FIELDS * crm_field_size(&s->g), ULLONG_MAX, &first));
  *where = first == ULLONG_MAX ? -1 : (long)first;
  return MAPP_OK;
}

// Host <-> device: whole pool, or one array at its pool offset.
int copy(crm_state *s, double *host_ptr, size_t bytes, bool to_host) {
  crm_cuda *b = cuda_of(s);
  char *dev = b->base + (reinterpret_cast<char *>(host_ptr) - s->pool.base);
  CRM_CUDA(to_host ? cudaMemcpyAsync(host_ptr, dev, bytes, cudaMemcpyDeviceToHost, b->stream)
                   : cudaMemcpyAsync(dev, host_ptr, bytes, cudaMemcpyHostToDevice, b->stream));
  return MAPP_OK;
}

int move(crm_state *s, int what, bool to_host) {
  const crm_view &h = s->host;
  long M = s->g.ninst * s->g.rows;
  if (what == CRM_SYNC_ALL) MAPP_TRY(copy(s, reinterpret_cast<double *>(s->pool.base), s->pool.capacity, to_host));
  if (what == CRM_SYNC_DIAG) {
    MAPP_TRY(copy(s, h.mean, sizeof(double) * CRM_NMEAN * M, to_host));
    MAPP_TRY(copy(s, h.precip, sizeof(double) * s->g.ninst * s->g.nx, to_host));
  }
  if (what == CRM_SYNC_COLUMNS) MAPP_TRY(copy(s, h.col, sizeof(double) * 3 * M, to_host));
  return wait_stream(s);
}
int op_to_host(crm_state *s, int what) { return move(s, what, true); }
int op_to_device(crm_state *s, int what) { return move(s, what, false); }

int op_level_means(crm_state *s, crm_range r) {
  return launch_rows(s, r, k_level_means_staged, k_level_means, 4, 0);
}

void op_release(crm_state *s) {
  crm_cuda *b = cuda_of(s);
  if (!b) return;
  cufftHandle plans[] = {b->forward_chunk, b->inverse_chunk, b->forward_tail, b->inverse_tail};
  for (cufftHandle p : plans)
    if (p) cufftDestroy(p);
  cudaFree(b->base);
  cudaFree(b->reduce);
  cudaFreeHost(b->pinned);
  if (b->stream) cudaStreamDestroy(b->stream);
  free(b);
  s->backend = nullptr;
}

const crm_ops cuda_ops = {
    "cuda",        op_forcing, op_max_cfl,     op_means,         op_momentum,
    op_pressure,   op_advect,  op_micro,       op_max_fall_cfl,  op_fall,
    op_level_means, op_first_nonfinite, op_to_host, op_to_device, op_release,
};

// Every pointer of the host view, moved to the same pool offset on the device.
crm_view device_view(const crm_state *s, char *base) {
  crm_view d = s->host;
  auto at = [&](double *p) { return reinterpret_cast<double *>(base + (reinterpret_cast<char *>(p) - s->pool.base)); };
  double **fields[] = {&d.u, &d.w, &d.us, &d.ws, &d.tend_u[0], &d.tend_u[1], &d.tend_u[2],
                       &d.tend_w[0], &d.tend_w[1], &d.tend_w[2], &d.scal, &d.qc, &d.low, &d.limit,
                       &d.flux_x, &d.flux_z, &d.anti_x, &d.anti_z, &d.phi, &d.spec, &d.lu_c,
                       &d.lu_inv, &d.precip, &d.rho, &d.rhof, &d.pres, &d.exner, &d.zc, &d.col,
                       &d.ls, &d.mean, &d.source, &d.lambda};
  for (double **f : fields) *f = at(*f);
  return d;
}

// Real FFT plans on the stream for a block of n CRMs (rows of nx reals to
// rows of nk complex values, contiguous: cuFFT's basic layout).
int plan_pair(crm_state *s, long n, cufftHandle *forward, cufftHandle *inverse) {
  long rows = n * s->g.rows;
  if (rows > INT_MAX || s->g.nx > INT_MAX)
    return mapp_fail(MAPP_ERR_INPUT, "%ld FFT rows exceed what cuFFT's plan can batch", rows);
  int nx = (int)s->g.nx;
  CRM_CUFFT(cufftPlanMany(forward, 1, &nx, nullptr, 1, 0, nullptr, 1, 0, CUFFT_D2Z, (int)rows));
  CRM_CUFFT(cufftPlanMany(inverse, 1, &nx, nullptr, 1, 0, nullptr, 1, 0, CUFFT_Z2D, (int)rows));
  CRM_CUFFT(cufftSetStream(*forward, cuda_of(s)->stream));
  CRM_CUFFT(cufftSetStream(*inverse, cuda_of(s)->stream));
  return MAPP_OK;
}

// A plan pair for a chunk and, when the chunk does not divide the CRMs,
// one for the shorter last block.
int make_plans(crm_state *s, crm_cuda *b) {
  MAPP_TRY(plan_pair(s, s->chunk, &b->forward_chunk, &b->inverse_chunk));
  long tail = s->g.ninst % s->chunk;
  return tail ? plan_pair(s, tail, &b->forward_tail, &b->inverse_tail) : MAPP_OK;
}

// Ranks on a node share its GPUs round-robin by their node-local rank.
int pick_device() {
  int count = 0;
  CRM_CUDA(cudaGetDeviceCount(&count));
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (!local) local = getenv("SLURM_LOCALID");
  int rank = local ? atoi(local) : 0;
  CRM_CUDA(cudaSetDevice(rank % count));
  return MAPP_OK;
}

int attach(crm_state *s, crm_cuda *b) {
  MAPP_TRY(pick_device());
  CRM_CUDA(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
  if (b->memory == CRM_MEMORY_MANAGED) CRM_CUDA(cudaMallocManaged(&b->base, s->pool.capacity));
  else CRM_CUDA(cudaMalloc(&b->base, s->pool.capacity));
  CRM_CUDA(cudaMalloc(&b->reduce, sizeof *b->reduce));
  CRM_CUDA(cudaMallocHost(&b->pinned, sizeof *b->pinned));
  b->dev = device_view(s, b->base);
  MAPP_TRY(make_plans(s, b));
  return op_to_device(s, CRM_SYNC_ALL);
}

} // namespace

extern "C" int crm_cuda_check_fits(size_t bytes, const crm_grid *g) {
  MAPP_TRY(pick_device());
  size_t free_bytes = 0, total_bytes = 0, fft_bytes = 0, plan_bytes = 0;
  CRM_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  long all = g->ninst * g->rows;
  if (all <= INT_MAX && g->nx <= INT_MAX) { // beyond, make_plans refuses with its own message
    int n = (int)g->nx;
    CRM_CUFFT(cufftEstimateMany(1, &n, nullptr, 1, 0, nullptr, 1, 0, CUFFT_D2Z, (int)all, &plan_bytes));
    fft_bytes += plan_bytes;
    CRM_CUFFT(cufftEstimateMany(1, &n, nullptr, 1, 0, nullptr, 1, 0, CUFFT_Z2D, (int)all, &plan_bytes));
    fft_bytes += plan_bytes;
  }
  double need = (double)bytes + (double)fft_bytes, gib = 1024.0 * 1024.0 * 1024.0;
  if (need > (double)free_bytes)
    return mapp_fail(MAPP_ERR_INPUT,
                     "%ld CRMs need %.3g GiB on the GPU (%.3g GiB of state, %.3g GiB of FFT workspace), "
                     "the device has %.3g GiB free of %.3g GiB",
                     g->ninst, need / gib, (double)bytes / gib, (double)fft_bytes / gib, (double)free_bytes / gib,
                     (double)total_bytes / gib);
  return MAPP_OK;
}

extern "C" int crm_cuda_attach(crm_state *s) {
  crm_cuda *b;
  MAPP_TRY(mapp_calloc(reinterpret_cast<void **>(&b), 1, sizeof *b, "the CUDA backend"));
  b->sync = s->exec.sync;
  b->alloc = s->exec.alloc;
  b->memory = s->exec.memory;
  s->backend = b;
  s->ops = &cuda_ops;
  return attach(s, b);
}
