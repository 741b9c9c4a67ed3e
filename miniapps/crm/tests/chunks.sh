#!/usr/bin/env bash
# chunks.sh WORKDIR: --chunk (E3SM's PCOLS, the CRMs one launch covers)
# never changes crm's answer on the CPU. 300 CRMs of 8 x 8 (tiny's steps): the whole group
# as one block is checked against its stored baseline
# (baselines/crm/chunks300-8x8-tiny.h5, the envelope model), then chunks of 16,
# 64 and 256 (300 is no multiple of any, so the shorter last block and its
# own FFT plan run too) and percrm (a chunk of 1), on serial and omp, on 1
# and 2 ranks (150 CRMs a rank: 256 is then cut to 150), must each give
# that answer bit for bit. Needs MAPP_BIN_DIR, MAPP_SOURCE_DIR and mpirun.
set -u
work=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
chunk_of() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])['app_data']['chunk'])" "$1"; }
case_args=(--size tiny --instances 300 --nx 8 --nz 8)

run 1 "${case_args[@]}" --chunk all --output ref.h5 --result ref.json || fail "reference run: exit $?"
[ "$(chunk_of ref.json)" = 300 ] || fail "--chunk all ran blocks of $(chunk_of ref.json) CRMs, not 300"
"$MAPP_BIN_DIR/mapp" check "$MAPP_SOURCE_DIR/baselines/crm/chunks300-8x8-tiny.h5" ref.h5 >check.log ||
  { cat check.log; fail "the whole-group answer against baselines/crm/chunks300-8x8-tiny.h5"; }
for ranks in 1 2; do
  for backend in serial omp; do
    for chunk in 16 64 256; do
      name=chunk$chunk-$backend-n$ranks
      run "$ranks" "${case_args[@]}" --backend "$backend" --chunk "$chunk" --output "$name.h5" --result "$name.json" ||
        fail "$name: exit $?"
      want=$chunk
      [ "$ranks" -eq 2 ] && [ "$chunk" -gt 150 ] && want=150
      [ "$(chunk_of "$name.json")" = "$want" ] || fail "$name ran blocks of $(chunk_of "$name.json") CRMs, not $want"
      same ref.h5 "$name.h5" || fail "$name: another answer than the whole group's"
      echo "ok $name: blocks of $want CRMs, the whole group's answer bit for bit"
    done
    name=percrm-$backend-n$ranks
    run "$ranks" "${case_args[@]}" --backend "$backend" --variant percrm --output "$name.h5" || fail "$name: exit $?"
    same ref.h5 "$name.h5" || fail "$name: another answer than the whole group's"
    echo "ok $name"
  done
done
