/* The CUDA calls the runtime's CUDA streams make (sg_cuda_device.c), as C
 * functions: sg_cuda_api.cu where the build has CUDA, sg_cuda_none.c (each
 * an input error naming the build) where it does not. Handles are opaque
 * (cudaStream_t, cudaEvent_t). Each returns a mapp status whose message
 * names the call and CUDA's error. */
#ifndef SG_CUDA_API_H
#define SG_CUDA_API_H

#include "sg.h"

#ifdef __cplusplus
extern "C" {
#endif

int sg_cuda_api_device_check(void); /* MAPP_ERR_INPUT without a device (or without CUDA in the build) */
int sg_cuda_api_stream_create(void **stream);
void sg_cuda_api_stream_destroy(void *stream); /* after it has drained */
int sg_cuda_api_event_create(void **event);
void sg_cuda_api_event_destroy(void *event);
int sg_cuda_api_record(void *event, void *stream);
int sg_cuda_api_wait(void *stream, void *event);
int sg_cuda_api_copy(void *stream, const sg_copy_desc *copy); /* 1-D or 2-D, any memory the device can reach */
/* 1: the work before the event is done; 0: not yet; negative: an error (message set). */
int sg_cuda_api_query(void *event);

#ifdef __cplusplus
}
#endif

#endif
