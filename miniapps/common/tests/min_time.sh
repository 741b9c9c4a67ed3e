#!/usr/bin/env bash
# min_time.sh AGREE H5LS H5DIFF REFERENCE CANDIDATE -- COMMAND...
# Runs COMMAND --min-time 0.02 --result CANDIDATE.json through agree.sh:
# passes when the answer of the repeated timed phase equals REFERENCE bit
# for bit (the reset hook put the state back where setup left it), and the
# record says the phase ran more than once with identical answers, with
# fastest_s and mean_s those of the timed iterations, the phases the
# fastest iteration's (heat's figure of merit over the fastest, which every
# app's driver figure shares). A first
# iteration that alone outlasts the min-time is the whole figure, so the
# run is made again with three times that iteration's time (up to three
# times: on 2 loaded cores one iteration can last 6x the one before): the
# reset is always exercised. Shared by the generic --min-time tests of every
# mini-app (cmake/MappAppTests.cmake).
set -u
agree=$1 h5ls=$2 h5diff=$3 reference=$4 candidate=$5
shift 5
[ "$1" = "--" ] && shift
record=${candidate%.h5}.json
min_time=0.02
for attempt in 1 2 3 4; do
  rm -f "$record"
  "$agree" same "$h5ls" "$h5diff" "$reference" "$candidate" -- "$@" --min-time "$min_time" --result "$record" || exit 1
  first=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["timing"]; print(t["seconds"][0] if t["iterations"] == 1 else "")' "$record")
  [ -n "$first" ] || break
  min_time=$(python3 -c "print(3 * $first)")
  echo "the first iteration alone lasted $first s: again with --min-time $min_time"
done
python3 - "$record" "$min_time" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("timing") or {}
checks = {c["name"]: c["passed"] for c in r["verification"]["checks"]}
if t.get("iterations", 0) < 2:
    sys.exit(f"FAIL: the timed phase ran {t.get('iterations')} time(s) with --min-time {sys.argv[2]} (timing: {t})")
if not t.get("warmup") or t["timed_iterations"] != t["iterations"] - 1 or t["timed_s"] < t["min_time_s"]:
    sys.exit(f"FAIL: the timed iterations do not cover --min-time after the warm-up: {t}")
if checks.get("iterations-identical") is not True:
    sys.exit(f"FAIL: the record does not show every iteration's answer identical: {checks}")
timed = t["seconds"][1:]
if t.get("fastest_s") != min(timed) or abs(t.get("mean_s", 0) - sum(timed) / len(timed)) > 1e-12 * t["timed_s"]:
    sys.exit(f"FAIL: fastest_s {t.get('fastest_s')} / mean_s {t.get('mean_s')} are not the timed iterations' "
             f"minimum {min(timed)} / mean {sum(timed) / len(timed)}")
# the phases are the fastest iteration's: no rank spent longer in compute
compute = r["phases"]["compute"]["max"]
if compute > t["fastest_s"] * (1 + 1e-9):
    sys.exit(f"FAIL: phases.compute.max {compute} s is longer than the fastest iteration's {t['fastest_s']} s")
if r["app"] == "heat":  # the figure's time is the fastest iteration's
    p = r["problem"]
    work = p["rows"]["global"] * p["cols"]["global"] * r["steps"]
    if abs(r["fom"]["value"] * t["fastest_s"] - work) > 1e-9 * work:
        sys.exit(f"FAIL: heat's figure {r['fom']['value']} is not {work} cell updates over the fastest "
                 f"iteration's {t['fastest_s']} s")
print(f"ok: {t['iterations']} iterations, {t['timed_s']:.3f} s timed, fastest {t['fastest_s']:.3g} s, "
      "answers identical")
PY
