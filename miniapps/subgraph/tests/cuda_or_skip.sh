#!/usr/bin/env bash
# cuda_or_skip.sh MAPP-SUBGRAPH H5DIFF WORKDIR VARIANT [ARGS...]: runs the
# CUDA variant (eager and subgraph through the runtime's CUDA streams,
# cuda-graph as one captured graph) on a small case where a GPU exists, its
# tags checked on the device, and its answer against the serial backend's
# bit for bit; where none does, checks the clean refusal (exit 2, one line)
# and reports the test skipped (77).
set -u
exe=$1 h5diff=$2 work=$3 variant=$4
shift 4
rm -rf "$work" && mkdir -p "$work" || exit 1
err=$work/stderr
case_args=(--pattern stencil_1d --width 8 --steps 48 --graph-steps 16 --iterations 100 "$@")
"$exe" --backend cuda --variant "$variant" "${case_args[@]}" --output "$work/cuda.h5" 2>"$err"
code=$?
if [ "$code" -eq 2 ] && grep -q "no CUDA device" "$err" && [ "$(grep -c '' "$err")" -eq 1 ]; then
  echo "skipped: $(cat "$err")"; exit 77
fi
cat "$err"
[ "$code" -eq 0 ] || exit "$code"
# the host's answer: the same problem without the device's flags (the
# answer depends on the pattern, width, steps only)
host_args=()
skip=0
for a in "${case_args[@]}"; do
  if [ "$skip" -eq 1 ]; then skip=0; continue; fi
  case $a in --stream-ordered | --workers) skip=1 ;; *) host_args+=("$a") ;; esac
done
"$exe" --quiet --backend serial --variant eager "${host_args[@]}" --output "$work/host.h5" || exit 1
"$h5diff" -q "$work/host.h5" "$work/cuda.h5" /value /value \
  || { echo "FAIL: the CUDA answer differs from the serial backend's"; exit 1; }
echo "ok: $variant on the GPU ($*), answer bit for bit the serial backend's"
