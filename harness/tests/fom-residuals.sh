#!/bin/bash
# Writes fom-residuals.txt, the real noise the harness's statistics tests
# resample: 30 repetitions each of heat small, stencil small, heat tiny
# (a 0.3 ms timed phase) and heat tiny with --min-time 0.1, at 1 rank,
# interleaved by `mapp sweep`; each record's figure of merit as a residual
# from its set's median, with what disturbed it. Run from the build tree's
# parent on a machine as quiet as it gets:
#   harness/tests/fom-residuals.sh build/bin/mapp harness/tests/fom-residuals.txt
set -euo pipefail
MAPP=${1:?usage: fom-residuals.sh MAPP OUTPUT}
OUTPUT=${2:?usage: fom-residuals.sh MAPP OUTPUT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/noise.yaml" <<'YAML'
name: noise
description: the noise of short and min_time runs at 1 rank, for the statistics tests
repetitions: 30
check: none
runs:
  - {app: heat, label: heat-small, variants: [mpi], backends: [serial], ranks: [1], threads: [1], sizes: [small]}
  - {app: stencil, label: stencil-small, variants: [eager], backends: [serial], ranks: [1], threads: [1], sizes: [small]}
  - {app: heat, label: heat-tiny, variants: [mpi], backends: [serial], ranks: [1], threads: [1], sizes: [tiny]}
  - {app: heat, label: heat-tiny-min-time, variants: [mpi], backends: [serial], ranks: [1], threads: [1], sizes: [tiny],
     args: ["--min-time", "0.1"]}
YAML
"$MAPP" sweep "$work/noise.yaml" --out "$work" >"$work/sweep.log"
python3 - "$work/noise/results.jsonl" "$OUTPUT" "$(uname -n)" "$(nproc)" <<'PY'
import json, statistics, sys
records = [json.loads(line) for line in open(sys.argv[1])]
sets = {}
for r in records:
    if r.get("exit_code") == 0 and r.get("fom", {}).get("value"):
        sets.setdefault(r["label"], []).append(r)
with open(sys.argv[2], "w") as out:
    out.write("# Real noise for the harness's statistics tests (written by fom-residuals.sh on %s, %s cores,\n"
              "# revision %s). One line per record: SET RESIDUAL RUN_DELAY STEAL, where RESIDUAL is\n"
              "# fom / median(fom of SET) - 1, RUN_DELAY the record's disturbance.run_delay_fraction and\n"
              "# STEAL its disturbance.steal_fraction (- where the record has none).\n"
              % (sys.argv[3], sys.argv[4], records[0].get("git_revision", "?")))
    for name, rs in sets.items():
        foms = [r["fom"]["value"] for r in rs]
        median = statistics.median(foms)
        timed = statistics.median(r.get("timing", {}).get("timed_s", r["phases"]["compute"]["max"]) for r in rs)
        cv = statistics.pstdev(foms) / statistics.mean(foms)
        out.write("# %s: %d records, median timed phase %.3g s, CV %.1f %%\n" % (name, len(rs), timed, 100 * cv))
        for r in rs:
            d = r.get("disturbance") or {}
            show = lambda v: "-" if v is None else "%.4f" % v
            out.write("%s %+.5f %s %s\n" % (name, r["fom"]["value"] / median - 1, show(d.get("run_delay_fraction")),
                                            show(d.get("steal_fraction"))))
PY
echo "wrote $OUTPUT"
