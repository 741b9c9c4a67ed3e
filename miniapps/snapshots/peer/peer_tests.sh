#!/usr/bin/env bash
# ctest cases of the Devito peer (snapshots.peer.*):
#   peer_tests.sh CASE LAUNCHER WORKDIR BUILD_VENV SOURCE_VENV
# The venv is the launcher's ($MAPP_PEERS_VENV, else BUILD_VENV, else
# SOURCE_VENV); without it every case but no_venv skips (exit 77) saying so.
# Needs MAPP_SOURCE_DIR and MAPP_BIN_DIR (mapp_add_test sets them).
. "$(dirname "$0")/../../common/peer/peer_tests_lib.sh" "$@"

case $case_ in
  answer_tiny)
    start=$(date +%s%N)
    "$exe" --size tiny --output peer.h5 --result peer.json || fail "the peer's tiny run exited $?"
    end=$(date +%s%N)
    echo "peer tiny run: $(( (end - start) / 1000000 )) ms"
    # The record: the contract's fields and the peer's own.
    "$py" - peer.json <<'EOF' || fail "record"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert r["app"] == "snapshots-devito" and r["variant"] == "memory" and r["case"] == "tiny", r
assert r["verification"]["status"] == "pass", r["verification"]
assert {c["name"] for c in r["verification"]["checks"]} >= {"finite", "adjoint-dot-test"}
for k in ("forward_s", "adjoint_s", "objective"):
    assert r["app_data"][k] > 0, k
assert r["fom"]["name"] == "point-updates/s" and r["fom"]["value"] > 0
print("record: J", r["app_data"]["objective"], "forward_s", r["app_data"]["forward_s"],
      "adjoint_s", r["app_data"]["adjoint_s"], "dot test", r["app_data"]["dot_test"]["relative_error"])
EOF
    # The answer: within 1e-11 of each field's maximum of the mini-app's
    # baseline (mapp check's rel-max, the tolerance the peer states); not
    # within 1e-15 (the comparison can fail: the orders of rounding differ).
    "$bin/mapp" check "$src/baselines/snapshots/tiny.h5" peer.h5 --model rel-max --bound 1e-11 \
      || fail "mapp check: the peer's answer is not the mini-app's baseline's within 1e-11 of each field's maximum"
    "$bin/mapp" check "$src/baselines/snapshots/tiny.h5" peer.h5 --model rel-max --bound 1e-15 >tight.txt
    [ $? -eq 1 ] || fail "the peer's answer passed at 1e-15: $(cat tight.txt)"
    # Other physics fails it: the peer's answer with the stencil of space
    # order 8 against the mini-app's baseline (order 4; the same shapes).
    "$exe" --size tiny --space-order 8 --output other.h5 >/dev/null || fail "the peer at space order 8"
    "$bin/mapp" check "$src/baselines/snapshots/tiny.h5" other.h5 --model rel-max --bound 1e-11 >other.txt
    [ $? -eq 1 ] || fail "another stencil passed: $(cat other.txt)"
    echo "another stencil: $(grep -c FAIL other.txt) of 3 fields FAIL"
    ;;
  harness)
    # mapp run checks the peer against baselines/snapshots/tiny.h5 at the
    # tolerance its record states (baseline_tolerance): pass.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    "$bin/mapp" run snapshots-devito --size tiny --out results >run.txt 2>&1 || fail "mapp run: $(cat run.txt)"
    cat run.txt
    row=$(grep '^snapshots-devito ' run.txt) || fail "no row for the peer"
    [ "$(echo "$row" | awk '{print $9, $10}')" = "pass pass" ] || fail "verify/baseline not pass/pass: $row"
    # ... which the baseline's own model (exact) would fail: the stated one applied.
    answer=$(ls results/*.h5)
    "$bin/mapp" check "$src/baselines/snapshots/tiny.h5" "$answer" >exact.txt
    [ $? -eq 1 ] || fail "the peer's answer passed the baseline's exact model: $(cat exact.txt)"
    # A sweep of both on a problem no baseline holds (space order 8): the
    # peer's answer is checked against the mini-app's of the same
    # configuration, at its stated tolerance (peer_of).
    printf '%s\n' 'name: pair' 'repetitions: 1' 'runs:' \
      '  - {app: snapshots, label: so8, variants: [memory], ranks: [1], sizes: [tiny], args: [--space-order, "8"]}' \
      '  - {app: snapshots-devito, label: so8, variants: [memory], ranks: [1], sizes: [tiny], args: [--space-order, "8"]}' >pair.yaml
    "$bin/mapp" sweep pair.yaml --out sweep >sweep.txt 2>&1 || fail "mapp sweep: $(cat sweep.txt)"
    cat sweep.txt
    grep '"app":"snapshots-devito"' sweep/pair/results.jsonl | grep -q '"consistency":{"status":"pass".*"peer_of":"snapshots"' ||
      fail "the peer's answer was not checked against the mini-app's: $(grep -o '"consistency":{[^}]*}' sweep/pair/results.jsonl)"
    ;;
  list)
    "$exe" --list >list.json || fail "--list exited $?"
    "$py" - list.json <<'EOF' || fail "--list"
import json, sys
l = json.load(open(sys.argv[1]))
assert l["app"] == "snapshots-devito" and l["baselines"] == "snapshots", l
assert [v["name"] for v in l["variants"]] == ["memory"]
assert [b["name"] for b in l["variants"][0]["backends"]] == ["serial", "omp"]
EOF
    [ "$("$exe" --size tiny --print-case)" = "case=tiny size=tiny" ] || fail "--print-case at tiny"
    [ "$("$exe" --space-order 8 --print-case)" = "case=none size=custom" ] || fail "--print-case custom"
    ;;
  min_time) peer_min_time ;;
  bad_output_path | bad_result_path)
    # A path that cannot be created is refused before the work (the JIT
    # compile and the run), one line naming it.
    flag=--output path=/nonexistent/answer.h5
    [ "$case_" = bad_result_path ] && flag=--result path=/nonexistent/record.json
    refused --size tiny "$flag" "$path"
    grep -qF -- "$flag $path: folder /nonexistent does not exist" err.txt || fail "the line does not name the path"
    ;;
  bad_flag) refused --size tiny --no-such-flag ;;
  bad_space_order) refused --size tiny --space-order 6 ;;
  bad_backend) refused --size tiny --backend cuda ;;
  bad_layers) refused --size tiny --layers disk ;;
  bad_ranks) OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 refused --size tiny ;;
  *) echo "unknown case $case_" >&2; exit 2 ;;
esac
exit 0
