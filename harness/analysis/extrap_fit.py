#!/usr/bin/env python3
"""Fits Extra-P performance models (one parameter, p: the rank count) to a
`mapp export --format extrap` file and prints them as JSON lines.

  extrap_fit.py FILE [--predict P [P ...]] [--modeler NAME] [--measure mean|median|minimum|maximum]
                     [--min-points N] [--poly-exponents LIST] [--log-exponents LIST] [--full-search]

FILE: Extra-P's text input format (PARAMETER / POINTS / METRIC / REGION / DATA
lines), or its JSON-lines format (one {"params": {"p": 4}, "callpath":
"main->compute", "metric": "time", "value": 1.2} per line); told apart by the
first line that is no comment.

One JSON line per (callpath, metric), in the file's order:
  {"callpath": "main->compute", "metric": "time", "parameter": "p",
   "model": "0.98 + 0.25 * p^(1)",          Extra-P's own text of the model
   "model_python": "0.98+0.25*p**(1)",
   "constant": 0.98,
   "terms": [{"coefficient": 0.25, "p_exponent": 1.0, "log2_exponent": 0.0,
              "p_exponent_text": "1", "log2_exponent_text": "0"}],
   "leading": "p",                           the fastest-growing term, no coefficient ("1" for a constant)
   "quality": {"RSS": .., "rRSS": .., "nRSS": .., "SMAPE": .., "AR2": .., "RE": ..},
   "points": [[1, 1.23], [2, 1.52], ...],   p and the measure (mean) the fit used
   "predictions": {"256": 65.0, "1024": 257.0}}

The search space: Extra-P's default modeler tries every exponent in its own
large set (1/4, 1/3, 2/3, 3/4, 4/5, 5/4, 4/3, ... with log2 exponents 0-2); with
3 % noise on 7 points that picks p^(3/4) * log2(p) for a linear law in about
1 run of 4. So this script restricts it by default to the exponents of p
0, 1/2, 1, 3/2, 2, 3 and of log2 p 0, 1, 2 (Extra-P's options poly_exponents and
log_exponents); --full-search gives Extra-P its own set back.

Refuses (one line on stderr, exit 2) when it cannot load the file, when
there is no parameter or more than one, or when a (callpath, metric) has
fewer than --min-points (5, Extra-P's own minimum) distinct values of p:
Extra-P itself only warns and fits anyway.
"""
import argparse
import contextlib
import io
import json
import math
import sys
import warnings

PROG = "extrap_fit"


def refuse(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(2)


def num(x):
    """A JSON-safe float (None for nan/inf)."""
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def exponent_text(e):
    """Extra-P's own text of an exponent: a Fraction as 1/2, a float as 0.5, 1.0 as 1."""
    f = float(e)
    return str(int(f)) if f.is_integer() else str(e)


def leading_of(terms):
    """The term that dominates as p grows: "1" when every term falls (a strong-scaling c + a/p)."""
    growing = [t for t in terms if (t["p_exponent"], t["log2_exponent"]) > (0, 0)]
    if not growing:
        return "1"
    t = max(growing, key=lambda t: (t["p_exponent"], t["log2_exponent"]))
    parts = []
    if t["p_exponent"]:
        parts.append("p" if t["p_exponent"] == 1 else f"p^({t['p_exponent_text']})")
    if t["log2_exponent"]:
        parts.append("log2(p)" if t["log2_exponent"] == 1 else f"log2(p)^({t['log2_exponent_text']})")
    return " * ".join(parts) or "1"


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description="Fit Extra-P models to a mapp extrap export")
    ap.add_argument("file")
    ap.add_argument("--predict", type=float, nargs="+", default=[], metavar="P",
                    help="evaluate each model at these values of p")
    ap.add_argument("--modeler", default="default", help="Extra-P single-parameter modeler (default, basic, refining, segmented)")
    ap.add_argument("--measure", default="mean", choices=["mean", "median", "minimum", "maximum"],
                    help="which statistic of a point's repetitions is fitted (default mean)")
    ap.add_argument("--min-points", type=int, default=5, help="refuse a series with fewer distinct p (default 5)")
    ap.add_argument("--poly-exponents", default="0,0.5,1,1.5,2,3",
                    help="exponents of p the modeler tries, comma-separated decimals (default 0,0.5,1,1.5,2,3; "
                         "a strong-scaling series wants -1 and -0.5 too: --poly-exponents=-1,-0.5,0,...)")
    ap.add_argument("--log-exponents", default="0,1,2",
                    help="exponents of log2(p) the modeler tries (default 0,1,2)")
    ap.add_argument("--full-search", action="store_true",
                    help="Extra-P's own exponent set instead of --poly-exponents/--log-exponents")
    args = ap.parse_args(argv)
    for opt in ("poly_exponents", "log_exponents"):
        try:
            [float(e) for e in getattr(args, opt).split(",")]
        except ValueError:
            refuse(f"--{opt.replace('_', '-')} {getattr(args, opt)}: not comma-separated decimals (1/2 is 0.5)")

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            from extrap.entities.functions import FunctionFormats
            from extrap.entities.measurement import Measure
            from extrap.fileio.file_reader.json_file_reader import JsonFileReader
            from extrap.fileio.file_reader.text_file_reader import TextFileReader
            from extrap.modelers import single_parameter
            from extrap.modelers.model_generator import ModelGenerator
    except ImportError as e:
        refuse(f"no extrap in this Python ({e}): run ci/analysis-venv.sh and use its python")

    try:
        with open(args.file, encoding="utf-8") as f:
            first = next((ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("#")), "")
    except OSError as e:
        refuse(f"cannot read {args.file}: {e.strerror}")
    reader = JsonFileReader() if first.startswith("{") or first.startswith("[") else TextFileReader()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = reader.read_experiment(args.file)
    except Exception as e:  # noqa: BLE001 - Extra-P's FileFormatError, InvalidExperimentError, ValueError ...
        refuse(f"{args.file}: Extra-P cannot load it ({type(e).__name__}: {e})")
    if len(exp.parameters) != 1:
        refuse(f"{args.file}: {len(exp.parameters)} parameters, this fits one (p)")
    pname = exp.parameters[0].name
    for (cp, metric), ms in exp.measurements.items():
        ps = sorted({m.coordinate[0] for m in ms})
        if len(ps) < args.min_points:
            refuse(f"{args.file}: {cp.name} {metric.name}: {len(ps)} values of {pname} "
                   f"({', '.join(f'{p:g}' for p in ps)}), a fit needs at least {args.min_points}")
    modeler = args.modeler
    if modeler.lower() not in {k.lower() for k in single_parameter.all_modelers}:
        refuse(f"unknown modeler {modeler} (one of {', '.join(sorted(single_parameter.all_modelers))})")
    modeler = next(k for k in single_parameter.all_modelers if k.lower() == modeler.lower())

    measure = Measure.from_str(args.measure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mg = ModelGenerator(exp, modeler=modeler, use_measure=measure)
        if not args.full_search:
            if not hasattr(mg.modeler, "poly_exponents"):
                refuse(f"modeler {modeler} takes no exponent set: use --full-search")
            mg.modeler.poly_exponents = args.poly_exponents   # Extra-P rebuilds its hypotheses on each set
            mg.modeler.log_exponents = args.log_exponents
        mg.model_all()

    for (cp, metric), model in mg.models.items():
        h = model.hypothesis
        fn = h.function
        terms = []
        for ct in getattr(fn, "compound_terms", []):
            t = {"coefficient": num(ct.coefficient), "p_exponent": 0.0, "log2_exponent": 0.0,
                 "p_exponent_text": "0", "log2_exponent_text": "0"}
            for st in ct.simple_terms:
                key = "p" if st.term_type == "polynomial" else "log2"
                t[f"{key}_exponent"] = float(st.exponent)
                t[f"{key}_exponent_text"] = exponent_text(st.exponent)
            terms.append(t)
        points = sorted((m.coordinate[0], m.value(measure)) for m in exp.measurements[(cp, metric)])
        out = {
            "callpath": cp.name, "metric": metric.name, "parameter": pname,
            "model": fn.to_string(*exp.parameters),
            "model_python": fn.to_string(*exp.parameters, format=FunctionFormats.PYTHON),
            "constant": num(fn.constant_coefficient),
            "terms": terms,
            "leading": leading_of(terms),
            "quality": {"RSS": num(h.RSS), "rRSS": num(h.rRSS), "nRSS": num(h.nRSS),
                        "SMAPE": num(h.SMAPE), "AR2": num(h.AR2), "RE": num(h.RE)},
            "modeler": modeler, "measure": args.measure,
            "search": "extrap-default" if args.full_search else
                      {"poly_exponents": args.poly_exponents, "log_exponents": args.log_exponents},
            "points": [[num(p), num(v)] for p, v in points],
            "predictions": {f"{p:g}": num(fn.evaluate(p)) for p in args.predict},
        }
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
