#!/usr/bin/env bash
# --weak-ranks N solves the weak problem of N ranks on the ranks that run:
# for every app, one rank with --weak-ranks 4 must answer the stored
# 4-rank weak baseline (baselines/APP/tiny-weak4.h5, made on 4 ranks) with
# the baseline's own tolerance, and name its case tiny-weak4. The same
# answer against the 2-rank problem's baseline must fail: the check can fail.
# A sweep's weak_reference: relies on this (harness.sweep.coverage).
# usage: check_weak_ranks.sh BIN_DIR SOURCE_DIR
set -uo pipefail
bin=$1 src=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# Every mini-app of the build (mapp-NAME with no '-' in NAME, as mapp list finds them).
apps=()
for exe in "$bin"/mapp-*; do
  name=${exe##*/mapp-}
  [[ $name != *-* && -f $exe && -x $exe ]] && apps+=("$name")
done
[ ${#apps[@]} -gt 0 ] || fail "no mini-app in $bin"
for app in "${apps[@]}"; do
  exe=$bin/mapp-$app
  out=$scratch/$app.h5 rec=$scratch/$app.json
  "$exe" --quiet --size tiny --scaling weak --weak-ranks 4 --output "$out" --result "$rec" ||
    { fail "$app --weak-ranks 4 exited $?"; continue; }
  case_name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["case"])' "$rec")
  [ "$case_name" = tiny-weak4 ] || fail "$app --weak-ranks 4 on 1 rank names case '$case_name', not tiny-weak4"
  "$bin/mapp" check "$src/baselines/$app/tiny-weak4.h5" "$out" >"$scratch/check.log" 2>&1 ||
    { fail "$app --weak-ranks 4 on 1 rank differs from the 4-rank baseline: $(tail -n1 "$scratch/check.log")"; continue; }
  "$bin/mapp" check "$src/baselines/$app/tiny-weak2.h5" "$out" >/dev/null 2>&1 &&
    fail "$app: the 4-rank problem's answer passed the 2-rank baseline (the check cannot fail)"
  echo "$app: --weak-ranks 4 on 1 rank equals baselines/$app/tiny-weak4.h5"
done
# Bad input: one line, exit 2.
err=$("$bin/mapp-heat" --weak-ranks 4 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] || fail "--weak-ranks without --scaling weak: exit $rc, '$err'"
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "every app's --weak-ranks as expected"
