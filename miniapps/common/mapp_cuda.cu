// The CUDA probe of libmapp: compiled whenever nvcc is present so the CUDA
// path builds in CI even without a GPU.
#include <cuda_runtime.h>

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
