#!/bin/bash
# The envelope tolerance model end to end on the committed crm baseline
# (baselines/crm/tiny.h5, blessed with --model envelope): a fresh run
# passes; a perturbation beyond the envelope fails (exit 1); an envelope
# baseline missing its attributes, its -O3 answer, or whose data no longer
# give the envelope it states is bad input (exit 2); bless refuses an
# "-O0 build" that is this build.
# usage: envelope.sh MAPP_H5_TOOL
. "$(dirname "$0")/lib.sh"
require_app crm
TOOL=$1
B="$MAPP_SOURCE_DIR/baselines/crm/tiny.h5"
[ -f "$B" ] || fail "no crm baseline $B"

# A fresh run, checked by run itself and by check, field by field.
expect_exit 0 "$MAPP" run crm --size tiny --out out
ANSWER=$(ls out/crm-*-tiny-strong-n1-t1.h5)
expect_exit 0 "$MAPP" check "$B" "$ANSWER"
expect_output "t           model=envelope envelope="
expect_output "bound=2e-13 (2 x max(envelope, floor 1e-13))"
grep -q '^o3/' <<<"$OUT" && fail "the /o3 answers were compared as fields"
[ "$(grep -c ' PASS$' <<<"$OUT")" = 12 ] || fail "expected 12 passing fields"

# One value of t (a field of ~300 K) moved by 1e-6: far beyond 2 x the envelope.
cp "$ANSWER" perturbed.h5
"$TOOL" perturb perturbed.h5 t 100 1e-6   # [0,6,4]
expect_exit 1 "$MAPP" check "$B" perturbed.h5
expect_output "FAIL (difference"
expect_output "worst_abs=1e-06 at [0,6,4]"
expect_exit 0 "$MAPP" check "$B" perturbed.h5 --bound 1e9   # --bound overrides the multiple

# Broken envelope baselines are bad input naming the file and the field.
for attr in envelope envelope_multiple envelope_floor; do
  cp "$B" no-attr.h5
  "$TOOL" delete-attr no-attr.h5 t "$attr"
  expect_exit 2 "$MAPP" check no-attr.h5 "$ANSWER"
  expect_output "no-attr.h5: field 't' has tolerance envelope but no '$attr' attribute"
done
cp "$B" no-twin.h5
"$TOOL" delete no-twin.h5 o3/u
expect_exit 2 "$MAPP" check no-twin.h5 "$ANSWER"
expect_output "field 'u' has tolerance envelope but no o3 answer /o3/u"
cp "$B" altered.h5
"$TOOL" perturb altered.h5 o3/qt 7 1e-6
expect_exit 2 "$MAPP" check altered.h5 "$ANSWER"
expect_output "field 'qt' states envelope"
expect_one_error_line "$MAPP" check no-twin.h5 "$ANSWER"
# a baseline without the pair cannot be checked as an envelope
"$TOOL" make plain.h5 temperature 4 5
expect_exit 2 "$MAPP" check plain.h5 plain.h5 --model envelope
expect_output "field 'temperature' has tolerance envelope but no 'envelope' attribute"

# bless: the -O0 build must exist and must not be this build.
export MAPP_BASELINE_DIR="$SCRATCH/baselines"
expect_exit 2 "$MAPP" bless crm --size tiny --model envelope --o0-bin "$SCRATCH/none"
expect_output "--model envelope needs an -O0 build of crm"
expect_exit 2 "$MAPP" bless crm --size tiny --model envelope --o0-bin "$MAPP_BIN_DIR" --twin "fma=$SCRATCH/none"
expect_output "--model envelope needs each twin build of crm"
expect_exit 2 "$MAPP" bless crm --size tiny --model envelope --o0-bin "$MAPP_BIN_DIR" --twin "fma=$MAPP_BIN_DIR"
expect_output "has this build's flags"
expect_one_error_line "$MAPP" bless crm --size tiny --model envelope --twin "o3=$MAPP_BIN_DIR"
expect_exit 2 "$MAPP" bless crm --size tiny --model envelope --bound 0 --o0-bin "$MAPP_BIN_DIR"
expect_exit 2 "$MAPP" bless crm --size tiny --o0-bin "$MAPP_BIN_DIR"
expect_output "--o0-bin is only for --model envelope"
[ -e "$MAPP_BASELINE_DIR/crm/tiny.h5" ] && fail "a refused bless wrote a baseline"
echo "envelope: ok"
