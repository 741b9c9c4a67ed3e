#!/usr/bin/env bash
# copies_agree.sh EXE MPIEXEC H5DIFF WORKDIR PATTERN: --copy-bytes on one
# pattern, both variants, 1 and 2 workers and 2 on the emulated device
# (host and device tasks alternating), 1 and 2 ranks, at an odd
# graph-steps (the subgraph's copy addresses alternate between
# instantiations, so they are interpolated and planned again per
# instantiation). Every copied byte is checked by the task that reads it
# (exit 1 otherwise); every answer must equal, bit for bit, the eager
# variant's without copies on one rank (copies move bytes beside the
# answer, never change it).
set -u
exe=$1 mpiexec=$2 h5diff=$3 work=$4 pattern=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
common=(--quiet --backend threads --pattern "$pattern" --width 7 --steps 24 --iterations 10)
"$exe" "${common[@]}" --variant eager --workers 1 --graph-steps 4 --output "$work/reference.h5" \
  || { echo "FAIL: the reference run failed"; exit 1; }
failures=0
for ranks in 1 2; do
  for variant in eager subgraph; do
    for workers in 1 2 device; do
      # device: 2 workers on the emulated device, host and device tasks alternating (the copies on its copy stream)
      out="$work/$variant-w$workers-n$ranks.h5" how=(--workers "$workers")
      [ "$workers" = device ] && how=(--workers 2 --device emulated --stream-ordered alternate --no-pin)
      "$mpiexec" -n "$ranks" --oversubscribe "$exe" "${common[@]}" --variant "$variant" "${how[@]}" \
        --graph-steps 3 --copy-bytes 40 --output "$out"
      rc=$?
      if [ "$rc" -ne 0 ]; then
        echo "FAIL: $variant, $workers workers, $ranks ranks: exit $rc"; failures=$((failures + 1)); continue
      fi
      if ! "$h5diff" -q "$work/reference.h5" "$out" /value /value; then
        echo "FAIL: $variant, $workers workers, $ranks ranks: the answer differs from the reference"
        failures=$((failures + 1))
      fi
    done
  done
done
[ "$failures" -eq 0 ] || exit 1
echo "ok: $pattern with copies: 12 runs checked (4 on the emulated device), answers bit for bit equal to the reference"
