/* Answer fingerprints (mapp_digest.h). */
#include "mapp_digest.h"

#include <xxhash.h>

void mapp_digest_add(uint64_t *digest, const void *data, size_t bytes) {
  *digest = XXH3_64bits_withSeed(data, bytes, *digest);
}
