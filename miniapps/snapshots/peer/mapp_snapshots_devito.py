"""mapp-snapshots-devito: the snapshots mini-app's problem solved by Devito.

The peer of mapp-snapshots (issue 38): the same acoustic forward (every step
saved, Devito's ``save=nt``) and adjoint with the imaging condition, on the
same grid, time step, source, receivers, models and damping, written in
Devito's own form (a TimeFunction with ``m*u.dt2 - u.laplace + damp*u.dtc``
solved for ``u.forward``, sparse sources and receivers on grid points, the
gradient accumulated by an ``Inc`` in the adjoint Operator). It keeps the
mini-app contract (docs/contract.md): the app's flags where they apply,
``--list``, ``--print-case``, the result record, the answer file and the
exit codes (0 pass, 1 a failed verification, 2 bad input, 3 a system
failure). Its answers are checked against baselines/snapshots/ (``--list``
says ``"baselines": "snapshots"``) within a relative tolerance of each
field's maximum (README, "The peer: Devito").

The discrete system is the mini-app's (snap_kernel.h), derived here from the
PDE, not copied from its C:
  a u^k = (2 m/dt^2 + L) u^{k-1} - b u^{k-2} + q^{k-1},
  a = m/dt^2 + eta/(2 dt), b = m/dt^2 - eta/(2 dt),
u^0 = u^{-1} = 0, zero values beyond the grid (Devito's halo), the wavelet
value q^{k-1} = ricker((k-1) dt) injected into u^k at the source (times
1/a = dt^2/m: no damping there), the receivers sampling u^k into row k-1;
the adjoint runs the same update backwards from v^{nt+1} = v^{nt+2} = 0 with
the residual's row j-1 injected into v^j, and
  g = -1/dt^2 sum_{j=1..nt} u^j (v^j - 2 v^{j+1} + v^{j+2}).
Devito's time index: u[t] holds u^{t-1} (so u[0] = u^{-1}, u[1] = u^0), the
forward runs t = 1..nt computing u[t+1] = u^t; v[t] holds v^t, the adjoint
runs t = nt+1..2 computing v[t-1] = v^{t-1}, so u[t] * v.dt2 is the term of
j = t-1.
"""

import hashlib
import math
import os
import resource
import socket
import sys

# The contract's plumbing every peer shares (miniapps/common/peer/mapp_peer.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "peer"))
from mapp_peer import (  # noqa: E402
    ANSWER, CHOICE, DOUBLE, FLAG, LONG, SIZE, STRING, Refusal, finish_run,
    git_revision, machine_json, check_outputs, common_options, mem_available, now, opt, parse_line as parse_options,
    peer_main, peer_threads, print_help, repeat_timed, system_errno, utc_now, write_provenance)

PROG = "mapp-snapshots-devito"
APP = "snapshots-devito"
# The peer's answers against baselines/snapshots/: each field within 1e-11 of its
# largest |value| (mapp check's rel-max; the worst measured is 2.3e-12).
BASELINE_TOLERANCE = {"model": "rel-max", "bound": 1e-11}
SUMMARY = ("The snapshots mini-app's problem (acoustic forward saving every step, adjoint with the imaging\n"
           "condition) solved by Devito, as its peer: same grid, dt, source, receivers, models and damping;\n"
           "answers checked against baselines/snapshots/ (README: \"The peer: Devito\").")



# ------------------------------------------------------------------ options

# The mini-app's presets (snap_problem.c): name, dims, (nx, ny, nz), steps, space order.
PRESETS = {
    "tiny": (2, (80, 1, 60), 300, 4),
    "small": (2, (600, 1, 200), 1000, 4),
    "medium": (3, (100, 100, 100), 465, 4),
    "large": (3, (200, 200, 200), 1000, 4),
}


REFUSED = "refused (the mini-app's streaming; the peer keeps every step in memory, Devito save=nt)"


# The mini-app's flags (mapp_app.c's common rows, then main.c's), with its
# ranges, so bad values are answered as it answers them; the streaming ones
# are recognised and refused (a value that asks for what the peer does,
# such as --layers none, is accepted).
OPTIONS = common_options(
    "backend to run on (Devito: serial DEVITO_LANGUAGE=C, omp DEVITO_LANGUAGE=openmp)",
    "implementation variant (memory: every step saved, Devito save=nt)", "memory", ["memory"],
    "seconds: run the forward and adjoint again until the timed runs last this long together; the first is a "
    "warm-up, left out when more than one ran, and every run's answer must be the same bit for bit; the figure "
    "is the fastest; 0: once") + [
    opt("dims", LONG, "2 or 3 space dimensions", lo=2, hi=3, default_text="from --size", changes=SIZE),
    opt("nx", LONG, "grid points along x", lo=1, hi=1 << 20, default_text="from --size", changes=SIZE,
        preset="nx"),
    opt("ny", LONG, "grid points along y (3-D)", lo=1, hi=1 << 20, default_text="nx in 3-D", changes=SIZE),
    opt("nz", LONG, "grid points along z (depth)", lo=1, hi=1 << 20, default_text="from --size", changes=SIZE,
        preset="nz"),
    opt("nbl", LONG, "absorbing boundary layer width (points)", lo=1, hi=1 << 16, default_text="10", changes=SIZE),
    opt("space-order", LONG, "2, 4 or 8: the centred stencil's order", lo=1, hi=64, default_text="from --size",
        changes=SIZE),
    opt("save-every", LONG, "keep every k-th snapshot: only 1 (every step) here", 1, lo=1, hi=1 << 30,
        changes=ANSWER, noop=1),
    # The mini-app's streaming flags: recognised, refused.
    opt("layers", STRING, REFUSED + " (only 'none')", refused=True, noop="none",
        choices="disk-host-device|host-device|disk-host|host|device|disk|none"),
    opt("compression", CHOICE, REFUSED + " (only 'none')", "none", choices="none|zstd|zfp", refused=True,
        noop="none"),
    opt("zstd-level", LONG, REFUSED, 1, lo=-7, hi=22, refused=True),
    opt("zfp-tolerance", DOUBLE, REFUSED, 1e-6, lo=1e-300, hi=1e300, refused=True),
    opt("zfp-rate", DOUBLE, REFUSED, lo=1e-3, hi=64, default_text="off", refused=True),
    opt("io-threads", LONG, REFUSED, 1, lo=1, hi=64, refused=True),
    opt("prefetch-depth", LONG, REFUSED, 2, lo=1, hi=1024, refused=True),
    opt("disk-dir", STRING, REFUSED, refused=True),
    opt("disk-io", CHOICE, REFUSED, "direct", choices="direct|uring|buffered", refused=True),
    opt("keep", FLAG, REFUSED, refused=True),
    opt("mem-perc", DOUBLE, REFUSED, lo=1e-6, hi=1.0, default_text="0.7", refused=True),
    opt("host-budget", STRING, REFUSED, refused=True),
    opt("disk-budget", STRING, REFUSED, refused=True),
    opt("device-budget", STRING, REFUSED, refused=True),
    opt("recompute", FLAG, REFUSED, refused=True),
    opt("checkpoints", LONG, REFUSED, lo=1, hi=1 << 20, default_text="10", refused=True),
    opt("estimate", FLAG, REFUSED, refused=True),
]
BY_NAME = {o["name"]: o for o in OPTIONS}


def refuse_value(name, text):
    if name == "backend" and text == "cuda":
        raise Refusal("--backend cuda: the Devito peer runs on the CPU only (serial, omp); the mini-app "
                      "has the CUDA backend")
    if name == "variant" and text in ("stream", "revolve"):
        raise Refusal(f"--variant {text}: the Devito peer has variant memory only (every step saved, "
                      "Devito save=nt); streaming and checkpointing are the mini-app's")


def parse_line(argv):
    """(values, given) as the mini-app's parser reads a line; None when --help was printed."""
    return parse_options(argv, OPTIONS, lambda: print_help(PROG, SUMMARY, OPTIONS), refuse_value=refuse_value)


def refuse_unhonoured(values, given):
    for name in sorted(given, key=lambda n: [o["name"] for o in OPTIONS].index(n)):
        o = BY_NAME[name]
        if o["noop"] is not None and values[name] == o["noop"]:
            continue
        if o["refused"]:
            shown = "" if o["kind"] == FLAG else f" {values[name]}"
            raise Refusal(f"--{name}{shown}: the Devito peer keeps every snapshot in memory (Devito save=nt, "
                          "the mini-app's --variant memory) and cannot honour the mini-app's streaming flags")
        if o["noop"] is not None:
            raise Refusal(f"--{name} {values[name]}: the Devito peer saves every step (save=nt); only "
                          f"--{name} {o['noop']}")


# ------------------------------------------------------------------ the case

def make_config(values, given):
    """The problem the options ask for, as main.c builds it, with the case
    and size names the driver gives it (mapp_app.c's apply_options)."""
    dims, n, steps, so = PRESETS[values["size"]]
    preset = {"nx": n[0], "nz": n[2], "steps": steps}
    custom_case = custom_size = False
    for o in OPTIONS:
        name = o["name"]
        if name not in given or not o["changes"]:
            continue
        if o["default_text"] and not o["preset"]:
            changed = True
        else:
            reference = preset[o["preset"]] if o["preset"] else o["default"]
            changed = values[name] != reference
        if changed:
            custom_case = True
            custom_size |= o["changes"] == SIZE
    nxyz = list(n)
    if "dims" in given:
        dims = values["dims"]
    nxyz[0] = values["nx"] if "nx" in given else n[0]
    # y: --ny, else nx in 3-D (after --nx, as main.c); 1 in 2-D
    nxyz[1] = (values["ny"] if "ny" in given else nxyz[0]) if dims == 3 else 1
    nxyz[2] = values["nz"] if "nz" in given else n[2]
    if "space-order" in given:
        so = values["space-order"]
    nbl = values["nbl"] if "nbl" in given else 10
    if values["weak-ranks"] and values["scaling"] != "weak":
        raise Refusal(f"--weak-ranks {values['weak-ranks']}: it names the problem of --scaling weak on that many "
                      f"ranks, and this run is --scaling {values['scaling']}")
    weak = values["weak-ranks"] or 1
    if values["scaling"] == "weak":
        nxyz[0] *= weak
    nt = values["steps"] if "steps" in given else steps
    case = None
    if not custom_case:
        case = f"{values['size']}-weak{weak}" if values["scaling"] == "weak" and weak > 1 else values["size"]
    return dict(dims=dims, n=tuple(nxyz), nt=nt, so=so, nbl=nbl, h=10.0, f0=15.0, case=case,
                size="custom" if custom_size else values["size"])


# Centred second-derivative weights (w[0] the centre, w[r] the pair at r):
# used here only for the time step's stability bound, as the mini-app does;
# the Laplacian itself is Devito's own (u.laplace).
WEIGHTS = {2: [-2.0, 1.0], 4: [-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0],
           8: [-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0]}


def check_config(c):
    if c["so"] not in WEIGHTS:
        raise Refusal(f"--space-order must be 2, 4 or 8 (the mini-app's stencils), got {c['so']}")
    min_n = 2 * c["nbl"] + 8
    for d in range(3):
        if d == 1 and c["dims"] == 2:
            continue
        if c["n"][d] < min_n:
            raise Refusal(f"grid axis {d} has {c['n'][d]} points, fewer than 2 x the {c['nbl']}-point absorbing "
                          "layer + 8")


# ------------------------------------------------------------------ machine

# ------------------------------------------------------------------ the list

def list_json():
    def backend(name):
        return {"name": name, "built": True, "usable": True, "cpu": True}
    # baselines, baseline_tolerance: the answers are checked against the
    # mini-app's baselines within bound x max |field| of each field (the
    # same equations, rounded in another order: README, "The peer: Devito").
    return {"app": APP, "baselines": "snapshots", "peer_of": "snapshots",
            "baseline_tolerance": BASELINE_TOLERANCE,
            "bitwise_variants": True, "bitwise_ranks": False, "repeatable": True,
            "variants": [{"name": "memory", "description": "Devito 4.8 (PyPI), every step saved (save=nt), the "
                          "adjoint with the imaging condition: the mini-app's --variant memory solved by its "
                          "production counterpart", "mpi_threads": "funneled", "alone": True,
                          "backends": [backend("serial"), backend("omp")]}]}


# ------------------------------------------------------------------ the run

class Peer:
    def __init__(self, values, config, argv):
        self.values, self.c, self.argv = values, config, argv
        self.start = now()
        self.phases = {"setup": 0.0, "compute": 0.0, "communication": 0.0, "io": 0.0}
        self.checks = []
        self.app_data = {}
        self.backend = values["backend"]
        self.threads = peer_threads(values)

    # -------------------------------------------------------------- setup
    def setup(self):
        c = self.c
        # Devito reads its configuration from the environment at import.
        os.environ["DEVITO_LANGUAGE"] = "openmp" if self.backend == "omp" else "C"
        os.environ["OMP_NUM_THREADS"] = str(self.threads)
        os.environ.setdefault("DEVITO_LOGGING", "WARNING")
        try:
            import numpy as np
            import h5py  # noqa: F401  (the answer file; fail here, not after the run)
            import devito
            import devito.finite_differences.finite_difference as fd
        except ImportError as e:
            raise Refusal(f"cannot import {e.name or e} in {sys.executable}: make the venv with ci/peer-venv.sh")
        self.np, self.devito = np, devito
        # Devito rounds every finite-difference weight to 9 significant
        # digits (finite_difference._PRECISION, "to avoid roundup errors and
        # non-deterministic code generation"): 4/3 becomes 1.33333333, the
        # Laplacian of a constant is no longer zero, and a float64 answer
        # moves by up to 9e-7 of its maximum in 300 steps. The weights are
        # the same Taylor weights at full double precision here (20 digits
        # printed, each the nearest double of the exact rational).
        if not hasattr(fd, "_PRECISION"):
            raise Refusal(f"devito {devito.__version__}: no finite_difference._PRECISION to set the weights' "
                          "precision (the peer was written for devito 4.8.23; see ci/peer-venv.sh)")
        fd._PRECISION = 20
        from devito import (Eq, Function, Grid, Inc, Operator, SparseTimeFunction, TimeFunction, configuration,
                            solve)
        dims, n, nt, so, nbl, h = c["dims"], c["n"], c["nt"], c["so"], c["nbl"], c["h"]
        shape = (n[0], n[2]) if dims == 2 else n
        self.shape = shape
        points = 1
        for s in shape:
            points *= s
        self.points = points
        # Saved u: nt + 2 time levels with Devito's halo of `so` points each side.
        halo = 1
        for s in shape:
            halo *= s + 2 * so
        need = 8 * halo * (nt + 2)
        avail = mem_available()
        if avail and need > avail:
            raise Refusal(f"every step saved needs {need} bytes (Devito save=nt: {nt + 2} time levels of "
                          f"{8 * halo} bytes) and MemAvailable is {avail}")
        vmin, vmax = 1500.0, 2500.0
        w = WEIGHTS[so]
        lam = abs(w[0])
        for r in range(1, len(w)):
            lam += 2.0 * abs(w[r])
        dt = 0.7 * 2.0 * h / (vmax * math.sqrt(dims * lam))
        self.dt = dt
        f0 = c["f0"]
        # The Ricker wavelet at t = k dt, k = 0..nt (math.exp: libm's, as the C).
        wav = []
        for k in range(nt + 1):
            a = math.pi * f0 * (k * dt - 1.0 / f0)
            wav.append((1.0 - 2.0 * a * a) * math.exp(-a * a))
        self.wavelet = np.array(wav, dtype=np.float64)

        # The models: a reflector dipping along x, 55 % down at the centre
        # (true: 1500 over 2500 m/s; smoothed through a step 16 points wide).
        nxg, nzg = float(n[0]), float(n[2])
        x = np.arange(n[0], dtype=np.float64)
        z = np.arange(n[2], dtype=np.float64)
        refl = 0.55 * nzg + 0.1 * nzg * (x / nxg - 0.5)
        zz, rr = z[None, :], refl[:, None]
        v_true = np.where(zz < rr, vmin, vmax)
        s = (zz - rr) / 16.0 + 0.5
        s = np.where(s < 0, 0.0, np.where(s > 1, 1.0, s * s * (3.0 - 2.0 * s)))
        v_smooth = vmin + (vmax - vmin) * s
        expand = (lambda a: a) if dims == 2 else (lambda a: np.broadcast_to(a[:, None, :], shape))
        self.m_true = expand(1.0 / (v_true * v_true))
        self.m_smooth = expand(1.0 / (v_smooth * v_smooth))

        # Damping eta = d0 (depth/nbl)^2 inside the n points, depth counted
        # from every edge (nbl at the outermost point, 0 from nbl in), the
        # deepest over the axes; d0 = 3 vmax ln(1000) / (2 nbl h).
        d0 = 3.0 * vmax * 6.907755278982137 / (2.0 * nbl * h)
        depth = np.zeros(shape)
        for axis, size in enumerate(shape):
            i = np.arange(size)
            into = np.maximum(nbl - np.minimum(i, size - 1 - i), 0).astype(np.float64)
            view = [None] * len(shape)
            view[axis] = slice(None)
            depth = np.maximum(depth, into[tuple(view)])
        q = depth / float(nbl)
        eta = np.where(depth > 0, d0 * q * q, 0.0)

        # Devito: the grid is the n points (the layer inside them), spacing h.
        grid = Grid(shape=shape, extent=tuple((s_ - 1) * h for s_ in shape), dtype=np.float64)
        self.m = Function(name="m", grid=grid)
        self.damp = Function(name="damp", grid=grid, space_order=0)
        self.damp.data[:] = eta
        u = TimeFunction(name="u", grid=grid, time_order=2, space_order=so, save=nt + 2)
        v = TimeFunction(name="v", grid=grid, time_order=2, space_order=so)
        self.grad = Function(name="grad", grid=grid, space_order=0)
        self.u, self.v = u, v
        # Source near the surface at the centre; receivers along x on its
        # depth, from nbl to nx - nbl - 1 (all outside the layer): on grid
        # points, so Devito's linear interpolation weights are 1 and 0.
        yc = n[1] // 2
        depth_pts = nbl + 2
        nrec = n[0] - 2 * nbl
        self.nrec = nrec

        def at(xs):
            xs = np.asarray(xs, dtype=np.float64)
            cols = [xs * h] + ([np.full_like(xs, yc * h)] if dims == 3 else []) + [np.full_like(xs, depth_pts * h)]
            return np.stack(cols, axis=1)

        src_xy = at([n[0] // 2])
        rec_xy = at(nbl + np.arange(nrec))
        self.src = SparseTimeFunction(name="src", grid=grid, npoint=1, nt=nt + 2, coordinates=src_xy)
        self.rec = SparseTimeFunction(name="rec", grid=grid, npoint=nrec, nt=nt + 2, coordinates=rec_xy)
        self.resid = SparseTimeFunction(name="resid", grid=grid, npoint=nrec, nt=nt + 2, coordinates=rec_xy)
        self.srca = SparseTimeFunction(name="srca", grid=grid, npoint=1, nt=nt + 2, coordinates=src_xy)
        self.src.data[:] = 0.0
        self.src.data[1:nt + 1, 0] = self.wavelet[:nt]  # u[t+1] = u^t gets q^{t-1}
        step = grid.stepping_dim.spacing
        m, damp = self.m, self.damp
        # Forward: m u_tt - lap u + eta u_t = q, centred in time (u.dtc: the
        # mini-app's eta/(2 dt) form; Devito's u.dt is one-sided).
        pde = m * u.dt2 - u.laplace + damp * u.dtc
        fwd = [Eq(u.forward, solve(pde, u.forward))]
        fwd += self.src.inject(field=u.forward, expr=self.src * step ** 2 / m)
        fwd += self.rec.interpolate(expr=u.forward)  # row k-1 of the data is u^k
        # Adjoint: the transposed update backwards, the residual injected,
        # the source point sampled (the dot test), the imaging condition.
        pde_a = m * v.dt2 - v.laplace + damp * v.dtc.T
        adj = [Eq(v.backward, solve(pde_a, v.backward))]
        adj += self.resid.inject(field=v.backward, expr=self.resid * step ** 2 / m)
        adj += self.srca.interpolate(expr=v.backward)
        adj += [Inc(self.grad, -u * v.dt2)]
        self.op_fwd = Operator(fwd, name="forward")
        self.op_adj = Operator(adj, name="adjoint")
        # Compile both now (setup, untimed): Devito compiles at first use.
        self.op_fwd.cfunction
        self.op_adj.cfunction
        cc = configuration["compiler"]
        self.compiler = cc
        # The observed data: a forward in the true model (setup); it is also
        # the forward's warm-up apply (it touches every saved level).
        self.m.data[:] = self.m_true
        self.op_fwd.apply(time_m=1, time_M=nt, dt=dt)
        self.observed = np.array(self.rec.data[1:nt + 1], copy=True)
        # The adjoint's warm-up apply (the observed data as its residual).
        self.m.data[:] = self.m_smooth
        self.resid.data[:] = 0.0
        self.resid.data[2:nt + 2] = self.observed
        self.v.data[:] = 0.0
        self.grad.data[:] = 0.0
        self.op_adj.apply(time_m=2, time_M=nt + 1, dt=dt)
        self.devito_info = {"version": devito.__version__, "language": str(configuration["language"]),
                            "platform": str(configuration["platform"]), "opt": str(configuration["opt"]),
                            "compiler": type(cc).__name__, "cc": getattr(cc, "cc", None),
                            "compiler_version": str(getattr(cc, "version", "")),
                            "cflags": " ".join(getattr(cc, "cflags", [])), "fd_weight_digits": fd._PRECISION}

    # -------------------------------------------------------------- compute
    def gradient(self):
        """One forward (every step saved) and one adjoint; (forward_s, adjoint_s)."""
        np, nt, dt = self.np, self.c["nt"], self.dt
        t0 = now()
        self.op_fwd.apply(time_m=1, time_M=nt, dt=dt)
        rec = np.array(self.rec.data[1:nt + 1], copy=True)
        u_final = np.array(self.u.data[nt + 1], copy=True)
        t1 = now()
        residual = rec - self.observed
        # J = 1/2 |rec - obs|^2 summed time then receiver, as one rank sums.
        half = (0.5 * residual * residual).ravel().tolist()
        J = 0.0
        for x in half:
            J += x
        self.resid.data[2:nt + 2] = residual  # v^j gets row j-1 at loop t = j+1
        self.v.data[:] = 0.0
        self.grad.data[:] = 0.0
        self.op_adj.apply(time_m=2, time_M=nt + 1, dt=dt)
        t2 = now()
        self.answer = {"gradient": np.array(self.grad.data, copy=True), "rec": rec, "u_final": u_final}
        self.objective = J
        self.residual = residual
        self.src_adjoint = np.array(self.srca.data[2:nt + 2, 0], copy=True)
        return t1 - t0, t2 - t1

    def digest(self):
        h = hashlib.sha256()
        for k in ("gradient", "u_final", "rec"):
            h.update(self.np.ascontiguousarray(self.answer[k]).tobytes())
        h.update(self.np.float64(self.objective).tobytes())
        return h.digest()

    def compute(self):
        """The gradient, repeated under --min-time (repeat_timed); the figure
        is the fastest timed iteration, forward and adjoint apart."""
        def once():
            fwd_s, adj_s = self.gradient()
            return fwd_s + adj_s, (fwd_s, adj_s)

        r = repeat_timed(self.values["min-time"], once, self.digest)
        self.compute_s = r.seconds[r.best]
        self.forward_s, self.adjoint_s = r.details[r.best]
        self.phases["compute"] = self.compute_s
        self.timing, self.disturbance = r.timing, r.disturbance
        if r.differ is not None:
            self.check("iterations-identical", r.differ == 0, float(r.differ), 0.0)

    # -------------------------------------------------------------- verify
    def check(self, name, passed, value, bound):
        self.checks.append({"name": name, "passed": bool(passed), "value": float(value), "bound": float(bound)})

    def verify(self):
        np = self.np
        finite = all(bool(np.all(np.isfinite(a))) for a in self.answer.values()) and math.isfinite(self.objective)
        self.check("finite", finite, 0.0 if finite else 1.0, 0.0)
        # The adjoint dot test: <F q, d'> = <q, F^T d'> with q the wavelet at
        # the source, F q the receivers' data, d' the residual, F^T d' the
        # adjoint field sampled at the source (the same Operators as the
        # gradient, so a forward/adjoint mismatch shows here).
        nt = self.c["nt"]
        lhs = float(np.dot(self.answer["rec"].ravel(), self.residual.ravel()))
        rhs = float(np.dot(self.wavelet[:nt], self.src_adjoint))
        scale = max(abs(lhs), abs(rhs))
        err = abs(lhs - rhs) / scale if scale > 0 else 0.0
        self.dot = {"forward": lhs, "adjoint": rhs, "relative_error": err}
        self.check("adjoint-dot-test", finite and err <= 1e-12, err if math.isfinite(err) else 1.0, 1e-12)

    # -------------------------------------------------------------- output
    def write_output(self, path):
        import h5py
        np = self.np
        t0 = now()
        try:
            with h5py.File(path, "w") as f:
                write_provenance(h5py, np, f, APP, "memory", "devito-jit", self)
                for k in ("gradient", "u_final", "rec"):
                    f.create_dataset(k, data=np.ascontiguousarray(self.answer[k], dtype=np.float64))
                f.attrs.create("objective", np.float64(self.objective), dtype=np.float64)
                f.attrs.create("dt", np.float64(self.dt), dtype=np.float64)
                f.attrs.create("space_order", np.int64(self.c["so"]), dtype=np.int64)
        except OSError as e:
            raise Refusal(f"writing the answer file '{path}' failed: {e}", system_errno(e))
        self.phases["io"] += now() - t0

    def record(self):
        c, n = self.c, self.c["n"]
        worst = max([ch["value"] for ch in self.checks] + [0.0])
        status = "none" if not self.checks else "fail" if not all(ch["passed"] for ch in self.checks) else "pass"
        problem = {"nx": {"global": n[0], "per_rank": n[0]}}
        if c["dims"] == 3:
            problem["ny"] = {"global": n[1], "per_rank": n[1]}
        problem["nz"] = {"global": n[2], "per_rank": n[2]}
        snapshot_bytes = 8 * self.points
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
        self.app_data = {
            "layers": "none", "compression": "none", "dims": c["dims"], "space_order": c["so"], "dt": self.dt,
            "save_every": 1, "nbl": c["nbl"], "objective": self.objective,
            "forward_s": self.forward_s, "adjoint_s": self.adjoint_s,
            "snapshots_per_layer": {"device": 0.0, "host": float(c["nt"]), "disk": 0.0},
            "snapshot_raw_bytes": float(snapshot_bytes * c["nt"]),
            "snapshot_stored_bytes": float(snapshot_bytes * c["nt"]),
            "peak_rss_bytes": rss, "rss_before_bytes": float(self.rss_before), "recompute": False,
            "checkpoints": 0, "recomputation_factor": 1.0, "estimate_only": False,
            "dot_test": self.dot, "devito": self.devito_info, "python": sys.version.split()[0],
        }
        fom = 2.0 * self.points * c["nt"] / self.compute_s if self.compute_s > 0 else 0.0
        phases = {k: {"max": v, "min": v, "mean": v} for k, v in self.phases.items()}
        return {
            "schema": "mapp-result/1", "app": APP, "peer_of": "snapshots", "baseline_tolerance": BASELINE_TOLERANCE,
            "variant": "memory", "backend": self.backend,
            "size": c["size"], "scaling": self.values["scaling"], "case": c["case"], "ranks": 1,
            "threads": self.threads, "gpus": 0, "steps": c["nt"], "problem": problem, "phases": phases,
            "wall_s": now() - self.start, "fom": {"name": "point-updates/s", "value": fom}, "bytes_moved": None,
            "verification": {"status": status, "worst_error": worst, "checks": self.checks},
            "output": self.values["output"], "host": socket.gethostname(), "compiler": self.compiler_text,
            "flags": self.flags_text, "build_type": "devito-jit", "git_revision": self.git, "time": self.when,
            "command": " ".join(self.argv), "app_data": self.app_data, "timing": self.timing,
            "disturbance": self.disturbance, "machine": machine_json(),
        }

    def run(self):
        self.when = utc_now()
        self.rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        out = self.values["output"]
        check_outputs(self.values)
        t0 = now()
        self.setup()
        self.git = git_revision()
        cc = self.compiler
        self.compiler_text = (f"CPython {sys.version.split()[0]}; devito {self.devito.__version__}; "
                              f"{getattr(cc, 'cc', 'cc')} {getattr(cc, 'version', '')} (Devito's JIT)")
        self.flags_text = " ".join(getattr(cc, "cflags", [])) + f" (DEVITO_LANGUAGE={os.environ['DEVITO_LANGUAGE']})"
        self.phases["setup"] = now() - t0
        self.compute()
        self.verify()

        def summary(rec):
            return (f"{APP} memory/{self.backend} n=1 t={self.threads} {self.c['size']}: {rec['fom']['value']:.4g} "
                    f"point-updates/s, compute {self.compute_s:.4g} s (forward {self.forward_s:.4g} s, adjoint "
                    f"{self.adjoint_s:.4g} s), wall {rec['wall_s']:.4g} s, verify {rec['verification']['status']}")

        return finish_run(PROG, self, out, summary)


def main(argv):
    return peer_main(PROG, argv, parse_line, list_json, refuse_unhonoured, make_config, Peer,
                     "the Devito peer runs on one rank (Devito's MPI mode is not set up here)", check=check_config)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
