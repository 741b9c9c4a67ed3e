#!/usr/bin/env bash
# cuda_or_skip.sh MAPP-SUBGRAPH VARIANT: runs the CUDA variant on a small
# case where a GPU exists; where none does, checks the clean refusal (exit 2,
# one line) and reports the test skipped (77).
set -u
exe=$1 variant=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$exe" --backend cuda --variant "$variant" --pattern stencil_1d --width 8 --steps 64 --graph-steps 16 \
  --iterations 100 2>"$err"
code=$?
if [ "$code" -eq 2 ] && grep -q "no CUDA device" "$err" && [ "$(grep -c '' "$err")" -eq 1 ]; then
  echo "skipped: $(cat "$err")"; exit 77
fi
cat "$err"
exit "$code"
