"""The generic physics of mapp-stencil (stencil_physics_generic.c), for the
GT4Py peer of a program without a physics file (hydrostatic): every state
field starts at 1 plus --amplitude times a sum of sines of the global
indices and the level (libm's sin, the C's expressions in its order), and
the one check is that every answer is finite."""
import math

INITS = ("bump",)
INPUTS = []


def arguments(cfl):
    return {}  # the hydrostatic bodies read no coefficient


def smooth_value(nx, ny, nz, amplitude, f, gi, gj, kz):
    pi = 3.14159265358979323846
    x = 2.0 * pi * (float(gi) + 0.5) / float(nx)
    y = 2.0 * pi * (float(gj) + 0.5) / float(ny)
    z = pi * (float(kz) + 0.5) / float(nz)
    wave = 0.4 * math.sin(x + f) + 0.3 * math.sin(y - 0.5 * f) + 0.3 * math.sin(x + y + z + 0.7 * f)
    return 1.0 + amplitude * wave


def initial_fields(np, S, nx, ny, nz, values):
    """Every state field of program S as an [i, j, k] array."""
    out = {}
    for f, name in enumerate(S.STATE):
        a = np.empty((nx, ny, nz))
        for kz in range(nz):
            for j in range(ny):
                for i in range(nx):
                    a[i, j, kz] = smooth_value(nx, ny, nz, values["amplitude"], float(f), i, j, kz)
        out[name] = a
    return out


def fill_inputs(fields, nx, ny, halo):
    pass


def conserved(np, state):
    return {}


def verify(np, state, conserved0, values, args, check, initial):
    bad = float(sum(int(np.count_nonzero(~np.isfinite(a))) for a in state.values()))
    check("finite", bad == 0.0, bad, 0.0)
