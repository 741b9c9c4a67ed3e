"""The generic physics of mapp-stencil (stencil_physics_generic.c), for the
GT4Py peer of a program without a physics file (hydrostatic): every state
field starts at 1 plus --amplitude times a sum of sines of the global
indices and the level (libm's sin, the C's expressions in its order), and
the one check is that every answer is finite."""

INITS = ("bump",)
INPUTS = []


def arguments(cfl):
    return {}  # the hydrostatic bodies read no coefficient


def initial_fields(np, S, nx, ny, nz, values):
    """Every state field of program S as an [i, j, k] array: the C's
    expressions in its order, over whole axes (a Python loop over large's
    84 M cells took 6 minutes). Bit for bit the C's where NumPy's float64
    sin is libm's, as on this AVX2 machine (checked against math.sin on 2 M
    arguments, and against the loop it replaced); NumPy's AVX-512 path may
    differ by an ulp, which the peer's 1e-12 check absorbs."""
    pi = 3.14159265358979323846
    x = (2.0 * pi * (np.arange(nx, dtype=np.float64) + 0.5) / float(nx))[:, None, None]
    y = (2.0 * pi * (np.arange(ny, dtype=np.float64) + 0.5) / float(ny))[None, :, None]
    z = (pi * (np.arange(nz, dtype=np.float64) + 0.5) / float(nz))[None, None, :]
    xy_z = x + y + z
    out = {}
    for f, name in enumerate(S.STATE):
        f = float(f)
        wave = 0.4 * np.sin(x + f) + 0.3 * np.sin(y - 0.5 * f) + 0.3 * np.sin(xy_z + 0.7 * f)
        out[name] = np.ascontiguousarray(1.0 + values["amplitude"] * wave)
    return out


def fill_inputs(fields, nx, ny, halo):
    pass


def conserved(np, state):
    return {}


def verify(np, state, conserved0, values, args, check, initial):
    bad = float(sum(int(np.count_nonzero(~np.isfinite(a))) for a in state.values()))
    check("finite", bad == 0.0, bad, 0.0)
