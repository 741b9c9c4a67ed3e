#include "mapp_backend.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_build_info.h"
#include "mapp_error.h"

static const char *const backend_names[MAPP_BACKEND_COUNT] = {
#define MAPP_BACKEND_NAME_(id, name) name,
    MAPP_BACKEND_LIST(MAPP_BACKEND_NAME_)
#undef MAPP_BACKEND_NAME_
};

const char *mapp_backend_name(mapp_backend b) { return b < MAPP_BACKEND_COUNT ? backend_names[b] : "unknown"; }

bool mapp_backend_is_cpu(mapp_backend b) { return b != MAPP_BACKEND_CUDA; }

bool mapp_backend_built(mapp_backend b) {
#ifdef MAPP_HAVE_CUDA
  return b < MAPP_BACKEND_COUNT;
#else
  return b < MAPP_BACKEND_COUNT && b != MAPP_BACKEND_CUDA;
#endif
}

#ifndef MAPP_HAVE_CUDA
int mapp_cuda_device_count(void) { return 0; }
int mapp_cuda_open_context(char *why, size_t len) {
  snprintf(why, len, "this build has no CUDA");
  return 1;
}
int mapp_cuda_describe(mapp_gpu_info *info) {
  (void)info;
  return 0;
}
double mapp_cuda_copy_bandwidth(size_t bytes, int reps) {
  (void)bytes;
  (void)reps;
  return 0.0;
}
#endif

const char *mapp_cuda_compiler(void) { return MAPP_CUDA_COMPILER; }
const char *mapp_cuda_architectures(void) { return MAPP_CUDA_ARCHITECTURES; }

/* Appends word to the "a|b" list in buf (truncating, never overflowing). */
static void append_choice(char *buf, size_t len, const char *word) {
  size_t used = strlen(buf);
  if (used + 1 >= len) return;
  snprintf(buf + used, len - used, "%s%s", used ? "|" : "", word);
}

void mapp_backend_choices(unsigned mask, char *buf, size_t len) {
  buf[0] = '\0';
  for (int b = 0; b < MAPP_BACKEND_COUNT; ++b)
    if (mask & (1u << b)) append_choice(buf, len, backend_names[b]);
}

const mapp_variant_info *mapp_variant_find(const mapp_variant_info *table, const char *name) {
  for (const mapp_variant_info *v = table; v->name; ++v)
    if (strcmp(v->name, name) == 0) return v;
  return NULL;
}

unsigned mapp_variant_backends(const mapp_variant_info *table) {
  unsigned mask = 0;
  for (const mapp_variant_info *v = table; v->name; ++v) mask |= v->backends;
  return mask;
}

void mapp_variant_choices(const mapp_variant_info *table, char *buf, size_t len) {
  buf[0] = '\0';
  for (const mapp_variant_info *v = table; v->name; ++v) append_choice(buf, len, v->name);
}

static int parse_backend(const char *name, mapp_backend *out) {
  for (int b = 0; b < MAPP_BACKEND_COUNT; ++b)
    if (strcmp(name, backend_names[b]) == 0) {
      *out = (mapp_backend)b;
      return MAPP_OK;
    }
  char known[64];
  mapp_backend_choices(~0u, known, sizeof known);
  return mapp_fail(MAPP_ERR_INPUT, "unknown backend '%s' (known: %s)", name, known);
}

int mapp_select_backend(const char *app, const mapp_variant_info *table, const char *variant,
                        const char *backend, const mapp_variant_info **row, mapp_backend *out) {
  const mapp_variant_info *v = mapp_variant_find(table, variant);
  if (!v) return mapp_fail(MAPP_ERR_INPUT, "%s has no variant '%s'", app, variant);
  MAPP_TRY(parse_backend(backend, out));
  if (!(v->backends & (1u << *out)))
    return mapp_fail(MAPP_ERR_INPUT, "%s variant '%s' has no '%s' backend", app, variant, backend);
  if (!mapp_backend_built(*out))
    return mapp_fail(MAPP_ERR_INPUT, "backend '%s' is not built in this build (configure with nvcc on PATH)", backend);
  if (*out == MAPP_BACKEND_CUDA && mapp_cuda_device_count() == 0)
    return mapp_fail(MAPP_ERR_INPUT, "backend 'cuda': no CUDA device on this machine");
  *row = v;
  return MAPP_OK;
}

/* The sizes "a|b" as a JSON array of names. */
static json_t *sizes_json(const char *sizes) {
  json_t *list = json_array();
  for (const char *s = sizes; list && *s;) {
    size_t n = strcspn(s, "|");
    json_array_append_new(list, json_stringn(s, n));
    s += n + (s[n] == '|');
  }
  return list;
}

/* ,"headline":{...} (jansson escapes the words); nothing without one. */
static void print_headline_json(const mapp_headline *h, FILE *out) {
  if (!h) return;
  json_t *obj = json_pack("{s:s,s:s,s:s,s:{s:s,s:s},s:i}", "technique", h->technique, "variant", h->variant,
                          "backend", h->backend, "reference", "variant", h->ref_variant, "backend", h->ref_backend,
                          "min_ranks", h->min_ranks > 0 ? h->min_ranks : 1);
  if (obj && h->sizes) json_object_set_new(obj, "sizes", sizes_json(h->sizes));
  char *text = obj ? json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  if (text) fprintf(out, ",\"headline\":%s", text);
  free(text);
  json_decref(obj);
}

void mapp_print_variants_json(const char *app, const mapp_variant_info *table, bool bitwise_variants,
                              bool bitwise_ranks, bool repeatable, const mapp_headline *headline, FILE *out) {
  fprintf(out, "{\"app\":\"%s\",\"bitwise_variants\":%s,\"bitwise_ranks\":%s,\"repeatable\":%s,\"variants\":[",
          app, bitwise_variants ? "true" : "false", bitwise_ranks ? "true" : "false", repeatable ? "true" : "false");
  for (const mapp_variant_info *v = table; v->name; ++v) {
    fprintf(out, "%s{\"name\":\"%s\",\"description\":\"%s\",\"mpi_threads\":\"%s\",\"alone\":%s,\"backends\":[",
            v == table ? "" : ",", v->name, v->description ? v->description : "",
            v->mpi_threads == MAPP_MPI_MULTIPLE ? "multiple" : "funneled", v->not_alone ? "false" : "true");
    bool first = true;
    for (int b = 0; b < MAPP_BACKEND_COUNT; ++b) {
      if (!(v->backends & (1u << b))) continue;
      bool built = mapp_backend_built((mapp_backend)b);
      /* usable: built, and for CUDA a device is present (a sweep skips, and
       * says so, what is built but cannot run here) */
      bool usable = built && (b != MAPP_BACKEND_CUDA || mapp_cuda_device_count() > 0);
      fprintf(out, "%s{\"name\":\"%s\",\"built\":%s,\"usable\":%s,\"cpu\":%s}", first ? "" : ",",
              backend_names[b], built ? "true" : "false", usable ? "true" : "false",
              mapp_backend_is_cpu((mapp_backend)b) ? "true" : "false");
      first = false;
    }
    fprintf(out, "]}");
  }
  fprintf(out, "]");
  print_headline_json(headline, out);
  fprintf(out, "}\n");
}
