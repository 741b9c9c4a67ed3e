#!/usr/bin/env bash
# heat.simgrid.strong64: one global problem (heat small, block rows of 3:
# 86 block rows, the last of one row) on 64 simulated ranks of the EDR fat
# tree equals its 1-rank answer bit for bit, and the stored baseline.
# At 64 ranks 22 ranks hold two block rows and 42 one, so a decomposition
# that goes wrong near one block row per rank fails here where 1, 2 and 4
# ranks pass.
#   heat_strong.sh SIM_BIN_DIR SOURCE_DIR
# Exit 77 (skipped) where the simulated build (cmake --preset simgrid) or
# SimGrid is absent.
set -euo pipefail
bin=$1 src=$2
app="$bin/mapp-heat"
if [ ! -x "$app" ] || ! command -v smpirun >/dev/null; then
  echo "skipped: no simulated build ($app) or no smpirun; cmake --preset simgrid && cmake --build --preset simgrid"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/heat-simgrid.XXXXXX")
trap 'rm -rf "$work"' EXIT
run() { "$src/envs/sim/smpirun-wrapper.sh" -np "$1" --platform fattree-edr-1024.xml "$app" \
          --size small --scaling strong --block-rows 3 --quiet --output "$2"; }
run 1 "$work/n1.h5"
run 64 "$work/n64.h5"
# h5diff without a tolerance: any difference in any value fails.
h5diff "$work/n1.h5" "$work/n64.h5" /temperature /temperature
h5diff "$src/baselines/heat/small.h5" "$work/n64.h5" /temperature /temperature
echo "64 simulated ranks equal 1 rank and baselines/heat/small.h5 bit for bit"
