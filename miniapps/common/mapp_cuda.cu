// The CUDA probe of libmapp: compiled whenever nvcc is present so the CUDA
// path builds in CI even without a GPU.
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "mapp_backend.h"
}

extern "C" int mapp_cuda_device_count(void) {
  int count = 0;
  // Without a GPU or driver this returns cudaErrorNoDevice or
  // cudaErrorInsufficientDriver: that means "no GPU", not a failure.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

extern "C" int mapp_cuda_open_context(char *why, size_t len) {
  cudaError_t err = cudaFree(nullptr);
  if (err == cudaSuccess) return 0;
  snprintf(why, len, "%s", cudaGetErrorString(err));
  cudaGetLastError();
  return 1;
}

// What a record and an answer file say of the GPU a run used: the device
// the calling thread has current, its driver and the runtime linked in.
extern "C" int mapp_cuda_describe(mapp_gpu_info *info) {
  int device = 0, driver = 0, runtime = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->device = device;
  info->cc_major = prop.major;
  info->cc_minor = prop.minor;
  info->memory_bytes = (double)prop.totalGlobalMem;
  snprintf(info->driver, sizeof info->driver, "%d.%d", driver / 1000, driver % 1000 / 10);
  snprintf(info->runtime, sizeof info->runtime, "%d.%d", runtime / 1000, runtime % 1000 / 10);
  return 1;
}

// Best device-to-device copy bandwidth over `reps` copies of `bytes`, counted
// as bytes read plus bytes written (the GPU analogue of the STREAM triad
// every bench reports against); 0 when there is no device or a call fails.
extern "C" double mapp_cuda_copy_bandwidth(size_t bytes, int reps) {
  void *a = nullptr, *b = nullptr;
  cudaEvent_t start, stop;
  double best = 0.0;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) goto done;
  cudaMemset(a, 1, bytes);
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int r = 0; r <= reps; ++r) { // the first copy warms up
    float ms = 0.0f;
    cudaEventRecord(start);
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&ms, start, stop);
    double rate = ms > 0.0f ? 2.0 * (double)bytes / (1e-3 * (double)ms) : 0.0;
    if (r > 0 && rate > best) best = rate;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
done:
  cudaFree(a);
  cudaFree(b);
  if (cudaGetLastError() != cudaSuccess) return 0.0;
  return best;
}
