#!/bin/bash
# Summaries for CI (--format markdown on report, compare and history check),
# from synthetic records (no app runs):
# - compare names a planted 10 % regression with the interval the table
#   gives it, and names none once the regression is gone;
# - report (html_fixture.py's folder and history: a failed run, a planted
#   10 % step) gives the totals, the headline, the step with its interval
#   and verdict, the failed run and a link to report.html, and no step once
#   the history has none; it is appended to $GITHUB_STEP_SUMMARY, after
#   what was there, and only with --format markdown;
# - history check names the step (exit 1) and the inconclusive series;
# - every summary stays under 60,000 characters for 2,000 records
#   (summary_fixture.py), its cut line counting what was left out;
# - an unknown --format is one line and exit 2.
TESTS=$(cd "$(dirname "$0")" && pwd)
. "$TESTS/lib.sh"
TEMPLATE=${1:?usage: summary.sh history-template.json}
unset MAPP_HISTORY GITHUB_STEP_SUMMARY
LIMIT=60000

under_limit() { # FILE: fewer than LIMIT characters
  local n
  n=$(wc -c <"$1")
  [ "$n" -lt $LIMIT ] || fail "$1 is $n characters, not under $LIMIT"
}

# cut_count FILE: "LEFT OF" from the summary's cut line
cut_count() {
  sed -nE 's/^\*\*Cut to stay under 60,000 characters:\*\* ([0-9]+) table rows? \(of ([0-9]+)\).*/\1 \2/p' "$1"
}

# ---- compare: a planted regression, and none
fom_records old.jsonl 1e8 1 '"timing":{"timed_s":0.02},'
fom_records slower.jsonl 9e7 2 '"timing":{"timed_s":0.02},'
fom_records noise.jsonl 1e8 3 '"timing":{"timed_s":0.02},'
expect_exit 1 "$MAPP" compare old.jsonl slower.jsonl
interval=$(sed -nE 's/^heat .* ([0-9.]+) \[ *([0-9.]+), +([0-9.]+)\] .* SLOWER$/\1 [\2, \3]/p' <<<"$OUT")
[ -n "$interval" ] || { echo "$OUT"; fail "the table names no SLOWER heat configuration"; }
expect_exit 1 "$MAPP" compare old.jsonl slower.jsonl --format markdown
printf '%s\n' "$OUT" >compare.md
expect_output "## mapp compare: slower.jsonl against old.jsonl"
grep -qF "| **SLOWER** | heat mpi/serial tiny strong n2 t1 | unknown | ${interval%% *} | ${interval#* } |" compare.md ||
  { cat compare.md; fail "the summary does not name the regression with its interval $interval"; }
grep -q '^| [*]*SLOWER[*]* | crm' compare.md && fail "the unchanged crm configuration is called slower"
grep -q '^| 2 | \*\*1\*\* | 0 | 1 | 0 |' compare.md || { cat compare.md; fail "the totals are not 2 compared, 1 SLOWER, 1 same"; }
expect_output "No HTML report of NEW yet"
expect_exit 0 "$MAPP" compare old.jsonl noise.jsonl --format markdown --report-url https://ci.example.org/r.html
grep -q "SLOWER\*\* |" <<<"$OUT" && { echo "$OUT"; fail "a comparison without a regression names one"; }
expect_output "None: no configuration is slower or faster beyond the threshold."
expect_output "Full report: [https://ci.example.org/r.html](https://ci.example.org/r.html)"

# ---- report: html_fixture.py's folder and its history
R=res/html-demo
python3 "$TESTS/html_fixture.py" "$TEMPLATE" .
expect_exit 0 "$MAPP" history add history.jsonl --db res/history.sqlite
expect_exit 0 "$MAPP" report $R --format markdown
printf '%s\n' "$OUT" >report-summary.md
under_limit report-summary.md
[ -s $R/report.html ] || fail "report --format markdown wrote no report.html"
for want in "## mapp report: html-demo" "| 18 | 6 | **1** | 0 |" "### What each technique buys here" \
            "| heat | tasks over MPI-only |" "### Across commits" \
            "| heat tasks/omp tiny weak n4 t1 | 2 | verification |" "Full report: [report.html]($R/report.html)"; do
  grep -qF -- "$want" report-summary.md || { cat report-summary.md; fail "the report's summary lacks '$want'"; }
done
grep -qE '^\| \*\*SLOWER\*\* \| heat mpi/serial tiny weak n1 t1 @vm \| `[0-9a-f]+` \| -1[0-9.]+ % \| \[-[0-9.]+, -[0-9.]+\] % \| .* \| too-short \|$' \
  report-summary.md || { cat report-summary.md; fail "the report's summary does not name the planted step with its interval and verdict"; }
# the text format prints the paths, as before
expect_exit 0 "$MAPP" report $R
expect_output "$R/report.html"
grep -q "## mapp report" <<<"$OUT" && fail "report without --format markdown printed the summary"

# GITHUB_STEP_SUMMARY: appended after what an earlier step wrote, each time; not with the text format
printf 'an earlier step\n' >step.md
GITHUB_STEP_SUMMARY=$PWD/step.md expect_exit 0 "$MAPP" report $R --format markdown
GITHUB_STEP_SUMMARY=$PWD/step.md expect_exit 0 "$MAPP" report $R --format markdown
GITHUB_STEP_SUMMARY=$PWD/step.md expect_exit 0 "$MAPP" report $R
[ "$(head -1 step.md)" = "an earlier step" ] || fail "GITHUB_STEP_SUMMARY's earlier content was overwritten"
[ "$(grep -c '^## mapp report: html-demo$' step.md)" = 2 ] || { cat step.md; fail "GITHUB_STEP_SUMMARY has not the summary twice"; }
grep -qF "Full report: [report.html]($R/report.html)" step.md || fail "GITHUB_STEP_SUMMARY lacks the link line"
GITHUB_STEP_SUMMARY=$PWD/no/such/folder/step.md expect_one_error_line "$MAPP" report $R --format markdown

# the history without its step: nothing slower
python3 - <<'EOF'
import json
with open("history.jsonl") as f, open("flat.jsonl", "w") as out:
    for line in f:
        r = json.loads(line)
        if r["ranks"] == 1 and int(r["git_revision"][:6], 16) - 0x100000 >= 6:
            r["fom"]["value"] /= 0.9
        out.write(json.dumps(r) + "\n")
EOF
mv res/history.sqlite history-step.sqlite
expect_exit 0 "$MAPP" history add flat.jsonl --db res/history.sqlite
expect_exit 0 "$MAPP" report $R --format markdown
expect_output ": 0 with a step the data support as 5 % slower or more"
grep -q 'SLOWER\*\* |' <<<"$OUT" && { echo "$OUT"; fail "the report's summary names a step the history does not have"; }
expect_exit 0 "$MAPP" history check --db res/history.sqlite --format markdown
grep -q 'SLOWER\*\* |' <<<"$OUT" && { echo "$OUT"; fail "history check's summary names a step the history does not have"; }

# ---- history check: the step, and the series too short to judge
expect_exit 1 "$MAPP" history check --db history-step.sqlite --format markdown --report-url https://ci.example.org/site/
printf '%s\n' "$OUT" >check.md
grep -qE '^\| \*\*SLOWER\*\* \| heat mpi/serial tiny weak n1 t1 @vm \| `[0-9a-f]+` \| -1[0-9.]+ % \| \[-[0-9.]+, -[0-9.]+\] % \|' check.md ||
  { cat check.md; fail "history check's summary does not name the step with its interval"; }
grep -q '^| 3 | \*\*1\*\* | 2 | 0 |' check.md || { cat check.md; fail "history check's totals are not 3 checked, 1 SLOWER, 2 inconclusive"; }
grep -qF "| heat mpi/serial tiny weak n2 t1 @vm | 6 revisions, too few" check.md || fail "the inconclusive series are not listed"
expect_output "History site: [https://ci.example.org/site/](https://ci.example.org/site/)"

# ---- 2,000 records: under the limit, the cut line counting what was left out
python3 "$TESTS/summary_fixture.py" "$TEMPLATE" . 2000
expect_exit 0 "$MAPP" report big --format markdown
printf '%s\n' "$OUT" >big.md
under_limit big.md
read -r left of <<<"$(cut_count big.md)"
[ "$of" = 2001 ] || { tail -3 big.md; fail "the cut line does not count 2001 rows (totals, 1000 failed runs, 1000 unchecked)"; }
shown=$(grep -cE '^\| (heat mpi/serial .* \| verification \||`heat\|)' big.md)
[ $((shown + left + 1)) = "$of" ] || fail "$shown rows shown and $left left out do not add up to $of"
grep -qF "Full report: [report.html](big/report.html)" big.md || fail "the cut summary lost its link line"
expect_exit 1 "$MAPP" compare old new --format markdown
printf '%s\n' "$OUT" >big-compare.md
under_limit big-compare.md
read -r left of <<<"$(cut_count big-compare.md)"
shown=$(grep -c '^| \*\*SLOWER\*\* |' big-compare.md)
[ "$of" = 401 ] && [ $((shown + left)) = 400 ] || { tail -3 big-compare.md; fail "$shown SLOWER rows shown and $left left out are not the 400"; }

# ---- bad input
expect_one_error_line "$MAPP" report $R --format html
expect_one_error_line "$MAPP" compare old.jsonl slower.jsonl --format nope
expect_one_error_line "$MAPP" history check --db history-step.sqlite --format ''
expect_one_error_line "$MAPP" report $R --format markdown --report-url "https://x/$(printf '%03000d' 0)"
echo "summary: ok"
