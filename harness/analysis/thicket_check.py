#!/usr/bin/env python3
"""Loads `mapp export --format caliper-json` profiles with Thicket (the real
llnl-thicket / llnl-hatchet packages) and checks them against the records
they came from.

  thicket_check.py PROFILE_DIR RECORDS

PROFILE_DIR: the export folder; every *.json in it is a Caliper json-split
profile (one per record). RECORDS: the results.jsonl the export read (JSON
lines; a file holding one JSON object, `mapp run`'s record, is taken too).

What is checked (the mapping docs/.. and the C writer follow):
  - each record that has "phases" has exactly one profile: matched on the
    metadata "key" (the harness's key) when the record has one, else on
    (app, variant, backend, ranks, threads, size, scaling, time);
  - the call tree: one root "main"; setup, compute, communication and io are
    children of main; every other phase of the record is a node (under main
    or compute); a node that is no phase of the record sits under compute and
    stands for app_data["<name>_s"];
  - metrics "Min time/rank (inc)", "Max time/rank (inc)", "Avg time/rank (inc)"
    equal the phase's min, max and mean exactly (the writer prints %.17g);
    main's max equals wall_s and an app_data node's max its value, their min
    and avg are null (NaN);
  - metadata: every identifying field the record has is a column with the
    record's value (nested objects flattened as "object.field", lists left
    out);
  - tk.groupby(["variant", "ranks"]) gives one group per distinct pair.

Exit 0 with one summary line; 1 with a line per mismatch; 2 when it cannot
run (no thicket, no profiles, unreadable records).
"""
import glob
import json
import math
import os
import sys
import warnings

PROG = "thicket_check"
METRICS = {"min": "Min time/rank (inc)", "max": "Max time/rank (inc)", "mean": "Avg time/rank (inc)"}
STANDARD = ("setup", "compute", "communication", "io")
# record fields copied to the profile's metadata as they are
FIELDS = ("app", "variant", "backend", "ranks", "threads", "gpus", "size", "scaling", "case", "steps",
          "git_revision", "compiler", "flags", "build_type", "host", "env", "simulated", "outcome",
          "check", "sweep", "key", "label", "setting", "repetition", "time", "wall_s", "oversubscribed",
          "helper_threads", "peer_of")
# record objects whose scalar fields are copied as "object.field"
OBJECTS = ("verification", "baseline", "consistency", "disturbance", "fom", "placement", "simulation", "timing")
IDENTITY = ("app", "variant", "backend", "ranks", "threads", "size", "scaling", "time")


def die(msg, code=2):
    print(f"{PROG}: {msg}", file=sys.stderr if code == 2 else sys.stdout)
    sys.exit(code)


def read_records(path):
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    try:
        obj = json.loads(text)
        return [obj] if isinstance(obj, dict) else die(f"{path}: not a record or JSON lines")
    except json.JSONDecodeError:
        pass
    recs = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError as e:
                die(f"{path}:{n}: not JSON ({e.msg})")
    return recs


def expected_metadata(rec):
    meta = {k: rec[k] for k in FIELDS if k in rec}
    for obj in OBJECTS:
        if isinstance(rec.get(obj), dict):
            for k, v in rec[obj].items():
                if not isinstance(v, (dict, list)):
                    meta[f"{obj}.{k}"] = v
    return meta


def is_null(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def same(a, b):
    if is_null(a) or is_null(b):
        return is_null(a) and is_null(b)
    if isinstance(a, (bool,)) or isinstance(b, (bool,)):
        return bool(a) == bool(b) and type(a) is not str and type(b) is not str
    return a == b


def pyval(v):
    return v.item() if hasattr(v, "item") else v


def main(argv):
    if len(argv) != 3:
        die("usage: thicket_check.py PROFILE_DIR RECORDS")
    pdir, rpath = argv[1], argv[2]
    try:
        warnings.simplefilter("ignore")
        import contextlib, io
        with contextlib.redirect_stdout(io.StringIO()):   # thicket prints a seaborn notice on import
            import thicket as th
    except ImportError as e:
        die(f"no thicket in this Python ({e}): run ci/analysis-venv.sh and use its python")
    if not os.path.isdir(pdir):
        die(f"{pdir}: no such folder")
    files = sorted(glob.glob(os.path.join(pdir, "*.json")))
    if not files:
        die(f"{pdir}: no *.json profiles")
    records = [r for r in read_records(rpath) if isinstance(r.get("phases"), dict)]
    if not records:
        die(f"{rpath}: no records with phases")

    try:
        tk = th.Thicket.from_caliper(files, disable_tqdm=True)
    except Exception as e:  # noqa: BLE001 - the reader's own failure is the finding
        cause = e.__cause__ or e
        die(f"Thicket.from_caliper failed: {e} ({type(cause).__name__}: {cause})", 1)

    errors = []
    err = errors.append
    md = tk.metadata
    by_key = {}
    for r in records:
        k = r["key"] if "key" in r else tuple(r.get(f) for f in IDENTITY)
        if k in by_key:
            die(f"{rpath}: two records with key {k}")
        by_key[k] = r

    # metadata columns: every record's identifying fields
    want_cols = set()
    for r in records:
        want_cols.update(expected_metadata(r))
    for c in sorted(want_cols - set(md.columns)):
        err(f"metadata: no column '{c}'")

    seen = set()
    df = tk.dataframe
    for prof, fname in tk.profile_mapping.items():
        short = os.path.basename(fname)
        row = md.loc[prof]
        if "key" in md.columns and isinstance(pyval(row.get("key")), str) and pyval(row["key"]) in by_key:
            k = pyval(row["key"])
        else:
            k = tuple(pyval(row.get(f)) for f in IDENTITY)
        rec = by_key.get(k)
        if rec is None:
            err(f"{short}: no record with key {k}")
            continue
        if k in seen:
            err(f"{short}: a second profile for key {k}")
        seen.add(k)
        for c, v in expected_metadata(rec).items():
            if c in md.columns and not same(pyval(row[c]), v):
                err(f"{short}: metadata {c} = {pyval(row[c])!r}, the record's is {v!r}")

        # the profile's nodes: rows of this profile that the reader filled from the file
        sub = df.xs(prof, level="profile")
        present = {}
        for node, r in sub.iterrows():
            if r["name"] is None or (isinstance(r["name"], float) and math.isnan(r["name"])):
                continue  # a node of another profile (fill_perfdata)
            name = node.frame["name"]
            if name in present:
                err(f"{short}: node '{name}' appears twice")
            present[name] = (node, r)
        roots = [n for n, _ in present.values() if not n.parents]
        if [n.frame["name"] for n in roots] != ["main"]:
            err(f"{short}: roots {[n.frame['name'] for n in roots]}, expected ['main']")

        def parent_of(name):
            n = present[name][0]
            return n.parents[0].frame["name"] if n.parents else None

        def check_metrics(name, want):
            r = present[name][1]
            for stat, col in METRICS.items():
                got = pyval(r[col]) if col in r.index else "(no column)"
                if not same(got, want[stat]):
                    err(f"{short}: {name} '{col}' = {got!r}, the record's is {want[stat]!r}")

        if "main" in present:
            check_metrics("main", {"min": None, "max": rec.get("wall_s"), "mean": None})
        for ph, stats in rec["phases"].items():
            if ph not in present:
                err(f"{short}: no node for phase '{ph}'")
                continue
            p = parent_of(ph)
            if ph in STANDARD and p != "main":
                err(f"{short}: phase '{ph}' under '{p}', expected under 'main'")
            elif ph not in STANDARD and p not in ("main", "compute"):
                err(f"{short}: phase '{ph}' under '{p}', expected under 'main' or 'compute'")
            check_metrics(ph, stats)
        for name in present:
            if name == "main" or name in rec["phases"]:
                continue
            ad = rec.get("app_data", {}).get(f"{name}_s")
            if parent_of(name) != "compute" or not isinstance(ad, (int, float)):
                err(f"{short}: node '{name}' is no phase of the record nor app_data['{name}_s'] under compute")
                continue
            check_metrics(name, {"min": None, "max": ad, "mean": None})

    for k in by_key:
        if k not in seen:
            err(f"record {k}: no profile")

    groups = None
    if {"variant", "ranks"} <= set(md.columns):
        want = {(r["variant"], r["ranks"]) for r in records}
        try:
            g = tk.groupby(["variant", "ranks"])
            groups = {tuple(pyval(x) for x in key): sub for key, sub in g.items()}
        except Exception as e:  # noqa: BLE001
            err(f"groupby(['variant', 'ranks']) failed: {type(e).__name__}: {e}")
        if groups is not None:
            if set(groups) != want:
                err(f"groupby(['variant', 'ranks']) gave {sorted(groups)}, the records have {sorted(want)}")
            for key, sub in groups.items():
                n = sum(1 for r in records if (r["variant"], r["ranks"]) == key)
                if len(sub.profile) != n:
                    err(f"groupby group {key}: {len(sub.profile)} profiles, the records have {n}")

    if errors:
        for e in errors[:50]:
            print(f"{PROG}: {e}")
        if len(errors) > 50:
            print(f"{PROG}: ... and {len(errors) - 50} more mismatches")
        return 1
    names = sorted({n.frame["name"] for n in tk.graph.traverse()})
    print(f"{PROG}: {len(files)} profiles match {len(records)} records: nodes {' '.join(names)}; "
          f"{len(want_cols)} metadata columns; groupby(variant, ranks) {len(groups or {})} groups")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
