"""mapp-stencil-gt4py: the stencil mini-app's programs in GT4Py and DaCe.

The peer of mapp-stencil (issue 39): the 27 calls of
stencil_program_shallow_water.c as gtscript stencils (sw_stencils.py: the
same bodies, extents, regions and order), and the 3-D programs' calls
(vt_stencils.py, hs_stencils.py: FORWARD and BACKWARD computations over
intervals, as FV3's vertical stencils are written), on the same grid, from the same
initial states (--init bump|rest|geostrophic, --amplitude), with the same
time step (--cfl), run in the seed's modes as they exist in GT4Py and DaCe:

  python          the stencils called one by one from Python (Pace's
                  FV3_DACEMODE=Python), each compiled by the GT backend
                  --gt-backend (default gt:cpu_ifirst, the fastest here);
  build           the step orchestrated by DaCe (dace.method over one step,
                  or over the time loop with --calls per-run; every stencil
                  a dace:cpu SDFG inlined into one program), built by Pace's
                  pipeline or DaCe's default one (--dace-pipeline), compiled
                  into DaCe's cache, then exit (Build);
  build-and-run   the same, then loaded and run (BuildAndRun);
  run             the cached program loaded and run (Run); a missing one is
                  refused. Like DaCe (and Pace), nothing checks that the
                  cached program is the one this command line would build.

It keeps the mini-app contract (docs/contract.md): the app's flags where
they apply, --list, --print-case, the result record (peer_of "stencil",
baseline_tolerance), the answer file (h, u, v: ny x nx, as the app's), exit
codes 0 pass, 1 a failed verification, 2 bad input, 3 a system failure. Its
answers are checked against baselines/stencil/ (README, "The peer: GT4Py
and DaCe").
"""

import hashlib
import os
import resource
import socket
import subprocess
import sys

# The contract's plumbing every peer shares (miniapps/common/peer/mapp_peer.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "peer"))
import dace_pipeline  # noqa: E402
import peer_program  # noqa: E402
from sw_options import (  # noqa: E402
    ALIASES, OPTIONS, PROGRAMS, VARIANTS, make_config, refuse_unhonoured, refuse_value)
from mapp_peer import (  # noqa: E402
    CompilerOutput, Refusal, check_outputs, finish_run, git_revision, machine_json, mem_available, now,
    parse_line as parse_options, peer_main, peer_threads, print_help, repeat_timed, system_errno, utc_now, write_provenance)

PROG = "mapp-stencil-gt4py"
APP = "stencil-gt4py"
# The answers against baselines/stencil/: each field within 1e-12 of its
# largest |value| (mapp check's rel-max). Each body is the C's expression in
# the C's operation order and both compile without contraction, so the
# measured difference is 0 (tiny, small, both GT backends and the
# orchestrated program); the bound allows a compiler's reassociation of one
# body (an ulp of h, ~1.4e-14 m, is 1.4e-16 of its maximum, and an ulp per
# step through 50 steps of a limited, damped scheme stays ~1e-14), and is far
# below what any change of a body does (the planted change: 1e-6 and more).
BASELINE_TOLERANCE = {"model": "rel-max", "bound": 1e-12}
SUMMARY = ("The stencil mini-app's programs (shallow-water: 27 stencil calls; vertical, hydrostatic: 3-D, 19 and 6)\n"
           "in GT4Py (gtscript) and DaCe, as its\n"
           "peer: the stencils called one by one from Python (--variant python, the seed's Python mode), or the\n"
           "step orchestrated by DaCe into one program, built, cached, loaded (build, build-and-run, run).\n"
           "Answers are checked against baselines/stencil/. --mode is --variant. Caches: GT4Py's in\n"
           "$GT_CACHE_ROOT, DaCe's in --cache.")


def parse_line(argv):
    """(values, given) as the mini-app's parser reads a line (--mode, the app's name of the seed's
    FV3_DACEMODE, is --variant); None when --help was printed."""
    return parse_options(argv, OPTIONS, lambda: print_help(PROG, SUMMARY, OPTIONS, ALIASES), aliases=ALIASES,
                         refuse_value=refuse_value)


# ------------------------------------------------------------------ machine

def compiler_version():
    try:
        out = subprocess.run(["g++", "-dumpfullversion"], capture_output=True, text=True, timeout=20)
        return "GNU " + out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ------------------------------------------------------------------ the list

def list_json():
    def backend(name):
        return {"name": name, "built": True, "usable": True, "cpu": True}
    desc = {
        "python": "GT4Py stencils called one by one from Python (the seed's FV3_DACEMODE=Python), compiled by "
                  "--gt-backend (default gt:cpu_ifirst)",
        "build": "the step orchestrated by DaCe (dace:cpu stencils in one SDFG, built by --dace-pipeline, default "
                 "Pace's), compiled into DaCe's cache, exit",
        "build-and-run": "the step orchestrated by DaCe: build (DaCe's cache), load and run, called per step from "
                         "Python's time loop (--calls, as Pace calls it)",
        "run": "load DaCe's cached program and run it; a missing one is refused, a stale one is not detected",
    }
    return {"app": APP, "baselines": "stencil", "peer_of": "stencil", "baseline_tolerance": BASELINE_TOLERANCE,
            "bitwise_variants": True, "bitwise_ranks": False, "repeatable": True,
            "variants": [{"name": v, "description": desc[v], "mpi_threads": "funneled",
                          "alone": v in ("python", "build-and-run"),
                          "backends": [backend("serial"), backend("omp")]} for v in VARIANTS]}


# ------------------------------------------------------------------ the run

def default_cache(kind):
    """Where the caches live: DaCe's --cache, else $MAPP_CACHE_DIR/stencil-gt4py,
    else the launcher's (the build's peers-cache), else .mapp-cache/."""
    base = os.environ.get("MAPP_CACHE_DIR")
    if base:
        return os.path.join(base, "stencil-gt4py", kind)
    base = os.environ.get("MAPP_PEER_CACHE")
    if base:
        return os.path.join(base, kind)
    return os.path.join(".mapp-cache", "stencil-gt4py", kind)


class Peer:
    def __init__(self, values, config, argv):
        self.values, self.c, self.argv = values, config, argv
        self.start = now()
        self.phases = {"setup": 0.0, "compute": 0.0, "communication": 0.0, "io": 0.0}
        self.checks = []
        self.variant = values["variant"]
        self.backend = values["backend"]
        self.gt_backend = values["gt-backend"]
        self.threads = peer_threads(values)
        self.stencil_build_s = self.program_build_s = self.load_s = 0.0
        self.built = False
        orchestrated = self.variant != "python"
        self.pipeline = values["dace-pipeline"] if orchestrated else None
        self.calls = values["calls"] if orchestrated else None
        self.passes = self.build_info = None
        self.call_overhead = None
        self.first_call_s = None
        self.sdfg_parse_s = 0.0
        self.compute_s = 0.0
        self.timing = None
        self.disturbance = None

    # -------------------------------------------------------------- setup
    def setup(self):
        os.environ["OMP_NUM_THREADS"] = str(self.threads)
        gt_cache = os.environ.get("GT_CACHE_ROOT") or default_cache("gt")
        os.environ["GT_CACHE_ROOT"] = os.path.abspath(gt_cache)
        os.makedirs(os.environ["GT_CACHE_ROOT"], exist_ok=True)
        peer_program.compile_without_contraction()
        try:
            import numpy as np
            import h5py  # noqa: F401  (the answer file; fail here, not after the run)
            import gt4py
            from gt4py.cartesian import gtscript
            import gt4py.cartesian.config as gt_config
        except ImportError as e:
            raise Refusal(f"cannot import {e.name or e} in {sys.executable}: make the venv with ci/peer-venv.sh")
        gt_config.cache_settings["root_path"] = os.environ["GT_CACHE_ROOT"]
        self.np, self.gt4py = np, gt4py
        self.versions = {"gt4py": gt4py.__version__, "python": sys.version.split()[0], "numpy": np.__version__}
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import importlib
        stencils, physics = PROGRAMS[self.values["program"]]
        S, P = importlib.import_module(stencils), importlib.import_module(physics)
        self.S, self.P = S, P
        S.check_table()
        nx, ny, nz = self.c["nx"], self.c["ny"], self.c["nz"]
        shape = (nx + 2 * S.HALO, ny + 2 * S.HALO, nz)
        need = 8 * shape[0] * shape[1] * shape[2] * (len(S.FIELDS) + 3)
        avail = mem_available()
        if avail and need > avail:
            raise Refusal(f"the step's {len(S.FIELDS)} fields need {need} bytes and MemAvailable is {avail}")
        be = self.gt_backend
        self.dace = None
        if self.variant != "python":
            self.setup_dace()
        # The stencils: one per body, compiled (or loaded from GT4Py's cache).
        t0 = now()
        self.compile_log = os.path.join(os.environ["GT_CACHE_ROOT"], "compile.log")
        with CompilerOutput(self.compile_log):
            built = peer_program.build_stencils(gtscript, stencils, S.CALLS, be)
        self.stencil_build_s = now() - t0
        self.stencils = {name: built[d.__name__] for name, d, *_ in S.CALLS}
        self.step = S.Step(self.stencils, nx, ny, nz)
        self.fields = {f: gt4py.storage.zeros(shape, np.float64, backend=be, aligned_index=(S.HALO, S.HALO, 0))
                       for f in S.FIELDS}
        self.args = P.arguments(self.values["cfl"])
        self.initial = P.initial_fields(np, S, nx, ny, nz, self.values)
        P.fill_inputs(self.fields, nx, ny, S.HALO)
        self.conserved0 = P.conserved(np, self.initial)
        self.reset()
        if self.variant != "python":
            self.prepare_program()
            self.first_call()
        else:
            # one validated call of each stencil (its first call checks its
            # arguments; the timed steps skip validation, as Pace does)
            for k, (name, _, fields, scalars, extent) in enumerate(S.CALLS):
                origin, domain = S.origin_domain(extent, nx, ny, nz)
                self.stencils[name](*[self.fields[f] for f in fields], *[self.args[s] for s in scalars],
                                    origin=origin, domain=domain)
            self.reset()
        self.gt_flags = os.environ["GT4PY_EXTRA_COMPILE_ARGS"]

    def setup_dace(self):
        try:
            import dace
        except ImportError as e:
            raise Refusal(f"cannot import {e.name or e} in {sys.executable}: make the venv with ci/peer-venv.sh")
        self.dace = dace
        self.versions["dace"] = dace.__version__
        cache = self.values["cache"] or default_cache("dace")
        self.cache = os.path.abspath(cache)
        if self.variant == "run" and not os.path.isdir(self.cache):
            raise Refusal(f"--variant run: no DaCe cache at {self.cache} (run --variant build first)")
        os.makedirs(self.cache, exist_ok=True)
        cfg = dace.config.Config
        # The app's compiler flags (-O3, no contraction) in place of DaCe's
        # default -march=native -ffast-math, so both sides compile the same
        # arithmetic; the rest is Pace's own line (dace_config.py: -std=c++14
        # -fPIC -Wall -Wextra -O3, "removed --fmath"). Both pipelines.
        self.dace_flags = (f"-std=c++14 -fPIC -Wall -Wextra -O3 {peer_program.NO_CONTRACTION} "
                           "-Wno-unused-parameter -Wno-unused-label")
        self.dace_settings = dace_pipeline.configure(cfg, self.pipeline, self.dace_flags, self.cache)

    def program_name(self):
        """One program per pipeline and kind of call (DaCe's cache keys a
        program by its name only)."""
        return f"mapp_stencil_gt4py_{self.pipeline}_{self.calls.replace('-', '_')}"

    def program_folder(self):
        return os.path.join(self.cache, self.program_name())

    def build_info_path(self):
        return os.path.join(self.program_folder(), "mapp_build.json")

    def prepare_program(self):
        import json
        dace, S = self.dace, self.S
        folder = self.program_folder()
        per_run = self.calls == "per-run"
        self.call_names = S.FIELDS + S.SCALARS + (["nsteps"] if per_run else [])
        if self.variant in ("build", "build-and-run"):
            prog = dace.method(S.Step.run if per_run else S.Step.step).__get__(self.step)
            example = self.call_args() + ([self.c["nt"]] if per_run else [])
            import warnings
            t0 = now()
            with warnings.catch_warnings(), CompilerOutput(os.path.join(self.cache, "compile.log")):
                warnings.simplefilter("ignore")
                sdfg, self.program, self.passes, self.sdfg_parse_s = dace_pipeline.build(
                    self.pipeline, prog, example, self.program_name())
            self.program_build_s = now() - t0 - self.sdfg_parse_s
            self.built = True
            self.sdfg_nodes = sum(1 for _ in sdfg.all_nodes_recursive())
            # What built the cached program, for a later --variant run's record
            # (Pace writes its build info beside its caches too).
            self.build_info = {"program": self.program_name(), "dace_pipeline": self.pipeline, "calls": self.calls,
                               "passes": self.passes, "dace_settings": self.dace_settings,
                               "dace_flags": self.dace_flags, "versions": self.versions, "nx": self.c["nx"],
                               "ny": self.c["ny"], "built": utc_now(), "sdfg_parse_seconds": self.sdfg_parse_s,
                               "build_seconds": self.program_build_s}
            try:
                with open(self.build_info_path(), "w") as f:
                    json.dump(self.build_info, f, indent=1)
            except OSError as e:
                raise Refusal(f"writing {self.build_info_path()} failed: {e}", system_errno(e))
        if self.variant == "build":
            return
        if self.variant == "run":
            if not os.path.isfile(os.path.join(folder, "program.sdfg")) or not os.path.isdir(
                    os.path.join(folder, "build")):
                raise Refusal(f"--variant run: no cached program in {folder} (run --variant build first with "
                              f"--dace-pipeline {self.pipeline} --calls {self.calls})")
            from dace.sdfg import utils as sdutils
            t0 = now()
            try:
                self.program = sdutils.load_precompiled_sdfg(folder)
            except Exception as e:
                first = (str(e).strip().splitlines() or [""])[0]
                raise Refusal(f"--variant run: DaCe could not load the cached program in {folder}: "
                              f"{type(e).__name__}: {first}")
            self.load_s = now() - t0
            try:
                with open(self.build_info_path()) as f:
                    self.build_info = json.load(f)
                self.passes = self.build_info.get("passes")
            except (OSError, ValueError):
                self.build_info = None  # built before the peer wrote its build info: passes unknown

    def first_call(self):
        """One step of the loaded program before the timed ones, then the
        initial state again: DaCe initialises a compiled program at its first
        call (__dace_init allocates the persistent transients, whose pages
        are then faulted in), which Pace pays once a run. Where one timed
        iteration is the figure (large), it would otherwise be in it. The
        python mode's validated calls do the same for GT4Py's stencils, and
        the app first-touches its fields at set-up."""
        if self.variant == "build":
            return
        t0 = now()
        self.steps(1)
        self.first_call_s = now() - t0
        self.reset()

    def call_args(self):
        return [self.fields[f] for f in self.S.FIELDS] + [self.args[s] for s in self.S.SCALARS]

    def reset(self):
        """The initial state in the fields (the ghosts and temporaries zero)."""
        H = self.S.HALO
        nx, ny = self.c["nx"], self.c["ny"]
        for f in self.S.FIELDS:
            if f not in self.P.INPUTS:
                self.fields[f][...] = 0.0
        for f in self.S.STATE:
            self.fields[f][H:H + nx, H:H + ny, :] = self.initial[f]

    def steps(self, n):
        if self.variant == "python":
            self.step.run(*self.call_args(), n)
        elif self.calls == "per-run":
            self.program(**dict(zip(self.call_names, self.call_args() + [n])))
        else:
            # Pace's way: the time loop in Python, the compiled step called once
            # a step with the arguments made once (as NDSL keeps them marshalled)
            kwargs = dict(zip(self.call_names, self.call_args()))
            program = self.program
            for _ in range(n):
                program(**kwargs)

    def measure_call_overhead(self):
        """What a call of the compiled program costs in Python, apart from
        its step: the same calls (steps(nt): nt calls per step, or one) with
        DaCe's do_not_execute set, so each call makes and checks its C
        arguments and returns without entering the program. Repeated until
        0.05 s; the fastest of 5 rounds, per call."""
        program, n = self.program, self.c["nt"]
        calls_per_run = n if self.calls == "per-step" else 1
        rounds = []
        program.do_not_execute = True
        try:
            for _ in range(5):
                reps, t0 = 0, now()
                while True:
                    self.steps(n)
                    reps += 1
                    if now() - t0 >= 0.01:
                        break
                rounds.append((now() - t0) / (reps * calls_per_run))
        finally:
            program.do_not_execute = False
        per_call = min(rounds)
        run_s = per_call * calls_per_run
        self.call_overhead = {
            "per_call_s": per_call, "calls_per_run": calls_per_run, "per_run_s": run_s,
            "per_step_s": run_s / n, "share_of_compute": run_s / self.compute_s if self.compute_s > 0 else None,
            "method": "the same calls with DaCe's do_not_execute set (arguments made and checked, the program "
                      "not entered); fastest of 5 rounds of >= 0.01 s, per call"}

    def state(self):
        """The state fields' interiors, [i, j, k]."""
        H = self.S.HALO
        nx, ny = self.c["nx"], self.c["ny"]
        return {f: self.np.asarray(self.fields[f])[H:H + nx, H:H + ny, :] for f in self.S.STATE}

    def answer(self):
        """The answer as the app writes it: [j][i] of one level, [j][k][i] of
        a 3-D program's."""
        np, three_d = self.np, self.c["nz"] > 1
        return {f: np.ascontiguousarray(a.transpose(1, 2, 0) if three_d else a[:, :, 0].T)
                for f, a in self.state().items()}

    def digest(self):
        h = hashlib.sha256()
        for a in self.answer().values():
            h.update(a.tobytes())
        return h.digest()

    # -------------------------------------------------------------- compute
    def compute(self):
        """The steps, repeated under --min-time (repeat_timed), each from
        the initial state; the figure is the fastest timed iteration."""
        def once():
            t0 = now()
            self.steps(self.c["nt"])
            return now() - t0, None

        r = repeat_timed(self.values["min-time"], once, self.digest, reset=self.reset)
        self.compute_s = r.seconds[r.best]
        self.phases["compute"] = self.compute_s
        self.timing, self.disturbance = r.timing, r.disturbance
        if r.differ is not None:
            self.check("iterations-identical", r.differ == 0, float(r.differ), 0.0)
        if self.variant != "python":
            self.measure_call_overhead()

    # -------------------------------------------------------------- verify
    def check(self, name, passed, value, bound):
        self.checks.append({"name": name, "passed": bool(passed), "value": float(value), "bound": float(bound)})

    def verify(self):
        """The program's invariants, the app's bounds (its physics file's)."""
        self.P.verify(self.np, self.state(), self.conserved0, self.values, self.args, self.check, self.initial)

    # -------------------------------------------------------------- output
    def write_output(self, path):
        import h5py
        np = self.np
        t0 = now()
        try:
            with h5py.File(path, "w") as f:
                write_provenance(h5py, np, f, APP, self.variant, "gt4py-jit", self)
                for k, a in self.answer().items():
                    f.create_dataset(k, data=a.astype(np.float64))
        except OSError as e:
            raise Refusal(f"writing the answer file '{path}' failed: {e}", system_errno(e))
        self.phases["io"] += now() - t0

    def record(self):
        c = self.c
        worst = max([ch["value"] for ch in self.checks] + [0.0])
        status = "none" if not self.checks else "fail" if not all(ch["passed"] for ch in self.checks) else "pass"
        cells = c["nx"] * c["ny"]  # as the app counts them: columns (a 3-D program's levels not apart)
        problem = {"nx": {"global": c["nx"], "per_rank": c["nx"]}, "ny": {"global": c["ny"], "per_rank": c["ny"]}}
        ran = self.variant != "build"
        step_s = self.compute_s / c["nt"] if ran and c["nt"] else 0.0
        app_data = {
            "mode": self.variant, "program": self.values["program"], "nz": self.c["nz"], "gt_backend": self.gt_backend,
            "stencil_calls": len(self.S.CALLS), "stencils": len({d.__name__ for _, d, *_ in self.S.CALLS}),
            "step_s": step_s, "stencil_build_s": self.stencil_build_s,
            "layout": "1x1", "init": self.values["init"], "dt": self.args.get("dt"), "versions": self.versions,
            "gt_cache": os.environ.get("GT_CACHE_ROOT"), "peak_rss_bytes":
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0,
        }
        if self.variant != "python":
            app_data.update({"cache": self.cache, "program_folder": self.program_folder(), "built": self.built,
                             "build_seconds": self.program_build_s, "load_seconds": self.load_s,
                             "dace_flags": self.dace_flags, "dace_pipeline": self.pipeline, "calls": self.calls,
                             "dace_settings": self.dace_settings,
                             # the passes that built the program (this run's, or the
                             # cached build's for --variant run; None: not recorded)
                             "dace_passes": self.passes, "call_overhead": self.call_overhead,
                             "first_call_s": self.first_call_s})
            if self.built:
                app_data["sdfg_parse_seconds"] = self.sdfg_parse_s
            elif self.build_info:
                app_data["build_info"] = {k: self.build_info.get(k) for k in (
                    "built", "nx", "ny", "dace_settings", "dace_flags", "sdfg_parse_seconds", "build_seconds")}
        fom = cells * c["nt"] / self.compute_s if ran and self.compute_s > 0 else 0.0
        phases = {k: {"max": v, "min": v, "mean": v} for k, v in self.phases.items()}
        rec = {
            "schema": "mapp-result/1", "app": APP, "peer_of": "stencil", "baseline_tolerance": BASELINE_TOLERANCE,
            # the mini-app's variant this mode stands beside: stencils called one by one from
            # Python beside the app's eager calls, DaCe's modes beside the app's of the same name
            "peer_variant": "eager" if self.variant == "python" else self.variant,
            "variant": self.variant, "backend": self.backend,
            "size": c["size"], "scaling": self.values["scaling"], "case": c["case"], "ranks": 1,
            "threads": self.threads, "gpus": 0, "steps": c["nt"], "problem": problem, "phases": phases,
            "wall_s": now() - self.start, "fom": {"name": "cell-updates/s", "value": fom}, "bytes_moved": None,
            "verification": {"status": status, "worst_error": worst, "checks": self.checks},
            "output": self.values["output"], "host": socket.gethostname(), "compiler": self.compiler_text,
            "flags": self.flags_text, "build_type": "gt4py-jit", "git_revision": self.git, "time": self.when,
            "command": " ".join(self.argv), "app_data": app_data, "machine": machine_json(),
        }
        if self.timing:
            rec["timing"] = self.timing
            rec["disturbance"] = self.disturbance
        return rec

    def run(self):
        self.when = utc_now()
        out = self.values["output"]
        check_outputs(self.values)
        t0 = now()
        self.setup()
        self.git = git_revision()
        self.compiler_text = (f"CPython {self.versions['python']}; gt4py {self.versions['gt4py']}"
                              + (f"; dace {self.versions['dace']}" if "dace" in self.versions else "")
                              + f"; {compiler_version()} ({self.gt_backend})")
        self.flags_text = (f"DaCe: {self.dace_flags}" if self.dace else
                           f"GT4Py's -O3 + GT4PY_EXTRA_COMPILE_ARGS='{self.gt_flags}'")
        self.phases["setup"] = now() - t0
        if self.variant != "build":
            self.compute()
            self.verify()
        def summary(rec):
            c = self.c
            if self.variant == "build":
                return (f"{APP} build/{self.backend} {c['size']}: built the orchestrated step ({self.pipeline} "
                        f"pipeline, {self.calls} calls) in {self.program_build_s:.4g} s (parse "
                        f"{self.sdfg_parse_s:.4g} s, stencils {self.stencil_build_s:.4g} s) into "
                        f"{self.program_folder()}")
            how = self.gt_backend
            if self.variant != "python":
                how += (f", {self.pipeline} pipeline, {self.calls} calls, "
                        f"{self.call_overhead['per_step_s'] * 1e6:.3g} us/step of them the calls'")
            return (f"{APP} {self.variant}/{self.backend} n=1 t={self.threads} {c['size']}: "
                    f"{rec['fom']['value']:.4g} cell-updates/s, compute {self.compute_s:.4g} s "
                    f"({rec['app_data']['step_s'] * 1e6:.4g} us/step, {how}), wall {rec['wall_s']:.4g} s,"
                    f" verify {rec['verification']['status']}")

        return finish_run(PROG, self, out, summary)


def main(argv):
    return peer_main(PROG, argv, parse_line, list_json, refuse_unhonoured, make_config, Peer,
                     "the GT4Py peer runs on one rank (Pace's halo exchange over MPI is not reproduced here)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
