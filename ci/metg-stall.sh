#!/usr/bin/env bash
# ci/metg-stall.sh: METG that one stall cannot move (issue 28, item 6).
#
# Runs `mapp-subgraph --metg` on the width-2 stencil (the sweep spec's
# metg-w2 case) QUIET_RUNS times alone for the quiet figure (the median of
# those the app did not flag, or of all when it flagged each), then
# HOG_RUNS times with a CPU hog (a shell busy loop) bound to CPU 0, where
# worker 0 runs (HOG_CPU: a list such as "0 1" starts one hog per CPU), for
# part of each run: it starts after a delay drawn
# uniformly from [0, 80 %] of the quiet run's duration and lasts
# HOG_FRACTION of it (so it may also cover the sweep's small grains, which
# run last). At HOG_NICE 0 the hog and worker 0 share the core fairly; a
# negative HOG_NICE (root) makes the hog take most of it, a stall rather
# than a slowdown.
# Prints one row per run: the hog's window, METG, its quartile-curve range,
# the ratio to the quiet figure, the record's two flags (metg_monotone,
# metg_precise), the core-to-core round trip before and after, and the
# verdict. Exits 1 when a hogged result is outside 1.5x of the quiet figure
# (either way) without being flagged (app_data.metg_flagged), 2 on bad
# usage, 0 otherwise.
#
# Usage: ci/metg-stall.sh [MAPP_SUBGRAPH]   (default build/bin/mapp-subgraph)
# Environment: QUIET_RUNS (3), HOG_RUNS (10), HOG_CPU (0), HOG_NICE (0),
#              HOG_FRACTION (0.4), SEED (28),
#              METG_ARGS (extra flags for every run, e.g. "--metg-repeats 7"),
#              KEEP (a folder to keep the records and stderr in).
set -u
exe=${1:-build/bin/mapp-subgraph}
quiet_runs=${QUIET_RUNS:-3} hog_runs=${HOG_RUNS:-10} hog_cpu=${HOG_CPU:-0} hog_nice=${HOG_NICE:-0}
hog_fraction=${HOG_FRACTION:-0.4}
RANDOM=${SEED:-28} # the hog windows repeat from run to run of this script
[ -x "$exe" ] || { echo "metg-stall.sh: $exe is not an executable (build mapp-subgraph first)" >&2; exit 2; }
command -v taskset >/dev/null || { echo "metg-stall.sh: taskset (util-linux) is needed to bind the hog" >&2; exit 2; }
work=$(mktemp -d)
hog_pids=()
cleanup() {
  [ ${#hog_pids[@]} -gt 0 ] && kill "${hog_pids[@]}" 2>/dev/null
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work"/* "$KEEP"/
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck disable=SC2206
case_args=(--quiet --variant subgraph --backend threads --workers 2 --pattern stencil_1d --width 2 --steps 4096
           --graph-steps 64 --metg ${METG_ARGS:-})

# run NAME [DELAY DURATION]: one METG run, its record in $work/NAME.json;
# with a window, the hogs run on $hog_cpu from DELAY to DELAY + DURATION.
run() {
  local name=$1 delay=${2:-} duration=${3:-} start end
  start=$(date +%s.%N)
  "$exe" "${case_args[@]}" --result "$work/$name.json" 2>"$work/$name.err" &
  local app=$!
  if [ -n "$delay" ]; then
    sleep "$delay"
    for cpu in $hog_cpu; do
      nice -n "$hog_nice" taskset -c "$cpu" sh -c 'while :; do :; done' &
      hog_pids+=($!)
    done
    sleep "$duration"
    kill "${hog_pids[@]}" 2>/dev/null
    wait "${hog_pids[@]}" 2>/dev/null
    hog_pids=()
  fi
  wait "$app" || { cat "$work/$name.err" >&2; echo "metg-stall.sh: run $name failed" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$name ${delay:--} ${duration:--} $(echo "$end - $start" | bc)" >>"$work/runs.txt"
}

for i in $(seq 1 "$quiet_runs"); do run "quiet$i"; done
quiet_s=$(awk '{print $4}' "$work/runs.txt" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
for i in $(seq 1 "$hog_runs"); do
  delay=$(echo "scale=3; $quiet_s * 0.8 * $((RANDOM % 1000)) / 1000" | bc)
  duration=$(echo "scale=3; $quiet_s * $hog_fraction" | bc)
  run "hog$i" "$delay" "$duration"
done

python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
runs = [line.split() for line in open(f"{work}/runs.txt")]
def app_data(name):
    return json.loads(open(f"{work}/{name}.json").read().splitlines()[-1])["app_data"]
def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)
def flagged(a):
    return a.get("metg_flagged", a.get("metg_monotone") is False)
quiet = [app_data(r[0]) for r in runs if r[0].startswith("quiet")]
crossed = [a["metg_us"] for a in quiet if a.get("metg_us") is not None]
trusted = [a["metg_us"] for a in quiet if a.get("metg_us") is not None and not flagged(a)]
if not crossed:
    print("metg-stall.sh: no quiet run crossed 50 %: no quiet figure", file=sys.stderr)
    sys.exit(1)
reference = statistics.median(trusted or crossed)
print(f"quiet figure: median METG of {len(trusted or crossed)} {'unflagged ' if trusted else ''}quiet runs "
      f"= {reference:.3f} us")
print(f"{'run':<7} {'hog window s':>13} {'run s':>6} {'METG us':>8} {'quartile curves us':>19} {'ratio':>6} "
      f"{'monotone':>8} {'precise':>7} {'round trip ns':>14}  verdict")
bad = 0
for name, delay, duration, seconds in runs:
    a = app_data(name)
    metg = a.get("metg_us")
    low, high = (a.get("metg_us_quartiles") or [None, None])
    ratio = metg / reference if metg else None
    within = ratio is not None and 1 / 1.5 <= ratio <= 1.5
    window = "-" if delay == "-" else f"{float(delay):.1f}-{float(delay) + float(duration):.1f}"
    verdict = "within 1.5x" if within else "flagged" if flagged(a) else "OUTSIDE 1.5x, not flagged"
    if name.startswith("hog") and not within and not flagged(a):
        bad += 1
    trips = f"{fmt(a.get('round_trip_ns_before'), '.0f')}/{fmt(a.get('round_trip_ns_after'), '.0f')}"
    print(f"{name:<7} {window:>13} {float(seconds):>6.1f} {fmt(metg):>8} {fmt(low) + '..' + fmt(high):>19} "
          f"{fmt(ratio, '.2f'):>6} {str(a.get('metg_monotone')).lower():>8} {str(a.get('metg_precise')).lower():>7} "
          f"{trips:>14}  {verdict}")
hogged = sum(1 for r in runs if r[0].startswith("hog"))
print(f"{hogged - bad} of {hogged} hogged runs within 1.5x of the quiet figure or flagged")
sys.exit(1 if bad else 0)
PY
