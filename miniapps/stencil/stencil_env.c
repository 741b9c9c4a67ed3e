/* mapp-stencil's settings from the environment, read in this one place: no
 * other file of the app calls getenv("MAPP_..."). A new setting is a field
 * of stencil_config (stencil.h) read here, and a line in README.md. Read
 * once, when the configuration is made (stencil_config_defaults): the parts
 * of a run (cache, physics, hooks) cannot see different values. */
#include <stdlib.h>

#include "stencil.h"

/* An empty variable counts as unset (the compiler, flags, folders, break:
 * an empty value has never meant anything else). */
static const char *set(const char *value) { return value && *value ? value : NULL; }

void stencil_config_read_env(stencil_config *c) {
  c->toolchain = (stencil_toolchain){
      .cc = set(getenv("MAPP_STENCIL_CC")),
      .nvcc = set(getenv("MAPP_STENCIL_NVCC")),
      .cflags = set(getenv("MAPP_STENCIL_CFLAGS")),
      .include = set(getenv("MAPP_STENCIL_INCLUDE")),
  };
  c->cache_dir = stencil_cache_default(set(getenv("MAPP_CACHE_DIR")));
  c->brk = set(getenv("MAPP_STENCIL_BREAK"));
  /* Taken as it is: an empty name is refused ("no stencil '' to drop from
   * the step") rather than silently running the whole step. */
  c->drop = getenv("MAPP_STENCIL_DROP");
}
