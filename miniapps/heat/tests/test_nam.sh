#!/usr/bin/env bash
# test_nam.sh VARIANT RANKS THREADS: snapshots every 4 of 12 timesteps go
# into a NAM region from RANKS ranks; mapp-heat-animate (one process, so a
# different rank count) verifies the checksums and exports every frame, and
# each frame equals, bit for bit, a serial run stopped at that timestep.
. "$(dirname "$0")/heat_test_lib.sh"
variant=$1 ranks=$2 threads=$3
region="$WORK/region.nam"
run "$ranks" "$threads" "$variant" --steps 12 --block-rows 7 --block-cols 9 --snapshot-every 4 --nam "$region" ||
  { echo "FAIL: $variant run with --nam failed"; exit 1; }
"$ANIMATE" "$region" --hdf5 "$WORK/frames.h5" || { echo "FAIL: mapp-heat-animate"; exit 1; }
for step in 4 8 12; do
  same "frame of timestep $step ($variant, $ranks ranks)" "$(reference $step)" /temperature \
    "$WORK/frames.h5" "/step_$(printf %06d $step)"
done
exit $((failures > 0))
