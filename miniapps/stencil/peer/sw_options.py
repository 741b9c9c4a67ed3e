"""mapp-stencil-gt4py's command line: the mini-app's flags with its ranges
(so bad values are answered as the app answers them), the peer's own, the
values it refuses, and the problem they ask for (main.c's, mapp_app.c's)."""

from dace_pipeline import PIPELINES
from mapp_peer import ANSWER, CHOICE, DOUBLE, FLAG, LONG, SIZE, STRING, Refusal, common_options, dims_create, opt

GT_BACKENDS = "gt:cpu_ifirst|gt:cpu_kfirst|dace:cpu|numpy"
DEFAULT_GT_BACKEND = "gt:cpu_ifirst"
VARIANTS = ["python", "build", "build-and-run", "run"]
CALL_KINDS = ["per-step", "per-run"]
# The programs: (stencils module, physics module), and the --init each
# starts from (the app's physics files' inits).
PROGRAMS = {"shallow-water": ("sw_stencils", "sw_physics"), "vertical": ("vt_stencils", "vt_physics"),
            "hydrostatic": ("hs_stencils", "gen_physics")}
PROGRAM_INITS = {"shallow-water": ("bump", "rest", "geostrophic"), "vertical": ("bump", "constant"),
                 "hydrostatic": ("bump",)}

# ------------------------------------------------------------------ options

# The mini-app's presets (stencil_state.c): nx, ny, steps, nz.
PRESETS = {"tiny": (24, 24, 20, 8), "small": (96, 96, 50, 20), "medium": (384, 384, 20, 40),
           "large": (1024, 1024, 10, 80)}

# The mini-app's flags (mapp_app.c's common rows, then main.c's) with its
# ranges, so bad values are answered as it answers them, then the peer's own.
OPTIONS = common_options(
    "backend to run on (serial: OMP_NUM_THREADS=1; omp: the generated code's OpenMP)",
    "the seed's mode: python (stencils one by one), or the DaCe-orchestrated program's build, build-and-run, run",
    "python", VARIANTS,
    "seconds: run the timed steps again from the same initial state until the timed runs last this long "
    "together; the first is a warm-up, left out when more than one ran, and every run's answer must be the same "
    "bit for bit; the figure is the fastest; 0: once") + [
    opt("program", CHOICE, "the step: the 2-D shallow-water step, or the 3-D vertical (advection, remap, implicit "
        "vertical diffusion) and hydrostatic (pressure and height integrals) steps", "shallow-water",
        choices="|".join(PROGRAMS), changes=ANSWER),
    opt("nx", LONG, "cells in x (per rank along x with --scaling weak)", lo=1, hi=1 << 30,
        default_text="from --size", changes=SIZE, preset="nx"),
    opt("ny", LONG, "cells in y", lo=1, hi=1 << 30, default_text="from --size", changes=SIZE, preset="ny"),
    opt("nz", LONG, "levels of a program with 3-D fields (vertical, hydrostatic; shallow-water has one)", lo=4,
        hi=1 << 20, default_text="from --size", changes=SIZE, preset="nz"),
    opt("layout", STRING, "process grid PXxPY: only 1x1 or auto (the peer runs on one rank)", "auto"),
    opt("init", CHOICE, "initial state: a depth bump at rest, a flat state at rest, a geostrophically balanced "
        "bump", "bump", choices="bump|rest|geostrophic|constant", changes=ANSWER),
    opt("amplitude", DOUBLE, "bump height as a fraction of the mean depth", 0.1, lo=-10, hi=10, changes=ANSWER),
    opt("cfl", DOUBLE, "gravity-wave Courant number of the time step", 0.3, lo=1e-6, hi=100, changes=ANSWER),
    opt("cache", STRING, "folder of DaCe's program cache (orchestrated modes)",
        default_text="$MAPP_CACHE_DIR/stencil-gt4py, else the build's peers-cache"),
    opt("check", STRING, "the app's debug pass (Pace's PACE_DACE_DEBUG checks): not in the peer, refused",
        default_text="none"),
    opt("trace", STRING, "the app's debug pass: not in the peer, refused", default_text="none"),
    opt("progress", FLAG, "the app's debug pass: not in the peer, refused"),
    opt("gt-backend", CHOICE, "GT4Py backend of the stencils (python: any; orchestrated: dace:cpu)",
        default_text=f"{DEFAULT_GT_BACKEND} (python), dace:cpu (orchestrated)", choices=GT_BACKENDS),
    opt("dace-pipeline", CHOICE, "how DaCe builds the orchestrated step: pace (Pace's _build_sdfg: parse "
        "unsimplified, (1,)-arrays in registers, transients persistent, simplify, corner regions split, stencils "
        "expanded, simplify, with Pace's DaCe settings) or default (DaCe's to_sdfg and compile); orchestrated "
        "modes only", "pace", choices="|".join(PIPELINES)),
    opt("calls", CHOICE, "how Python calls the orchestrated step: per-step (Pace's: the time loop in Python, one "
        "call of the compiled step a step) or per-run (the time loop inside the program, one call); orchestrated "
        "modes only", "per-step", choices="|".join(CALL_KINDS)),
]


ALIASES = {"mode": "variant"}  # the app's --mode (the seed's FV3_DACEMODE)


def refuse_value(name, text):
    if name == "backend" and text == "cuda":
        raise Refusal("--backend cuda: the GT4Py peer runs on the CPU only (serial, omp) here: GT4Py's gt:gpu "
                      "and dace:gpu need CUDA and cupy, not in its venv")
    if name == "variant" and text == "eager":
        raise Refusal("--variant eager is the app's name; the peer's stencils-one-by-one mode is --variant "
                      "python (the seed's FV3_DACEMODE=Python)")


def refuse_unhonoured(values, given):
    """Flags the peer cannot honour: one line each, never ignored."""
    inits = PROGRAM_INITS[values["program"]]
    if values["init"] not in inits:
        raise Refusal(f"--init {values['init']}: program {values['program']} starts from {'|'.join(inits)}")
    for name in ("check", "trace", "progress"):
        if name in given:
            raise Refusal(f"--{name}: the app's debug passes (the seed's PACE_DACE_DEBUG checks) are not in the "
                          "GT4Py peer")
    if values["layout"] not in ("auto", "1x1"):
        raise Refusal(f"--layout {values['layout']}: the GT4Py peer runs on one rank (1x1)")
    variant = values["variant"]
    gtb = values["gt-backend"]
    if variant != "python":
        if "gt-backend" in given and gtb != "dace:cpu":
            raise Refusal(f"--gt-backend {gtb} with --variant {variant}: DaCe orchestrates dace:* stencils only "
                          "(Pace errors out on any other backend); use dace:cpu")
        values["gt-backend"] = "dace:cpu"
    elif gtb is None:
        values["gt-backend"] = DEFAULT_GT_BACKEND
    if variant == "python":
        for name in ("cache", "dace-pipeline", "calls"):
            if name in given:
                raise Refusal(f"--{name} applies to the orchestrated modes (build, build-and-run, run), not python")
    if variant == "build" and values["output"]:
        raise Refusal("--output with --variant build: a build runs no step, so it has no answer to write")
    if variant == "build" and values["min-time"] > 0:
        raise Refusal("--min-time with --variant build: a build runs no step, so there is nothing to time")


# ------------------------------------------------------------------ the case

def make_config(values, given):
    """The problem the options ask for, as main.c builds it, with the case
    and size names the driver gives it (mapp_app.c's apply_options)."""
    nx, ny, steps, nz = PRESETS[values["size"]]
    three_d = values["program"] != "shallow-water"
    preset = {"nx": nx, "ny": ny, "steps": steps, "nz": nz}
    custom_case = custom_size = False
    for o in OPTIONS:
        name = o["name"]
        if name not in given or not o["changes"]:
            continue
        reference = preset[o["preset"]] if o["preset"] else o["default"]
        if values[name] != reference:
            custom_case = True
            custom_size |= o["changes"] == SIZE
    nx = values["nx"] if "nx" in given else nx
    ny = values["ny"] if "ny" in given else ny
    nt = values["steps"] if "steps" in given else steps
    if values["weak-ranks"] and values["scaling"] != "weak":
        raise Refusal(f"--weak-ranks {values['weak-ranks']}: it names the problem of --scaling weak on that many "
                      f"ranks, and this run is --scaling {values['scaling']}")
    weak = values["weak-ranks"] or 1
    if values["scaling"] == "weak":
        py, px = dims_create(weak)
        nx, ny = nx * px, ny * py
    if nx < 3 or ny < 3:
        raise Refusal(f"a {nx} x {ny} grid on a 1x1 layout leaves a rank under 3 cells across")
    case = None
    if not custom_case:
        case = f"{values['size']}-weak{weak}" if values["scaling"] == "weak" and weak > 1 else values["size"]
    nz = (values["nz"] if "nz" in given else nz) if three_d else 1
    return dict(nx=nx, ny=ny, nz=nz, nt=nt, case=case, size="custom" if custom_size else values["size"])
