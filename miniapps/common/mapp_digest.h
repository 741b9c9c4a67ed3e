/* Fingerprints of answers: a 64-bit hash (XXH3, libxxhash) chained over the
 * arrays that make an answer, so that two runs of a timed phase can be held
 * to the same answer bit for bit without keeping a copy of it. */
#ifndef MAPP_DIGEST_H
#define MAPP_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* The digest every fingerprint starts from. */
#define MAPP_DIGEST_INIT UINT64_C(0x6d617070)

/* Chains `bytes` bytes at `data` into *digest (the order of calls matters). */
void mapp_digest_add(uint64_t *digest, const void *data, size_t bytes);

#endif
