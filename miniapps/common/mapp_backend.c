#include "mapp_backend.h"

#include <string.h>

#include "mapp_error.h"

static const char *backend_names[MAPP_BACKEND_COUNT] = {"serial", "omp", "cuda"};

const char *mapp_backend_name(mapp_backend b) { return b < MAPP_BACKEND_COUNT ? backend_names[b] : "unknown"; }

bool mapp_backend_built(mapp_backend b) {
#ifdef MAPP_HAVE_CUDA
  return b < MAPP_BACKEND_COUNT;
#else
  return b == MAPP_BACKEND_SERIAL || b == MAPP_BACKEND_OMP;
#endif
}

#ifndef MAPP_HAVE_CUDA
int mapp_cuda_device_count(void) { return 0; }
#endif

static int parse_backend(const char *name, mapp_backend *out) {
  for (int b = 0; b < MAPP_BACKEND_COUNT; ++b)
    if (strcmp(name, backend_names[b]) == 0) {
      *out = (mapp_backend)b;
      return MAPP_OK;
    }
  return mapp_fail(MAPP_ERR_INPUT, "unknown backend '%s' (known: serial, omp, cuda)", name);
}

int mapp_select_backend(const char *app, const mapp_variant_info *table, const char *variant,
                        const char *backend, mapp_backend *out) {
  const mapp_variant_info *v = table;
  while (v->name && strcmp(v->name, variant) != 0) ++v;
  if (!v->name) return mapp_fail(MAPP_ERR_INPUT, "%s has no variant '%s'", app, variant);
  MAPP_TRY(parse_backend(backend, out));
  if (!(v->backends & MAPP_BACKEND_BIT(*out)))
    return mapp_fail(MAPP_ERR_INPUT, "%s variant '%s' has no '%s' backend", app, variant, backend);
  if (!mapp_backend_built(*out))
    return mapp_fail(MAPP_ERR_INPUT, "backend '%s' is not built in this build (configure with nvcc on PATH)", backend);
  if (*out == MAPP_BACKEND_CUDA && mapp_cuda_device_count() == 0)
    return mapp_fail(MAPP_ERR_INPUT, "backend 'cuda': no CUDA device on this machine");
  return MAPP_OK;
}

void mapp_print_variants_json(const char *app, const mapp_variant_info *table, FILE *out) {
  fprintf(out, "{\"app\":\"%s\",\"variants\":[", app);
  for (const mapp_variant_info *v = table; v->name; ++v) {
    fprintf(out, "%s{\"name\":\"%s\",\"description\":\"%s\",\"backends\":[", v == table ? "" : ",",
            v->name, v->description ? v->description : "");
    bool first = true;
    for (int b = 0; b < MAPP_BACKEND_COUNT; ++b) {
      if (!(v->backends & MAPP_BACKEND_BIT(b))) continue;
      fprintf(out, "%s{\"name\":\"%s\",\"built\":%s}", first ? "" : ",", backend_names[b],
              mapp_backend_built((mapp_backend)b) ? "true" : "false");
      first = false;
    }
    fprintf(out, "]}");
  }
  fprintf(out, "]}\n");
}
