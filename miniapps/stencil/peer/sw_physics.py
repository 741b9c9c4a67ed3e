"""The shallow-water problem of mapp-stencil (stencil_physics_shallow_water.c)
for its GT4Py peer: the constants, the step's arguments, the initial state
from global indices (libm's exp as the C's) and the mass sum in the app's
order, so the peer's answer and checks are the mini-app's."""
import math

# A depth bump on a beta plane with walls.
MEAN_DEPTH, GRAVITY, SPACING, F0, BETA, DAMPING = 100.0, 9.81, 1.0e5, 1.0e-4, 2.0e-12, 0.02
MASS_BOUND, GEOSTROPHIC_BOUND = 1e-12, 0.05


def arguments(cfl):
    c = math.sqrt(GRAVITY * MEAN_DEPTH)
    dt = cfl * SPACING / c
    return {"dt": dt, "rdx": 1.0 / SPACING, "rdy": 1.0 / SPACING, "g": GRAVITY, "nu": DAMPING * SPACING * SPACING / dt}


def bump_depth(nx, ny, amplitude, x, y):
    cx, cy = 0.5 * nx, 0.5 * ny
    sigma = 0.1 * min(nx, ny)
    r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy)
    return MEAN_DEPTH * (1.0 + amplitude * math.exp(-0.5 * r2 / (sigma * sigma)))


def coriolis_at(ny, y_cells):
    return F0 + BETA * (y_cells - 0.5 * ny) * SPACING


def initial_state(np, nx, ny, init, amplitude):
    """h, u, v (ny x nx, [j][i]) from global indices, libm's exp as the C's."""
    h = np.empty((ny, nx))
    u = np.zeros((ny, nx))
    v = np.zeros((ny, nx))
    for j in range(ny):
        y = j + 0.5
        row = h[j]
        for i in range(nx):
            row[i] = MEAN_DEPTH if init == "rest" else bump_depth(nx, ny, amplitude, i + 0.5, y)
    if init == "geostrophic":
        for j in range(ny):
            y, ys = j + 0.5, float(j)
            for i in range(nx):
                x, xw = i + 0.5, float(i)
                dhdy = (bump_depth(nx, ny, amplitude, xw, y + 0.5) - bump_depth(nx, ny, amplitude, xw, y - 0.5)) \
                    / SPACING
                dhdx = (bump_depth(nx, ny, amplitude, x + 0.5, ys) - bump_depth(nx, ny, amplitude, x - 0.5, ys)) \
                    / SPACING
                u[j, i] = 0.0 if i == 0 else -GRAVITY * dhdy / coriolis_at(ny, y)
                v[j, i] = 0.0 if j == 0 else GRAVITY * dhdx / coriolis_at(ny, ys)
    return h, u, v


def c_order_sum(np, a):
    """The sum of a row by row, as the app's stencil_reduce adds (in order)."""
    flat = np.ascontiguousarray(a).ravel()
    return float(np.cumsum(flat)[-1]) if flat.size else 0.0


# ------------------------------------------------------------------ the peer's interface
# (the same in vt_physics.py and gen_physics.py)

INITS = ("bump", "rest", "geostrophic")
INPUTS = ["fcor"]  # the step's inputs that are not state: kept across resets


def initial_fields(np, S, nx, ny, nz, values):
    """h, u, v as [i, j, k] arrays of one level."""
    h, u, v = initial_state(np, nx, ny, values["init"], values["amplitude"])
    return {name: np.ascontiguousarray(a.T)[:, :, None] for name, a in (("h", h), ("u", u), ("v", v))}


def fill_inputs(fields, nx, ny, halo):
    """f at the corner rows, as st_potential_vorticity computes it."""
    fcor = fields["fcor"]
    for j in range(-halo, ny + halo):
        fcor[:, j + halo, 0] = F0 + BETA * (float(j) - 0.5 - 0.5 * float(ny)) * SPACING


def conserved(np, state):
    return {"mass": c_order_sum(np, state["h"][:, :, 0].T)}


def verify(np, state, conserved0, values, args, check, initial):
    """stencil_physics_shallow_water.c's invariants, the same bounds."""
    h, u, v = (state[f][:, :, 0] for f in ("h", "u", "v"))
    finite = bool(np.all(np.isfinite(h)) and np.all(np.isfinite(u)) and np.all(np.isfinite(v)))
    check("finite", finite, 0.0 if finite else 1.0, 0.0)
    mass0 = conserved0["mass"]
    drift = abs(c_order_sum(np, h.T) - mass0) / mass0
    check("mass-conservation", drift <= MASS_BOUND, drift if math.isfinite(drift) else 1.0, MASS_BOUND)
    vmax = float(np.max(np.maximum(np.abs(u), np.abs(v)))) if finite else float("nan")
    change = float(np.max(np.abs(h - initial["h"][:, :, 0]))) if finite else float("nan")
    if values["init"] == "rest":
        worst = max(vmax, change) if finite else 1.0
        check("rest-stays-at-rest", worst == 0.0, worst, 0.0)
    if values["init"] == "geostrophic":
        rel = change / (values["amplitude"] * 100.0) if finite else 1.0
        check("geostrophic-steady", rel <= GEOSTROPHIC_BOUND, rel, GEOSTROPHIC_BOUND)
