// Managed memory for the fields of the CUDA program: the generated kernels
// read and write them on the device, the halo callback into libmapp and the
// debug passes on the host after the stream drains.
#include <cuda_runtime.h>
#include <string.h>

extern "C" int stencil_managed_alloc(double **out, size_t count) {
  void *p = NULL;
  if (cudaMallocManaged(&p, count * sizeof(double), cudaMemAttachGlobal) != cudaSuccess) return 1;
  memset(p, 0, count * sizeof(double));
  *out = (double *)p;
  return 0;
}

extern "C" void stencil_managed_free(void *p) {
  if (p) cudaFree(p);
}
