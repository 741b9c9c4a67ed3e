/* A build without CUDA: the device task's calls (tb_kernel.h) refuse. */
#include "mapp_error.h"
#include "tb_kernel.h"

int tb_cuda_managed_alloc(void **p, size_t bytes, const char *what) {
  *p = NULL;
  return mapp_fail(MAPP_ERR_INPUT, "%s: %zu bytes of CUDA managed memory, but this build has no CUDA", what, bytes);
}

void tb_cuda_managed_free(void *p) { (void)p; }

int tb_cuda_launch_task(void *stream, const tb_task_view *view, long t, long p) {
  (void)stream, (void)view;
  return mapp_fail(MAPP_ERR_INPUT, "task (t=%ld, p=%ld) on a CUDA device, but this build has no CUDA", t, p);
}
