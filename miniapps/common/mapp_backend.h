/* Backends (serial, OpenMP, CUDA) and which ones this build and machine have,
 * and the variant x backend table each app declares. */
#ifndef MAPP_BACKEND_H
#define MAPP_BACKEND_H

#include <stdbool.h>
#include <stdio.h>

typedef enum {
  MAPP_BACKEND_SERIAL,
  MAPP_BACKEND_OMP,
  MAPP_BACKEND_CUDA,
  MAPP_BACKEND_COUNT
} mapp_backend;

#define MAPP_BACKEND_BIT(b) (1u << (b))

const char *mapp_backend_name(mapp_backend b);
/* Compiled into this build (CUDA needs nvcc at configure time). */
bool mapp_backend_built(mapp_backend b);
/* Number of usable CUDA devices: 0 when CUDA is not built or no GPU/driver. */
int mapp_cuda_device_count(void);

/* One variant of an app and the backends it is written for. */
typedef struct {
  const char *name;
  unsigned backends; /* MAPP_BACKEND_BIT mask */
  const char *description;
} mapp_variant_info;

/* Resolve --variant/--backend against an app's table (terminated by a NULL
 * name): unknown names, a variant without that backend, a backend not built
 * and a CUDA backend without a device are input errors with a message. */
int mapp_select_backend(const char *app, const mapp_variant_info *table, const char *variant,
                        const char *backend, mapp_backend *out);
/* The table as JSON on out (for `mapp list`): what exists and what is built. */
void mapp_print_variants_json(const char *app, const mapp_variant_info *table, FILE *out);

#endif
