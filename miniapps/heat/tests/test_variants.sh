#!/usr/bin/env bash
# test_variants.sh VARIANT RANKS: VARIANT on RANKS ranks, with 1 and 2
# threads and three block shapes (the preset's, odd sizes leaving remainder
# blocks on both edges, one block row per rank), gives bit for bit the
# serial reference matrix.
. "$(dirname "$0")/heat_test_lib.sh"
variant=$1 ranks=$2 steps=12
ref=$(reference $steps)
for threads in 1 2; do
  for blocks in "16 16" "7 9" "25 120"; do
    set -- $blocks
    out="$WORK/$variant.$ranks.$threads.$1x$2.h5"
    run "$ranks" "$threads" "$variant" --steps $steps --block-rows "$1" --block-cols "$2" --output "$out" ||
      { echo "FAIL: $variant run failed"; failures=$((failures + 1)); continue; }
    same "$variant ranks=$ranks threads=$threads blocks=$1x$2" "$ref" /temperature "$out" /temperature
  done
done
exit $((failures > 0))
