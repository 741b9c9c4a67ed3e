// mapp-gpu-info: the provenance of the GPU an acceptance run measures, as
// key=value lines (name, sm_count, compute_capability, memory_bytes,
// driver_cuda, runtime_cuda). Exit 77 with one line on stderr where there
// is no device (no GPU, or no driver: cudaErrorNoDevice or
// cudaErrorInsufficientDriver), so callers skip the way ctest does.
// Host code only, linked with the static CUDA runtime: it runs wherever a
// driver is, whatever CUDA libraries the machine has.
#include <cstdio>

#include <cuda_runtime.h>

static int no_device(const char *why) {
  std::fprintf(stderr, "mapp-gpu-info: no CUDA device here (%s)\n", why);
  return 77;
}

static void print_version(const char *key, int version) {
  std::printf("%s=%d.%d\n", key, version / 1000, version % 1000 / 10);
}

int main() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return no_device(cudaGetErrorName(err));
  if (count == 0) return no_device("0 devices");
  cudaDeviceProp prop;
  err = cudaGetDeviceProperties(&prop, 0);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "mapp-gpu-info: cudaGetDeviceProperties: %s\n", cudaGetErrorString(err));
    return 3;
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("name=%s\nsm_count=%d\ncompute_capability=%d.%d\nmemory_bytes=%zu\ndevices=%d\n", prop.name,
              prop.multiProcessorCount, prop.major, prop.minor, prop.totalGlobalMem, count);
  print_version("driver_cuda", driver);
  print_version("runtime_cuda", runtime);
  return 0;
}
