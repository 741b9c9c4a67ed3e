#!/bin/bash
# The mapp command line: help everywhere, bad verbs and flags exit 2 with
# one clear line, `list` shows the built apps.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "$MAPP" --help
expect_output "sweep"
expect_exit 2 "$MAPP"
expect_output "no verb given"
expect_one_error_line "$MAPP"
expect_exit 2 "$MAPP" frobnicate
expect_output "unknown verb 'frobnicate'"
expect_one_error_line "$MAPP" frobnicate

# Every verb `mapp --help` lists (a new verb is tested here without a line
# changing; harness/verbs/README.md is the checklist for adding one), and
# each sub-verb its usage line lists as a|b|c (history's): help, and a bad
# flag refused with one line.
"$MAPP" --help >"$SCRATCH/help.txt" || fail "mapp --help failed"
verbs=$(awk '/^verbs:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}' "$SCRATCH/help.txt")
[ "$(wc -w <<<"$verbs")" -ge 15 ] || fail "mapp --help lists $(wc -w <<<"$verbs") verbs: $verbs"
for verb in $verbs; do
  expect_exit 0 "$MAPP" "$verb" --help
  expect_output "usage: mapp $verb"
  subverbs=$(sed -n "1s/^usage: mapp $verb \([a-z]*\(|[a-z]*\)\+\) .*/\1/p" <<<"$OUT" | tr '|' ' ')
  if [ -n "$subverbs" ]; then
    expect_exit 2 "$MAPP" "$verb" --no-such-flag
    expect_output "unknown $verb verb '--no-such-flag'"
    expect_one_error_line "$MAPP" "$verb" --no-such-flag
  else
    subverbs=-
  fi
  for sub in $subverbs; do
    words=("$verb")
    [ "$sub" = - ] || words+=("$sub")
    expect_exit 0 "$MAPP" "${words[@]}" --help
    expect_output "usage: mapp ${words[*]}"
    expect_exit 2 "$MAPP" "${words[@]}" --no-such-flag
    expect_output "unknown option '--no-such-flag'"
    expect_one_error_line "$MAPP" "${words[@]}" --no-such-flag
  done
done

expect_exit 2 "$MAPP" run                       # APP missing
expect_exit 2 "$MAPP" run heat extra-positional
expect_exit 2 "$MAPP" run heat -n 0
expect_output "--ranks: 0 is outside"
expect_exit 2 "$MAPP" run heat --size huge
expect_exit 2 "$MAPP" run no-such-app
expect_output "no mini-app 'no-such-app'"
expect_exit 2 "$MAPP" check only-one.h5
expect_exit 2 "$MAPP" check a.h5 b.h5 --model fuzzy
expect_exit 2 "$MAPP" check a.h5 b.h5 --bound -1
expect_exit 2 "$MAPP" sweep missing-spec.yaml
expect_output "cannot read missing-spec.yaml"
expect_exit 2 "$MAPP" plot no-such-results
expect_exit 2 "$MAPP" plot "$SCRATCH" --format png,gif
expect_exit 2 "$MAPP" run heat --env no-such-env.yaml

if [ -x "$MAPP_BIN_DIR/mapp-heat" ]; then
  expect_exit 0 "$MAPP" list
  expect_output "heat"
  expect_output "mpi"
  expect_output "serial"
  expect_exit 2 "$MAPP" run heat --variant no-such-variant
  expect_output "has no variant 'no-such-variant'"
  # the app's own bad-flag exit 2 comes back as ours, with its message
  expect_exit 2 "$MAPP" run heat --out "$SCRATCH/r" -- --no-such-app-flag
  expect_output "mapp-heat exited with 2: unknown option '--no-such-app-flag'"
fi
echo "cli: ok"
