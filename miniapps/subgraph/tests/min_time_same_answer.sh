#!/usr/bin/env bash
# min_time_same_answer.sh EXE MPIEXEC H5DIFF WORKDIR: --min-time 0.5 on the
# tiny case runs compute again after the reset hook until the timed
# iterations last 0.5 s (a tiny run takes 10-60 ms, but on a loaded
# machine a first run took 0.33 s, and at --min-time 0.05 nothing was left
# to repeat); the answer must be the one of a single run bit for bit
# (h5diff of /value), for both variants on the serial and threads backends, and on 2 ranks with copies (the reset also clears the copy
# buffers, and the cross-rank messages start again). Each record must say
# that more than one iteration ran, with the first a warm-up, and its figure
# of merit must be the fastest timed iteration's (within 25 % of the
# driver's fastest_s: compute's time also holds a barrier and a reduction),
# not the warm-up's alone.
set -u
exe=$1 mpiexec=$2 h5diff=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

check_record() { # RECORD CASE
  python3 - "$1" "$2" <<'PY'
import json, sys
rec = json.loads(open(sys.argv[1]).read().splitlines()[-1])
case, errors = sys.argv[2], []
t = rec.get("timing") or {}
if not t.get("iterations", 0) > 1: errors.append(f"timing.iterations {t.get('iterations')}: not more than one")
if t.get("warmup") is not True: errors.append("the first iteration is not marked a warm-up")
timed = t.get("timed_iterations", 0)
if timed < 1 or not t.get("timed_s", 0) >= 0.5: errors.append(f"{timed} timed iterations over {t.get('timed_s')} s")
a = rec.get("app_data") or {}
if timed >= 1 and a.get("ns_per_task"):
    fastest_s, fom_s = t["fastest_s"], a["ns_per_task"] * a["tasks"] * 1e-9
    if abs(fom_s - fastest_s) > 0.25 * fastest_s:
        errors.append(f"the figure's run time {fom_s:.3g} s is not the fastest timed iteration's {fastest_s:.3g} s")
for e in errors: print(f"FAIL: {case}: {e}")
sys.exit(1 if errors else 0)
PY
}

# CASE RANKS ARGS...: the run without --min-time, then with it; same answer.
compare() {
  local name=$1 ranks=$2
  shift 2
  local launch=("$mpiexec" -n "$ranks" --oversubscribe "$exe" --quiet --size tiny "$@")
  "${launch[@]}" --output "$work/$name-once.h5" || { fail "$name: the single run failed"; return; }
  "${launch[@]}" --min-time 0.5 --output "$work/$name-repeated.h5" --result "$work/$name.json" \
    || { fail "$name: the --min-time run failed"; return; }
  "$h5diff" -q "$work/$name-once.h5" "$work/$name-repeated.h5" /value /value \
    || fail "$name: the answer after --min-time differs from the single run's"
  check_record "$work/$name.json" "$name" || failures=$((failures + 1))
}

for variant in eager subgraph; do
  compare "$variant-serial" 1 --variant "$variant" --backend serial
  compare "$variant-threads" 1 --variant "$variant" --backend threads --workers 2
done
compare subgraph-copies-n2 2 --variant subgraph --backend threads --workers 1 --copy-bytes 40 --graph-steps 4
[ "$failures" -eq 0 ] || exit 1
echo "ok: --min-time 0.5 repeats the timed phase and keeps the answer bit for bit (5 cases)"
