#!/bin/bash
# mapp bless: the baseline gets the answer (compressed), the app's
# provenance and the bless attributes; runs then check against it, and a
# baseline that disagrees fails the run with exit 1.
# usage: bless.sh MAPP_H5_TOOL
. "$(dirname "$0")/lib.sh"
require_app heat
TOOL=$1
export MAPP_BASELINE_DIR="$SCRATCH/baselines"

expect_exit 0 "$MAPP" bless heat --size tiny --reason "harness test" --model ulp --bound 2
expect_output "blessed $MAPP_BASELINE_DIR/heat/tiny.h5"
B="$MAPP_BASELINE_DIR/heat/tiny.h5"
[ -f "$B" ] || fail "no baseline written"
ATTRS=$(h5dump -A "$B")
for attr in app variant backend size case ranks threads steps git_revision compiler flags build_type date command \
            tolerance tolerance_bound blessed_reason blessed_date blessed_command blessed_git_revision; do
  grep -q "ATTRIBUTE \"$attr\"" <<<"$ATTRS" || fail "baseline lacks attribute $attr"
done
grep -A12 'ATTRIBUTE "blessed_reason"' <<<"$ATTRS" | grep -q '"harness test"' || fail "reason not recorded"
grep -A12 'ATTRIBUTE "tolerance"' <<<"$ATTRS" | grep -q '"ulp"' || fail "tolerance model not recorded"
h5dump -p -H "$B" | grep -q "COMPRESSION DEFLATE" || fail "baseline is not compressed"

expect_exit 0 "$MAPP" run heat -n 2 --out out
expect_output "pass"
grep -q "model=" <<<"$OUT" && fail "a passing run printed field lines"
# a baseline that disagrees beyond its tolerance fails the run (exit 1) and shows the field
"$TOOL" perturb "$B" temperature 130 1e-6
expect_exit 1 "$MAPP" run heat -n 2 --out out
expect_output "temperature  model=ulp bound=2"
expect_output "FAIL (1 of"
# bad input to bless
expect_exit 2 "$MAPP" bless heat --size tiny --case ../escape
expect_exit 2 "$MAPP" bless heat --size tiny --model nope
expect_output "unknown tolerance model 'nope'"
echo "bless: ok"
