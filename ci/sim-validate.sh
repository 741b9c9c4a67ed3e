#!/usr/bin/env bash
# Simulated against measured on this machine (issue 30's validation): each
# mini-app on 1, 2 and 4 ranks, strong scaling, serial backend, run for real
# (Open MPI, build/) and simulated (SimGrid SMPI, build-sim/, through
# envs/sim/smpirun-wrapper.sh on the platform calibrated here,
# envs/platforms/local.xml), REPS repetitions each, interleaved. Prints a
# Markdown table: the median of each setting's timed phase, the time behind
# the app's figure of merit (the record's timing.timed_s over
# timing.timed_iterations: the compute hook from a barrier, the slowest
# rank), measured and as the simulated run reports it (SMPI's clock).
#
#   ci/sim-validate.sh [-o FILE.md]        # also write the table to FILE.md
#
# Environment: REPS (default 3), RANKS (default "1 2 4"), APPS (default all
# five), PLATFORM (default envs/platforms/local.xml), BUILD (build),
# BUILD_SIM (build-sim). Every run must exit 0 and verify; a failed run
# shows as "failed" and the script exits 1.
#
# Run it on a quiet machine (load average well under the core count; it is
# printed): it took 132 s on the 2-core VM. The measured runs use envs/local.yaml's
# launcher flags (--oversubscribe --bind-to none): on a 2-core machine 4
# ranks time-share the cores, which the simulated platform (a core per rank)
# leaves out, so their simulated/measured ratio is expected well under 1.
set -euo pipefail
me=sim-validate
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fail() { echo "$me: error: $*" >&2; exit 2; }
out_md=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) [ $# -ge 2 ] || fail "-o needs a file"; out_md=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown argument '$1' (usage: ci/sim-validate.sh [-o FILE.md])" ;;
  esac
done
reps=${REPS:-3} ranks_list=${RANKS:-"1 2 4"} apps=${APPS:-"heat stencil crm snapshots subgraph"}
platform=${PLATFORM:-$src/envs/platforms/local.xml}
bin=${BUILD:-$src/build}/bin sim_bin=${BUILD_SIM:-$src/build-sim}/bin
wrapper=$src/envs/sim/smpirun-wrapper.sh
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || fail "REPS must be a positive count (got '$reps')"
[ -f "$platform" ] || fail "no platform '$platform': calibrate first (envs/sim/calibrate.sh)"
command -v mpirun >/dev/null || fail "mpirun not found"
command -v smpirun >/dev/null || fail "smpirun not found (SimGrid)"

# Each app's case: serial backend, strong scaling, its timed phase ~0.2-2 s
# on 1 rank here. snapshots: --variant memory (stream's threads are refused
# simulated) with 300 of small's 1,000 steps (every snapshot is kept in
# memory); subgraph: medium's width 16 with 2,048 of its 8,192 steps, and
# --no-pin (every simulated rank shares one thread of this machine).
args_of() {
  case "$1" in
    heat) echo "--size medium" ;;
    stencil) echo "--size medium" ;;
    crm) echo "--size medium" ;;
    snapshots) echo "--size small --variant memory --steps 300" ;;
    subgraph) echo "--size medium --steps 2048 --no-pin" ;;
    *) return 1 ;;
  esac
}
for app in $apps; do
  args_of "$app" >/dev/null || fail "unknown app '$app'"
  [ -x "$bin/mapp-$app" ] || fail "no $bin/mapp-$app (cmake --preset default && cmake --build --preset default)"
  [ -x "$sim_bin/mapp-$app" ] || fail "no $sim_bin/mapp-$app (cmake --preset simgrid && cmake --build --preset simgrid)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/mapp-sim-validate.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
export MAPP_CACHE_DIR="$work/cache"

# The timed phase of one record, per iteration.
timed_of() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["timing"]
if r["verification"]["status"] != "pass":
    sys.exit(1)
print(f'{t["timed_s"] / max(1, t["timed_iterations"]):.9f}')
PY
}
# run KIND APP RANKS REP: one run, its time appended to $work/KIND-APP-RANKS.txt.
run() {
  local kind=$1 app=$2 ranks=$3 rep=$4 rec="$work/$1-$2-$3-$4.json" log="$work/$1-$2-$3-$4.log"
  local -a cmd
  # shellcheck disable=SC2207
  local -a app_args=($(args_of "$app"))
  if [ "$kind" = measured ]; then
    cmd=(mpirun --oversubscribe --bind-to none -np "$ranks" "$bin/mapp-$app")
  else
    cmd=("$wrapper" -np "$ranks" --platform "$platform" "$sim_bin/mapp-$app")
  fi
  if "${cmd[@]}" --backend serial --scaling strong "${app_args[@]}" --quiet --result "$rec" > "$log" 2>&1 &&
    timed_of "$rec" >> "$work/$kind-$app-$ranks.txt"; then
    return 0
  fi
  echo "$me: $kind $app -n $ranks (repetition $rep) failed: $(tail -2 "$log" | tr '\n' ' ')" >&2
  echo failed >> "$work/$kind-$app-$ranks.txt"
}
median() {
  python3 - "$1" <<'PY'
import sys
v = [l.strip() for l in open(sys.argv[1]) if l.strip()]
if "failed" in v or not v:
    print("failed")
else:
    x = sorted(map(float, v)); n = len(x)
    print(f"{(x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2):.4g}")
PY
}

figures=$(python3 - "$platform" <<'PY'
import sys, xml.etree.ElementTree as ET
c = next((e for e in ET.parse(sys.argv[1]).getroot().iter() if e.tag == "cluster"), None)
print(f'{c.get("speed")}, links {c.get("lat")} and {c.get("bw")} a host, hosts {c.get("radical")}' if c is not None else "?")
PY
)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
cores=$(nproc)
awk -v l="${load_start%% *}" -v c="$cores" 'BEGIN {exit !(l > 0.75 * c)}' &&
  echo "$me: warning: load average $load_start on $cores cores: the measured times will include other work" >&2
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
t0=$SECONDS
for app in $apps; do
  echo "$me: $app ($(args_of "$app"))" >&2
  for rep in $(seq 1 "$reps"); do
    for ranks in $ranks_list; do
      run measured "$app" "$ranks" "$rep"
      run simulated "$app" "$ranks" "$rep"
    done
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

status=0
{
  echo "Simulated (SimGrid SMPI, \`envs/sim-local.yaml\`) against measured (Open MPI) on $(hostname), $cores cores, $started;"
  echo "platform \`${platform#"$src"/}\`: $figures. Median of $reps runs of the timed phase"
  echo "(\`timing.timed_s\`), strong scaling, serial backend. Load average $load_start at the start, $load_end at the end ($((SECONDS - t0)) s)."
  echo
  echo "| app | case | ranks | measured s | simulated s | simulated/measured |"
  echo "|---|---|---|---|---|---|"
  for app in $apps; do
    for ranks in $ranks_list; do
      m=$(median "$work/measured-$app-$ranks.txt") s=$(median "$work/simulated-$app-$ranks.txt")
      if [ "$m" = failed ] || [ "$s" = failed ]; then
        ratio=-; status=1
      else
        ratio=$(python3 -c "print(f'{$s / $m:.2f}')")
      fi
      echo "| $app | \`$(args_of "$app")\` | $ranks | $m | $s | $ratio |"
    done
  done
} > "$work/table.md"
cat "$work/table.md"
[ -z "$out_md" ] || cp "$work/table.md" "$out_md"
exit $status
