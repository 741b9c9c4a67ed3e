/* The hydrostatic program: a 3-D step in the spirit of FV3's vertical
 * diagnostics, levels numbered from the model top. A horizontal smoothing
 * of the layers' pressure thickness dp (parallel in k); the pressure at the
 * layers' upper interfaces, accumulated from the top down (FORWARD); their
 * height, accumulated from the surface up (BACKWARD). No physics file: the
 * generic physics gives its initial state and checks. Bodies in
 * stencil_bodies_hydrostatic.h. */
#include "mapp_error.h"
#include "stencil_program.h"

enum { DP, SCALE_HEIGHT, P, Z, DP_SMOOTH, NFIELDS }; /* the state, then a temporary */

/* Levels by index, as GT4Py's intervals: level 0 is the model top. */
#define MODEL_TOP ST_K_BOTTOM             /* interval(0, 1) */
#define BELOW_MODEL_TOP ST_K_ABOVE_BOTTOM /* interval(1, None) */
#define SURFACE ST_K_TOP                  /* interval(-1, None) */
#define ABOVE_SURFACE ST_K_BELOW_TOP      /* interval(0, -1) */

int st_program_hydrostatic(st_program *p) {
  static const st_field_def fields[NFIELDS] = {
      {"dp", ST_STAGGER_CENTRE}, {"scale_height", ST_STAGGER_CENTRE}, {"p", ST_STAGGER_CENTRE},
      {"z", ST_STAGGER_CENTRE},  {"dp_smooth", ST_STAGGER_CENTRE},
  };
  p->bodies = "stencil_bodies_hydrostatic.h";
  st_add_fields(p, fields, NFIELDS, 3);
  p->nstate = 4;
  st_add_call(p, (st_call){.name = "smooth", .body = "smooth", .out = DP_SMOOTH, .nin = 1,
                           .in = {ST_IN(DP, -1, 1, -1, 1)}, .extent = ST_EXT_0});
  st_add_call(p, (st_call){.name = "pressure_top", .body = "pressure_top", .order = ST_K_FORWARD, .k = MODEL_TOP,
                           .out = P, .nin = 0, .extent = ST_EXT_0});
  st_add_call(p, (st_call){.name = "pressure", .body = "pressure", .order = ST_K_FORWARD, .k = BELOW_MODEL_TOP,
                           .out = P, .nin = 2, .in = {ST_KIN(P, -1, -1), ST_KIN(DP_SMOOTH, -1, -1)},
                           .extent = ST_EXT_0});
  st_add_call(p, (st_call){.name = "height_surface", .body = "height_surface", .order = ST_K_BACKWARD, .k = SURFACE,
                           .out = Z, .nin = 3, .in = {ST_AT(SCALE_HEIGHT), ST_AT(P), ST_AT(DP_SMOOTH)},
                           .extent = ST_EXT_0});
  st_add_call(p, (st_call){.name = "height", .body = "height", .order = ST_K_BACKWARD, .k = ABOVE_SURFACE, .out = Z,
                           .nin = 4, .in = {ST_AT(SCALE_HEIGHT), ST_AT(P), ST_AT(DP_SMOOTH), ST_KIN(Z, 1, 1)},
                           .extent = ST_EXT_0});
  st_add_call(p, (st_call){.name = "dp_commit", .body = "copy", .out = DP, .nin = 1, .in = {ST_AT(DP_SMOOTH)},
                           .extent = ST_EXT_0});
  return MAPP_OK;
}
