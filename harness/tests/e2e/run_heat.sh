#!/bin/bash
# mapp run heat -n RANKS: launched through envs/local.yaml, the record read
# and the answer checked against the committed baselines/heat/tiny.h5.
# usage: run_heat.sh RANKS
. "$(dirname "$0")/lib.sh"
require_app heat
RANKS=$1
BASELINE="${MAPP_BASELINE_DIR:-$MAPP_SOURCE_DIR/baselines}/heat/tiny.h5"
[ -f "$BASELINE" ] || fail "$BASELINE is missing: make it with mapp bless heat --size tiny --reason ..."

expect_exit 0 "$MAPP" run heat -n "$RANKS" --out out
expect_output "heat       mpi        serial"
grep -Eq "^heat +mpi +serial +$RANKS +1 +tiny .* pass +pass " <<<"$OUT" || { echo "$OUT"; fail "no passing row"; }
RECORD=out/heat-mpi-serial-tiny-strong-n$RANKS-t1.json
[ -s "$RECORD" ] || fail "no record $RECORD"
grep -q "\"ranks\": *$RANKS" "$RECORD" || fail "record does not say ranks $RANKS"
# the comparison itself, through check, on the answer the run kept
expect_exit 0 "$MAPP" check "$BASELINE" "out/heat-mpi-serial-tiny-strong-n$RANKS-t1.h5"
echo "run heat -n $RANKS: ok"
