"""The vertical program's problem (stencil_physics_vertical.c) for the GT4Py
peer: layers of thickness dp carrying a tracer q in a closed box, stirred by
a fixed non-divergent wind and mixed vertically. Its arguments, its initial
state from global indices (libm's exp and sin, the C's expressions in the
C's order) and its invariants with the app's bounds: tracer mass and
thickness conserved, a constant tracer staying constant, and the residual
of the vertical solve applied to the final state."""
import math

SPACING, MEAN_DP, WIND, DIFFUSION, MIX = 1.0e5, 100.0, 10.0, 0.5, 0.1
MASS_BOUND, CONSTANT_BOUND, RESIDUAL_BOUND = 1e-12, 1e-13, 1e-12
INITS = ("bump", "constant")
INPUTS = []


def arguments(cfl):
    return {"dt": cfl * SPACING / WIND, "rdx": 1.0 / SPACING, "rdy": 1.0 / SPACING, "kappa": DIFFUSION * MEAN_DP,
            "mix": MIX}


def bump(nx, ny, x, y):
    sigma = 0.15 * float(min(nx, ny))
    dx, dy = x - 0.5 * float(nx), y - 0.5 * float(ny)
    return math.exp(-0.5 * (dx * dx + dy * dy) / (sigma * sigma))


def initial_fields(np, S, nx, ny, nz, values):
    """q, dp, u, v as [i, j, k] arrays (u, v on the west and south faces).
    libm's exp and sin once per column and per corner row or column, the
    rest elementwise in the C's order (so the same values bit for bit)."""
    pi = 3.14159265358979323846
    b = np.array([[bump(nx, ny, float(i) + 0.5, float(j) + 0.5) for j in range(ny)] for i in range(nx)])
    sin_i = np.array([math.sin(pi * float(g) / float(nx)) for g in range(nx + 1)])
    sin_j = np.array([math.sin(pi * float(g) / float(ny)) for g in range(ny + 1)])
    q, dp, u, v = (np.zeros((nx, ny, nz)) for _ in range(4))
    constant = values["init"] == "constant"
    for kz in range(nz):
        level = float(kz) / float(nz)
        # the stream function at the corners, zero on the walls
        amplitude = WIND * SPACING * float(ny) / pi * (1.0 - 0.5 * float(kz) / float(nz))
        psi = amplitude * sin_i[:, None] * sin_j[None, :]
        dp[:, :, kz] = MEAN_DP * (1.0 + 0.3 * b * (1.0 - level))
        q[:, :, kz] = 1.0 if constant else values["amplitude"] * b * level
        u[:, :, kz] = -(psi[:nx, 1:] - psi[:nx, :ny]) / SPACING
        v[:, :, kz] = (psi[1:, :ny] - psi[:nx, :ny]) / SPACING
    return {"q": q, "dp": dp, "u": u, "v": v}


def fill_inputs(fields, nx, ny, halo):
    pass


def ordered_sum(np, a):
    """The sum level by level, row by row, as the app's stencil_reduce adds."""
    flat = np.ascontiguousarray(np.transpose(a, (2, 1, 0))).ravel()
    return float(np.cumsum(flat)[-1]) if flat.size else 0.0


def conserved(np, state):
    return {"mass": ordered_sum(np, state["q"] * state["dp"]), "thickness": ordered_sum(np, state["dp"])}


def solve_residual(np, dp, r, args):
    """The largest |A x - d| / |d| of the vertical solve (the program's
    coupling and Thomas sweeps) applied to every column (dp, r: [i, j, k])."""
    kappa, top = args["kappa"], dp.shape[2] - 1
    g = kappa / (0.5 * (dp[:, :, :-1] + dp[:, :, 1:]))
    cp, dd, x = np.zeros_like(dp), np.zeros_like(dp), np.zeros_like(dp)
    for k in range(top + 1):
        lo = g[:, :, k - 1] if k > 0 else None
        up = g[:, :, k] if k < top else 0.0
        if k == 0:
            cp[:, :, 0] = -g[:, :, 0] / (dp[:, :, 0] + g[:, :, 0])
            dd[:, :, 0] = dp[:, :, 0] * r[:, :, 0] / (dp[:, :, 0] + g[:, :, 0])
            continue
        m = dp[:, :, k] + lo + up + lo * cp[:, :, k - 1]
        if k < top:
            cp[:, :, k] = -g[:, :, k] / m
        dd[:, :, k] = (dp[:, :, k] * r[:, :, k] + lo * dd[:, :, k - 1]) / m
    x[:, :, top] = dd[:, :, top]
    for k in range(top - 1, -1, -1):
        x[:, :, k] = dd[:, :, k] - cp[:, :, k] * x[:, :, k + 1]
    worst = 0.0
    for k in range(top + 1):
        lo = g[:, :, k - 1] if k > 0 else 0.0
        up = g[:, :, k] if k < top else 0.0
        ax = (dp[:, :, k] + lo + up) * x[:, :, k]
        if k > 0:
            ax = ax - lo * x[:, :, k - 1]
        if k < top:
            ax = ax - up * x[:, :, k + 1]
        d = dp[:, :, k] * r[:, :, k]
        rel = np.abs(ax - d) / np.where(d != 0.0, np.abs(d), 1.0)
        worst = max(worst, float(np.max(rel)))
    return worst


def verify(np, state, conserved0, values, args, check, initial):
    q, dp = state["q"], state["dp"]
    finite = bool(np.all(np.isfinite(q)) and np.all(np.isfinite(dp)))
    check("finite", finite, 0.0 if finite else 1.0, 0.0)
    now = conserved(np, state)
    mass0 = conserved0["mass"]
    drift = abs(now["mass"] - mass0) / abs(mass0) if mass0 != 0.0 else abs(now["mass"])
    check("tracer-mass-conservation", drift <= MASS_BOUND, drift if math.isfinite(drift) else 1.0, MASS_BOUND)
    dp_drift = abs(now["thickness"] - conserved0["thickness"]) / conserved0["thickness"]
    check("thickness-conservation", dp_drift <= MASS_BOUND, dp_drift if math.isfinite(dp_drift) else 1.0,
          MASS_BOUND)
    residual = solve_residual(np, dp, q, args) if finite else 1.0
    check("solve-residual", residual <= RESIDUAL_BOUND, residual, RESIDUAL_BOUND)
    if values["init"] == "constant":
        worst = float(np.max(np.abs(q - 1.0))) if finite else 1.0
        check("constant-stays-constant", worst <= CONSTANT_BOUND, worst, CONSTANT_BOUND)
