/* The CUDA backend: wavefields, model and image accumulators on the
 * device; the stencil is snap_kernel.h's snap_update, the same per-point
 * code the CPU runs. A snapshot is packed on the compute stream after the
 * step that produced it, then copied on the copy stream while the next
 * step computes: into the store's (page-locked) staging buffer, for the
 * host and disk layers as on the CPU; or, for the device tier, packed
 * straight into a slot of its pool (snap_cuda_device_ops) on the compute
 * stream, where the adjoint's imaging reads it in place. The event
 * `produced` orders a host-bound copy after its pack; the host waits for
 * the previous copy before packing the next snapshot into the buffer.
 * In the adjoint a host snapshot goes in the other way on the copy stream,
 * through page-locked staging slots (snap_cuda_plan.h's ring), while the
 * step before its imaging still runs; events order the imaging after the
 * copy and a slot's next copy after that imaging, so the host never waits
 * for the device in a step. Injection values are staged the same way but
 * copied on the compute stream: they are small, and on the copy stream
 * they would queue behind the forward's snapshot copies. Halo planes along
 * x are staged through pinned host buffers for MPI.
 *
 * Without a GPU the driver refuses --backend cuda before any of this runs
 * (mapp_select_backend: no device is an input error). */
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <hdf5.h>
#include <jansson.h>
#include <mpi.h>

extern "C" {
#include "mapp_halo_nd.h"
#include "snap_cuda_plan.h"
#include "snapshots.h"
}

namespace {

struct weights {
  double w[SNAP_MAX_RADIUS + 1];
};

constexpr int kSlots = SNAP_CUDA_STAGING_SLOTS;

/* Host-to-device staging: per slot a page-locked host buffer the host fills
 * and a device buffer the copy lands in; `copied` is recorded after a
 * slot's copy, `read` after the kernel that read its device buffer. */
template <typename T> struct staging_slots {
  T *host[kSlots] = {};
  T *device[kSlots] = {};
  size_t count = 0; /* elements per slot */
  cudaEvent_t copied[kSlots] = {}, read[kSlots] = {};
  snap_staging_ring ring = {kSlots, 0};
};

struct device_state {
  cudaStream_t compute = nullptr, copy = nullptr;
  cudaEvent_t produced = nullptr;  /* on compute: a snapshot is packed */
  double *pack = nullptr;          /* device interior buffer for snapshots */
  size_t pack_bytes = 0;
  long *idx = nullptr;             /* device indices and values for inject/sample */
  double *vals = nullptr;
  size_t idx_cap = 0;
  double *halo_host = nullptr;     /* pinned: send lo, send hi, recv lo, recv hi */
  size_t halo_count = 0;
  const void *registered[64];      /* store buffers page-locked so far */
  int nregistered = 0;
  staging_slots<double> image;     /* adjoint: snapshots in */
  staging_slots<long> inject_idx;  /* injection points and values in */
  staging_slots<double> inject_vals;
};
device_state dev;

int check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return MAPP_OK;
  return mapp_fail(MAPP_ERR_SYSTEM, "cuda: %s: %s", what, cudaGetErrorString(e));
}

int ensure_streams() {
  if (!dev.compute)
    MAPP_TRY(check(cudaStreamCreateWithFlags(&dev.compute, cudaStreamNonBlocking), "creating the compute stream"));
  if (!dev.copy) MAPP_TRY(check(cudaStreamCreateWithFlags(&dev.copy, cudaStreamNonBlocking), "creating the copy stream"));
  if (!dev.produced) MAPP_TRY(check(cudaEventCreateWithFlags(&dev.produced, cudaEventDisableTiming), "creating an event"));
  return MAPP_OK;
}

/* The device interior buffer snapshots are packed into (sized once: every
 * snapshot has the same size; only reallocated, synchronously, if not). */
int ensure_pack(size_t bytes) {
  if (bytes <= dev.pack_bytes) return MAPP_OK;
  MAPP_TRY(check(cudaDeviceSynchronize(), "finishing the work on the old snapshot buffer"));
  MAPP_TRY(check(cudaFree(dev.pack), "freeing the old snapshot buffer"));
  dev.pack = nullptr, dev.pack_bytes = 0;
  MAPP_TRY(check(cudaMalloc(&dev.pack, bytes), "allocating the snapshot buffer"));
  dev.pack_bytes = bytes;
  return MAPP_OK;
}

int ensure_scratch(long n) {
  if ((size_t)n <= dev.idx_cap) return MAPP_OK;
  cudaFree(dev.idx), cudaFree(dev.vals);
  MAPP_TRY(check(cudaMalloc(&dev.idx, sizeof(long) * n), "allocating index scratch"));
  MAPP_TRY(check(cudaMalloc(&dev.vals, sizeof(double) * n), "allocating value scratch"));
  dev.idx_cap = (size_t)n;
  return MAPP_OK;
}

struct dims {
  long n0, n1, n2, pn1, pn2, p0, p1, p2, s0, s1, s2;
};

dims dims_of(const snap_grid *g) {
  return dims{g->n[0], g->n[1], g->n[2], g->pn[1], g->pn[2], g->pad[0], g->pad[1], g->pad[2],
              g->stride[0], g->stride[1], g->stride[2]};
}

__device__ long padded_at(const dims &d, long i, long j, long k) {
  return (i + d.p0) * d.pn1 * d.pn2 + (j + d.p1) * d.pn2 + (k + d.p2);
}

__global__ void step_kernel(dims d, int radius, weights w, const double *ratio, const double *inv_a, double *next,
                            const double *cur, const double *prev) {
  long n = d.n0 * d.n1 * d.n2;
  for (long t = blockIdx.x * (long)blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
    long k = t % d.n2, j = (t / d.n2) % d.n1, i = t / (d.n2 * d.n1);
    long at = padded_at(d, i, j, k);
    next[at] = snap_update(cur, prev, at, d.s0, d.s1, d.s2, radius, w.w, ratio[at], inv_a[at]);
  }
}

__global__ void image_kernel(dims d, double *grad, const double *snap, const double *next, const double *cur,
                             const double *prev, double *abs_d2) {
  long n = d.n0 * d.n1 * d.n2;
  for (long t = blockIdx.x * (long)blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
    long k = t % d.n2, j = (t / d.n2) % d.n1, i = t / (d.n2 * d.n1);
    long at = padded_at(d, i, j, k);
    grad[at] += snap_image(snap[t], next[at], cur[at], prev[at]);
    if (abs_d2) abs_d2[at] += fabs(next[at] - 2.0 * cur[at] + prev[at]);
  }
}

__global__ void pack_kernel(dims d, const double *field, double *out) {
  long n = d.n0 * d.n1 * d.n2;
  for (long t = blockIdx.x * (long)blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
    long k = t % d.n2, j = (t / d.n2) % d.n1, i = t / (d.n2 * d.n1);
    out[t] = field[padded_at(d, i, j, k)];
  }
}

/* Grid-stride like the others: an interior-sized injection may need more
 * threads than the grid's capped block count holds. */
__global__ void inject_kernel(const double *inv_a, double *field, const long *idx, const double *vals, long n) {
  for (long r = blockIdx.x * (long)blockDim.x + threadIdx.x; r < n; r += (long)gridDim.x * blockDim.x)
    if (idx[r] >= 0) field[idx[r]] += vals[r] * inv_a[idx[r]];
}

__global__ void sample_kernel(const double *field, const long *idx, double *out, long n) {
  for (long r = blockIdx.x * (long)blockDim.x + threadIdx.x; r < n; r += (long)gridDim.x * blockDim.x)
    out[r] = idx[r] >= 0 ? field[idx[r]] : 0.0;
}

unsigned blocks_for(long n) { return snap_cuda_blocks(n); }
constexpr int kThreads = SNAP_CUDA_THREADS;

/* The slots' buffers hold `count` elements (grown, after the device has
 * finished with the old ones); the events are made once. */
template <typename T> int ensure_slots(staging_slots<T> &st, size_t count, const char *what) {
  if (!st.copied[0])
    for (int s = 0; s < kSlots; s++) {
      MAPP_TRY(check(cudaEventCreateWithFlags(&st.copied[s], cudaEventDisableTiming), "creating a staging event"));
      MAPP_TRY(check(cudaEventCreateWithFlags(&st.read[s], cudaEventDisableTiming), "creating a staging event"));
    }
  if (count <= st.count) return MAPP_OK;
  MAPP_TRY(check(cudaDeviceSynchronize(), "finishing the work on the old staging slots"));
  for (int s = 0; s < kSlots; s++) {
    cudaFreeHost(st.host[s]), cudaFree(st.device[s]);
    st.host[s] = nullptr, st.device[s] = nullptr;
  }
  st.count = 0;
  for (int s = 0; s < kSlots; s++) {
    MAPP_TRY(check(cudaMallocHost(&st.host[s], sizeof(T) * count), what));
    MAPP_TRY(check(cudaMalloc(&st.device[s], sizeof(T) * count), what));
  }
  st.count = count;
  return MAPP_OK;
}

/* The next slot of st, free for the host to fill: its previous copy has
 * left the host buffer, and the stream `by` that copies into it will not
 * overwrite the device buffer before the kernel that read it has run. */
template <typename T> int take_slot(staging_slots<T> &st, cudaStream_t by, int *slot) {
  snap_staging_use use = snap_staging_take(&st.ring);
  *slot = use.slot;
  if (!use.reuse) return MAPP_OK;
  MAPP_TRY(check(cudaEventSynchronize(st.copied[use.slot]), "an earlier copy from a staging slot"));
  return check(cudaStreamWaitEvent(by, st.read[use.slot], 0), "ordering a copy after its slot's reader");
}

/* count elements of `from` to the slot's device buffer on stream `by`,
 * then the compute stream's next kernels after that copy. `from` is the
 * slot's host buffer, or a page-locked buffer of the caller. */
template <typename T> int copy_in(staging_slots<T> &st, cudaStream_t by, int slot, const T *from, size_t count) {
  MAPP_TRY(check(cudaMemcpyAsync(st.device[slot], from, sizeof(T) * count, cudaMemcpyHostToDevice, by),
                 "copying to the device"));
  MAPP_TRY(check(cudaEventRecord(st.copied[slot], by), "recording a staging copy"));
  return check(cudaStreamWaitEvent(dev.compute, st.copied[slot], 0), "ordering a kernel after its copy");
}

bool page_locked(const void *p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError(); /* not sticky: a pageable pointer is an answer, not a failure */
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

int cuda_alloc(const snap_grid *g, double **field) {
  MAPP_TRY(ensure_streams());
  MAPP_TRY(check(cudaMalloc(field, sizeof(double) * g->padded), "allocating a wavefield"));
  return check(cudaMemset(*field, 0, sizeof(double) * g->padded), "zeroing a wavefield");
}

void cuda_release(double *field) { cudaFree(field); }

int cuda_set_coeffs(const snap_problem *p, const double *m, snap_coeffs *k) {
  const snap_grid *g = &p->grid;
  size_t bytes = sizeof(double) * g->padded;
  double *host = (double *)calloc(2 * (size_t)g->padded, sizeof(double));
  if (!host) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory staging the model (%zu bytes)", 2 * bytes);
  snap_fill_coeffs(p, m, host, host + g->padded);
  double **dst[2] = {&k->ratio, &k->inv_a};
  int status = MAPP_OK;
  for (int a = 0; a < 2 && !status; a++) {
    status = check(cudaMalloc(dst[a], bytes), "allocating the model");
    if (!status) status = check(cudaMemcpy(*dst[a], host + a * g->padded, bytes, cudaMemcpyHostToDevice), "copying the model");
  }
  free(host);
  return status;
}

void cuda_free_coeffs(snap_coeffs *k) {
  cudaFree(k->ratio), cudaFree(k->inv_a);
  k->ratio = k->inv_a = nullptr;
}

void cuda_step(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev) {
  weights w;
  memcpy(w.w, g->w, sizeof w.w);
  step_kernel<<<blocks_for(g->interior), kThreads, 0, dev.compute>>>(dims_of(g), g->radius, w, k->ratio, k->inv_a, next,
                                                                cur, prev);
}

/* The caller's arrays may change after return, so they are copied into a
 * staging slot first; the host then goes on without waiting for the
 * device (the op has no status: a failure here shows as a wrong answer,
 * and the device's errors at the next synchronisation). */
int inject_async(const snap_coeffs *k, double *field, const long *idx, const double *values, long n) {
  int at, vat; /* the two rings move in step: vat == at */
  MAPP_TRY(ensure_streams());
  MAPP_TRY(ensure_slots(dev.inject_idx, (size_t)n, "allocating injection staging"));
  MAPP_TRY(ensure_slots(dev.inject_vals, (size_t)n, "allocating injection staging"));
  MAPP_TRY(take_slot(dev.inject_idx, dev.compute, &at));
  MAPP_TRY(take_slot(dev.inject_vals, dev.compute, &vat));
  memcpy(dev.inject_idx.host[at], idx, sizeof(long) * n);
  memcpy(dev.inject_vals.host[vat], values, sizeof(double) * n);
  MAPP_TRY(copy_in(dev.inject_idx, dev.compute, at, dev.inject_idx.host[at], (size_t)n));
  MAPP_TRY(copy_in(dev.inject_vals, dev.compute, vat, dev.inject_vals.host[vat], (size_t)n));
  inject_kernel<<<blocks_for(n), kThreads, 0, dev.compute>>>(k->inv_a, field, dev.inject_idx.device[at],
                                                             dev.inject_vals.device[vat], n);
  MAPP_TRY(check(cudaGetLastError(), "launching an injection"));
  MAPP_TRY(check(cudaEventRecord(dev.inject_idx.read[at], dev.compute), "recording an injection"));
  return check(cudaEventRecord(dev.inject_vals.read[vat], dev.compute), "recording an injection");
}

void cuda_inject(const snap_coeffs *k, double *field, const long *idx, const double *values, long n) {
  if (n > 0) (void)inject_async(k, field, idx, values, n);
}

void cuda_sample(const double *field, const long *idx, double *out, long n) {
  if (n <= 0 || ensure_scratch(n)) return;
  cudaMemcpyAsync(dev.idx, idx, sizeof(long) * n, cudaMemcpyHostToDevice, dev.compute);
  sample_kernel<<<blocks_for(n), kThreads, 0, dev.compute>>>(field, dev.idx, dev.vals, n);
  cudaMemcpyAsync(out, dev.vals, sizeof(double) * n, cudaMemcpyDeviceToHost, dev.compute);
  cudaStreamSynchronize(dev.compute);
}

int cuda_exchange(const snap_grid *g, double *field) {
  if (g->left == MPI_PROC_NULL && g->right == MPI_PROC_NULL) return MAPP_OK;
  long count = g->stride[0] * g->radius;
  if ((size_t)count > dev.halo_count) {
    cudaFreeHost(dev.halo_host);
    MAPP_TRY(check(cudaMallocHost(&dev.halo_host, 4 * sizeof(double) * count), "allocating pinned halo buffers"));
    dev.halo_count = (size_t)count;
  }
  double *send_lo = dev.halo_host, *send_hi = send_lo + count, *recv_lo = send_hi + count, *recv_hi = recv_lo + count;
  double *first_owned = field + count, *past_owned = field + count + g->stride[0] * g->n[0];
  size_t bytes = sizeof(double) * count;
  MAPP_TRY(check(cudaMemcpyAsync(send_lo, first_owned, bytes, cudaMemcpyDeviceToHost, dev.compute), "halo out"));
  MAPP_TRY(check(cudaMemcpyAsync(send_hi, past_owned - count, bytes, cudaMemcpyDeviceToHost, dev.compute), "halo out"));
  MAPP_TRY(check(cudaStreamSynchronize(dev.compute), "halo out"));
  MAPP_TRY(mapp_slab_halo_exchange_buffers(g->comm, g->left, g->right, count, send_lo, send_hi, recv_lo, recv_hi));
  if (g->left != MPI_PROC_NULL)
    MAPP_TRY(check(cudaMemcpyAsync(field, recv_lo, bytes, cudaMemcpyHostToDevice, dev.compute), "halo in"));
  if (g->right != MPI_PROC_NULL)
    MAPP_TRY(check(cudaMemcpyAsync(past_owned, recv_hi, bytes, cudaMemcpyHostToDevice, dev.compute), "halo in"));
  return MAPP_OK;
}

/* The store's staging buffers are few and fixed: page-lock each once, so
 * the asynchronous copy really is one. */
int ensure_pinned(const void *host, size_t bytes) {
  for (int r = 0; r < dev.nregistered; r++)
    if (dev.registered[r] == host) return MAPP_OK;
  if (dev.nregistered == 64) return MAPP_OK; /* pageable: still correct, only synchronous */
  MAPP_TRY(check(cudaHostRegister((void *)host, bytes, cudaHostRegisterDefault), "page-locking a staging buffer"));
  dev.registered[dev.nregistered++] = host;
  return MAPP_OK;
}

int cuda_snapshot_out(const snap_grid *g, const double *field, double *host) {
  size_t bytes = sizeof(double) * g->interior;
  MAPP_TRY(ensure_streams());
  MAPP_TRY(ensure_pack(bytes));
  MAPP_TRY(ensure_pinned(host, bytes));
  /* Pack after the step that produced the field; copy on the copy stream. */
  MAPP_TRY(check(cudaStreamSynchronize(dev.copy), "the previous snapshot copy"));
  pack_kernel<<<blocks_for(g->interior), kThreads, 0, dev.compute>>>(dims_of(g), field, dev.pack);
  MAPP_TRY(check(cudaGetLastError(), "launching the snapshot pack"));
  MAPP_TRY(check(cudaEventRecord(dev.produced, dev.compute), "recording a snapshot event"));
  MAPP_TRY(check(cudaStreamWaitEvent(dev.copy, dev.produced, 0), "ordering the snapshot copy"));
  return check(cudaMemcpyAsync(host, dev.pack, bytes, cudaMemcpyDeviceToHost, dev.copy), "copying a snapshot out");
}

int cuda_snapshot_wait(void) { return check(cudaStreamSynchronize(dev.copy), "waiting for a snapshot copy"); }

/* The host snapshot to a device slot on the copy stream while the step
 * before this imaging still runs, then the imaging after that copy. The
 * store takes the snapshot's buffer back on return: a page-locked one (a
 * registered staging buffer) is copied from where it is and waited for
 * here; any other is first copied into the slot's page-locked buffer, and
 * the host goes on at once. */
int cuda_image(const snap_grid *g, double *grad, const double *snapshot, const double *next, const double *cur,
               const double *prev, double *abs_d2) {
  size_t count = (size_t)g->interior;
  int slot;
  MAPP_TRY(ensure_streams());
  MAPP_TRY(ensure_slots(dev.image, count, "allocating snapshot staging"));
  MAPP_TRY(take_slot(dev.image, dev.copy, &slot));
  bool in_place = page_locked(snapshot);
  if (!in_place) memcpy(dev.image.host[slot], snapshot, sizeof(double) * count);
  MAPP_TRY(copy_in(dev.image, dev.copy, slot, in_place ? snapshot : dev.image.host[slot], count));
  image_kernel<<<blocks_for(g->interior), kThreads, 0, dev.compute>>>(dims_of(g), grad, dev.image.device[slot], next,
                                                                     cur, prev, abs_d2);
  MAPP_TRY(check(cudaGetLastError(), "launching the imaging condition"));
  MAPP_TRY(check(cudaEventRecord(dev.image.read[slot], dev.compute), "recording an imaging"));
  return in_place ? check(cudaEventSynchronize(dev.image.copied[slot]), "copying a snapshot in") : MAPP_OK;
}

int cuda_to_host(const snap_grid *g, const double *field, double *host_padded) {
  MAPP_TRY(check(cudaStreamSynchronize(dev.compute), "synchronising"));
  return check(cudaMemcpy(host_padded, field, sizeof(double) * g->padded, cudaMemcpyDeviceToHost), "reading a field");
}

int cuda_from_host(const snap_grid *g, const double *host_padded, double *field) {
  MAPP_TRY(check(cudaStreamSynchronize(dev.compute), "synchronising"));
  return check(cudaMemcpy(field, host_padded, sizeof(double) * g->padded, cudaMemcpyHostToDevice), "writing a field");
}

/* The imaging condition reading a device-tier snapshot where it is (a
 * slot of the pool): no copy at all. device_get made the compute stream
 * wait for the pool's copies; the slot is not written again before the
 * next forward, whose copies follow this kernel (stream order, then the
 * `produced` event), so nothing here needs to wait. */
int cuda_image_in_place(const snap_grid *g, double *grad, const double *snapshot, const double *next,
                        const double *cur, const double *prev, double *abs_d2) {
  image_kernel<<<blocks_for(g->interior), kThreads, 0, dev.compute>>>(dims_of(g), grad, snapshot, next, cur, prev, abs_d2);
  return check(cudaGetLastError(), "launching the imaging condition on a device snapshot");
}

/* No step_save: the fields are device memory, so a snapshot leaves by
 * snapshot_out's asynchronous copy on its own stream. No step_image: the
 * imaging is its own kernel on the compute stream. */
const snap_ops cuda_ops = {
    "cuda",          cuda_alloc,         cuda_release,       cuda_set_coeffs, cuda_free_coeffs,
    cuda_step,       nullptr,            cuda_inject,        cuda_sample,     cuda_exchange,
    cuda_snapshot_out, cuda_snapshot_wait, cuda_image,       cuda_to_host,    cuda_from_host,
    cuda_image_in_place, nullptr, false, nullptr /* kernels: the record says "cuda" */, nullptr,
};

/* ------------------------------------------------------------ the device tier */

int device_available(size_t *bytes) {
  size_t free_bytes = 0, total_bytes = 0;
  MAPP_TRY(check(cudaMemGetInfo(&free_bytes, &total_bytes), "querying the free device memory"));
  *bytes = free_bytes;
  return MAPP_OK;
}

/* One allocation for the whole tier, at setup (never one per snapshot). A
 * pool the device cannot hold is the budget's fault: an input error. */
int device_pool_alloc(size_t bytes, void **pool) {
  *pool = nullptr;
  if (bytes == 0) return MAPP_OK;
  MAPP_TRY(ensure_streams());
  cudaError_t e = cudaMalloc(pool, bytes);
  if (e == cudaSuccess) return MAPP_OK;
  *pool = nullptr;
  (void)cudaGetLastError(); /* an allocation failure is not sticky: clear it, or a later launch check reports it */
  if (e == cudaErrorMemoryAllocation)
    return mapp_fail(MAPP_ERR_INPUT, "the device snapshot pool of %zu bytes does not fit the device (%s); lower "
                                     "--device-budget or MAPP_DEVICE_MEM_PERC",
                     bytes, cudaGetErrorString(e));
  return mapp_fail(MAPP_ERR_SYSTEM, "cuda: allocating the device snapshot pool (%zu bytes): %s", bytes,
                   cudaGetErrorString(e));
}

void device_pool_free(void *pool) {
  /* Nothing may still copy into or read from the pool when it goes. */
  (void)cudaDeviceSynchronize();
  (void)cudaFree(pool);
}

/* The interior of `field` packed straight into its pool slot on the
 * compute stream, after the step that produced the field: no staging
 * buffer and no second copy. The imaging that reads the slot runs later on
 * the same stream, so stream order is all the ordering it needs. */
int device_put(const snap_grid *g, const double *field, double *slot) {
  MAPP_TRY(ensure_streams());
  pack_kernel<<<blocks_for(g->interior), kThreads, 0, dev.compute>>>(dims_of(g), field, slot);
  return check(cudaGetLastError(), "packing a snapshot into the device pool");
}

int device_wait(void) {
  MAPP_TRY(ensure_streams());
  return check(cudaStreamSynchronize(dev.compute), "waiting for the device snapshot packs");
}

/* The slot itself: it was packed on the compute stream, where the imaging
 * that reads it runs too. */
int device_get(const double *slot, const double **snapshot) {
  *snapshot = slot;
  return MAPP_OK;
}

const snap_device_ops device_ops = {
    device_available, device_pool_alloc, device_pool_free, device_put, device_wait, device_get,
};

} // namespace

extern "C" const snap_ops *snap_cuda_ops(void) { return &cuda_ops; }
extern "C" const snap_device_ops *snap_cuda_device_ops(void) { return &device_ops; }
