#!/usr/bin/env bash
# check_tiny.sh VARIANT BACKEND RANKS [perturb|-] [ARGS...]: the tiny
# case's answer on RANKS ranks against baselines/subgraph/tiny.h5 with
# `mapp check` (exact), for backends `mapp run` cannot launch yet (threads)
# and for flags that change how the case runs, not its answer (ARGS: the
# emulated device, say). With `perturb` the run uses another pattern
# (periodic boundaries) and the check must fail. Needs MAPP_BIN_DIR,
# MAPP_SOURCE_DIR.
set -eu
variant=$1 backend=$2 ranks=$3 perturb=${4:-}
shift $(($# < 4 ? $# : 4))
extra=("$@")
[ "$perturb" = perturb ] && extra+=(--pattern stencil_1d_periodic)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpiexec -n "$ranks" --oversubscribe "$MAPP_BIN_DIR/mapp-subgraph" --size tiny --variant "$variant" \
  --backend "$backend" --output "$work/tiny.h5" --quiet ${extra[@]+"${extra[@]}"}
if [ "$perturb" = perturb ]; then
  if "$MAPP_BIN_DIR/mapp" check "$MAPP_SOURCE_DIR/baselines/subgraph/tiny.h5" "$work/tiny.h5"; then
    echo "FAIL: a perturbed answer passed the check"; exit 1
  fi
  echo "ok: the perturbed answer was refused"; exit 0
fi
"$MAPP_BIN_DIR/mapp" check "$MAPP_SOURCE_DIR/baselines/subgraph/tiny.h5" "$work/tiny.h5"
