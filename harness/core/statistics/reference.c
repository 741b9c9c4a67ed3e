#include "reference.h"

#include <jansson.h>
#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "strv.h"

int speedup_refs_add(speedup_refs *refs, const char *variant, const char *backend) {
  speedup_ref *items = realloc(refs->items, (refs->count + 1) * sizeof *items);
  if (!items) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  refs->items = items;
  speedup_ref *ref = &items[refs->count];
  *ref = (speedup_ref){strdup(variant), strdup(backend)};
  if (ref->variant && ref->backend) {
    ++refs->count;
    return MAPP_OK;
  }
  free(ref->variant);
  free(ref->backend);
  return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* One "VARIANT/BACKEND" of length len (not NUL-terminated in the list). */
static int add_pair(speedup_refs *refs, const char *pair, size_t len, const char *whole) {
  const char *slash = memchr(pair, '/', len);
  size_t vlen = slash ? (size_t)(slash - pair) : 0, blen = slash ? len - vlen - 1 : 0;
  if (!slash || vlen == 0 || blen == 0 || memchr(slash + 1, '/', blen))
    return mapp_fail(MAPP_ERR_INPUT, "--reference must be VARIANT/BACKEND[,VARIANT/BACKEND...] "
                                     "(e.g. mpi/serial,percrm/serial), got '%s'", whole);
  char *variant = strndup(pair, vlen), *backend = strndup(slash + 1, blen);
  int status = variant && backend ? speedup_refs_add(refs, variant, backend) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(variant);
  free(backend);
  return status;
}

int speedup_refs_parse(const char *text, speedup_refs *refs) {
  const char *p = text;
  do {
    size_t len = strcspn(p, ",");
    MAPP_TRY(add_pair(refs, p, len, text));
    p += len;
  } while (*p++ == ',');
  return MAPP_OK;
}

void speedup_ref_text(const speedup_ref *ref, char *buf, size_t len) {
  snprintf(buf, len, "%s%s%s", ref ? ref->variant : "", ref ? "/" : "", ref ? ref->backend : "");
}

char *speedup_refs_format(const speedup_refs *refs) {
  strv labels = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < refs->count; ++i)
    status = strv_pushf(&labels, "%s/%s", refs->items[i].variant, refs->items[i].backend);
  char *text = status == MAPP_OK ? strv_join(&labels, ", ") : NULL;
  strv_free(&labels);
  return text;
}

void speedup_refs_free(speedup_refs *refs) {
  for (size_t i = 0; i < refs->count; ++i) {
    free(refs->items[i].variant);
    free(refs->items[i].backend);
  }
  free(refs->items);
  *refs = (speedup_refs){0};
}

int speedup_refs_from_records(const void *records, speedup_refs *refs) {
  size_t i;
  const json_t *r;
  json_array_foreach((const json_t *)records, i, r) {
    const char *text = json_string_value(json_object_get(r, "reference"));
    if (!text) continue;
    bool known = false;
    for (size_t k = 0; k < refs->count && !known; ++k) {
      char have[256];
      speedup_ref_text(&refs->items[k], have, sizeof have);
      known = strcmp(have, text) == 0;
    }
    if (!known) MAPP_TRY(speedup_refs_parse(text, refs));
  }
  return MAPP_OK;
}
