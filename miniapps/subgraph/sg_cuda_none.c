/* A build without CUDA: the runtime's CUDA calls (sg_cuda_api.h) refuse. */
#include "mapp_error.h"
#include "sg_cuda_api.h"

static int no_cuda(void) {
  return mapp_fail(MAPP_ERR_INPUT, "a CUDA device for the runtime's streams: this build has no CUDA");
}

int sg_cuda_api_device_check(void) { return no_cuda(); }
int sg_cuda_api_stream_create(void **stream) { return *stream = NULL, no_cuda(); }
void sg_cuda_api_stream_destroy(void *stream) { (void)stream; }
int sg_cuda_api_event_create(void **event) { return *event = NULL, no_cuda(); }
void sg_cuda_api_event_destroy(void *event) { (void)event; }
int sg_cuda_api_record(void *event, void *stream) { return (void)event, (void)stream, no_cuda(); }
int sg_cuda_api_wait(void *stream, void *event) { return (void)stream, (void)event, no_cuda(); }
int sg_cuda_api_copy(void *stream, const sg_copy_desc *copy) { return (void)stream, (void)copy, no_cuda(); }
int sg_cuda_api_query(void *event) { return (void)event, no_cuda(); }
