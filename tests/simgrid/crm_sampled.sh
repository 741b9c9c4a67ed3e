#!/usr/bin/env bash
# crm.simgrid.sampled: crm --sampled-ranks on 16 simulated ranks of the EDR
# fat tree (weak, --cycle-group task, dycore halo exchanges on): ranks 0
# and 1 compute for real, the other 14 are charged the bursts the two
# measured and hold no CRM state. The answer is the weak problem of 2
# ranks (tiny here: 8 CRMs a rank, 16 in the answer; the sweep runs 760):
# every dataset equal bit for bit to the native build's 2-rank run of that
# problem, and to the simulated 1-rank reference the harness runs
# (--weak-ranks 2). The record names the case (tiny-weak2 of these
# flags), answer_ranks 2, the two charges, and a compute phase of at
# least their sum on every rank. A changed physics (--dt 9) must differ,
# which shows the comparison can fail.
#   crm_sampled.sh SIM_BIN_DIR NATIVE_BIN_DIR SOURCE_DIR
set -euo pipefail
abs() { if [ -d "$1" ]; then (cd "$1" && pwd); else echo "$1"; fi; }
sim=$(abs "$1")/mapp-crm native=$(abs "$2")/mapp-crm src=$(abs "$3")
if [ ! -x "$sim" ] || ! command -v smpirun >/dev/null; then
  echo "skipped: no simulated build ($sim) or no smpirun; cmake --preset simgrid && cmake --build --preset simgrid"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/crm-sampled.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail() { echo "FAIL: $*"; exit 1; }
case_args=(--size tiny --scaling weak --cycle-group task --quiet)
simulate() { # RANKS ARGS...
  local n=$1
  shift
  "$src/envs/sim/smpirun-wrapper.sh" -np "$n" --platform fattree-edr-1024.xml "$sim" "${case_args[@]}" "$@"
}
. "$src/miniapps/common/tests/answers.sh"
simulate 16 --sampled-ranks 2 --dycore-exchanges 4 --output s16.h5 --result s16.json || fail "16 simulated ranks: exit $?"
simulate 1 --sampled-ranks 2 --weak-ranks 2 --dycore-exchanges 4 --output s1.h5 || fail "the 1-rank reference: exit $?"
mpirun -q -np 2 --oversubscribe "$native" "${case_args[@]}" --output n2.h5 || fail "the native 2-rank run: exit $?"
[ "$(h5ls s16.h5 | awk '$1 == "u" {print $3}')" = "{16," ] || fail "the answer does not hold 2 x 8 CRMs: $(h5ls s16.h5 | grep '^u ')"
same s16.h5 n2.h5 || fail "16 simulated ranks, 2 sampled: another answer than the native 2-rank run's"
same s16.h5 s1.h5 || fail "16 simulated ranks, 2 sampled: another answer than the 1-rank reference's"
python3 - s16.json <<'PY' || fail "the record"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
d = r["app_data"]
assert r["case"] == "tiny-weak2", r["case"]
assert r["answer_ranks"] == 2 and d["sampled_ranks"] == 2 and d["answered_instances"] == 16, d
assert len(d["charge_s"]) == r["steps"] and min(d["charge_s"]) > 0, d["charge_s"]
assert r["phases"]["compute"]["min"] >= sum(d["charge_s"]), (r["phases"]["compute"], d["charge_s"])
assert d["dycore_exchanges"] == 4 and d["dycore_bytes_per_exchange"] > 0, d
print("ok: case", r["case"], "charges", d["charge_s"], "compute", r["phases"]["compute"]["min"])
PY
mpirun -q -np 2 --oversubscribe "$native" "${case_args[@]}" --dt 9 --output perturbed.h5 || fail "the perturbed run: exit $?"
if same s16.h5 perturbed.h5 >/dev/null; then fail "a run with --dt 9 compared equal: the comparison cannot fail"; fi
echo "ok: 16 simulated ranks with 2 sampled give the 2-rank weak answer bit for bit; --dt 9 differs"
