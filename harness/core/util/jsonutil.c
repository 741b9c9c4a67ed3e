#include "jsonutil.h"

const char *json_text_or(const json_t *r, const char *key, const char *fallback) {
  const char *text = json_string_value(json_object_get(r, key));
  return text ? text : fallback;
}
