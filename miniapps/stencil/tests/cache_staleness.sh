#!/usr/bin/env bash
# cache_staleness.sh MAPP_STENCIL [PROGRAM]: plants the eight kinds of
# staleness in a cache of PROGRAM (default shallow-water) and shows that
# `run` refuses each (exit 2, one line naming what differs) and that
# `build-and-run` then rebuilds exactly the stale entry. Runs in the
# current (empty) folder.
set -u
bin=$1 program=${2:-shallow-water}
# Per program: the header holding its bodies, an edit of one coefficient
# there, and a stencil to drop from its step (and whether the step without
# it still passes its checks: the vertical one without its thickness update
# no longer conserves tracer mass, which is not what this test is about).
# A program without an entry: its stencil_bodies_<name>.h with a line
# appended, and the last stencil of its step (its checks may then fail).
case $program in
shallow-water) bodies=stencil_kernels.h drop=update_v drop_verifies=1
  edit='s/return 0.25 \* (h\[k\] + h\[k - 1\]/return 0.2500001 * (h[k] + h[k - 1]/' ;;
vertical) bodies=stencil_bodies_vertical.h drop=thickness_commit drop_verifies=0
  edit='s/(a->kappa \/ (0.5 \* (V(0)/(a->kappa \/ (0.5000001 * (V(0)/' ;;
*) bodies=stencil_bodies_${program//-/_}.h drop_verifies=0 edit='$a /* an edit: the key must change */'
  drop=$("$bin" --program "$program" --size tiny --steps 1 --progress --quiet | tail -1 | awk '{print $4}')
  [ -n "$drop" ] || { echo "FAIL: no stencil of $program to drop"; exit 1; } ;;
esac
fail() { echo "FAIL: $*"; exit 1; }
refusals=0
builds() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])['app_data']['builds'])" "$1"; }
expect_refusal() { # REGEX RANKS ARGS...
  local regex=$1 n=$2; shift 2
  if [ "$n" -eq 1 ]; then "$bin" "$@" >out.txt 2>err.txt; else mpirun -q -np "$n" --oversubscribe "$bin" "$@" >out.txt 2>err.txt; fi
  local rc=$?
  [ $rc -eq 2 ] || { cat err.txt; fail "run loaded or failed otherwise (exit $rc), expected a refusal: $*"; }
  [ "$(grep -c '' err.txt)" -eq 1 ] || { cat err.txt; fail "the refusal is not one line"; }
  grep -Eq -- "$regex" err.txt || { cat err.txt; fail "the refusal does not name /$regex/"; }
  refusals=$((refusals + 1))
  echo "refused ($refusals): $(cat err.txt)"
}
expect_rebuild() { # EXPECTED_BUILDS RANKS ARGS... (exit 1, a failed check, accepted with VERIFY_MAY_FAIL=1)
  local want=$1 n=$2; shift 2
  if [ "$n" -eq 1 ]; then "$bin" --quiet "$@" --mode build-and-run --result rebuild.json; else
    mpirun -q -np "$n" --oversubscribe "$bin" --quiet "$@" --mode build-and-run --result rebuild.json; fi
  local rc=$?
  [ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ "${VERIFY_MAY_FAIL:-0}" = 1 ]; } || fail "build-and-run failed (exit $rc): $*"
  local got; got=$(builds rebuild.json)
  [ "$got" = "$want" ] || fail "build-and-run ran $got builds, expected $want: $*"
  rm -f rebuild.json
  echo "rebuilt: $want build(s)"
}

# A private copy of the stencil header and a compiler wrapper that can
# claim another version.
src=$MAPP_SOURCE_DIR/miniapps/stencil
mkdir -p inc && cp "$src/stencil_kernels.h" inc/ && cp "$src/$bodies" inc/
real_cc=$(command -v cc)
write_wrapper() { printf '#!/bin/sh\nif [ "$1" = --version ]; then echo "wrapped-cc %s"; exit 0; fi\nexec %s "$@"\n' "$1" "$real_cc" > cc-wrapper; chmod +x cc-wrapper; }
write_wrapper 1.0
export MAPP_STENCIL_INCLUDE=$PWD/inc MAPP_STENCIL_CC=$PWD/cc-wrapper
unset MAPP_STENCIL_DROP
# Generated programs compiled at -O0 (the extra flags come last): staleness
# is decided by the same keys at any level, and each build is cheaper.
export MAPP_STENCIL_CFLAGS=-O0
common=(--program "$program" --size tiny --steps 1 --cache cache)
"$bin" --quiet "${common[@]}" --mode build || fail "first build"
"$bin" --quiet "${common[@]}" --mode run || fail "warm run"
entry=$(ls -d cache/wesn-*)

# 1. the header of the program's bodies edited (one coefficient)
sed -i "$edit" "inc/$bodies"
cmp -s "inc/$bodies" "$src/$bodies" && fail "the header edit did not apply"
expect_refusal "stencil header" 1 "${common[@]}" --mode run
expect_rebuild 1 1 "${common[@]}"
cp "$src/$bodies" inc/

# 2. the step list changed (one stencil removed)
MAPP_STENCIL_DROP=$drop expect_refusal "generated source" 1 "${common[@]}" --mode run
VERIFY_MAY_FAIL=$((1 - drop_verifies)) MAPP_STENCIL_DROP=$drop expect_rebuild 1 1 "${common[@]}"

# 3. other compiler flags
MAPP_STENCIL_CFLAGS=-O1 expect_refusal "compiler flags" 1 "${common[@]}" --mode run
MAPP_STENCIL_CFLAGS=-O1 expect_rebuild 1 1 "${common[@]}"

# 4. another compiler version (the wrapper now reports 2.0)
write_wrapper 2.0
expect_refusal "compiler version .*wrapped-cc 1.0.*wrapped-cc 2.0" 1 "${common[@]}" --mode run
expect_rebuild 1 1 "${common[@]}"
write_wrapper 1.0

# 5. another code-path class (2 ranks: classes wsn and esn, never built)
expect_refusal "code-path class" 2 "${common[@]}" --layout 2x1 --mode run
expect_rebuild 2 2 "${common[@]}" --layout 2x1

# 6. debug passes switched on
expect_refusal "debug passes" 1 "${common[@]}" --check nan --mode run
expect_rebuild 1 1 "${common[@]}" --check nan

# 7. the shared object truncated, then overwritten with garbage
"$bin" --quiet "${common[@]}" --mode run || fail "the original entry no longer loads"
head -c 1000 "$entry/step.so" > so.tmp && cat so.tmp > "$entry/step.so"
expect_refusal "shared object .* corrupt" 1 "${common[@]}" --mode run
expect_rebuild 1 1 "${common[@]}"
echo "garbage, not an ELF object" > "$entry/step.so"
expect_refusal "shared object .* corrupt" 1 "${common[@]}" --mode run
expect_rebuild 1 1 "${common[@]}"

# 8. the manifest truncated
head -c 40 "$entry/manifest.json" > m.tmp && cat m.tmp > "$entry/manifest.json"
expect_refusal "manifest .* corrupt or truncated" 1 "${common[@]}" --mode run
expect_rebuild 1 1 "${common[@]}"

"$bin" --quiet "${common[@]}" --mode run || fail "the rebuilt entry does not load"
[ $refusals -eq 9 ] || fail "$refusals refusals, expected 9"
echo "ok: 8 kinds of staleness (9 plants), 9 refusals, 0 silent loads; every rebuild built exactly the stale entry"
