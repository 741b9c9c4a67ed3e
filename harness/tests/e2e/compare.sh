#!/bin/bash
# mapp compare on synthetic results: a 10 % slowdown over 10 repetitions
# exits 1 naming the configuration; noise of the same spread exits 0; a
# configuration on one side only is listed; the same slowdown across two
# systems is an A/B of them, named, never a regression; bad input exits 2.
. "$(dirname "$0")/lib.sh"

fom_records old.jsonl 1e8 1
fom_records slower.jsonl 9e7 2
fom_records noise.jsonl 1e8 3
expect_exit 1 "$MAPP" compare old.jsonl slower.jsonl
expect_output "SLOWER"
grep -E "^heat +mpi .* SLOWER" <<<"$OUT" >/dev/null || { echo "$OUT"; fail "the heat configuration is not the one flagged"; }
grep -E "^crm +batched .* same" <<<"$OUT" >/dev/null || { echo "$OUT"; fail "the unchanged crm configuration is not 'same'"; }
expect_output "1 slower"
# --junit: a case per configuration, the SLOWER one a "slowdown" failure; valid
if command -v xmllint >/dev/null; then
  expect_exit 1 "$MAPP" compare old.jsonl slower.jsonl --junit compare.xml
  xmllint --noout --schema "$MAPP_SOURCE_DIR/harness/tests/data/junit/junit.xsd" compare.xml || fail "compare.xml is not valid JUnit"
  [ "$(grep -c '<testcase ' compare.xml)" = 2 ] || fail "compare.xml has not 2 test cases"
  [ "$(grep -c '<failure type="slowdown"' compare.xml)" = 1 ] || fail "compare.xml has not 1 slowdown"
  grep -A1 'classname="mapp.compare.heat.mpi.serial"' compare.xml | grep -q '<failure type="slowdown"' ||
    fail "the heat case is not the failure"
  expect_exit 2 "$MAPP" compare old.jsonl slower.jsonl --junit /nonexistent-dir/compare.xml
fi

expect_exit 0 "$MAPP" compare old.jsonl noise.jsonl
expect_output "0 slower"

# figures that cannot carry an answer: the same 10 % slowdown with every
# record's timed phase 0.4 ms (too-short), or with a run delay of 50 % in
# every record (disturbed), is inconclusive, naming the detectable change;
# a 20 ms timed phase keeps it SLOWER
with_record() { # IN OUT JSON-FIELDS: the heat records of IN with FIELDS added
  sed -n "/\"app\":\"heat\"/s|}\$|,$3}|p" "$1" >"$2"
}
with_record old.jsonl old-short.jsonl '"timing":{"timed_s":0.0004}'
with_record slower.jsonl slower-short.jsonl '"timing":{"timed_s":0.0004}'
expect_exit 0 "$MAPP" compare old-short.jsonl slower-short.jsonl
grep -E "^heat +mpi .* too-short +inconclusive" <<<"$OUT" >/dev/null ||
  { echo "$OUT"; fail "a too-short slowdown is not inconclusive"; }
grep -E "^heat +mpi .* \+-[0-9.]+ %" <<<"$OUT" >/dev/null || { echo "$OUT"; fail "no detectable change is named"; }
with_record old.jsonl old-long.jsonl '"timing":{"timed_s":0.02}'
with_record slower.jsonl slower-long.jsonl '"timing":{"timed_s":0.02}'
expect_exit 1 "$MAPP" compare old-long.jsonl slower-long.jsonl
grep -E "^heat +mpi .* SLOWER" <<<"$OUT" >/dev/null || { echo "$OUT"; fail "a 20 ms slowdown is not SLOWER"; }
with_record slower.jsonl slower-disturbed.jsonl '"timing":{"timed_s":0.02},"disturbance":{"run_delay_fraction":0.5}'
expect_exit 0 "$MAPP" compare old-long.jsonl slower-disturbed.jsonl
grep -E "^heat +mpi .* stable/disturbed +inconclusive" <<<"$OUT" >/dev/null ||
  { echo "$OUT"; fail "a disturbed slowdown is not inconclusive"; }

# a results folder works as well as a file; a configuration on one side only is listed
mkdir -p folder && grep heat noise.jsonl >folder/results.jsonl
expect_exit 0 "$MAPP" compare old.jsonl folder
expect_output "only in OLD"

# two systems: the same 10 % slowdown measured on system b against system a
# is an A/B of the systems (both named), exit 0; on one system it is SLOWER
with_system() { sed "s|}\$|,\"system\":\"$2\"}|" "$1"; } # FILE SYSTEM: its records on SYSTEM
with_system old.jsonl a >old-a.jsonl
with_system slower.jsonl b >slower-b.jsonl
with_system slower.jsonl a >slower-a.jsonl
expect_exit 0 "$MAPP" compare old-a.jsonl slower-b.jsonl
expect_output "OLD and NEW come from different systems (OLD: a; NEW: b)"
grep -E "^heat +mpi .* a vs b .* A/B: b slower$" <<<"$OUT" >/dev/null || { echo "$OUT"; fail "the A/B row does not name a and b"; }
grep -q "SLOWER" <<<"$OUT" && { echo "$OUT"; fail "an A/B of systems was called a regression"; }
expect_output "0 slower"
expect_output "2 compared across systems, an A/B of machines and never a regression: 1 slower"
if command -v xmllint >/dev/null; then
  expect_exit 0 "$MAPP" compare old-a.jsonl slower-b.jsonl --junit ab.xml
  xmllint --noout --schema "$MAPP_SOURCE_DIR/harness/tests/data/junit/junit.xsd" ab.xml || fail "ab.xml is not valid JUnit"
  grep -q '<failure' ab.xml && fail "ab.xml has a failure for an A/B of systems"
  grep -q 'answer" value="A/B: b slower"' ab.xml || fail "ab.xml does not give the A/B answer"
fi
expect_exit 1 "$MAPP" compare old-a.jsonl slower-a.jsonl
grep -E "^heat +mpi .* a .* SLOWER$" <<<"$OUT" >/dev/null || { echo "$OUT"; fail "a slowdown on one system is not SLOWER"; }
grep -q "different systems" <<<"$OUT" && { echo "$OUT"; fail "one system taken for two"; }

# check --perf: the same judgement against an environment's stored references
sed "s|^name: local|name: refs|" "$MAPP_SOURCE_DIR/envs/local.yaml" >refs.yaml
echo "perf_references: $PWD/old.jsonl" >>refs.yaml
expect_exit 1 "$MAPP" check --perf slower.jsonl --env refs.yaml
expect_output "performance of slower.jsonl against $PWD/old.jsonl (refs)"
expect_output "SLOWER"
expect_exit 0 "$MAPP" check --perf noise.jsonl --env refs.yaml
expect_exit 0 "$MAPP" check --perf slower.jsonl --env refs.yaml --threshold 0.2
expect_one_error_line "$MAPP" check --perf slower.jsonl   # envs/local.yaml names no references

expect_one_error_line "$MAPP" compare old.jsonl
expect_one_error_line "$MAPP" compare old.jsonl missing.jsonl
expect_one_error_line "$MAPP" compare old.jsonl noise.jsonl --threshold 2
echo "compare: ok"
