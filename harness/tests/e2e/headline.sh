#!/bin/bash
# Issue 53 item 3: apps say their own headline. The report's section "What
# each technique buys here" has one row per app whose --list declares a
# headline pair ("headline", docs/contract.md); no table in the harness
# names one. One ctest test per case:
#   toy      the contract tests' toy app (mapp-wrapped, contract_app/),
#            added by its folder alone (MAPP_APP_PATH), swept over its two
#            variants and reported: its row shows; without its folder on
#            the app path, or declaring its pair for other sizes only, no
#            row; a --list whose headline names a variant it lacks is
#            refused with one line
#   source   harness/core/outputs/headline.c names no app this build has
#            (not even in a comment), and each of them declares a headline
# usage: headline.sh CASE APPPATH_DIR
. "$(dirname "$0")/lib.sh"
CASE=${1:?usage: headline.sh CASE APPPATH_DIR}
APPS=${2:?APPPATH_DIR}

ROW='| wrapped | pointer swap over a copy each step | explicit/serial over copy/serial, tiny strong, 1 rank |'

# headline_row REPORT: the toy's row of the report's headline table, or nothing.
headline_row() {
  sed -n '/^## What each technique buys here/,/^## /p' "$1" | grep -F "| wrapped |" || true
}

case_toy() {
  [ -x "$APPS/good/mapp-wrapped" ] || fail "$APPS/good/mapp-wrapped is not built (cmake --build build --target contract_wrapped_good)"
  printf 'name: toy\nrepetitions: 3\ncheck: none\nruns:\n  - {app: wrapped, variants: [explicit, copy], backends: [serial], ranks: [1], sizes: [tiny]}\n' >toy.yaml
  export MAPP_APP_PATH=$APPS/good
  expect_exit 0 "$MAPP" sweep toy.yaml --out results
  expect_output "6 ran (6 ok, 0 failed)"
  expect_exit 0 "$MAPP" report results/toy
  local row
  row=$(headline_row results/toy/report.md)
  grep -qF -- "$ROW" <<<"$row" || { cat results/toy/report.md >&2; fail "the toy's headline row is missing or wrong: '$row'"; }
  echo "report: $row"
  expect_exit 0 "$MAPP" report results/toy --format markdown
  expect_output "$ROW"

  # The results' apps the table has no row of are named under it: one
  # whose --list declares no headline, one whose --list cannot be read.
  sed 's/"app":"wrapped"/"app":"plain"/' results/toy/results.jsonl >plain.jsonl
  sed 's/"app":"wrapped"/"app":"gone"/' results/toy/results.jsonl >gone.jsonl
  cat plain.jsonl gone.jsonl >>results/toy/results.jsonl
  mkdir -p plain
  printf '#!/bin/sh\necho %s\n' "'{\"variants\":[{\"name\":\"explicit\",\"backends\":[{\"name\":\"serial\",\"built\":true}]}]}'" >plain/mapp-plain
  chmod +x plain/mapp-plain
  expect_exit 0 env MAPP_APP_PATH="$APPS/good:$SCRATCH/plain" "$MAPP" report results/toy
  grep -qF -- "$ROW" results/toy/report.md || fail "the toy's row went with other apps beside it"
  grep -qF 'No headline declared in --list (`"headline"`, docs/contract.md) by: plain.' results/toy/report.md ||
    fail "the report does not name the app that declares no headline"
  grep -qF "Not asked for a headline (--list could not be read): gone (no mini-app 'gone'" results/toy/report.md ||
    fail "the report does not name the app whose --list could not be read"

  # Declared for other sizes only: no row for tiny.
  expect_exit 0 env WRAPPED_HEADLINE_SIZES='small|large' "$MAPP" report results/toy
  [ -z "$(headline_row results/toy/report.md)" ] || fail "a headline declared for small|large shows a tiny row"

  # The row comes from the app itself: not found on the app path, no row.
  unset MAPP_APP_PATH
  expect_exit 0 "$MAPP" report results/toy
  [ -z "$(headline_row results/toy/report.md)" ] || fail "a headline row without the app's --list"

  # A headline naming a variant the app lacks breaks the contract.
  mkdir -p bad
  printf '#!/bin/sh\necho %s\n' "'{\"variants\":[{\"name\":\"a\",\"backends\":[{\"name\":\"serial\",\"built\":true}]}],\"headline\":{\"technique\":\"t\",\"variant\":\"b\",\"backend\":\"serial\",\"reference\":{\"variant\":\"a\",\"backend\":\"serial\"}}}'" >bad/mapp-badline
  chmod +x bad/mapp-badline
  expect_exit 2 env MAPP_APP_PATH="$SCRATCH/bad" "$MAPP" list badline
  expect_output "mapp-badline --list headline names b/serial, which its variants do not have"
  expect_one_error_line env MAPP_APP_PATH="$SCRATCH/bad" "$MAPP" list badline
}

case_source() {
  local source=$MAPP_SOURCE_DIR/harness/core/outputs/headline.c app named=0
  [ -s "$source" ] || fail "no $source"
  expect_exit 0 "$MAPP" list
  for app in $(awk 'NR > 1 && $0 !~ /^ / {print $1}' <<<"$OUT"); do
    named=$((named + 1))
    grep -qw -- "$app" "$source" && fail "headline.c names the app $app: its headline belongs in its --list"
    "$MAPP_BIN_DIR/mapp-$app" --list | grep -q '"headline":{' || fail "mapp-$app --list declares no headline"
  done
  [ "$named" -ge 1 ] || fail "mapp list named no app: $OUT"
  echo "$named apps declare their headline; headline.c names none"
}

declare -F "case_$CASE" >/dev/null || fail "no case '$CASE'"
"case_$CASE"
echo "headline $CASE: ok"
