/* The CUDA program must compile where nvcc exists, GPU or not: generate it
 * for two classes of every program (the vertical one: a thread per column,
 * sequential in k) and build each into a fresh cache with nvcc (no load:
 * there may be no device). Usage: test_stencil_cuda_build CACHE_DIR */
#include <stdio.h>

#include "stencil.h"

static int build_class(const char *dir, const char *program, int cls) {
  st_program p;
  st_plan plan;
  stencil_debug debug = {0};
  char *source = NULL;
  stencil_key key;
  stencil_loaded loaded = {0};
  stencil_cache_stats stats;
  stencil_config c; /* the toolchain as the environment changes it (MAPP_STENCIL_NVCC) */
  stencil_config_defaults(&c);
  MAPP_TRY(st_program_make(&p, program, NULL));
  MAPP_TRY(st_plan_make(&p, cls, ST_PLAN_FUSED, &plan));
  MAPP_TRY(stencil_generate(&p, &plan, MAPP_BACKEND_CUDA, &debug, &source));
  int status = stencil_key_make(&c.toolchain, &p, source, cls, MAPP_BACKEND_CUDA, "none", &key);
  if (status == MAPP_OK) status = stencil_cache_get(dir, &key, source, true, false, &loaded, &stats);
  free(source);
  if (status == MAPP_OK && !stats.built) status = mapp_fail(MAPP_ERR_VERIFY, "class %d: nothing was built", cls);
  if (status == MAPP_OK) printf("built %s, class %s, with nvcc in %.2f s\n", program, key.cls, stats.build_s);
  return status;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int status = MAPP_OK;
  for (const st_program_entry *e = st_programs; e->name && status == MAPP_OK; ++e) {
    status = build_class(argv[1], e->name, 0);
    if (status == MAPP_OK) status = build_class(argv[1], e->name, ST_EDGE_W | ST_EDGE_S);
  }
  return mapp_report_error("test_stencil_cuda_build", status);
}
