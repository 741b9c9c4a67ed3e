// The runtime's CUDA calls (sg_cuda_api.h): streams, events, copies.
#include <cuda_runtime.h>

extern "C" {
#include "mapp_error.h"
}
#include "sg_cuda_api.h"

namespace {
int check(cudaError_t err, const char *what) {
  if (err == cudaSuccess) return MAPP_OK;
  return mapp_fail(MAPP_ERR_SYSTEM, "%s failed: %s", what, cudaGetErrorString(err));
}
} // namespace

extern "C" int sg_cuda_api_device_check(void) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    return mapp_fail(MAPP_ERR_INPUT, "a CUDA device for the runtime's streams: none here (%s)",
                     err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
  return MAPP_OK;
}

extern "C" int sg_cuda_api_stream_create(void **stream) {
  cudaStream_t s = nullptr;
  int status = check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  *stream = s;
  return status;
}

extern "C" void sg_cuda_api_stream_destroy(void *stream) {
  if (!stream) return;
  cudaStreamSynchronize((cudaStream_t)stream);
  cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" int sg_cuda_api_event_create(void **event) {
  cudaEvent_t e = nullptr;
  int status = check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  *event = e;
  return status;
}

extern "C" void sg_cuda_api_event_destroy(void *event) {
  if (event) cudaEventDestroy((cudaEvent_t)event);
}

extern "C" int sg_cuda_api_record(void *event, void *stream) {
  return check(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), "cudaEventRecord");
}

extern "C" int sg_cuda_api_wait(void *stream, void *event) {
  return check(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0), "cudaStreamWaitEvent");
}

extern "C" int sg_cuda_api_copy(void *stream, const sg_copy_desc *c) {
  size_t rows = c->rows ? c->rows : 1;
  if (rows == 1)
    return check(cudaMemcpyAsync(c->dst, c->src, c->row_bytes, cudaMemcpyDefault, (cudaStream_t)stream),
                 "cudaMemcpyAsync");
  return check(cudaMemcpy2DAsync(c->dst, c->dst_stride, c->src, c->src_stride, c->row_bytes, rows, cudaMemcpyDefault,
                                 (cudaStream_t)stream),
               "cudaMemcpy2DAsync");
}

extern "C" int sg_cuda_api_query(void *event) {
  cudaError_t err = cudaEventQuery((cudaEvent_t)event);
  if (err == cudaSuccess) return 1;
  if (err == cudaErrorNotReady) return 0;
  return check(err, "cudaEventQuery");
}
