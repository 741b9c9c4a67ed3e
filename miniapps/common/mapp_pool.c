#include "mapp_pool.h"

#include <stdint.h>
#include <stdlib.h>

#include "mapp_error.h"

int mapp_pool_init(mapp_pool *pool, size_t capacity) {
  pool->capacity = pool->top = pool->high_water = 0;
  pool->base = NULL;
  /* Rounding up must not wrap a huge request into a small pool. */
  if (capacity > SIZE_MAX - MAPP_POOL_ALIGN)
    return mapp_fail(MAPP_ERR_INPUT, "pool allocator: %zu bytes requested, more than the address space", capacity);
  pool->capacity = (capacity + MAPP_POOL_ALIGN - 1) / MAPP_POOL_ALIGN * MAPP_POOL_ALIGN;
  return mapp_alloc((void **)&pool->base, pool->capacity, "the pool allocator");
}

int mapp_pool_alloc(mapp_pool *pool, size_t bytes, void **out) {
  size_t rounded = (bytes + MAPP_POOL_ALIGN - 1) / MAPP_POOL_ALIGN * MAPP_POOL_ALIGN;
  if (rounded < bytes || rounded > pool->capacity - pool->top)
    return mapp_fail(MAPP_ERR_SYSTEM, "pool allocator: %zu bytes requested, %zu of %zu left", bytes,
                     pool->capacity - pool->top, pool->capacity);
  *out = pool->base + pool->top;
  pool->top += rounded;
  if (pool->top > pool->high_water) pool->high_water = pool->top;
  return MAPP_OK;
}

void mapp_pool_release(mapp_pool *pool, size_t mark) {
  if (mark <= pool->top) pool->top = mark;
}

void mapp_pool_free(mapp_pool *pool) {
  free(pool->base);
  pool->base = NULL;
  pool->capacity = pool->top = 0;
}
