#!/usr/bin/env bash
# expect_exit.sh CODE REGEX -- COMMAND...
# Runs COMMAND and passes when it exits with CODE and its stderr is exactly
# one line (the contract for bad input) matching REGEX. Shared by the tests
# of every mini-app and the harness.
set -u
want_code=$1 pattern=$2
shift 2
[ "$1" = "--" ] && shift
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$@" >/dev/null 2>"$err"
code=$?
lines=$(grep -c '' "$err")
if [ "$code" -ne "$want_code" ]; then
  echo "FAIL: exit code $code, expected $want_code: $*"; cat "$err"; exit 1
fi
if [ "$lines" -ne 1 ]; then
  echo "FAIL: stderr has $lines lines, expected one: $*"; cat "$err"; exit 1
fi
if ! grep -Eq -- "$pattern" "$err"; then
  echo "FAIL: stderr does not match /$pattern/: $*"; cat "$err"; exit 1
fi
echo "ok: exit $code: $(cat "$err")"
