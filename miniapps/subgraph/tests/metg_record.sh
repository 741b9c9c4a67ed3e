#!/usr/bin/env bash
# metg_record.sh EXE WORKDIR: a METG sweep on a tiny case; its record must
# carry the table (points of granularity and efficiency, efficiency falling
# towards the small grains) and, where the process has two CPUs, the
# core-to-core round trip before, after and at every point. The checker is
# also run on a copy without the round trips, which it must refuse.
set -u
exe=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$exe" --quiet --variant subgraph --backend threads --workers 2 --size tiny --metg --metg-max 4096 \
  --result r.json || { echo "FAIL: the METG run failed"; exit 1; }
check() { # RECORD: exit 0 when it carries the table and the round trips
  python3 - "$1" "$(nproc)" <<'PY'
import json, sys
rec = json.loads(open(sys.argv[1]).read().splitlines()[-1])["app_data"]
cpus = int(sys.argv[2])
sweep = rec.get("metg_sweep") or []
errors = []
if len(sweep) < 2: errors.append(f"{len(sweep)} sweep points")
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
