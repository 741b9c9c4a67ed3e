#!/usr/bin/env bash
# test_gif.sh: mapp-heat --gif (tasks, 2 ranks) leaves the animation of its
# NAM region as a run artifact: a GIF89a with one frame per snapshot, named
# in the result record's app_data.artifacts.
. "$(dirname "$0")/heat_test_lib.sh"
gif="$WORK/run.gif"
run 2 2 tasks --steps 12 --snapshot-every 4 --nam "$WORK/region.nam" --gif "$gif" --result "$WORK/run.json" ||
  { echo "FAIL: mapp-heat --gif"; exit 1; }
check_gif "$gif" 3
# The record is compact JSON (jansson): the artifact list exactly.
grep -qF "\"artifacts\":[{\"kind\":\"animation\",\"path\":\"$gif\"}]" "$WORK/run.json" ||
  { echo "FAIL: app_data.artifacts of the record does not name $gif:"; grep -o '"app_data".*' "$WORK/run.json"; exit 1; }
echo "ok: GIF with 3 frames, recorded as an artifact"
