#!/bin/bash
# The quick sweep's records exported for the HPC analysis stack and loaded
# by the real Thicket (llnl-thicket, llnl-hatchet, in ci/analysis-venv.sh's
# venv): harness/analysis/thicket_check.py checks the call tree of every
# profile, that each metric equals its record's phase (min, max, mean over
# ranks), that the run's identity is in Thicket's metadata, and that
# grouping by variant and ranks works. A profile with one metric changed,
# and one with a metadata field changed, must fail the same check.
#
# The whole quick sweep (every app, variant, backend and rank count the
# README's first command runs; 214 records, about a minute on 2 cores).
. "$(dirname "$0")/lib.sh"
require_app heat
python="${MAPP_ANALYSIS_VENV:-$MAPP_BIN_DIR/../analysis-venv}/bin/python"
[ -x "$python" ] || { echo "no analysis venv at $python (ci/analysis-venv.sh makes it): skipping"; exit 77; }
CHECK=$MAPP_SOURCE_DIR/harness/analysis/thicket_check.py

"$MAPP" sweep "$MAPP_SOURCE_DIR/harness/sweeps/quick.yaml" --out res >sweep.log 2>&1 ||
  { tail -20 sweep.log; fail "the quick sweep failed"; }
R=res/quick
expect_exit 0 "$MAPP" export $R --format caliper-json --out cal
n=$(count_lines $R/results.jsonl)
expect_output "$n caliper-json files in cal"
expect_exit 0 "$python" "$CHECK" cal $R/results.jsonl
expect_output "$n profiles match $n records"
for app in heat crm stencil snapshots subgraph; do grep -q "\"app\": *\"$app\"" cal/*.json || fail "no $app profile"; done
echo "$OUT"

# A profile whose compute max moved by one part in 1e9, or whose threads
# are another number: the check (of three profiles and their records)
# fails, naming it.
profiles=(cal/*.json)
mkdir few
cp "${profiles[@]:0:3}" few/
python3 - few $R/results.jsonl few.jsonl <<'PY'
import glob, json, sys
keys = {json.load(open(f))["key"] for f in glob.glob(sys.argv[1] + "/*.json")}
with open(sys.argv[3], "w") as out:
    out.writelines(l for l in open(sys.argv[2]) if json.loads(l)["key"] in keys)
PY
expect_exit 0 "$python" "$CHECK" few few.jsonl
expect_output "3 profiles match 3 records"
one=$(basename "${profiles[0]}")
cp -r few bad-metric
python3 - "bad-metric/$one" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
i = [n["label"] for n in p["nodes"]].index("compute")
p["data"][i][3] *= 1 + 1e-9
json.dump(p, open(sys.argv[1], "w"))
PY
expect_exit 1 "$python" "$CHECK" bad-metric few.jsonl
expect_output "compute 'Max time/rank (inc)'"
cp -r few bad-meta
python3 - "bad-meta/$one" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["threads"] = p["threads"] + 1
json.dump(p, open(sys.argv[1], "w"))
PY
expect_exit 1 "$python" "$CHECK" bad-meta few.jsonl
expect_output "metadata threads"
echo "ok: $n profiles loaded by Thicket equal their records; a changed metric and a changed field fail"
