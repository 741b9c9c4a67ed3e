#!/usr/bin/env bash
# test_animate.sh: the GIF is an animation with one frame per snapshot,
# and --frames writes one non-empty PNG per snapshot, named by timestep.
. "$(dirname "$0")/heat_test_lib.sh"
region="$WORK/region.nam"
mkdir "$WORK/png"
run 2 1 mpi --steps 20 --snapshot-every 5 --nam "$region" || { echo "FAIL: run with --nam"; exit 1; }
"$ANIMATE" "$region" --gif "$WORK/heat.gif" --frames "$WORK/png" 2>/dev/null || { echo "FAIL: animate"; exit 1; }
check_gif "$WORK/heat.gif" 4
for step in 5 10 15 20; do
  png="$WORK/png/frame_$(printf %06d $step).png"
  [ -s "$png" ] || { echo "FAIL: $png missing or empty"; exit 1; }
done
echo "ok: GIF with 4 frames and 4 PNG frames"
