#!/usr/bin/env bash
# heat.simgrid.nam_rank: the NAM region of 4 simulated compute ranks and a
# simulated memory rank (--nam-mode rank, 5 ranks on the EDR fat tree, the
# memory rank on a node of its own) is byte for byte the region 4 real ranks
# write into a file (--nam-mode file, mpirun), and mapp-heat-animate accepts
# it; 66 simulated ranks with --nam are refused in one line, exit 2.
#   heat_nam.sh SIM_BIN_DIR BIN_DIR SOURCE_DIR
# Exit 77 (skipped) where the simulated build or SimGrid is absent.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: heat_nam.sh SIM_BIN_DIR BIN_DIR SOURCE_DIR" >&2; exit 2; }
sim=$1/mapp-heat bin=$2 src=$3
if [ ! -x "$sim" ] || ! command -v smpirun >/dev/null; then
  echo "skipped: no simulated build ($sim) or no smpirun; cmake --preset simgrid && cmake --build --preset simgrid"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/heat-simgrid-nam.XXXXXX")
trap 'rm -rf "$work"' EXIT
args=(--variant mpi --backend serial --size tiny --steps 12 --snapshot-every 3 --quiet)
simulated() { "$src/envs/sim/smpirun-wrapper.sh" -np "$1" --platform fattree-edr-1024.xml "$sim" "${args[@]}" "${@:2}"; }
failures=0
simulated 5 --nam "$work/rank.nam" --nam-mode rank
"$MPIEXEC" -q -np 4 --oversubscribe "$bin/mapp-heat" "${args[@]}" --nam "$work/file.nam" --nam-mode file
if cmp "$work/rank.nam" "$work/file.nam"; then echo "ok: the simulated memory rank's region is the file mode's"
else echo "FAIL: the simulated memory rank's region differs from 4 real ranks' file"; failures=$((failures + 1)); fi
if "$bin/mapp-heat-animate" "$work/rank.nam"; then echo "ok: mapp-heat-animate accepts it"
else echo "FAIL: mapp-heat-animate refused the simulated region"; failures=$((failures + 1)); fi
status=0
simulated 66 --nam "$work/big.nam" --nam-mode rank 2>"$work/err" || status=$?
if [ "$status" -eq 2 ] && grep -q "at most 65 ranks, got 66" "$work/err" && [ ! -e "$work/big.nam" ]; then
  echo "ok: 66 simulated ranks with --nam refused: $(head -1 "$work/err")"
else
  echo "FAIL: 66 simulated ranks with --nam: exit $status, stderr: $(cat "$work/err")"; failures=$((failures + 1))
fi
exit $((failures > 0))
