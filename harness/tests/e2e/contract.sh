#!/bin/bash
# Issue 38: programs beyond the build, through the app path, held to the
# mapp contract (docs/contract.md). One ctest test per case:
#   wrapped  mapp-wrapped (contract_app/, built outside build/bin) is found
#            through MAPP_APP_PATH and an environment's app_path, passes
#            mapp contract, is blessed into a baseline folder of the test's
#            own, swept (check: required), checked (a perturbed baseline
#            fails it), plotted and reported like a mini-app; its peer
#            mapp-wrapped-peer is checked against wrapped's baselines and,
#            in a sweep, against wrapped's answers (a moved answer fails;
#            answer_of: pairs entries of two labels); a custom problem's
#            size keeps its preset (custom:tiny, custom:small)
#   broken   builds of it that write a record field of the wrong type, omit
#            a required field, or have no --list are each refused by mapp
#            contract (exit 1) and by sweep and run, with one line naming
#            what they broke
#   apps     mapp contract passes on every mini-app of the build (every record they
#            write validates against docs/schema/record.schema.json; with
#            Python's jsonschema installed, a standard validator agrees)
# usage: contract.sh CASE APPPATH_DIR MAPP_H5_TOOL
. "$(dirname "$0")/lib.sh"
CASE=${1:?usage: contract.sh CASE APPPATH_DIR MAPP_H5_TOOL}
APPS=${2:?APPPATH_DIR}
TOOL=${3:?MAPP_H5_TOOL}
SPEC="$(dirname "$0")/../data/sweep-wrapped.yaml"
export MAPP_BASELINE_DIR=$SCRATCH/baselines

[ -x "$APPS/good/mapp-wrapped" ] || fail "$APPS/good/mapp-wrapped is not built (cmake --build build --target contract_wrapped_good)"

# one_spec FILE: one tiny run of wrapped.
one_spec() {
  printf 'name: one\nrepetitions: 1\ncheck: optional\nruns:\n  - app: wrapped\n    ranks: [1]\n    sizes: [tiny]\n' >"$1"
}

case_wrapped() {
  # Unknown to the build: not listed until the app path names its folder.
  expect_exit 0 "$MAPP" list
  grep -q '^wrapped ' <<<"$OUT" && fail "wrapped listed without an app path"
  grep -q 'heat-bench' <<<"$OUT" && fail "mapp-heat-bench listed as an app"
  expect_exit 2 "$MAPP" run wrapped
  expect_output "no mini-app 'wrapped' in this build or on the app path"
  export MAPP_APP_PATH=$APPS/good
  expect_exit 0 "$MAPP" list
  expect_output "from $APPS/good/mapp-wrapped"
  expect_output "answers checked against baselines/wrapped/"
  grep -q '^wrapped-peer ' <<<"$OUT" || fail "the peer (a name with '-') in an app path folder is not listed"
  expect_exit 0 "$MAPP" list wrapped
  expect_exit 0 "$MAPP" contract wrapped
  expect_output "run explicit/serial        ok (exit 0, record valid, answer HDF5 with 1 dataset)"
  expect_output "run copy/serial            ok (exit 0, record valid, answer HDF5 with 1 dataset)"
  expect_output "mapp-wrapped keeps the mapp contract (8 checks)"

  # Baselines made with mapp bless, into the test's own folder.
  expect_exit 0 "$MAPP" bless wrapped --size tiny --reason "contract.sh: first baseline"
  expect_exit 0 "$MAPP" bless wrapped --size small --reason "contract.sh: first baseline"
  [ -s "$MAPP_BASELINE_DIR/wrapped/tiny.h5" ] || fail "bless wrote no baselines/wrapped/tiny.h5"
  [ -e "$MAPP_BASELINE_DIR/wrapped-peer" ] && fail "a peer's baselines folder was made"

  expect_exit 0 "$MAPP" sweep "$SPEC" --out results
  expect_output "[1/6] wrapped explicit/serial n=1 t=1 tiny strong ... ok"
  expect_output "6 ran (6 ok, 0 failed)"
  local R=results/wrapped
  [ "$(grep -c '"baseline":{"status":"pass"' $R/results.jsonl)" = 6 ] || fail "not every answer passed its baseline"
  grep -q '"app":"wrapped-peer".*"file":"'"$MAPP_BASELINE_DIR"'/wrapped/tiny.h5"' $R/results.jsonl ||
    fail "the peer was not checked against baselines/wrapped/tiny.h5"
  grep -q "\"launch\":\"mpirun -np 1 .*$APPS/good/mapp-wrapped " $R/results.jsonl || fail "not launched from the app path"
  # The peer's answers against wrapped's of the same configuration and
  # repetition (peer_of): both configurations count as checked for it.
  [ "$(grep '"app":"wrapped-peer"' $R/results.jsonl | grep -c '"consistency":{"status":"pass".*"peer_of":"wrapped"')" = 2 ] ||
    fail "the peer's answers were not checked against wrapped's: $(grep '"app":"wrapped-peer"' $R/results.jsonl | head -1)"
  expect_exit 0 "$MAPP" plot $R
  for f in wrapped-fom wrapped-speedup wrapped-peer-fom; do
    for ext in png svg; do [ -s "$R/plots/$f.$ext" ] || fail "$R/plots/$f.$ext missing or empty"; done
  done
  expect_exit 0 "$MAPP" report $R
  grep -q '^## wrapped' $R/report.md || fail "the report has no wrapped section"

  # That check is real, and needs no baseline: a peer whose answer moved
  # by 1e-9 fails it (check: none), with one line naming the answer.
  printf 'name: peer\nrepetitions: 1\ncheck: none\nruns:\n  - {app: wrapped, variants: [explicit], ranks: [1], sizes: [tiny]}\n  - {app: wrapped-peer, variants: [explicit], ranks: [1], sizes: [tiny]}\n' >peer.yaml
  expect_exit 0 "$MAPP" sweep peer.yaml --out peer-same
  grep -q '"app":"wrapped-peer".*"consistency":{"status":"pass"' peer-same/peer/results.jsonl || fail "the peer was not checked"
  expect_exit 1 env WRAPPED_PEER_SHIFT=1e-9 "$MAPP" sweep peer.yaml --out peer-moved
  expect_output "[2/2] wrapped-peer explicit/serial n=1 t=1 tiny strong ... FAIL (consistency)"
  expect_output ": differs from mapp-wrapped's answer"
  grep -q '"app":"wrapped-peer".*"consistency":{"status":"fail"' peer-moved/peer/results.jsonl || fail "the moved answer passed"
  expect_exit 0 "$MAPP" report peer-moved/peer
  grep -q 'agreement with its mini-app' peer-moved/peer/report.md || fail "the report does not name the peer check"

  # A peer entry of another label names the mini-app entry whose answers it
  # is checked against (answer_of:); without it nothing of its setting ran
  # and it goes unchecked. A custom problem's size keeps the preset its
  # flags changed, so tiny and small with the same --points stay apart.
  printf 'name: other\nrepetitions: 1\ncheck: none\nruns:\n  - {app: wrapped, label: base, variants: [explicit], ranks: [1], sizes: [tiny, small], args: ["--points", "40"]}\n  - {app: wrapped-peer, label: other, answer_of: base, variants: [explicit], ranks: [1], sizes: [tiny, small], args: ["--points", "40"]}\n' >other.yaml
  expect_exit 0 "$MAPP" sweep other.yaml --out other
  [ "$(grep '"app":"wrapped-peer"' other/other/results.jsonl | grep -c '"consistency":{"status":"pass".*"peer_of":"wrapped"')" = 2 ] ||
    fail "answer_of: the peer was not checked against the base entry: $(grep '"app":"wrapped-peer"' other/other/results.jsonl | head -1)"
  for size in custom:tiny custom:small; do
    [ "$(grep -c "\"size\":\"$size\"" other/other/results.jsonl)" = 2 ] || fail "no two records of size $size"
  done
  expect_exit 0 "$MAPP" report other/other
  grep -q '| custom:tiny |' other/other/report.md && grep -q '| custom:small |' other/other/report.md ||
    fail "the report pools the custom problems of tiny and small: $(grep custom other/other/report.md)"
  sed 's/, answer_of: base//' other.yaml >unpaired.yaml
  expect_exit 0 "$MAPP" sweep unpaired.yaml --out unpaired
  grep -q '"app":"wrapped-peer".*"consistency":{"status":"unavailable"' unpaired/other/results.jsonl ||
    fail "a peer of another setting was checked without answer_of"
  sed 's/app: wrapped-peer, label: other, answer_of: base/app: wrapped, label: other, answer_of: base/' other.yaml >notpeer.yaml
  expect_one_error_line "$MAPP" sweep notpeer.yaml --out notpeer
  expect_exit 2 "$MAPP" sweep notpeer.yaml --out notpeer
  expect_output "answer_of 'base' on mapp-wrapped, which is no peer"

  # The comparison is real: a perturbed baseline fails the run.
  "$TOOL" perturb "$MAPP_BASELINE_DIR/wrapped/tiny.h5" u 3 1e-9 || fail "perturbing the baseline"
  expect_exit 1 "$MAPP" run wrapped --out run
  expect_output "FAIL"
  expect_exit 1 "$MAPP" check "$MAPP_BASELINE_DIR/wrapped/tiny.h5" run/wrapped-explicit-serial-tiny-strong-n1-t1.h5

  # An environment's app_path finds it as well (MAPP_APP_PATH unset).
  unset MAPP_APP_PATH
  sed "s|^gpus_per_node: 0|gpus_per_node: 0\napp_path: [$APPS/good]|" "$MAPP_SOURCE_DIR/envs/local.yaml" >env.yaml
  grep -q '^app_path:' env.yaml || fail "could not write env.yaml"
  expect_exit 0 "$MAPP" list --env env.yaml
  expect_output "from $APPS/good/mapp-wrapped"
  expect_exit 0 "$MAPP" bless wrapped --size tiny --env env.yaml --force --reason "contract.sh: restored"
  expect_exit 0 "$MAPP" run wrapped --env env.yaml --out run
  expect_output "pass"
}

# expect_refused DIR WHAT: the build in DIR is refused by contract, sweep
# and run, each with one line naming WHAT it broke.
expect_refused() {
  local dir=$1 what=$2
  expect_exit 1 "$MAPP" contract "$APPS/$dir/mapp-wrapped"
  expect_output "FAILED: $what"
  # every run (one a variant) breaks it the same way, and nothing else fails
  expect_output "mapp-wrapped breaks the mapp contract: 2 of"
  [ "$(grep -c 'FAILED' <<<"$OUT")" = "$(grep -c "FAILED: $what" <<<"$OUT")" ] \
    || fail "$dir: a check other than the broken field's failed: $OUT"
  one_spec one.yaml
  expect_exit 1 env MAPP_APP_PATH="$APPS/$dir" "$MAPP" sweep one.yaml --out "res-$dir"
  expect_output "FAIL (contract)"
  expect_output ": mapp-wrapped broke the mapp contract: $what (docs/contract.md)"
  grep -q '"outcome":"contract"' "res-$dir/one/results.jsonl" || fail "$dir: the record's outcome is not contract"
  grep -q '"contract":{"status":"fail","error":"' "res-$dir/one/results.jsonl" || fail "$dir: the record does not say what broke"
  expect_exit 0 "$MAPP" report "res-$dir/one"
  grep -q 'mapp contract' "res-$dir/one/report.md" || fail "$dir: the report does not name the contract"
  local err
  err=$(MAPP_APP_PATH="$APPS/$dir" "$MAPP" run wrapped --out "run-$dir" 2>&1 >/dev/null) && fail "$dir: run passed"
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "$dir: run printed more than one error line: $err"
  grep -qF "mapp run: error: mapp-wrapped broke the mapp contract: $what" <<<"$err" || fail "$dir: run said '$err'"
  echo "refused $dir: $err"
}

case_broken() {
  expect_refused bad-type "record field 'ranks' must be an integer, got a string (\"1\")"
  expect_refused no-field "record lacks required field 'fom'"
  # No --list: nothing can be run, so contract, sweep and run refuse it whole.
  expect_exit 1 "$MAPP" contract "$APPS/no-list/mapp-wrapped"
  expect_output "list                       FAILED: mapp-wrapped --list failed with exit code 2"
  one_spec one.yaml
  expect_exit 2 env MAPP_APP_PATH="$APPS/no-list" "$MAPP" sweep one.yaml --out res-no-list
  expect_output "mapp-wrapped --list failed with exit code 2 (mapp-wrapped: error: unknown option '--list'"
  expect_one_error_line env MAPP_APP_PATH="$APPS/no-list" "$MAPP" sweep one.yaml --out res-no-list
  expect_one_error_line env MAPP_APP_PATH="$APPS/no-list" "$MAPP" run wrapped
  echo "refused no-list: $(MAPP_APP_PATH="$APPS/no-list" "$MAPP" run wrapped 2>&1)"
  # Bad input to mapp contract itself.
  expect_exit 2 "$MAPP" contract no-such-program
  expect_one_error_line "$MAPP" contract ./no/such/file
}

case_apps() {
  local app validator=0
  python3 -c 'import jsonschema' 2>/dev/null && validator=1
  local apps=()
  for exe in "$MAPP_BIN_DIR"/mapp-*; do # the build's mini-apps, as mapp list finds them
    app=${exe##*/mapp-}
    [[ $app != *-* && -f $exe && -x $exe ]] && apps+=("$app")
  done
  [ ${#apps[@]} -gt 0 ] || fail "no mini-app in $MAPP_BIN_DIR"
  for app in "${apps[@]}"; do
    expect_exit 0 "$MAPP" contract "$app" --out "out-$app"
    expect_output "mapp-$app keeps the mapp contract"
    grep -q 'FAILED' <<<"$OUT" && fail "$app: $OUT"
    ls out-"$app"/*.json >/dev/null || fail "$app: no records kept"
    [ $validator = 1 ] || continue
    python3 - "$MAPP_SOURCE_DIR/docs/schema/record.schema.json" out-"$app"/*.json <<'PY' || fail "$app: jsonschema disagrees"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
for path in sys.argv[2:]:
    record = json.load(open(path))
    # the harness's own fields were added after validation; the app's are what the schema is of
    jsonschema.Draft202012Validator(schema).validate(record)
PY
  done
  [ $validator = 1 ] && echo "python jsonschema agrees on every record" || echo "python jsonschema not installed: cross-check skipped"
}

declare -F "case_$CASE" >/dev/null || fail "no case '$CASE'"
"case_$CASE"
echo "contract $CASE: ok"
