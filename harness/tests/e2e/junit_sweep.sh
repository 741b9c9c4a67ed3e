#!/bin/bash
# The JUnit file of (a part of) the quick sweep: valid against the schema CI
# servers read, one test case per configuration, and exactly one failure
# for the one configuration whose baseline was deleted (heat's animation
# entry, the only user of small-steps200.h5). An unwritable --junit path is
# refused before anything runs.
. "$(dirname "$0")/lib.sh"
require_app heat
command -v xmllint >/dev/null || { echo "xmllint not found (Debian libxml2-utils): skipping"; exit 77; }
XSD=$MAPP_SOURCE_DIR/harness/tests/data/junit/junit.xsd
QUICK=$MAPP_SOURCE_DIR/harness/sweeps/quick.yaml

expect_one_error_line "$MAPP" sweep "$QUICK" --only app=heat --junit /nonexistent-dir/junit.xml
[ ! -d results ] || fail "a sweep with an unwritable --junit path ran"

mkdir base && cp -r "$MAPP_SOURCE_DIR/baselines/heat" base/
rm base/heat/small-steps200.h5
MAPP_BASELINE_DIR=$PWD/base expect_exit 1 "$MAPP" sweep "$QUICK" --only app=heat --only ranks=2 --junit junit.xml
expect_output "junit: junit.xml"
xmllint --noout --schema "$XSD" junit.xml || fail "junit.xml does not validate against $XSD"

configurations=$(python3 -c "
import json,re,sys
keys={re.sub(r'\|r[0-9]+(\||$)', r'\1', json.loads(l)['key']) for l in open(sys.argv[1])}
print(len(keys))" results/quick/results.jsonl)
cases=$(grep -c '<testcase ' junit.xml)
[ "$cases" = "$configurations" ] || fail "$cases test cases for $configurations configurations"
[ "$(grep -c '<failure ' junit.xml)" = 1 ] || fail "not exactly one failure: $(grep -c '<failure ' junit.xml)"
grep -q '<failure type="missing-baseline" message="[^"]*small-steps200.h5' junit.xml || fail "the failure does not name the deleted baseline"
grep -q '/fom" value=' junit.xml || fail "no figure of merit among the properties"
grep -q '/verdict" value="\(stable\|noisy\|too-short\|disturbed\|oversubscribed\)"' junit.xml || fail "no verdict among the properties"
echo "ok: $cases test cases for $configurations configurations, 1 failure (the deleted baseline), valid"
