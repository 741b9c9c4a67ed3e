#!/bin/bash
# Writes fom-residuals.txt, the real noise the harness's statistics tests
# resample: 30 repetitions of each set below at 1 rank, interleaved by
# `mapp sweep`; each record's figure of merit as a residual from its set's
# median, with what disturbed it. Run from the build tree's parent on a
# machine as quiet as it gets:
#   harness/tests/e2e/fom-residuals.sh build/bin/mapp harness/tests/data/fom-residuals.txt [SET...]
# With SETs named, only those are measured again; the file keeps the other
# sets' lines as they were, each set's header saying when and at which
# revision it was measured (the tests' assertions were written against
# those records).
#   heat-small          heat mpi/serial, small (one timed iteration)
#   stencil-small       stencil eager/serial, small
#   heat-tiny           heat mpi/serial, tiny (a 0.3 ms timed phase)
#   heat-tiny-min-time  the same with --min-time 0.1 (recorded when the figure was the iterations' mean)
#   heat-tiny-fastest   the same with --min-time 0.2, the figure over the fastest iteration
set -euo pipefail
MAPP=${1:?usage: fom-residuals.sh MAPP OUTPUT [SET...]}
OUTPUT=${2:?usage: fom-residuals.sh MAPP OUTPUT [SET...]}
shift 2
declare -A entry=(
  [heat-small]='{app: heat, label: heat-small, variants: [mpi], backends: [serial], ranks: [1], threads: [1], sizes: [small]}'
  [stencil-small]='{app: stencil, label: stencil-small, variants: [eager], backends: [serial], ranks: [1], threads: [1], sizes: [small]}'
  [heat-tiny]='{app: heat, label: heat-tiny, variants: [mpi], backends: [serial], ranks: [1], threads: [1], sizes: [tiny]}'
  [heat-tiny-min-time]='{app: heat, label: heat-tiny-min-time, variants: [mpi], backends: [serial], ranks: [1], threads: [1], sizes: [tiny], args: ["--min-time", "0.1"]}'
  [heat-tiny-fastest]='{app: heat, label: heat-tiny-fastest, variants: [mpi], backends: [serial], ranks: [1], threads: [1], sizes: [tiny], args: ["--min-time", "0.2"]}'
)
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(heat-small stencil-small heat-tiny heat-tiny-min-time heat-tiny-fastest)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  printf 'name: noise\ndescription: the noise of short and min_time runs at 1 rank, for the statistics tests\n'
  printf 'repetitions: 30\ncheck: none\nruns:\n'
  for s in "${sets[@]}"; do
    [ -n "${entry[$s]:-}" ] || { echo "fom-residuals.sh: no set '$s' (known: ${!entry[*]})" >&2; exit 2; }
    printf '  - %s\n' "${entry[$s]}"
  done
} >"$work/noise.yaml"
"$MAPP" sweep "$work/noise.yaml" --out "$work" >"$work/sweep.log"
python3 - "$work/noise/results.jsonl" "$OUTPUT" "$(uname -n)" "$(nproc)" "$(date -u +%F)" <<'PY'
import json, os, statistics, sys
records = [json.loads(line) for line in open(sys.argv[1])]
output, host, cores, day = sys.argv[2:6]
sets = {}
for r in records:
    if r.get("exit_code") == 0 and r.get("fom", {}).get("value"):
        sets.setdefault(r["label"], []).append(r)
# The sets not measured again, as the file had them: (header, lines) by name.
kept, order = {}, []
if os.path.exists(output):
    for line in open(output):
        name = line[2:].split(":")[0] if line.startswith("# ") and ": " in line and " records" in line else \
            (line.split()[0] if line.strip() and not line.startswith("#") else None)
        if name and name not in sets:
            if name not in kept: kept[name], order = [], order + [name]
            kept[name].append(line)
revision = records[0].get("git_revision", "?")
with open(output, "w") as out:
    out.write("# Real noise for the harness's statistics tests (written by fom-residuals.sh on %s, %s cores).\n"
              "# One line per record: SET RESIDUAL RUN_DELAY STEAL, where RESIDUAL is\n"
              "# fom / median(fom of SET) - 1, RUN_DELAY the record's disturbance.run_delay_fraction and\n"
              "# STEAL its disturbance.steal_fraction (- where the record has none).\n" % (host, cores))
    for name in order:
        out.writelines(kept[name])
    for name, rs in sets.items():
        foms = [r["fom"]["value"] for r in rs]
        median = statistics.median(foms)
        timed = statistics.median(r.get("timing", {}).get("timed_s", r["phases"]["compute"]["max"]) for r in rs)
        cv = statistics.pstdev(foms) / statistics.mean(foms)
        out.write("# %s: %d records, median timed phase %.3g s, CV %.1f %% (%s, revision %s)\n"
                  % (name, len(rs), timed, 100 * cv, day, revision))
        for r in rs:
            d = r.get("disturbance") or {}
            show = lambda v: "-" if v is None else "%.4f" % v
            out.write("%s %+.5f %s %s\n" % (name, r["fom"]["value"] / median - 1, show(d.get("run_delay_fraction")),
                                            show(d.get("steal_fraction"))))
PY
echo "wrote $OUTPUT"
