"""What every program of the GT4Py peer shares: a stencil frozen at its
call's origin and domain (Pace's FrozenStencil), the domain of a call's
extent, and the check that a program's Step makes its calls as its table
lists them."""

import inspect
import os

# The app's generated programs are compiled without contraction; so are the
# stencils (GT and DaCe), so a point's arithmetic is the C's.
NO_CONTRACTION = "-ffp-contract=off -fno-trapping-math"


def compile_without_contraction():
    """GT4PY_EXTRA_COMPILE_ARGS with NO_CONTRACTION, unless it names a
    contraction rule of its own."""
    extra = os.environ.get("GT4PY_EXTRA_COMPILE_ARGS", "")
    if "-ffp-contract" not in extra:
        os.environ["GT4PY_EXTRA_COMPILE_ARGS"] = (extra + " " + NO_CONTRACTION).strip()


def build_stencils(gtscript, module, calls, backend):
    """One compiled stencil per body of the calls (a body two calls share is
    built once), named MODULE.BODY as GT4Py's cache keys it, by body name."""
    built = {}
    for _, d, *_ in calls:
        if d.__name__ not in built:
            built[d.__name__] = gtscript.stencil(backend=backend, definition=d, name=f"{module}.{d.__name__}")
    return built


def origin_domain(extent, halo, nx, ny, nz=1):
    """The origin and domain of a call of extent EXT(ilo, ihi, jlo, jhi) (the
    C's: [lo, n + hi) in each axis) over every level."""
    ilo, ihi, jlo, jhi = extent
    return (halo + ilo, halo + jlo, 0), (nx + ihi - ilo, ny + jhi - jlo, nz)


class Frozen:
    """A stencil bound to its call's origin and domain (Pace's FrozenStencil):
    called from Python, or parsed by DaCe into the orchestrated program."""

    def __init__(self, stencil, origin, domain):
        self.stencil, self.origin, self.domain = stencil, origin, domain

    def __call__(self, *args):
        self.stencil(*args, origin=self.origin, domain=self.domain, validate_args=False)

    def __sdfg__(self, *args, **kwargs):
        return self.stencil.__sdfg__(*args, origin=self.origin, domain=self.domain, **kwargs)

    def __sdfg_signature__(self):
        return self.stencil.__sdfg_signature__()

    def __sdfg_closure__(self, *args, **kwargs):
        return self.stencil.__sdfg_closure__(*args, **kwargs)


def freeze_calls(step, stencils, calls, halo, nx, ny, nz=1):
    """step.c00, step.c01, ...: each call of the table frozen at its domain."""
    for k, (name, _, _, _, extent) in enumerate(calls):
        origin, domain = origin_domain(extent, halo, nx, ny, nz)
        setattr(step, f"c{k:02d}", Frozen(stencils[name], origin, domain))


def check_calls(step_class, calls, count):
    """The call list is the C's: `count` calls, and the Step's `step` (and
    its `run`, unless `run` calls `step`) call each with the fields the table
    names, in the table's order (a mismatch would be a silent wrong
    answer)."""
    assert len(calls) == count, (len(calls), count)
    for method in (step_class.run, step_class.step):
        src = inspect.getsource(method)
        if method is step_class.run and "self.step(" in src:
            continue
        at = 0
        for k, (name, _, fields, scalars, _) in enumerate(calls):
            line = f"self.c{k:02d}({', '.join(fields + scalars)})"
            found = src.find(line, at)
            if found < 0:
                raise AssertionError(f"Step.{method.__name__} does not call {name} as {line} after call {k - 1}")
            at = found + len(line)
        if src.count("self.c") != len(calls):
            raise AssertionError(f"Step.{method.__name__} makes {src.count('self.c')} calls, not {len(calls)}")
