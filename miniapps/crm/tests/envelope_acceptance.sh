#!/usr/bin/env bash
# The envelope model's acceptance (issue 9), without a GPU:
#  (a) both GPU answers (tests/fixtures, computed on an H100) pass baselines/crm/tiny.h5;
#  (b) the FMA-contracted build's answers pass tiny and tiny-rain;
#  (c) every planted bug fails: gravity off by 1e-6 (tiny), the accretion
#      rate off by 1e-6 (tiny-rain: it must rain), advection skipped for one
#      step and one CRM unforced (tiny);
#  (d) per field, the smallest planted difference over the largest
#      legitimate one is printed, and is at least 10 wherever both exist.
# usage: envelope_acceptance.sh TESTS_BIN_DIR FIXTURES_DIR
set -u
tests_bin=$1 fixtures=$2
MAPP="$MAPP_BIN_DIR/mapp"
B="${MAPP_BASELINE_DIR:-$MAPP_SOURCE_DIR/baselines}/crm"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# FMA needs AVX2 and FMA instructions (x86-64-v3).
if ! grep -qw fma /proc/cpuinfo || ! grep -qw avx2 /proc/cpuinfo; then
  echo "skip: this CPU cannot run the x86-64-v3 (FMA) build"; exit 77
fi

# check CASE ANSWER EXPECT_EXIT NAME: mapp check, its per-field differences kept in $work/NAME.diff
check() {
  local case=$1 answer=$2 want=$3 name=$4 out rc
  out=$("$MAPP" check "$B/$case.h5" "$answer" 2>&1)
  rc=$?
  [ "$rc" = "$want" ] || { fail "$name: mapp check exited $rc, expected $want"; echo "$out"; }
  awk '/model=envelope/ { for (i = 1; i <= NF; ++i) if ($i ~ /^difference=/) { sub("difference=", "", $i); print $1, $i } }' \
    <<<"$out" >"$work/$case.$name.diff"
  echo "$name on $case: exit $rc"
}

# run EXE CASE NAME [ENV...]: an answer of one of the test-only builds
run() {
  local exe=$1 case=$2 name=$3
  shift 3
  env "$@" "$tests_bin/$exe" --size "$case" --quiet --output "$work/$name.$case.h5" || fail "$name on $case did not run"
}

for fixture in "$fixtures"/tiny-cuda-*.h5; do
  check tiny "$fixture" 0 "legit-$(basename "$fixture" .h5)"
done
for case in tiny tiny-rain; do
  run mapp-crm-fma "$case" fma && check "$case" "$work/fma.$case.h5" 0 legit-fma
done
run mapp-crm-plant-gravity tiny gravity && check tiny "$work/gravity.tiny.h5" 1 bug-gravity
run mapp-crm-plant-accretion tiny-rain accretion && check tiny-rain "$work/accretion.tiny-rain.h5" 1 bug-accretion
for plant in advection forcing; do
  run mapp-crm-plant-ops tiny "$plant" MAPP_CRM_PLANT=$plant && check tiny "$work/$plant.tiny.h5" 1 "bug-$plant"
done

# (d) the margin per case and field
for case in tiny tiny-rain; do
  echo "margins on $case (smallest planted difference / largest legitimate difference):"
  cat "$work/$case".legit-*.diff | awk '{ if ($2 > legit[$1]) legit[$1] = $2 } END { for (f in legit) print f, legit[f] }' \
    | sort >"$work/$case.legit"
  cat "$work/$case".bug-*.diff | awk '$2 > 0 { if (!($1 in bug) || $2 < bug[$1]) bug[$1] = $2 } END { for (f in bug) print f, bug[f] }' \
    | sort >"$work/$case.bug"
  while read -r field bug; do
    legit=$(awk -v f="$field" '$1 == f { print $2 }' "$work/$case.legit")
    if awk -v l="${legit:-0}" 'BEGIN { exit !(l > 0) }'; then
      margin=$(awk -v b="$bug" -v l="$legit" 'BEGIN { printf "%.3g", b / l }')
      printf '  %-11s planted %-10s legitimate %-10s margin %s\n' "$field" "$bug" "$legit" "$margin"
      awk -v m="$margin" 'BEGIN { exit !(m < 10) }' && fail "$case/$field: margin $margin is under 10"
    else
      printf '  %-11s planted %-10s legitimate 0 (bit for bit)\n' "$field" "$bug"
    fi
  done <"$work/$case.bug"
done
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "envelope acceptance: ok"
