#!/usr/bin/env bash
# The answer writer (mapp_h5) on a full disk and on failures of one rank:
# exit 3 (2 for the bad slab) on every rank, one error line naming the file,
# no crash at MPI_Finalize, no deadlock, and no file left that reads as an
# answer (neither the answer nor its .partial; an earlier answer under the
# same name is removed too). A 64 KiB tmpfs plays the full disk where this
# machine lets us mount one; elsewhere those cases skip (77).
# mapp-heat and mapp-crm, where built, are run the same way.
# usage: h5_full_disk.sh TEST_H5_WRITE MPIEXEC
set -u
tool=$1 mpiexec=$2
scratch=$(mktemp -d)
mounted=""
cleanup() {
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# expect CODE REGEX -- COMMAND...: the exit code, within 60 s, no crash, and a line matching REGEX.
expect() {
  local code=$1 pattern=$2
  shift 3
  timeout 60 "$@" >"$scratch/out" 2>&1
  local got=$?
  # In sanitize builds LeakSanitizer's own tracer dies (signal 11 in its
  # stop-the-world) at the exit of a process that wrote to a tmpfs through
  # Open MPI's I/O: not the program's crash, so that run is made again with
  # address and undefined-behaviour checks but without the leak check.
  if grep -q 'LeakSanitizer has encountered a fatal error' "$scratch/out"; then
    echo "note: LeakSanitizer's tracer failed; again without the leak check: $*"
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" timeout 60 "$@" >"$scratch/out" 2>&1
    got=$?
  fi
  [ "$got" -eq 124 ] && fail "hung (killed after 60 s): $*"
  grep -Eq 'Segmentation|signal 11|core dumped' "$scratch/out" && { cat "$scratch/out"; fail "crashed: $*"; }
  [ "$got" -eq "$code" ] || { cat "$scratch/out"; fail "exit $got, expected $code: $*"; }
  [ -z "$pattern" ] || grep -Eq -- "$pattern" "$scratch/out" || { cat "$scratch/out"; fail "no line matching /$pattern/: $*"; }
  echo "ok: exit $got: $*"
}
no_answer() {
  for f in "$1" "$1.partial"; do [ -e "$f" ] && fail "a failed write left $f"; done
  return 0
}

# A device is refused before anything is written (it cannot be renamed over).
expect 3 "error: .*'/dev/full'" -- "$tool" /dev/full
# A good write: the answer appears whole under its name, the .partial is gone.
expect 0 "" -- "$mpiexec" -np 2 --oversubscribe "$tool" "$scratch/ok.h5"
[ -f "$scratch/ok.h5" ] && [ ! -e "$scratch/ok.h5.partial" ] || fail "the good write left no answer or its .partial"
# One rank fails alone: all agree (exit 2), nobody waits in a collective.
expect 2 "error: field 'temperature': invalid slab" -- "$mpiexec" -np 2 --oversubscribe "$tool" "$scratch/bad.h5" 4 bad-slab
no_answer "$scratch/bad.h5"

mkdir "$scratch/full"
if ! mount -t tmpfs -o size=64k tmpfs "$scratch/full" 2>/dev/null; then
  echo "skip: cannot mount a tmpfs here (the full-disk cases need one)"
  exit 77
fi
mounted="$scratch/full"
answer="$scratch/full/x.h5"
# An earlier answer that fits (1 row per rank), then a run that does not.
expect 0 "" -- "$tool" "$answer" 1
[ -f "$answer" ] || fail "the small answer was not written"
expect 3 "error: writing field 'temperature' to '$answer' failed" -- "$tool" "$answer"
no_answer "$answer"
expect 3 "error: writing field 'temperature' to '$answer' failed" -- "$mpiexec" -np 2 --oversubscribe "$tool" "$answer"
no_answer "$answer"
# The apps' own writers go through the same path (a 256 x 256 grid does not fit).
bin=${MAPP_BIN_DIR:-$(dirname "$tool")}
if [ -x "$bin/mapp-heat" ]; then
  for n in 1 2; do
    expect 3 "error: .*'$answer'" -- "$mpiexec" -np $n --oversubscribe "$bin/mapp-heat" --rows 256 --cols 256 \
      --steps 2 --output "$answer"
    no_answer "$answer"
  done
  expect 3 "error: .*'/dev/full'" -- "$mpiexec" -np 2 --oversubscribe "$bin/mapp-heat" --output /dev/full
fi
if [ -x "$bin/mapp-crm" ]; then
  expect 3 "error: .*'$answer'" -- "$mpiexec" -np 2 --oversubscribe "$bin/mapp-crm" --instances 64 --output "$answer"
  no_answer "$answer"
  expect 3 "error: .*'/dev/full'" -- "$bin/mapp-crm" --output /dev/full
fi
echo "h5_full_disk: ok"
