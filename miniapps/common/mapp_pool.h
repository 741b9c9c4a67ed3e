/* A stack-like pool allocator: one allocation per run, temporaries carved
 * off the top and released in reverse order by mark/release (the batched
 * CRM report's answer to allocation cost on the GPU). */
#ifndef MAPP_POOL_H
#define MAPP_POOL_H

#include <stddef.h>

typedef struct {
  char *base;
  size_t capacity, top, high_water;
} mapp_pool;

#define MAPP_POOL_ALIGN 64

int mapp_pool_init(mapp_pool *pool, size_t capacity);
/* Input/system error naming the request and what is left when it does not fit. */
int mapp_pool_alloc(mapp_pool *pool, size_t bytes, void **out);
static inline size_t mapp_pool_mark(const mapp_pool *pool) { return pool->top; }
void mapp_pool_release(mapp_pool *pool, size_t mark);
void mapp_pool_free(mapp_pool *pool);

#endif
