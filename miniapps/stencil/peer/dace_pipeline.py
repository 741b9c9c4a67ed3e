"""DaCe's orchestration of the peer's step, built as Pace builds it or as
DaCe builds it by default (--dace-pipeline pace|default).

Pace's pipeline is _build_sdfg in pace.dsl.dace.orchestration (ai2cm/pace;
NDSL's ndsl/dsl/dace/ today), with the DaCe settings of its dace_config.py;
read there, written here for this program. Every build returns the passes
that ran, with their times and what each changed, for the run's record.
"""

from mapp_peer import now

PIPELINES = ["pace", "default"]

# The expansion order Pace gives a stencil whose regions are corners and
# split (Pace's sdfg_opt_passes.splittable_region_expansion).
CORNER_EXPANSION = ["Sections", "Stages", "J", "I", "K"]

SETTINGS_RECORDED = ("compiler.allow_view_arguments", "compiler.cpu.openmp_sections", "frontend.unroll_threshold",
                     "frontend.dont_fuse_callbacks", "store_history", "optimizer.automatic_simplification")


def configure(cfg, pipeline, flags, cache):
    """DaCe's configuration for a build: the compiler line `flags`, programs
    cached by name under `cache`, and with the pace pipeline Pace's
    settings. Returns the settings the record names."""
    cfg.set("compiler", "cpu", "args", value=flags)
    cfg.set("compiler", "allow_view_arguments", value=True)  # GT4Py's storages (Pace sets it too)
    cfg.set("default_build_folder", value=cache)
    cfg.set("cache", value="name")
    cfg.set("debugprint", value=False)
    if pipeline == "pace":
        # Pace's settings for an orchestrated build (DaceConfig, dace_config.py;
        # NDSL's today are the same on the CPU): no OpenMP sections, no loop
        # unrolling by the frontend, callbacks kept out of state fusion, no
        # transformation history.
        cfg.set("compiler", "cpu", "openmp_sections", value=False)
        cfg.set("frontend", "unroll_threshold", value=-1)
        cfg.set("frontend", "dont_fuse_callbacks", value=True)
        cfg.set("frontend", "verbose_errors", value=True)
        cfg.set("store_history", value=False)
    return {key: cfg.get(*key.split(".")) for key in SETTINGS_RECORDED}


def has_corner_regions(node):
    """Whether a GT4Py stencil (a StencilComputation node) has a region in a
    corner: bounded at one end of the domain in I and in J (Pace picks its
    corner stencils by label, "corner" in the name; this program's corners
    are the ghost stencils' 12 corner cells a field, so they are found by
    their regions)."""
    from gt4py.cartesian.gtc import oir

    def at_one_end(interval):
        return (interval.start is not None and interval.end is not None
                and interval.start.level == interval.end.level)

    for restriction in node.oir_node.walk_values().if_isinstance(oir.HorizontalRestriction):
        if at_one_end(restriction.mask.i) and at_one_end(restriction.mask.j):
            return True
    return False


def stencil_label(node):
    """A stencil node's label without the object id GT4Py appends."""
    import re
    return re.sub(r"_[0-9]{6,}$", "", node.label)


def parse(prog, example, simplify, name):
    """The program's SDFG, named `name` (DaCe's cache keys a program by its
    name), and the seconds the parse took."""
    t0 = now()
    sdfg = prog.to_sdfg(*example, simplify=simplify)
    sdfg.name = name
    return sdfg, now() - t0


def build_default(prog, example, name):
    """DaCe's default pipeline: to_sdfg (simplified as DaCe's configuration
    says: on), then compile, which expands the stencils (GT4Py's library
    nodes) inside code generation, with nothing after it."""
    import dace
    simplify = bool(dace.config.Config.get("optimizer", "automatic_simplification"))
    sdfg, parse_s = parse(prog, example, None, name)
    passes = [{"name": "parse", "simplify": simplify, "seconds": parse_s,
               "nodes": sum(1 for _ in sdfg.all_nodes_recursive())}]
    t0 = now()
    program = sdfg.compile()
    passes.append({"name": "compile", "seconds": now() - t0,
                   "note": "expands the library nodes (the stencils) in code generation"})
    return sdfg, program, passes, parse_s


def build_pace(prog, example, name):
    """Pace's pipeline (_build_sdfg in pace.dsl.dace.orchestration, CPU):
    parse without simplifying; arrays of shape (1,) in registers;
    transients persistent (allocated once, not at every call); simplify;
    corner regions split (splittable_region_expansion); the stencils
    expanded into maps; simplify again (inlines the expanded stencils);
    compile. Pace then turns persistent arrays into pooled ones, which
    DaCe 1 has no pool for on the CPU (NDSL pools on the GPU only): not
    done here."""
    from dace.dtypes import DeviceType, StorageType
    from dace.transformation.auto.auto_optimize import make_transients_persistent
    from gt4py.cartesian.gtc.dace.nodes import StencilComputation

    def count(sdfg):
        return sum(1 for _ in sdfg.all_nodes_recursive())

    def simplify(sdfg):
        t0 = now()
        done = sdfg.simplify(validate=False) or {}
        return {"name": "simplify", "seconds": now() - t0, "applied": sorted(k for k, v in done.items() if v),
                "nodes": count(sdfg)}

    sdfg, parse_s = parse(prog, example, False, name)
    passes = [{"name": "parse", "simplify": False, "seconds": parse_s, "nodes": count(sdfg)}]
    t0 = now()
    registers = 0
    for _, _, desc in sdfg.arrays_recursive():
        if tuple(desc.shape) == (1,):
            desc.storage = StorageType.Register
            registers += 1
    passes.append({"name": "register_storage", "seconds": now() - t0, "arrays": registers})
    t0 = now()
    made = make_transients_persistent(sdfg=sdfg, device=DeviceType.CPU)
    passes.append({"name": "make_transients_persistent", "device": "CPU", "seconds": now() - t0,
                   "arrays": sum(len(v) for v in made.values())})
    passes.append(simplify(sdfg))
    # Pace's splittable_region_expansion: a stencil with corner regions that
    # GT4Py can split (each region its own small map, not a mask over the
    # whole domain) is expanded J, I, K. This program's corners share their
    # stencils (ghost_*) with edge regions that span the domain, which
    # GT4Py's rule does not split: candidates, none split.
    t0 = now()
    corners, split = [], []
    for node, _ in sdfg.all_nodes_recursive():
        if isinstance(node, StencilComputation) and has_corner_regions(node):
            corners.append(stencil_label(node))
            if node.has_splittable_regions():
                node.expansion_specification = CORNER_EXPANSION
                split.append(stencil_label(node))
    passes.append({"name": "splittable_region_expansion", "seconds": now() - t0,
                   "stencils_with_corners": corners, "split": split, "expansion": CORNER_EXPANSION})
    t0 = now()
    library = sum(1 for node, _ in sdfg.all_nodes_recursive() if isinstance(node, StencilComputation))
    sdfg.expand_library_nodes()
    passes.append({"name": "expand_library_nodes", "seconds": now() - t0, "stencils": library,
                   "nodes": count(sdfg)})
    passes.append(simplify(sdfg))
    t0 = now()
    program = sdfg.compile()
    passes.append({"name": "compile", "seconds": now() - t0})
    return sdfg, program, passes, parse_s



def build(pipeline, prog, example, name):
    """The orchestrated program built by `pipeline`: (sdfg, program, passes,
    parse seconds)."""
    return (build_pace if pipeline == "pace" else build_default)(prog, example, name)
