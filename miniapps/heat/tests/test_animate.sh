#!/usr/bin/env bash
# test_animate.sh: the GIF is an animation with one frame per snapshot,
# and --frames writes one non-empty PNG per snapshot, named by timestep.
. "$(dirname "$0")/heat_test_lib.sh"
region="$WORK/region.nam"
mkdir "$WORK/png"
run 2 1 mpi --steps 20 --snapshot-every 5 --nam "$region" || { echo "FAIL: run with --nam"; exit 1; }
"$ANIMATE" "$region" --gif "$WORK/heat.gif" --frames "$WORK/png" 2>/dev/null || { echo "FAIL: animate"; exit 1; }
[ "$(head -c 6 "$WORK/heat.gif")" = GIF89a ] || { echo "FAIL: not a GIF89a file"; exit 1; }
# Each frame of an animated GIF carries a graphic control extension (21 F9 04).
frames=$(LC_ALL=C grep -obUaP '\x21\xF9\x04' "$WORK/heat.gif" | wc -l)
[ "$frames" -eq 4 ] || { echo "FAIL: the GIF has $frames frames, expected 4"; exit 1; }
for step in 5 10 15 20; do
  png="$WORK/png/frame_$(printf %06d $step).png"
  [ -s "$png" ] || { echo "FAIL: $png missing or empty"; exit 1; }
done
echo "ok: GIF with 4 frames and 4 PNG frames"
