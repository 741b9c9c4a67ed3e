"""The vertical program of mapp-stencil as GT4Py (gtscript) stencils.

One stencil per call of stencil_program_vertical.c, in its order (CALLS),
with the bodies of stencil_bodies_vertical.h in the C's operation order:
horizontal flux-form advection of a layer thickness dp and a tracer q
level by level (PARALLEL), a remap-like exchange of tracer mass between
neighbouring levels (the bottom, inner and top levels each their own
interval), and an implicit vertical diffusion solved per column by Thomas:
a FORWARD sweep and a BACKWARD one, as FV3's vertical solvers are written
in gtscript. The C's level ranges are GT4Py's intervals: bottom (0, 1),
inner (1, -1), top (-1, None), below the top (0, -1).

Fields are (nx + 2, ny + 2, nz) arrays: the interior and a 1-cell halo,
zero, as the app's walls leave theirs on one rank (u and v are zero on the
walls, so no flux reads a halo value that matters); local cell (i, j) is at
[i + 1, j + 1, k].
"""

import os

import numpy as np
import peer_program
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, PARALLEL, computation, interval  # noqa: F401

F = gtscript.Field[np.float64]
HALO = 1

# ------------------------------------------------------------------ bodies: advection


def dp_flux_x(u: F, dp: F, out: F):
    with computation(PARALLEL), interval(...):
        out = u * (dp[-1, 0, 0] if u > 0.0 else dp)


def dp_flux_y(v: F, dp: F, out: F):
    with computation(PARALLEL), interval(...):
        out = v * (dp[0, -1, 0] if v > 0.0 else dp)


def q_flux_x(fx: F, u: F, q: F, out: F):
    # the thickness flux times the upwind mixing ratio (a constant q stays constant)
    with computation(PARALLEL), interval(...):
        out = fx * (q[-1, 0, 0] if u > 0.0 else q)


def q_flux_y(fy: F, v: F, q: F, out: F):
    with computation(PARALLEL), interval(...):
        out = fy * (q[0, -1, 0] if v > 0.0 else q)


def thickness_new(dp: F, fx: F, fy: F, out: F, dt: float, rdx: float, rdy: float):
    with computation(PARALLEL), interval(...):
        out = dp - dt * rdx * (fx[1, 0, 0] - fx) - dt * rdy * (fy[0, 1, 0] - fy)


def tracer_mass_new(q: F, dp: F, fqx: F, fqy: F, out: F, dt: float, rdx: float, rdy: float):
    with computation(PARALLEL), interval(...):
        out = q * dp - dt * rdx * (fqx[1, 0, 0] - fqx) - dt * rdy * (fqy[0, 1, 0] - fqy)


def mixing_ratio(qdp: F, dpn: F, out: F):
    with computation(PARALLEL), interval(...):
        out = qdp / dpn


def copy(x: F, out: F):
    with computation(PARALLEL), interval(...):
        out = x

# ------------------------------------------------------------------ bodies: remap


@gtscript.function
def level_flux(q_low, q_high, dp_low, dp_high, mix):
    # st_level_flux: tracer mass from a level to the one above it
    thinner = dp_low if dp_low < dp_high else dp_high
    return mix * thinner * (q_low - q_high)


def remap_bottom(qn: F, dpn: F, out: F, mix: float):
    with computation(PARALLEL), interval(0, 1):
        out = qn - level_flux(qn, qn[0, 0, 1], dpn, dpn[0, 0, 1], mix) / dpn


def remap(qn: F, dpn: F, out: F, mix: float):
    with computation(PARALLEL), interval(1, -1):
        out = qn + (level_flux(qn[0, 0, -1], qn, dpn[0, 0, -1], dpn, mix)
                    - level_flux(qn, qn[0, 0, 1], dpn, dpn[0, 0, 1], mix)) / dpn


def remap_top(qn: F, dpn: F, out: F, mix: float):
    with computation(PARALLEL), interval(-1, None):
        out = qn + level_flux(qn[0, 0, -1], qn, dpn[0, 0, -1], dpn, mix) / dpn

# ------------------------------------------------------------------ bodies: the vertical solve


@gtscript.function
def pivot(dp, g_low, g_up, cp_below):
    # st_pivot: m_k of row k
    return dp + g_low + g_up + g_low * cp_below


def coupling(dpn: F, out: F, kappa: float):
    with computation(PARALLEL), interval(0, -1):
        out = kappa / (0.5 * (dpn + dpn[0, 0, 1]))


def coupling_planted(dpn: F, out: F, kappa: float):
    # a planted change of one body (MAPP_STENCIL_PEER_PLANT=coupling), for
    # the test that shows the answer check fails on it
    with computation(PARALLEL), interval(0, -1):
        out = kappa / (0.5001 * (dpn + dpn[0, 0, 1]))


def sweep_c_bottom(dpn: F, g: F, out: F):
    with computation(FORWARD), interval(0, 1):
        out = -g / (dpn + g)


def sweep_c(dpn: F, g: F, cp: F):
    with computation(FORWARD), interval(1, -1):
        cp = -g / pivot(dpn, g[0, 0, -1], g, cp[0, 0, -1])


def sweep_d_bottom(qr: F, dpn: F, g: F, out: F):
    with computation(FORWARD), interval(0, 1):
        out = dpn * qr / (dpn + g)


def sweep_d(qr: F, dpn: F, g: F, cp: F, dd: F):
    with computation(FORWARD), interval(1, -1):
        dd = (dpn * qr + g[0, 0, -1] * dd[0, 0, -1]) / pivot(dpn, g[0, 0, -1], g, cp[0, 0, -1])


def sweep_d_top(qr: F, dpn: F, g: F, cp: F, dd: F):
    with computation(FORWARD), interval(-1, None):
        dd = (dpn * qr + g[0, 0, -1] * dd[0, 0, -1]) / pivot(dpn, g[0, 0, -1], 0.0, cp[0, 0, -1])


def solve_top(dd: F, out: F):
    with computation(BACKWARD), interval(-1, None):
        out = dd


def solve(dd: F, cp: F, q: F):
    with computation(BACKWARD), interval(0, -1):
        q = dd - cp * q[0, 0, 1]

# ------------------------------------------------------------------ the step


EXT_0 = (0, 0, 0, 0)
EXT_FACE_X = (0, 1, 0, 0)
EXT_FACE_Y = (0, 0, 0, 1)

STATE = ["q", "dp", "u", "v"]
TEMPORARIES = ["dp_flux_x", "dp_flux_y", "q_flux_x", "q_flux_y", "dp_new", "q_mass", "q_advected", "q_remapped",
               "coupling", "sweep_c", "sweep_d"]
FIELDS = STATE + TEMPORARIES

# The 19 calls: (name, definition, fields in the definition's order, scalar
# arguments, extent), in stencil_program_vertical.c's order.
CALLS = [
    ("dp_flux_y", dp_flux_y, ["v", "dp", "dp_flux_y"], [], EXT_FACE_Y),
    ("q_flux_y", q_flux_y, ["dp_flux_y", "v", "q", "q_flux_y"], [], EXT_FACE_Y),
    ("dp_flux_x", dp_flux_x, ["u", "dp", "dp_flux_x"], [], EXT_FACE_X),
    ("q_flux_x", q_flux_x, ["dp_flux_x", "u", "q", "q_flux_x"], [], EXT_FACE_X),
    ("thickness_new", thickness_new, ["dp", "dp_flux_x", "dp_flux_y", "dp_new"], ["dt", "rdx", "rdy"], EXT_0),
    ("tracer_mass_new", tracer_mass_new, ["q", "dp", "q_flux_x", "q_flux_y", "q_mass"], ["dt", "rdx", "rdy"], EXT_0),
    ("mixing_ratio", mixing_ratio, ["q_mass", "dp_new", "q_advected"], [], EXT_0),
    ("remap_bottom", remap_bottom, ["q_advected", "dp_new", "q_remapped"], ["mix"], EXT_0),
    ("remap", remap, ["q_advected", "dp_new", "q_remapped"], ["mix"], EXT_0),
    ("remap_top", remap_top, ["q_advected", "dp_new", "q_remapped"], ["mix"], EXT_0),
    ("coupling", coupling_planted if os.environ.get("MAPP_STENCIL_PEER_PLANT") == "coupling" else coupling,
     ["dp_new", "coupling"], ["kappa"], EXT_0),
    ("sweep_c_bottom", sweep_c_bottom, ["dp_new", "coupling", "sweep_c"], [], EXT_0),
    ("sweep_c", sweep_c, ["dp_new", "coupling", "sweep_c"], [], EXT_0),
    ("sweep_d_bottom", sweep_d_bottom, ["q_remapped", "dp_new", "coupling", "sweep_d"], [], EXT_0),
    ("sweep_d", sweep_d, ["q_remapped", "dp_new", "coupling", "sweep_c", "sweep_d"], [], EXT_0),
    ("sweep_d_top", sweep_d_top, ["q_remapped", "dp_new", "coupling", "sweep_c", "sweep_d"], [], EXT_0),
    ("solve_top", solve_top, ["sweep_d", "q"], [], EXT_0),
    ("solve", solve, ["sweep_d", "sweep_c", "q"], [], EXT_0),
    ("thickness_commit", copy, ["dp_new", "dp"], [], EXT_0),
]
SCALARS = ["dt", "rdx", "rdy", "kappa", "mix"]


def origin_domain(extent, nx, ny, nz=1):
    return peer_program.origin_domain(extent, HALO, nx, ny, nz)


class Step:
    """The 19 calls, each a Frozen stencil (c00 ... c18): `run` the time loop
    (Python mode, and the orchestrated program of --calls per-run), `step`
    one step (the orchestrated program of --calls per-step)."""

    def __init__(self, stencils, nx, ny, nz=1):
        peer_program.freeze_calls(self, stencils, CALLS, HALO, nx, ny, nz)

    def run(self, q, dp, u, v, dp_flux_x, dp_flux_y, q_flux_x, q_flux_y, dp_new, q_mass, q_advected, q_remapped,
            coupling, sweep_c, sweep_d, dt: float, rdx: float, rdy: float, kappa: float, mix: float, nsteps: int):
        for _ in range(nsteps):
            self.step(q, dp, u, v, dp_flux_x, dp_flux_y, q_flux_x, q_flux_y, dp_new, q_mass, q_advected, q_remapped,
                      coupling, sweep_c, sweep_d, dt, rdx, rdy, kappa, mix)

    def step(self, q, dp, u, v, dp_flux_x, dp_flux_y, q_flux_x, q_flux_y, dp_new, q_mass, q_advected, q_remapped,
             coupling, sweep_c, sweep_d, dt: float, rdx: float, rdy: float, kappa: float, mix: float):
        self.c00(v, dp, dp_flux_y)
        self.c01(dp_flux_y, v, q, q_flux_y)
        self.c02(u, dp, dp_flux_x)
        self.c03(dp_flux_x, u, q, q_flux_x)
        self.c04(dp, dp_flux_x, dp_flux_y, dp_new, dt, rdx, rdy)
        self.c05(q, dp, q_flux_x, q_flux_y, q_mass, dt, rdx, rdy)
        self.c06(q_mass, dp_new, q_advected)
        self.c07(q_advected, dp_new, q_remapped, mix)
        self.c08(q_advected, dp_new, q_remapped, mix)
        self.c09(q_advected, dp_new, q_remapped, mix)
        self.c10(dp_new, coupling, kappa)
        self.c11(dp_new, coupling, sweep_c)
        self.c12(dp_new, coupling, sweep_c)
        self.c13(q_remapped, dp_new, coupling, sweep_d)
        self.c14(q_remapped, dp_new, coupling, sweep_c, sweep_d)
        self.c15(q_remapped, dp_new, coupling, sweep_c, sweep_d)
        self.c16(sweep_d, q)
        self.c17(sweep_d, sweep_c, q)
        self.c18(dp_new, dp)


def check_table():
    peer_program.check_calls(Step, CALLS, 19)
