/* Small helpers for the JSON records the harness reads (jansson). */
#ifndef HARNESS_JSONUTIL_H
#define HARNESS_JSONUTIL_H

#include <jansson.h>

/* The string at key of object r, else fallback (a missing key, a value
 * that is not a string, r NULL or not an object). */
const char *json_text_or(const json_t *r, const char *key, const char *fallback);

#endif
