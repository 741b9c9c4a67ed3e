#!/bin/bash
# mapp's JUnit XML against the schema Jenkins and GitLab read (junit/junit.xsd):
# the documents test_junit writes (every outcome, hostile text, a real log;
# a suite without cases) validate, and copies with a planted defect do not,
# each for the reason planted, so the check has teeth.
# usage: junit.sh TEST_JUNIT_BINARY
. "$(dirname "$0")/lib.sh"

command -v xmllint >/dev/null || { echo "xmllint not found (apt-get install libxml2-utils): skipping"; exit 77; }
XSD="$MAPP_SOURCE_DIR/harness/tests/data/junit/junit.xsd"
"$1" "$SCRATCH" || fail "test_junit could not write the sample documents"

expect_exit 0 xmllint --noout --schema "$XSD" sample.xml
expect_output "sample.xml validates"
expect_exit 0 xmllint --noout --xpath 'count(//testcase)' sample.xml
[ "$OUT" = 5 ] || fail "sample.xml has $OUT test cases, expected 5"
grep -q 'tests="5" failures="2" errors="1" skipped="1"' sample.xml || fail "sample.xml's counts are wrong"

# reject NAME PATTERN CORRUPTION: the copy made by sed CORRUPTION fails to
# validate, and xmllint says why (PATTERN).
reject() {
  sed -e "$3" sample.xml >"$1.xml"
  cmp -s sample.xml "$1.xml" && fail "the planted defect '$1' changed nothing"
  expect_exit 3 xmllint --noout --schema "$XSD" "$1.xml"
  expect_output "$2"
  expect_output "$1.xml fails to validate"
}
# a test case without its name (only the first <testcase> line is edited)
reject no-name "Element 'testcase': The attribute 'name' is required but missing" \
  '0,/<testcase /{/<testcase /s/ name="[^"]*"//}'
# a failure without its type
reject no-type "Element 'failure': The attribute 'type' is required but missing" \
  '0,/<failure /{/<failure /s/ type="[^"]*"//}'
# a time that is not a decimal, a count that is not a number
reject bad-time "attribute 'time': '1e-3' is not a valid value" 's/time="0.250"/time="1e-3"/'
reject bad-count "attribute 'tests': 'five' is not a valid value" 's/tests="5"/tests="five"/'
# the properties block missing (the schema requires it, even empty)
reject no-properties "Expected is ( properties )" '/<properties>/,/<\/properties>/d'
# two outcomes in one case
reject two-outcomes "Element 'error': This element is not expected" \
  '0,/<\/failure>/{/<\/failure>/s/<\/failure>/<\/failure><error type="x"\/>/}'
# the text is no longer escaped: not even well-formed
sed -e 's/&lt;b&gt;/<b>/' sample.xml >unescaped.xml
expect_exit 1 xmllint --noout --schema "$XSD" unescaped.xml
expect_output "parser error"
# a suite without cases is valid too
expect_exit 0 xmllint --noout --schema "$XSD" empty.xml
echo "junit.sh: sample.xml and empty.xml validate; 7 planted defects are rejected"
