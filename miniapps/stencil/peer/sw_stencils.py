"""The shallow-water step of mapp-stencil as GT4Py (gtscript) stencils.

One stencil per body of stencil_kernels.h, called as the 27 calls of
stencil_program_shallow_water.c are: the same outputs, extents (compute
domains), horizontal regions and order (CALLS below). Every expression keeps
the C's operation order, so with the same compiler flags (no contraction)
the arithmetic of a point is the C's.

Fields are 3-D arrays (I, J, K) of (nx + 6) x (ny + 6) x 1 doubles: the
interior and a 3-cell halo (ST_HALO), local cell (i, j) at [i + 3, j + 3, 0]
(u on its west face, v on its south face, corners at its south-west corner,
as in the C). A call's compute domain is its extent: EXT(ilo, ihi, jlo, jhi)
is [ilo, n + ihi) in each axis; regions are written relative to that domain
(I[0] is its first point, I[-1] its last), so every stencil compiles once
for any grid size.

Two things gtscript cannot say as the C says them, and how they are said:
- st_mirror reads the image of a ghost cell at an offset depending on its
  distance to the wall; gtscript offsets are constants, so each of the C's 8
  ghost regions is split into one region per ghost line (edges) or cell
  (corners), 48 in all, each with its constant offset (the generated source
  below). GT4Py forbids writing a field read with an offset in one
  computation, so the images go through a scratch field (ghost_image): one
  computation reads them, the next writes them (the C reads only interior
  cells, so both give the same values). A gtscript temporary in its place
  gives wrong ghosts on GT4Py's GridTools backends: a temporary written
  under several horizontal regions and read back in a later computation
  comes back 0.0 at some points (gt:cpu_kfirst on any thread count,
  gt:cpu_ifirst on 2 threads, from run to run); numpy and dace:cpu are
  right, and so is the same stencil with the temporary made a field
  (race_probe.py finds it; docs/stencil-performance.md has the reproducer).
- potential_vorticity uses the global row gj (Coriolis f0 + beta y); gtscript
  has no index in I or J, so f per row is an input field (FCOR), as Pace
  keeps f in its grid data.
"""

import linecache
import os

import numpy as np
import peer_program
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import I, J, PARALLEL, computation, horizontal, interval, region  # noqa: F401

F = gtscript.Field[np.float64]
HALO = 3

# ------------------------------------------------------------------ bodies


@gtscript.function
def limited_slope(left, centre, right):
    # st_limited_slope: the smaller one-sided difference, 0 at extrema
    dl = centre - left
    dr = right - centre
    smaller = dl if abs(dl) < abs(dr) else dr
    return smaller if dl * dr > 0.0 else 0.0


def h_face_x(h: F, u: F, out: F):
    with computation(PARALLEL), interval(...):
        from_left = h[-1, 0, 0] + 0.5 * limited_slope(h[-2, 0, 0], h[-1, 0, 0], h[0, 0, 0])
        from_right = h[0, 0, 0] - 0.5 * limited_slope(h[-1, 0, 0], h[0, 0, 0], h[1, 0, 0])
        out = from_left if u >= 0.0 else from_right


def h_face_y(h: F, v: F, out: F):
    with computation(PARALLEL), interval(...):
        from_left = h[0, -1, 0] + 0.5 * limited_slope(h[0, -2, 0], h[0, -1, 0], h[0, 0, 0])
        from_right = h[0, 0, 0] - 0.5 * limited_slope(h[0, -1, 0], h[0, 0, 0], h[0, 1, 0])
        out = from_left if v >= 0.0 else from_right


def mass_flux(w: F, h_face: F, out: F):
    # flux_x, flux_y: st_mass_flux
    with computation(PARALLEL), interval(...):
        out = w * h_face


def advect_x(h: F, fx: F, out: F, dt: float, rdx: float):
    with computation(PARALLEL), interval(...):
        out = h - dt * rdx * (fx[1, 0, 0] - fx[0, 0, 0])


def advect_y(h: F, fy: F, out: F, dt: float, rdy: float):
    with computation(PARALLEL), interval(...):
        out = h - dt * rdy * (fy[0, 1, 0] - fy[0, 0, 0])


def divergence(u: F, v: F, out: F, rdx: float, rdy: float):
    with computation(PARALLEL), interval(...):
        out = (u[1, 0, 0] - u[0, 0, 0]) * rdx + (v[0, 1, 0] - v[0, 0, 0]) * rdy


def kinetic_energy(u: F, v: F, out: F):
    with computation(PARALLEL), interval(...):
        out = 0.25 * (u[0, 0, 0] * u[0, 0, 0] + u[1, 0, 0] * u[1, 0, 0] + v[0, 0, 0] * v[0, 0, 0]
                      + v[0, 1, 0] * v[0, 1, 0])


def h_at_corners(h: F, out: F):
    with computation(PARALLEL), interval(...):
        out = 0.25 * (h[0, 0, 0] + h[-1, 0, 0] + h[0, -1, 0] + h[-1, -1, 0])


def mass_flux_v(v: F, h: F, out: F):
    # st_face_mass_flux across y
    with computation(PARALLEL), interval(...):
        out = v * (0.5 * (h[0, 0, 0] + h[0, -1, 0]))


def mass_flux_u(u: F, h: F, out: F):
    # st_face_mass_flux across x
    with computation(PARALLEL), interval(...):
        out = u * (0.5 * (h[0, 0, 0] + h[-1, 0, 0]))


def bernoulli(h: F, ke: F, out: F, g: float):
    with computation(PARALLEL), interval(...):
        out = g * h + ke


def vorticity(u: F, v: F, out: F, rdx: float, rdy: float):
    # extent EXT_1, [-1, n + 1): the wall lines 0 and n are I[0] + 1 and I[-1]
    with computation(PARALLEL), interval(...):
        out = (v[0, 0, 0] - v[-1, 0, 0]) * rdx - (u[0, 0, 0] - u[0, -1, 0]) * rdy
        with horizontal(region[I[0] + 1:I[0] + 2, :], region[I[-1]:I[-1] + 1, :],
                        region[:, J[0] + 1:J[0] + 2], region[:, J[-1]:J[-1] + 1]):
            out = 0.0  # wall_vorticity


def potential_vorticity(zeta: F, h_corner: F, fcor: F, out: F):
    with computation(PARALLEL), interval(...):
        out = (zeta + fcor) / h_corner


def coriolis_u(q: F, vm: F, out: F):
    with computation(PARALLEL), interval(...):
        out = 0.5 * (q[0, 0, 0] + q[0, 1, 0]) * (0.25 * (vm[-1, 0, 0] + vm[0, 0, 0] + vm[-1, 1, 0] + vm[0, 1, 0]))


def coriolis_v(q: F, um: F, out: F):
    with computation(PARALLEL), interval(...):
        out = -(0.5 * (q[0, 0, 0] + q[1, 0, 0]) * (0.25 * (um[0, -1, 0] + um[0, 0, 0] + um[1, -1, 0]
                                                            + um[1, 0, 0])))


def damping_u(div: F, out: F, nu: float, rdx: float):
    with computation(PARALLEL), interval(...):
        out = nu * (div[0, 0, 0] - div[-1, 0, 0]) * rdx


def damping_v(div: F, out: F, nu: float, rdy: float):
    with computation(PARALLEL), interval(...):
        out = nu * (div[0, 0, 0] - div[0, -1, 0]) * rdy


def tendency_u(coriolis: F, b: F, damping: F, out: F, rdx: float):
    with computation(PARALLEL), interval(...):
        out = coriolis - (b[0, 0, 0] - b[-1, 0, 0]) * rdx + damping


def tendency_v(coriolis: F, b: F, damping: F, out: F, rdy: float):
    with computation(PARALLEL), interval(...):
        out = coriolis - (b[0, 0, 0] - b[0, -1, 0]) * rdy + damping


def update_u(u: F, tendency: F, dt: float):
    # extent EXT_0: the west wall line 0 is I[0] (wall_velocity)
    with computation(PARALLEL), interval(...):
        u = u + dt * tendency
        with horizontal(region[I[0]:I[0] + 1, :]):
            u = 0.0


def update_v(v: F, tendency: F, dt: float):
    with computation(PARALLEL), interval(...):
        v = v + dt * tendency
        with horizontal(region[:, J[0]:J[0] + 1]):
            v = 0.0


# ------------------------------------------------------------------ ghosts

KEEP, EVEN_LO, EVEN_HI, ODD_LO, ODD_HI = range(5)
# (i kind, j kind) of the C's 8 regions w, e, s, n, sw, se, nw, ne, per field
GHOST_KINDS = {
    "h": ((EVEN_LO, KEEP), (EVEN_HI, KEEP), (KEEP, EVEN_LO), (KEEP, EVEN_HI),
          (EVEN_LO, EVEN_LO), (EVEN_HI, EVEN_LO), (EVEN_LO, EVEN_HI), (EVEN_HI, EVEN_HI)),
    "u": ((ODD_LO, KEEP), (ODD_HI, KEEP), (KEEP, EVEN_LO), (KEEP, EVEN_HI),
          (ODD_LO, EVEN_LO), (ODD_HI, EVEN_LO), (ODD_LO, EVEN_HI), (ODD_HI, EVEN_HI)),
    "v": ((EVEN_LO, KEEP), (EVEN_HI, KEEP), (KEEP, ODD_LO), (KEEP, ODD_HI),
          (EVEN_LO, ODD_LO), (EVEN_HI, ODD_LO), (EVEN_LO, ODD_HI), (EVEN_HI, ODD_HI)),
}


def _ghost_lines(kind):
    """The ghost lines of one axis for a kind: (region slice text, image
    offset or None for the wall face's 0) per line; KEEP: the inside, offset
    0. The call's domain is the padded array, [-3, n + 3): global g = o is
    I[0] + o + 3, g = n + o is I[-1] + o - 2."""
    def at(axis, rel):
        return f"{axis}[{rel[0]}]" + (f" + {rel[1]}" if rel[1] > 0 else f" - {-rel[1]}" if rel[1] < 0 else "")

    def lines(axis):
        if kind == KEEP:
            return [(f"{at(axis, (0, 3))}:{at(axis, (-1, -2))}", 0)]
        out = []
        for o in range(-3, 0) if kind in (EVEN_LO, ODD_LO) else range(0, 3):
            rel = (0, o + 3) if kind in (EVEN_LO, ODD_LO) else (-1, o - 2)
            start, stop = at(axis, rel), at(axis, (rel[0], rel[1] + 1))
            # st_mirror_delta: the image's offset from the ghost cell
            delta = {EVEN_LO: -1 - 2 * o, ODD_LO: -2 * o, EVEN_HI: -1 - 2 * o, ODD_HI: -2 * o}[kind]
            if kind == ODD_HI and o == 0:
                delta = None  # the wall face itself: 0
            out.append((f"{start}:{stop}", delta))
        return out
    return lines


def ghost_source(field):
    """gtscript source of ghost_<field>: the C's 8 regions (edges, then
    corners), one region per ghost line or cell."""
    reads, writes = [], []
    for kx, ky in GHOST_KINDS[field]:
        odd = (kx in (ODD_LO, ODD_HI)) + (ky in (ODD_LO, ODD_HI))
        xs, ys = _ghost_lines(kx)("I"), _ghost_lines(ky)("J")
        for xr, dx in xs:
            for yr, dy in ys:
                if dx is None or dy is None:
                    value = "0.0"
                else:
                    value = f"{'-' if odd % 2 else ''}q[{dx}, {dy}, 0]"
                reads.append(f"        with horizontal(region[{xr}, {yr}]):\n            img = {value}\n")
        wx = xs[0][0].split(":")[0] + ":" + xs[-1][0].split(":")[1]
        wy = ys[0][0].split(":")[0] + ":" + ys[-1][0].split(":")[1]
        writes.append(f"region[{wx}, {wy}]")
    src = (f"def ghost_{field}(q: F, img: F):\n    with computation(PARALLEL), interval(...):\n" + "".join(reads)
           + "    with computation(PARALLEL), interval(...):\n"
           + f"        with horizontal({', '.join(writes)}):\n            q = img\n")
    if os.environ.get("MAPP_STENCIL_PEER_PLANT") == "ghost-temporary":
        # the images through a gtscript temporary (img unused), for the
        # test that shows race_probe.py finds GT4Py's wrong ghosts
        src = src.replace("img = ", "image = ").replace("q = img", "q = image")
    return src


def _define(name, src):
    """A function from generated source, its lines registered with linecache
    so that gtscript (which reads a definition's source) can read them."""
    filename = f"<mapp-stencil-gt4py {name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = dict(globals())
    exec(compile(src, filename, "exec"), scope)
    return scope[name]


ghost_h = _define("ghost_h", ghost_source("h"))
ghost_u = _define("ghost_u", ghost_source("u"))
ghost_v = _define("ghost_v", ghost_source("v"))

# ------------------------------------------------------------------ the step

# Extents, EXT(ilo, ihi, jlo, jhi) as in stencil_program_shallow_water.c.
EXT_PADDED = (-3, 3, -3, 3)
EXT_0 = (0, 0, 0, 0)
EXT_1 = (-1, 1, -1, 1)
EXT_FX = (0, 1, -2, 2)
EXT_AX = (0, 0, -2, 2)
EXT_FY = (0, 0, 0, 1)

# The fields, in the table's order: the state, then the temporaries (and
# FCOR, the Coriolis parameter per corner row, an input of the step).
STATE = ["h", "u", "v"]
TEMPORARIES = ["div", "ke", "zeta", "h_face_x", "flux_x", "h_x", "h_face_y", "flux_y", "h_corner", "pv",
               "mass_flux_u", "mass_flux_v", "bernoulli", "coriolis_u", "coriolis_v", "damping_u", "damping_v",
               "tendency_u", "tendency_v", "ghost_image"]
FIELDS = STATE + TEMPORARIES + ["fcor"]

# The 27 calls: (name, definition, fields in the definition's order, scalar
# arguments, extent). The step's order is this list's.
CALLS = [
    ("ghost_h", ghost_h, ["h", "ghost_image"], [], EXT_PADDED),
    ("ghost_u", ghost_u, ["u", "ghost_image"], [], EXT_PADDED),
    ("ghost_v", ghost_v, ["v", "ghost_image"], [], EXT_PADDED),
    ("h_face_x", h_face_x, ["h", "u", "h_face_x"], [], EXT_FX),
    ("flux_x", mass_flux, ["u", "h_face_x", "flux_x"], [], EXT_FX),
    ("advect_x", advect_x, ["h", "flux_x", "h_x"], ["dt", "rdx"], EXT_AX),
    ("h_face_y", h_face_y, ["h_x", "v", "h_face_y"], [], EXT_FY),
    ("flux_y", mass_flux, ["v", "h_face_y", "flux_y"], [], EXT_FY),
    ("advect_y", advect_y, ["h_x", "flux_y", "h"], ["dt", "rdy"], EXT_0),
    ("ghost_h_new", ghost_h, ["h", "ghost_image"], [], EXT_PADDED),
    ("divergence", divergence, ["u", "v", "div"], ["rdx", "rdy"], EXT_1),
    ("kinetic_energy", kinetic_energy, ["u", "v", "ke"], [], EXT_1),
    ("h_at_corners", h_at_corners, ["h", "h_corner"], [], EXT_1),
    ("mass_flux_v", mass_flux_v, ["v", "h", "mass_flux_v"], [], EXT_1),
    ("bernoulli", bernoulli, ["h", "ke", "bernoulli"], ["g"], EXT_1),
    ("vorticity", vorticity, ["u", "v", "zeta"], ["rdx", "rdy"], EXT_1),
    ("potential_vorticity", potential_vorticity, ["zeta", "h_corner", "fcor", "pv"], [], EXT_1),
    ("coriolis_u", coriolis_u, ["pv", "mass_flux_v", "coriolis_u"], [], EXT_0),
    ("damping_u", damping_u, ["div", "damping_u"], ["nu", "rdx"], EXT_0),
    ("damping_v", damping_v, ["div", "damping_v"], ["nu", "rdy"], EXT_0),
    ("tendency_u", tendency_u, ["coriolis_u", "bernoulli", "damping_u", "tendency_u"], ["rdx"], EXT_0),
    ("update_u", update_u, ["u", "tendency_u"], ["dt"], EXT_0),
    ("ghost_u_new", ghost_u, ["u", "ghost_image"], [], EXT_PADDED),
    ("mass_flux_u", mass_flux_u, ["u", "h", "mass_flux_u"], [], EXT_1),
    ("coriolis_v", coriolis_v, ["pv", "mass_flux_u", "coriolis_v"], [], EXT_0),
    ("tendency_v", tendency_v, ["coriolis_v", "bernoulli", "damping_v", "tendency_v"], ["rdy"], EXT_0),
    ("update_v", update_v, ["v", "tendency_v"], ["dt"], EXT_0),
]
SCALARS = ["dt", "rdx", "rdy", "g", "nu"]


def origin_domain(extent, nx, ny, nz=1):
    return peer_program.origin_domain(extent, HALO, nx, ny, nz)


class Step:
    """The 27 calls, each a Frozen stencil (c00 ... c26). `run` is the time
    loop, written out call by call so that DaCe can parse it (no lists, no
    dynamic Python): called from Python it is the seed's Python mode; under
    dace.method it is the orchestrated program of --calls per-run. `step` is
    one step, the same calls: the orchestrated program of --calls per-step."""

    def __init__(self, stencils, nx, ny, nz=1):
        peer_program.freeze_calls(self, stencils, CALLS, HALO, nx, ny, nz)

    def run(self, h, u, v, div, ke, zeta, h_face_x, flux_x, h_x, h_face_y, flux_y, h_corner, pv, mass_flux_u,
            mass_flux_v, bernoulli, coriolis_u, coriolis_v, damping_u, damping_v, tendency_u, tendency_v,
            ghost_image, fcor,
            dt: float, rdx: float, rdy: float, g: float, nu: float, nsteps: int):
        for _ in range(nsteps):
            self.step(h, u, v, div, ke, zeta, h_face_x, flux_x, h_x, h_face_y, flux_y, h_corner, pv, mass_flux_u,
                      mass_flux_v, bernoulli, coriolis_u, coriolis_v, damping_u, damping_v, tendency_u, tendency_v,
                      ghost_image, fcor, dt, rdx, rdy, g, nu)

    # One step, the same 27 calls: orchestrated, the program of --calls
    # per-step, which Python calls once a step (as Pace calls its
    # orchestrated step from its time loop).
    def step(self, h, u, v, div, ke, zeta, h_face_x, flux_x, h_x, h_face_y, flux_y, h_corner, pv, mass_flux_u,
             mass_flux_v, bernoulli, coriolis_u, coriolis_v, damping_u, damping_v, tendency_u, tendency_v,
             ghost_image, fcor,
             dt: float, rdx: float, rdy: float, g: float, nu: float):
        self.c00(h, ghost_image)
        self.c01(u, ghost_image)
        self.c02(v, ghost_image)
        self.c03(h, u, h_face_x)
        self.c04(u, h_face_x, flux_x)
        self.c05(h, flux_x, h_x, dt, rdx)
        self.c06(h_x, v, h_face_y)
        self.c07(v, h_face_y, flux_y)
        self.c08(h_x, flux_y, h, dt, rdy)
        self.c09(h, ghost_image)
        self.c10(u, v, div, rdx, rdy)
        self.c11(u, v, ke)
        self.c12(h, h_corner)
        self.c13(v, h, mass_flux_v)
        self.c14(h, ke, bernoulli, g)
        self.c15(u, v, zeta, rdx, rdy)
        self.c16(zeta, h_corner, fcor, pv)
        self.c17(pv, mass_flux_v, coriolis_u)
        self.c18(div, damping_u, nu, rdx)
        self.c19(div, damping_v, nu, rdy)
        self.c20(coriolis_u, bernoulli, damping_u, tendency_u, rdx)
        self.c21(u, tendency_u, dt)
        self.c22(u, ghost_image)
        self.c23(u, h, mass_flux_u)
        self.c24(pv, mass_flux_u, coriolis_v)
        self.c25(coriolis_v, bernoulli, damping_v, tendency_v, rdy)
        self.c26(v, tendency_v, dt)


def check_table():
    peer_program.check_calls(Step, CALLS, 27)
