#!/usr/bin/env bash
# agree.sh same|differ H5LS H5DIFF REFERENCE CANDIDATE -- COMMAND...
# Runs COMMAND --output CANDIDATE; with `same` passes when every dataset of
# REFERENCE is in CANDIDATE with the same bytes (h5diff without a
# tolerance); with `differ` passes only when one differs (the test of the
# test). Attributes (provenance: ranks, command) may differ. Shared by the
# generic agreement tests of every mini-app (cmake/MappAppTests.cmake).
set -u
expect=$1 h5ls=$2 h5diff=$3 reference=$4 candidate=$5
shift 5
[ "$1" = "--" ] && shift
[ -f "$reference" ] || { echo "FAIL: no reference answer $reference (its fixture failed)"; exit 1; }
mkdir -p "$(dirname "$candidate")"
rm -f "$candidate"
"$@" --output "$candidate" || { echo "FAIL: exit $?: $*"; exit 1; }
datasets=$("$h5ls" -r "$reference" | awk '$2 == "Dataset" {print $1}')
[ -n "$datasets" ] || { echo "FAIL: $reference holds no dataset"; exit 1; }
failures=0
for d in $datasets; do
  if ! "$h5diff" -q "$reference" "$candidate" "$d" "$d"; then
    echo "FAIL: dataset $d differs from the reference:"
    "$h5diff" -r "$reference" "$candidate" "$d" "$d" | head -5
    failures=$((failures + 1))
  fi
done
if [ "$expect" = differ ]; then
  [ "$failures" -gt 0 ] || { echo "FAIL: the changed answer equals the reference: the check cannot see a change"; exit 1; }
  echo "ok: the check sees the change ($failures datasets differ)"
  exit 0
fi
[ "$failures" -eq 0 ] || exit 1
echo "ok: $(echo $datasets | wc -w) datasets bit for bit equal to $reference"
