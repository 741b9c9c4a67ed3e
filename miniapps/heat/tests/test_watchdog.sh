#!/usr/bin/env bash
# test_watchdog.sh EXPECT_EXIT: with the polling task never re-created
# (MAPP_TAMPI_POLL_ONCE=1, a planted fault), the halo requests of 2 ranks
# are never tested again, the graph stops, and the watchdog ends the run
# with one line naming what is outstanding, exit 3: no hang. Without the
# fault the same run passes, so the fault is what the watchdog caught.
. "$(dirname "$0")/heat_test_lib.sh"
expect=$1
args=(--variant tasks --backend omp --threads 1 --size small --quiet --watchdog-s 3)
"$MPIEXEC" -q -np 2 --oversubscribe "$HEAT" "${args[@]}" || { echo "FAIL: the run without the fault failed"; exit 1; }
echo "ok: without the fault the run passes"
MAPP_TAMPI_POLL_ONCE=1 "$expect" 3 "no progress for [3-9]\.[0-9] s \(watchdog\): [0-9]+ tasks live, [1-9][0-9]* MPI requests outstanding" -- \
  timeout 60 "$MPIEXEC" -q -np 2 --oversubscribe -x MAPP_TAMPI_POLL_ONCE "$HEAT" "${args[@]}" ||
  failures=$((failures + 1))
exit $((failures > 0))
