"""Which of a program's stencils give answers that depend on the OpenMP
thread count or change from run to run (GT4Py's gt:* backends).

Each call of the program's table runs alone, once, on inputs of its own
(every field filled from a generator seeded by the field's name, halos
included), at the call's own origin and domain, and the digest of every
field it writes is printed. One process is one thread count
(OMP_NUM_THREADS, read once by the OpenMP runtime), so the probe is run
several times and the digests compared:

  build/peers-venv/bin/python miniapps/stencil/peer/race_probe.py \\
      --gt-backend gt:cpu_kfirst --threads 1,2,2,2 --nx 16 --ny 16

prints, per call, whether every run equals the same call on GT4Py's numpy
backend (--reference), and for one that does not, the first differing
point of each run. The stencils
are built into (or loaded from) the peer's GT4Py cache.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_program  # noqa: E402  (the peer's folder, on the path above)


def child(args):
    """One thread count: every call alone; one JSON line per call."""
    import numpy as np
    import gt4py
    from gt4py.cartesian import gtscript
    import gt4py.cartesian.config as gt_config
    import importlib
    gt_config.cache_settings["root_path"] = os.environ["GT_CACHE_ROOT"]
    S = importlib.import_module(args.stencils)
    shape = (args.nx + 2 * S.HALO, args.ny + 2 * S.HALO, args.nz)
    calls = [(k, c) for k, c in enumerate(S.CALLS) if not args.only or c[0] in args.only.split(",")]
    built = peer_program.build_stencils(gtscript, args.stencils, [c for _, c in calls], args.gt_backend)
    for k, (name, d, fields, scalars, extent) in calls:
        arrays = {}
        for f in fields:
            seed = int.from_bytes(hashlib.sha256(f.encode()).digest()[:4], "little")
            values = np.random.default_rng(seed).uniform(0.5, 1.5, shape)
            arrays[f] = gt4py.storage.from_array(values, np.float64, backend=args.gt_backend,
                                                 aligned_index=(S.HALO, S.HALO, 0))
        origin, domain = S.origin_domain(extent, args.nx, args.ny, args.nz)
        built[d.__name__](*[arrays[f] for f in fields], *[0.25 + 0.125 * i for i in range(len(scalars))],
                          origin=origin, domain=domain)
        fields_out = {f: np.asarray(arrays[f]) for f in fields}
        digests = {f: hashlib.sha256(a.tobytes()).hexdigest()[:16] for f, a in fields_out.items()}
        np.savez(os.path.join(args.dump, f"c{k:02d}.npz"), **fields_out)
        print(json.dumps({"call": k, "name": name, "digests": digests}), flush=True)


def compare(args):
    """The reference run (--reference's backend, one thread) and one run per
    thread count; each call's fields against the reference's."""
    plan = [(args.reference, 1)] + [(args.gt_backend, int(t)) for t in args.threads.split(",")]
    runs = []
    for r, (backend, t) in enumerate(plan):
        dump = os.path.join(args.out, f"run{r}-{backend.replace(':', '_')}-t{t}")
        os.makedirs(dump, exist_ok=True)
        env = dict(os.environ, OMP_NUM_THREADS=str(t))
        cmd = [sys.executable, __file__, "--child", "--dump", dump, "--gt-backend", backend] + passthrough(args)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or ["(no message)"]
            print(f"race_probe.py: the run of {backend} on {t} thread(s) exited {done.returncode}: {tail[0]}",
                  file=sys.stderr)
            return 2
        out = done.stdout
        runs.append((t, dump, [json.loads(line) for line in out.splitlines() if line.startswith("{")]))
    import numpy as np
    _, dump0, first = runs[0]
    wrong = 0
    for n, call in enumerate(first):
        k = call["call"]
        verdicts = []
        for t, dump, calls in runs[1:]:
            if calls[n]["digests"] == call["digests"]:
                verdicts.append(f"t{t} ok")
                continue
            a, b = np.load(os.path.join(dump0, f"c{k:02d}.npz")), np.load(os.path.join(dump, f"c{k:02d}.npz"))
            for f in call["digests"]:
                diff = np.argwhere(a[f] != b[f])
                if len(diff):
                    at = tuple(int(x) for x in diff[0])
                    verdicts.append(f"t{t} WRONG: {f} at {len(diff)} points, first {at} "
                                    f"({b[f][at]!r}, reference {a[f][at]!r})")
        bad = any("WRONG" in v for v in verdicts)
        wrong += bad
        print(f"c{k:02d} {call['name']:<22} " + ("; ".join(verdicts) if bad else "every run equals the reference"))
    print(f"{wrong} of {len(first)} calls differ from {args.reference} on some run "
          f"({args.gt_backend}, {args.nx} x {args.ny} x {args.nz}, threads {args.threads})")
    return 1 if wrong else 0


def passthrough(args):
    return ["--stencils", args.stencils, "--nx", str(args.nx), "--ny",
            str(args.ny), "--nz", str(args.nz)] + (["--only", args.only] if args.only else [])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gt-backend", default="gt:cpu_kfirst")
    p.add_argument("--stencils", default="sw_stencils", help="the program's stencil module (sw_stencils, ...)")
    p.add_argument("--nx", type=int, default=16)
    p.add_argument("--ny", type=int, default=16)
    p.add_argument("--nz", type=int, default=1)
    p.add_argument("--only", help="the calls to run, by name (a,b,...; default every call)")
    p.add_argument("--threads", default="1,2,2,2", help="the thread count of each run of --gt-backend")
    p.add_argument("--reference", default="numpy", help="the backend whose answers the runs are compared with")
    p.add_argument("--out", default="race-probe", help="where each run's fields go")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--dump", help=argparse.SUPPRESS)
    args = p.parse_args()
    os.environ.setdefault("GT_CACHE_ROOT", os.path.join(HERE, "..", "..", "..", "build", "peers-cache",
                                                        "stencil-gt4py", "gt"))
    peer_program.compile_without_contraction()
    if args.child:
        child(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
