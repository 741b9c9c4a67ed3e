/* The shallow-water program's bodies are those of stencil_kernels.h (its
 * table names that header, which its generated programs include); this
 * header gives their list the name every program's list has, for eager's
 * kernels (stencil_eager_kernels.c.in). */
#ifndef STENCIL_BODIES_SHALLOW_WATER_H
#define STENCIL_BODIES_SHALLOW_WATER_H

#include "stencil_kernels.h"

#define ST_BODIES_SHALLOW_WATER(X) ST_BODIES(X)

#endif
