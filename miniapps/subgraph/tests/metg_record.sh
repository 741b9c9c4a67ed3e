#!/usr/bin/env bash
# metg_record.sh EXE WORKDIR: a METG sweep on a tiny case, 3 runs a point;
# its record must carry the table (points of granularity and efficiency,
# efficiency falling towards the small grains), every point's runs and their
# spread (the median between the quartiles, the quartiles between the
# extremes), the monotonicity flag with its rises (a warning on stderr
# exactly when the flag is false) and, where the process has two CPUs, the
# core-to-core round trip before, after and at every point. The checker is
# also run on a copy without the round trips, which it must refuse.
set -u
exe=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$exe" --quiet --variant subgraph --backend threads --workers 2 --size tiny --metg --metg-max 4096 \
  --metg-repeats 3 --result r.json 2>stderr.txt || { cat stderr.txt; echo "FAIL: the METG run failed"; exit 1; }
{ grep -c "warning: METG: the efficiency curve is not monotone" stderr.txt
  grep -c "warning: METG: imprecise" stderr.txt; } | tr '\n' ' ' >warnings.txt
check() { # RECORD: exit 0 when it carries the table and the round trips
  python3 - "$1" "$(nproc)" $(cat warnings.txt) <<'PY'
import json, sys
rec = json.loads(open(sys.argv[1]).read().splitlines()[-1])["app_data"]
cpus, rise_warnings, imprecise_warnings = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
sweep = rec.get("metg_sweep") or []
errors = []
if len(sweep) < 2: errors.append(f"{len(sweep)} sweep points")
if rec.get("metg_repeats") != 3 or rec.get("metg_statistic") != "median":
    errors.append(f"repeats {rec.get('metg_repeats')}, statistic {rec.get('metg_statistic')}: not 3 and median")
for p in sweep:
    walls = p.get("walls_s") or []
    if p.get("repeats") != 3 or len(walls) != 3: errors.append(f"a point without its 3 runs: {p}")
    spread = [p.get(k) for k in ("efficiency_min", "efficiency_q1", "efficiency", "efficiency_q3", "efficiency_max")]
    if None in spread or spread != sorted(spread): errors.append(f"a point whose spread is out of order: {spread}")
    if walls and p.get("wall_s") != sorted(walls)[1]: errors.append(f"wall_s {p.get('wall_s')} is not the median of {walls}")
monotone, rises = rec.get("metg_monotone"), rec.get("metg_rises")
if not isinstance(monotone, bool) or not isinstance(rises, list): errors.append("no metg_monotone flag or metg_rises list")
elif monotone != (len(rises) == 0): errors.append(f"metg_monotone {monotone} with {len(rises)} rises")
elif rise_warnings != len(rises): errors.append(f"{rise_warnings} rise warnings on stderr for {len(rises)} rises")
precise, flagged = rec.get("metg_precise"), rec.get("metg_flagged")
if not isinstance(precise, bool) or flagged != (monotone is False or precise is False):
    errors.append(f"metg_precise {precise}, metg_flagged {flagged} with metg_monotone {monotone}")
elif imprecise_warnings != (0 if precise else 1):
    errors.append(f"{imprecise_warnings} imprecision warnings on stderr, metg_precise {precise}")
q = rec.get("metg_us_quartiles")
if not (isinstance(q, list) and len(q) == 2): errors.append(f"metg_us_quartiles {q}: not a pair")
for p in sweep:
    # efficiency can exceed 1 on a loaded node (the kernel calibrated slower than it then ran)
    if not (p.get("granularity_us", 0) > 0 and p.get("efficiency", -1) >= 0):
        errors.append(f"a point without granularity or efficiency: {p}")
if sweep and not sweep[-1]["efficiency"] < sweep[0]["efficiency"]:
    errors.append("efficiency does not fall towards the small grains")
if cpus >= 2:
    trips = [rec.get("round_trip_ns_before"), rec.get("round_trip_ns_after")] + [p.get("round_trip_ns") for p in sweep]
    # presence, not speed: on a loaded node a round trip can cost a time slice
    bad = [t for t in trips if not (isinstance(t, (int, float)) and t > 0)]
    if bad: errors.append(f"{len(bad)} of {len(trips)} round trips missing")
for e in errors: print("FAIL:", e)
sys.exit(1 if errors else 0)
PY
}
check r.json || exit 1
if [ "$(nproc)" -ge 2 ]; then
  python3 -c "
import json,sys
lines=open('r.json').read().splitlines(); r=json.loads(lines[-1])
for p in r['app_data']['metg_sweep']: p.pop('round_trip_ns', None)
open('stripped.json','w').write(json.dumps(r)+'\n')"
  check stripped.json >/dev/null && { echo "FAIL: a record without round trips passed the check"; exit 1; }
fi
echo "ok: the METG record carries the table and the round trips"
