/* Backends (serial, OpenMP, threads, CUDA) and which ones this build and
 * machine have, and the variant table each app declares. */
#ifndef MAPP_BACKEND_H
#define MAPP_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The one list of backends: the enum, its names, the --backend choices and
 * every error text derive from MAPP_BACKEND_LIST. */
#define MAPP_BACKEND_LIST(X)                                                                       \
  X(SERIAL, "serial")                                                                              \
  X(OMP, "omp")                                                                                    \
  X(THREADS, "threads") /* an app's own worker threads (pthreads), e.g. subgraph's */              \
  X(CUDA, "cuda")

typedef enum {
#define MAPP_BACKEND_ENUM_(id, name) MAPP_BACKEND_##id,
  MAPP_BACKEND_LIST(MAPP_BACKEND_ENUM_)
#undef MAPP_BACKEND_ENUM_
  MAPP_BACKEND_COUNT
} mapp_backend;

#define MAPP_BACKEND_BIT(b) (1u << (MAPP_BACKEND_##b))
#define MAPP_BACKENDS_CPU (MAPP_BACKEND_BIT(SERIAL) | MAPP_BACKEND_BIT(OMP))

const char *mapp_backend_name(mapp_backend b);
/* Compiled into this build (CUDA needs nvcc at configure time). */
bool mapp_backend_built(mapp_backend b);
/* Runs on the host only (no device): what the generic CPU tests cover. */
bool mapp_backend_is_cpu(mapp_backend b);
/* Number of usable CUDA devices: 0 when CUDA is not built or no GPU/driver. */
int mapp_cuda_device_count(void);
/* Creates the CUDA context on the current device now (cudaFree(0)), so that
 * what the driver and runtime hold on the host (about 100 MiB of RSS) is
 * there before a run measures its own memory. 0 on success; otherwise the
 * CUDA error's text in why and nonzero (always nonzero without CUDA). */
int mapp_cuda_open_context(char *why, size_t len);

/* The GPU a run used, for its record and answer file (provenance). */
typedef struct {
  char name[256];      /* "NVIDIA H100 80GB HBM3" (cudaDeviceProp.name is 256) */
  int device, cc_major, cc_minor;
  double memory_bytes;
  char driver[16], runtime[16]; /* CUDA versions, "13.0" */
} mapp_gpu_info;
/* Fills info for the current device; 0 when there is none (or no CUDA build). */
int mapp_cuda_describe(mapp_gpu_info *info);
/* Best device-to-device copy bandwidth (bytes read + written per second)
 * over reps copies of `bytes`: what GPU benchmarks report a fraction of.
 * 0 without a device. */
double mapp_cuda_copy_bandwidth(size_t bytes, int reps);
/* nvcc's identity and the architectures this build compiled for ("" without CUDA). */
const char *mapp_cuda_compiler(void);
const char *mapp_cuda_architectures(void);
/* The backends of mask as "a|b|c" into buf (for --backend and messages). */
void mapp_backend_choices(unsigned mask, char *buf, size_t len);

/* The MPI thread level a variant needs: MPI is started before the variant
 * runs, at the highest level any part of it calls MPI from. */
typedef enum {
  MAPP_MPI_FUNNELED = 0, /* MPI from the main thread only (the default) */
  MAPP_MPI_MULTIPLE,     /* MPI from any thread, e.g. tasks that send */
} mapp_mpi_threads;

/* One row of an app's variant table (terminated by a row with a NULL name).
 * The table lives in the app's library: --variant, --list, the MPI thread
 * level, the benchmarks and the tests all read it. */
typedef struct {
  const char *name;
  unsigned backends; /* MAPP_BACKEND_BIT mask */
  const char *description;
  mapp_mpi_threads mpi_threads;
  /* The app's tag of the variant (an enum of its own): the app dispatches
   * on it with a switch the compiler checks, or passes it on as a value. */
  int kind;
  /* The generic tests (cmake/MappAppTests.cmake) run each variant alone and
   * compare its answer: a variant that writes none (stencil's build) or
   * needs another run first (stencil's run loads a cache) is left out. */
  bool not_alone;
} mapp_variant_info;

/* The app's headline: the ratio the harness's report opens with (its
 * section "What each technique buys here"), the figure of merit of the
 * technique's variant/backend over that of the variant/backend it
 * replaces, both of one size and rank count. --list declares it
 * ("headline") and the harness reads it from there: no table outside the
 * app's folder names it (mapp_app.headline). */
typedef struct {
  const char *technique;                 /* in words: "batched CRMs over one CRM at a time" */
  const char *variant, *backend;         /* the technique */
  const char *ref_variant, *ref_backend; /* what it replaces */
  int min_ranks;                         /* the fewest ranks where the technique is what it claims
                                            (heat's tasks overlap halos across ranks: 2); 0 means 1 */
  const char *sizes;                     /* the sizes where it works, "small|large"; NULL: every size */
} mapp_headline;

/* The row called name, or NULL. */
const mapp_variant_info *mapp_variant_find(const mapp_variant_info *table, const char *name);
/* The union of the table's backends. */
unsigned mapp_variant_backends(const mapp_variant_info *table);
/* The variant names as "a|b|c" into buf. */
void mapp_variant_choices(const mapp_variant_info *table, char *buf, size_t len);

/* Resolve --variant/--backend against an app's table: unknown names, a
 * variant without that backend, a backend not built and a CUDA backend
 * without a device are input errors with a message. */
int mapp_select_backend(const char *app, const mapp_variant_info *table, const char *variant,
                        const char *backend, const mapp_variant_info **row, mapp_backend *out);

/* The table as JSON on out (for `mapp list` and the generic tests): what
 * exists, what is built, whether variants and rank counts agree bit for
 * bit, whether the app can repeat its timed phase (--min-time) and its
 * headline (NULL: none declared). */
void mapp_print_variants_json(const char *app, const mapp_variant_info *table, bool bitwise_variants,
                              bool bitwise_ranks, bool repeatable, const mapp_headline *headline, FILE *out);

#endif
