#!/usr/bin/env bash
# APP.simgrid.strong64: one global problem of APP on 64 simulated ranks of
# the EDR fat tree equals the same problem on 1 simulated rank bit for bit:
# every dataset of the 1-rank answer, h5diff without a tolerance (the
# harness's consistency check of strong-scaling runs, and what the apps'
# agree tests compare).
#   app_strong.sh APP SIM_BIN_DIR SOURCE_DIR [--baseline FILE] -- ARGS...
# ARGS choose the case (tests/simgrid/CMakeLists.txt says why each: a
# decomposition over 64 ranks with a remainder, real work on every rank);
# with --baseline the 64-rank answer must also equal every dataset of FILE.
# Generated programs (stencil's orchestrated modes) are cached in the run's
# own folder. Exit 77 (skipped) where the simulated build (cmake --preset
# simgrid) or SimGrid is absent.
set -euo pipefail
usage="usage: app_strong.sh APP SIM_BIN_DIR SOURCE_DIR [--baseline FILE] -- ARGS..."
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
app_name=$1 bin=$2 src=$3 baseline=""
shift 3
if [ "$1" = --baseline ]; then baseline=${2:?$usage}; shift 2; fi
[ "${1:-}" = "--" ] || { echo "$usage" >&2; exit 2; }
shift
app="$bin/mapp-$app_name"
if [ ! -x "$app" ] || ! command -v smpirun >/dev/null; then
  echo "skipped: no simulated build ($app) or no smpirun; cmake --preset simgrid && cmake --build --preset simgrid"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/$app_name-simgrid.XXXXXX")
trap 'rm -rf "$work"' EXIT
export MAPP_CACHE_DIR="$work/cache"
run() {
  local ranks=$1 answer=$2
  shift 2
  "$src/envs/sim/smpirun-wrapper.sh" -np "$ranks" --platform fattree-edr-1024.xml "$app" \
    --backend serial --scaling strong --quiet --output "$answer" "$@"
}
run 1 "$work/n1.h5" "$@"
run 64 "$work/n64.h5" "$@"
datasets=$(h5ls -r "$work/n1.h5" | awk '$2 == "Dataset" {print $1}')
[ -n "$datasets" ] || { echo "FAIL: the 1-rank answer holds no dataset"; exit 1; }
# same A B DATASET WHAT: bit for bit, or a failure naming WHAT.
same() {
  h5diff -q "$1" "$2" "$3" "$3" && return 0
  echo "FAIL: dataset $3 of $4:"
  h5diff -r "$1" "$2" "$3" "$3" | head -5 || true
  failures=$((failures + 1))
}
failures=0
for d in $datasets; do same "$work/n1.h5" "$work/n64.h5" "$d" "64 ranks differs from 1 rank's"; done
if [ -n "$baseline" ]; then
  for d in $(h5ls -r "$baseline" | awk '$2 == "Dataset" {print $1}'); do
    same "$baseline" "$work/n64.h5" "$d" "64 ranks differs from $baseline"
  done
fi
[ "$failures" -eq 0 ] || exit 1
echo "$app_name: 64 simulated ranks equal 1 rank bit for bit ($(echo $datasets | wc -w) datasets: $(echo $datasets))${baseline:+, and $baseline}"
