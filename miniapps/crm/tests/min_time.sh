#!/usr/bin/env bash
# min_time.sh RANKS WORKDIR: --min-time runs crm's timed phase again from the
# initial state (the reset hook) until the iterations last 0.05 s. On RANKS
# ranks, every variant on every CPU backend gives, with it, the answer file
# of a run without it, bit for bit, and its record says the phase ran more
# than once (the driver held every iteration to the first one's digest).
# The reference is one run without --min-time: crm's variants and backends
# agree bit for bit (crm.agree.*), so one answer serves them all. Needs
# MAPP_BIN_DIR (mapp_add_test sets it) and mpirun on PATH.
set -u
ranks=$1 work=$2
bin=$MAPP_BIN_DIR/mapp-crm
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OMP_WAIT_POLICY=passive
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/../../common/tests/answers.sh"
run() { on_ranks "$ranks" "$bin" --quiet "$@"; } # mapp-crm quietly on $ranks ranks
# repeated NAME ARGS... (min_time_repeat.sh): ARGS with --min-time, the answer
# against ref.h5, the timed phase repeated.
run_case() { run "$@"; }
. "$(dirname "${BASH_SOURCE[0]}")/../../common/tests/min_time_repeat.sh"

run --size tiny --output ref.h5 || fail "reference run"
for variant in percrm batched; do
  for backend in serial omp; do
    name=$variant-$backend
    repeated "$name" --size tiny --variant "$variant" --backend "$backend"
    echo "ok $name on $ranks rank(s): $ran iterations, the answer bit for bit the run's without --min-time"
  done
done
