/* The shallow-water step as a program table: a 2-D finite-volume model on an
 * Arakawa C grid (h at cell centres, u on west faces, v on south faces,
 * vorticity at corners), 27 stencil calls whose bodies are in
 * stencil_kernels.h. The table is all there is to the program: eager, the
 * planner and both generators read it. */
#include <stdio.h>
#include <string.h>

#include "mapp_error.h"
#include "stencil_program.h"

/* The fields, in the table's order: the state, then the temporaries. */
enum {
  F_H, F_U, F_V, /* state */
  T_DIV, T_KE, T_ZETA, T_HFX, T_FX, T_HX, T_HFY, T_FY, T_HQ, T_Q,
  T_UM, T_VM, T_B, T_CU, T_CV, T_DU, T_DV, T_TU, T_TV,
  NFIELDS
};

static void add_fields(st_program *p) {
  static const st_field_def table[NFIELDS] = {
      {"h", ST_STAGGER_CENTRE},          {"u", ST_STAGGER_FACE_X},           {"v", ST_STAGGER_FACE_Y},
      {"div", ST_STAGGER_CENTRE},        {"ke", ST_STAGGER_CENTRE},          {"zeta", ST_STAGGER_CORNER},
      {"h_face_x", ST_STAGGER_FACE_X},   {"flux_x", ST_STAGGER_FACE_X},      {"h_x", ST_STAGGER_CENTRE},
      {"h_face_y", ST_STAGGER_FACE_Y},   {"flux_y", ST_STAGGER_FACE_Y},      {"h_corner", ST_STAGGER_CORNER},
      {"pv", ST_STAGGER_CORNER},         {"mass_flux_u", ST_STAGGER_FACE_X}, {"mass_flux_v", ST_STAGGER_FACE_Y},
      {"bernoulli", ST_STAGGER_CENTRE},  {"coriolis_u", ST_STAGGER_FACE_X},  {"coriolis_v", ST_STAGGER_FACE_Y},
      {"damping_u", ST_STAGGER_FACE_X},  {"damping_v", ST_STAGGER_FACE_Y},   {"tendency_u", ST_STAGGER_FACE_X},
      {"tendency_v", ST_STAGGER_FACE_Y},
  };
  st_add_fields(p, table, NFIELDS, 2);
  p->nstate = 3;
}

/* Extents: padded (the whole array), interior, one cell out, and the
 * advection's x-flux and y-flux shapes (the x pass runs 2 rows into the
 * halo so the y pass needs no exchange in between). */
#define EXT_PADDED ST_EXT_PADDED
#define EXT_0 ST_EXT_0
#define EXT_1 ST_EXT(-1, 1, -1, 1)
#define EXT_FX ST_EXT(0, 1, -2, 2)
#define EXT_AX ST_EXT(0, 0, -2, 2)
#define EXT_FY ST_EXT(0, 0, 0, 1)
#define IN ST_IN
#define AT ST_AT
#define IN_ALL ST_IN_ALL
#define G_ALL ST_G_ALL
#define G_BELOW ST_G_BELOW
#define G_ABOVE ST_G_ABOVE
#define G_INSIDE ST_G_INSIDE
#define G_FIRST ST_G_FIRST
#define G_LAST ST_G_LAST

static st_call ghost_fill(const char *name, int f, const char *q) {
  static char bodies[3][8][16];
  int slot = f; /* h, u, v */
  const char *where[8] = {"w", "e", "s", "n", "sw", "se", "nw", "ne"};
  st_grange gi[8] = {G_BELOW, G_ABOVE, G_INSIDE, G_INSIDE, G_BELOW, G_ABOVE, G_BELOW, G_ABOVE};
  st_grange gj[8] = {G_INSIDE, G_INSIDE, G_BELOW, G_ABOVE, G_BELOW, G_BELOW, G_ABOVE, G_ABOVE};
  st_call c = {.name = name, .body = NULL, .out = f, .nin = 1, .in = {IN_ALL(f)}, .extent = EXT_PADDED,
               .nregions = 8};
  for (int r = 0; r < 8; ++r) {
    snprintf(bodies[slot][r], sizeof bodies[slot][r], "ghost_%s_%s", q, where[r]);
    c.regions[r] = (st_region){bodies[slot][r], gi[r], gj[r]};
  }
  return c;
}

int st_program_shallow_water(st_program *p) {
  p->bodies = "stencil_kernels.h";
  add_fields(p);
  /* Ghost cells beyond the walls (regions on edges and corners). */
  st_add_call(p, ghost_fill("ghost_h", F_H, "h"));
  st_add_call(p, ghost_fill("ghost_u", F_U, "u"));
  st_add_call(p, ghost_fill("ghost_v", F_V, "v"));
  /* Mass: flux-limited advection in x, then in y. */
  st_add_call(p, (st_call){.name = "h_face_x", .body = "h_face_x", .out = T_HFX, .nin = 2,
                   .in = {IN(F_H, -2, 1, 0, 0), AT(F_U)}, .extent = EXT_FX});
  st_add_call(p, (st_call){.name = "flux_x", .body = "flux_x", .out = T_FX, .nin = 2,
                   .in = {AT(F_U), AT(T_HFX)}, .extent = EXT_FX});
  st_add_call(p, (st_call){.name = "advect_x", .body = "advect_x", .out = T_HX, .nin = 2,
                   .in = {AT(F_H), IN(T_FX, 0, 1, 0, 0)}, .extent = EXT_AX});
  st_add_call(p, (st_call){.name = "h_face_y", .body = "h_face_y", .out = T_HFY, .nin = 2,
                   .in = {IN(T_HX, 0, 0, -2, 1), AT(F_V)}, .extent = EXT_FY});
  st_add_call(p, (st_call){.name = "flux_y", .body = "flux_y", .out = T_FY, .nin = 2,
                   .in = {AT(F_V), AT(T_HFY)}, .extent = EXT_FY});
  st_add_call(p, (st_call){.name = "advect_y", .body = "advect_y", .out = F_H, .nin = 2,
                   .in = {AT(T_HX), IN(T_FY, 0, 0, 0, 1)}, .extent = EXT_0});
  /* Momentum, with the new depth (forward-backward). */
  st_add_call(p, ghost_fill("ghost_h_new", F_H, "h"));
  /* Diagnostics of the old winds (u and v are unchanged until update_u, so
   * they run here, in one loop with the new depth's uses): divergence,
   * kinetic energy, depth at corners, mass flux in y, Bernoulli, vorticity
   * (zero on the free-slip walls: regions), potential vorticity. */
  st_add_call(p, (st_call){.name = "divergence", .body = "divergence", .out = T_DIV, .nin = 2,
                   .in = {IN(F_U, 0, 1, 0, 0), IN(F_V, 0, 0, 0, 1)}, .extent = EXT_1});
  st_add_call(p, (st_call){.name = "kinetic_energy", .body = "kinetic_energy", .out = T_KE, .nin = 2,
                   .in = {IN(F_U, 0, 1, 0, 0), IN(F_V, 0, 0, 0, 1)}, .extent = EXT_1});
  st_add_call(p, (st_call){.name = "h_at_corners", .body = "h_at_corners", .out = T_HQ, .nin = 1,
                   .in = {IN(F_H, -1, 0, -1, 0)}, .extent = EXT_1});
  st_add_call(p, (st_call){.name = "mass_flux_v", .body = "mass_flux_v", .out = T_VM, .nin = 2,
                   .in = {AT(F_V), IN(F_H, 0, 0, -1, 0)}, .extent = EXT_1});
  st_add_call(p, (st_call){.name = "bernoulli", .body = "bernoulli", .out = T_B, .nin = 2,
                   .in = {AT(F_H), AT(T_KE)}, .extent = EXT_1});
  st_add_call(p, (st_call){.name = "vorticity", .body = "vorticity", .out = T_ZETA, .nin = 2,
                   .in = {IN(F_U, 0, 0, -1, 0), IN(F_V, -1, 0, 0, 0)}, .extent = EXT_1, .nregions = 4,
                   .regions = {{"wall_vorticity", G_FIRST, G_ALL}, {"wall_vorticity", G_LAST, G_ALL},
                               {"wall_vorticity", G_ALL, G_FIRST}, {"wall_vorticity", G_ALL, G_LAST}}});
  st_add_call(p, (st_call){.name = "potential_vorticity", .body = "potential_vorticity", .out = T_Q, .nin = 2,
                   .in = {AT(T_ZETA), AT(T_HQ)}, .extent = EXT_1});
  /* u first, then v from the new u (forward-backward Coriolis: stable). */
  st_add_call(p, (st_call){.name = "coriolis_u", .body = "coriolis_u", .out = T_CU, .nin = 2,
                   .in = {IN(T_Q, 0, 0, 0, 1), IN(T_VM, -1, 0, 0, 1)}, .extent = EXT_0});
  st_add_call(p, (st_call){.name = "damping_u", .body = "damping_u", .out = T_DU, .nin = 1,
                   .in = {IN(T_DIV, -1, 0, 0, 0)}, .extent = EXT_0});
  st_add_call(p, (st_call){.name = "damping_v", .body = "damping_v", .out = T_DV, .nin = 1,
                   .in = {IN(T_DIV, 0, 0, -1, 0)}, .extent = EXT_0});
  st_add_call(p, (st_call){.name = "tendency_u", .body = "tendency_u", .out = T_TU, .nin = 3,
                   .in = {AT(T_CU), IN(T_B, -1, 0, 0, 0), AT(T_DU)}, .extent = EXT_0});
  st_add_call(p, (st_call){.name = "update_u", .body = "update_u", .out = F_U, .nin = 2,
                   .in = {AT(F_U), AT(T_TU)}, .extent = EXT_0, .nregions = 1,
                   .regions = {{"wall_velocity", G_FIRST, G_ALL}}});
  st_add_call(p, ghost_fill("ghost_u_new", F_U, "u"));
  st_add_call(p, (st_call){.name = "mass_flux_u", .body = "mass_flux_u", .out = T_UM, .nin = 2,
                   .in = {AT(F_U), IN(F_H, -1, 0, 0, 0)}, .extent = EXT_1});
  st_add_call(p, (st_call){.name = "coriolis_v", .body = "coriolis_v", .out = T_CV, .nin = 2,
                   .in = {IN(T_Q, 0, 1, 0, 0), IN(T_UM, 0, 1, -1, 0)}, .extent = EXT_0});
  st_add_call(p, (st_call){.name = "tendency_v", .body = "tendency_v", .out = T_TV, .nin = 3,
                   .in = {AT(T_CV), IN(T_B, 0, 0, -1, 0), AT(T_DV)}, .extent = EXT_0});
  st_add_call(p, (st_call){.name = "update_v", .body = "update_v", .out = F_V, .nin = 2,
                   .in = {AT(F_V), AT(T_TV)}, .extent = EXT_0, .nregions = 1,
                   .regions = {{"wall_velocity", G_ALL, G_FIRST}}});
  return MAPP_OK;
}

