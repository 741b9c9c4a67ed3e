#!/usr/bin/env bash
# device_agree.sh EXE MPIEXEC H5DIFF WORKDIR PATTERN: the emulated device
# on one pattern: both variants, 1 and 2 workers, 1 and 2 ranks, every
# --stream-ordered (runahead; none; host and device tasks alternating),
# without and with copies (at an odd graph-steps). Every input tag and
# copied byte is checked by its reader (exit 1 otherwise); every answer must
# equal, bit for bit, the eager variant's without a device on one rank.
set -u
exe=$1 mpiexec=$2 h5diff=$3 work=$4 pattern=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
common=(--quiet --backend threads --pattern "$pattern" --width 7 --steps 24 --iterations 10 --no-pin)
"$exe" "${common[@]}" --variant eager --workers 1 --graph-steps 4 --output "$work/reference.h5" \
  || { echo "FAIL: the reference run failed"; exit 1; }
failures=0 runs=0
for ranks in 1 2; do
  for variant in eager subgraph; do
    for workers in 1 2; do
      for ordered in all none alternate; do
        for copies in 0 40; do
          name="$variant-w$workers-n$ranks-$ordered-c$copies"
          steps=4 && [ "$copies" -gt 0 ] && steps=3
          "$mpiexec" -n "$ranks" --oversubscribe "$exe" "${common[@]}" --variant "$variant" --workers "$workers" \
            --graph-steps "$steps" --copy-bytes "$copies" --device emulated --device-poll-us 1 \
            --stream-ordered "$ordered" --output "$work/$name.h5"
          rc=$?
          runs=$((runs + 1))
          if [ "$rc" -ne 0 ]; then
            echo "FAIL: $name: exit $rc"; failures=$((failures + 1)); continue
          fi
          if ! "$h5diff" -q "$work/reference.h5" "$work/$name.h5" /value /value; then
            echo "FAIL: $name: the answer differs from the reference"; failures=$((failures + 1))
          fi
        done
      done
    done
  done
done
[ "$failures" -eq 0 ] || exit 1
echo "ok: $pattern on the emulated device: $runs runs, answers bit for bit equal to the reference"
