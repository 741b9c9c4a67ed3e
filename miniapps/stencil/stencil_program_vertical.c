/* The vertical program: a 3-D step in the spirit of FV3's vertical
 * stencils, nz levels per column. Horizontal flux-form advection of a
 * layer thickness dp and a tracer q (per level, parallel in k); a
 * remap-like pass exchanging tracer mass between neighbouring levels
 * (reads k - 1, k, k + 1; the bottom and top levels have their own
 * bodies); an implicit vertical diffusion of q, a tridiagonal system per
 * column solved by Thomas: a forward sweep (computation(FORWARD)) and a
 * backward one (computation(BACKWARD)), with boundary intervals. Bodies in
 * stencil_bodies_vertical.h. */
#include <stdio.h>

#include "mapp_error.h"
#include "stencil_program.h"

enum {
  Q, DP, U, V, /* state: tracer, thickness, fixed winds */
  FX, FY, FQX, FQY, DPN, QDP, QN, QR, G, CP, DD,
  NFIELDS
};

static void add_fields(st_program *p) {
  static const st_field_def table[NFIELDS] = {
      {"q", ST_STAGGER_CENTRE},       {"dp", ST_STAGGER_CENTRE},      {"u", ST_STAGGER_FACE_X},
      {"v", ST_STAGGER_FACE_Y},       {"dp_flux_x", ST_STAGGER_FACE_X}, {"dp_flux_y", ST_STAGGER_FACE_Y},
      {"q_flux_x", ST_STAGGER_FACE_X}, {"q_flux_y", ST_STAGGER_FACE_Y}, {"dp_new", ST_STAGGER_CENTRE},
      {"q_mass", ST_STAGGER_CENTRE},  {"q_advected", ST_STAGGER_CENTRE}, {"q_remapped", ST_STAGGER_CENTRE},
      {"coupling", ST_STAGGER_CENTRE}, {"sweep_c", ST_STAGGER_CENTRE}, {"sweep_d", ST_STAGGER_CENTRE},
  };
  st_add_fields(p, table, NFIELDS, 3);
  p->nstate = 4;
}

#define EXT_FACE_X ST_EXT(0, 1, 0, 0)
#define EXT_FACE_Y ST_EXT(0, 0, 0, 1)
#define CALL(...) st_add_call(p, (st_call){__VA_ARGS__})

int st_program_vertical(st_program *p) {
  p->bodies = "stencil_bodies_vertical.h";
  add_fields(p);
  /* Horizontal advection, level by level (parallel in k). The y fluxes
   * first: they are read a row ahead, so a sweep over rows of columns runs
   * them a row before their readers; the x fluxes, read in their own row,
   * run with their readers. */
  CALL(.name = "dp_flux_y", .body = "dp_flux_y", .out = FY, .nin = 2, .in = {ST_AT(V), ST_IN(DP, 0, 0, -1, 0)},
       .extent = EXT_FACE_Y);
  CALL(.name = "q_flux_y", .body = "q_flux_y", .out = FQY, .nin = 3,
       .in = {ST_AT(FY), ST_AT(V), ST_IN(Q, 0, 0, -1, 0)}, .extent = EXT_FACE_Y);
  CALL(.name = "dp_flux_x", .body = "dp_flux_x", .out = FX, .nin = 2, .in = {ST_AT(U), ST_IN(DP, -1, 0, 0, 0)},
       .extent = EXT_FACE_X);
  CALL(.name = "q_flux_x", .body = "q_flux_x", .out = FQX, .nin = 3,
       .in = {ST_AT(FX), ST_AT(U), ST_IN(Q, -1, 0, 0, 0)}, .extent = EXT_FACE_X);
  CALL(.name = "thickness_new", .body = "thickness_new", .out = DPN, .nin = 3,
       .in = {ST_AT(DP), ST_IN(FX, 0, 1, 0, 0), ST_IN(FY, 0, 0, 0, 1)}, .extent = ST_EXT_0);
  CALL(.name = "tracer_mass_new", .body = "tracer_mass_new", .out = QDP, .nin = 4,
       .in = {ST_AT(Q), ST_AT(DP), ST_IN(FQX, 0, 1, 0, 0), ST_IN(FQY, 0, 0, 0, 1)}, .extent = ST_EXT_0);
  CALL(.name = "mixing_ratio", .body = "mixing_ratio", .out = QN, .nin = 2, .in = {ST_AT(QDP), ST_AT(DPN)},
       .extent = ST_EXT_0);
  /* The remap-like pass: levels k - 1, k, k + 1; bottom and top their own. */
  CALL(.name = "remap_bottom", .body = "remap_bottom", .k = ST_K_BOTTOM, .out = QR, .nin = 2,
       .in = {ST_KIN(QN, 0, 1), ST_KIN(DPN, 0, 1)}, .extent = ST_EXT_0);
  CALL(.name = "remap", .body = "remap", .k = ST_K_INNER, .out = QR, .nin = 2,
       .in = {ST_KIN(QN, -1, 1), ST_KIN(DPN, -1, 1)}, .extent = ST_EXT_0);
  CALL(.name = "remap_top", .body = "remap_top", .k = ST_K_TOP, .out = QR, .nin = 2,
       .in = {ST_KIN(QN, -1, 0), ST_KIN(DPN, -1, 0)}, .extent = ST_EXT_0);
  /* Implicit vertical diffusion: the coupling of each pair of levels
   * (once per interface), then Thomas, forward then backward. */
  CALL(.name = "coupling", .body = "coupling", .k = ST_K_BELOW_TOP, .out = G, .nin = 1, .in = {ST_KIN(DPN, 0, 1)},
       .extent = ST_EXT_0);
  CALL(.name = "sweep_c_bottom", .body = "sweep_c_bottom", .order = ST_K_FORWARD, .k = ST_K_BOTTOM, .out = CP,
       .nin = 2, .in = {ST_AT(DPN), ST_AT(G)}, .extent = ST_EXT_0);
  CALL(.name = "sweep_c", .body = "sweep_c", .order = ST_K_FORWARD, .k = ST_K_INNER, .out = CP, .nin = 3,
       .in = {ST_AT(DPN), ST_KIN(G, -1, 0), ST_KIN(CP, -1, -1)}, .extent = ST_EXT_0);
  CALL(.name = "sweep_d_bottom", .body = "sweep_d_bottom", .order = ST_K_FORWARD, .k = ST_K_BOTTOM, .out = DD,
       .nin = 3, .in = {ST_AT(QR), ST_AT(DPN), ST_AT(G)}, .extent = ST_EXT_0);
  CALL(.name = "sweep_d", .body = "sweep_d", .order = ST_K_FORWARD, .k = ST_K_INNER, .out = DD, .nin = 5,
       .in = {ST_AT(QR), ST_AT(DPN), ST_KIN(G, -1, 0), ST_KIN(CP, -1, -1), ST_KIN(DD, -1, -1)}, .extent = ST_EXT_0);
  CALL(.name = "sweep_d_top", .body = "sweep_d_top", .order = ST_K_FORWARD, .k = ST_K_TOP, .out = DD, .nin = 5,
       .in = {ST_AT(QR), ST_AT(DPN), ST_KIN(G, -1, -1), ST_KIN(CP, -1, -1), ST_KIN(DD, -1, -1)}, .extent = ST_EXT_0);
  CALL(.name = "solve_top", .body = "solve_top", .order = ST_K_BACKWARD, .k = ST_K_TOP, .out = Q, .nin = 1,
       .in = {ST_AT(DD)}, .extent = ST_EXT_0);
  CALL(.name = "solve", .body = "solve", .order = ST_K_BACKWARD, .k = ST_K_BELOW_TOP, .out = Q, .nin = 3,
       .in = {ST_AT(DD), ST_AT(CP), ST_KIN(Q, 1, 1)}, .extent = ST_EXT_0);
  CALL(.name = "thickness_commit", .body = "copy", .out = DP, .nin = 1, .in = {ST_AT(DPN)}, .extent = ST_EXT_0);
  return MAPP_OK;
}
