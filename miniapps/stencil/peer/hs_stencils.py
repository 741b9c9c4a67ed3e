"""The hydrostatic program of mapp-stencil as GT4Py (gtscript) stencils.

One stencil per call of stencil_program_hydrostatic.c, in its order, with
the bodies of stencil_bodies_hydrostatic.h in the C's operation order.
Levels are numbered from the model top, as FV3 numbers them: a horizontal
smoothing of the layers' pressure thickness dp (PARALLEL), the pressure at
the layers' upper interfaces from the top down (FORWARD, as FV3's pe) and
their height from the surface up (BACKWARD, as its hydrostatic gz). The
smoothing's walls (no flux through them) are horizontal regions at the
domain's first and last column and row, where the C tests the global index.

Fields are (nx + 2, ny + 2, nz) arrays: the interior and a 1-cell halo;
local cell (i, j) is at [i + 1, j + 1, k].
"""

import numpy as np
import peer_program
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (  # noqa: F401
    BACKWARD, FORWARD, PARALLEL, I, J, computation, horizontal, interval, log, region)

F = gtscript.Field[np.float64]
HALO = 1
PTOP = 0.3        # ST_HYDROSTATIC_PTOP: pressure at the model top, in dp's unit
SMOOTHING = 0.125  # ST_HYDROSTATIC_SMOOTHING


def smooth(x: F, out: F):
    # st_smooth: del-2 in flux form, no flux through the walls
    with computation(PARALLEL), interval(...):
        east = x[1, 0, 0] - x
        west = x - x[-1, 0, 0]
        north = x[0, 1, 0] - x
        south = x - x[0, -1, 0]
        with horizontal(region[I[-1], :]):
            east = 0.0
        with horizontal(region[I[0], :]):
            west = 0.0
        with horizontal(region[:, J[-1]]):
            north = 0.0
        with horizontal(region[:, J[0]]):
            south = 0.0
        out = x + SMOOTHING * ((east - west) + (north - south))


def pressure_top(p: F):
    with computation(FORWARD), interval(0, 1):
        p = PTOP


def pressure(p: F, dps: F):
    with computation(FORWARD), interval(1, None):
        p = p[0, 0, -1] + dps[0, 0, -1]


def height_surface(scale_height: F, p: F, dps: F, z: F):
    with computation(BACKWARD), interval(-1, None):
        z = scale_height * log((p + dps) / p)


def height(scale_height: F, p: F, dps: F, z: F):
    with computation(BACKWARD), interval(0, -1):
        z = z[0, 0, 1] + scale_height * log((p + dps) / p)


def copy(x: F, out: F):
    with computation(PARALLEL), interval(...):
        out = x


EXT_0 = (0, 0, 0, 0)
STATE = ["dp", "scale_height", "p", "z"]
FIELDS = STATE + ["dp_smooth"]
CALLS = [
    ("smooth", smooth, ["dp", "dp_smooth"], [], EXT_0),
    ("pressure_top", pressure_top, ["p"], [], EXT_0),
    ("pressure", pressure, ["p", "dp_smooth"], [], EXT_0),
    ("height_surface", height_surface, ["scale_height", "p", "dp_smooth", "z"], [], EXT_0),
    ("height", height, ["scale_height", "p", "dp_smooth", "z"], [], EXT_0),
    ("dp_commit", copy, ["dp_smooth", "dp"], [], EXT_0),
]
SCALARS = []


def origin_domain(extent, nx, ny, nz=1):
    return peer_program.origin_domain(extent, HALO, nx, ny, nz)


class Step:
    """The 6 calls (c00 ... c05): `run` the time loop, `step` one step."""

    def __init__(self, stencils, nx, ny, nz=1):
        peer_program.freeze_calls(self, stencils, CALLS, HALO, nx, ny, nz)

    def run(self, dp, scale_height, p, z, dp_smooth, nsteps: int):
        for _ in range(nsteps):
            self.step(dp, scale_height, p, z, dp_smooth)

    def step(self, dp, scale_height, p, z, dp_smooth):
        self.c00(dp, dp_smooth)
        self.c01(p)
        self.c02(p, dp_smooth)
        self.c03(scale_height, p, dp_smooth, z)
        self.c04(scale_height, p, dp_smooth, z)
        self.c05(dp_smooth, dp)


def check_table():
    peer_program.check_calls(Step, CALLS, 6)
