#!/bin/bash
# matrix: and figures: end to end: every combination is a job whose record
# carries its params; the figures a spec asks for are drawn (PNG, SVG, and
# PDF with its footer); the default speedup reference is the app's first
# variant; the spec's tables are in the report and as CSV; a figure whose x
# no record has is bad input.
. "$(dirname "$0")/lib.sh"
require_app heat
SPEC="$(dirname "$0")/../data/sweep-matrix.yaml"
R=results/matrix

expect_exit 0 "$MAPP" sweep "$SPEC" --out results
expect_output "8 ran (8 ok, 0 failed)"
expect_output "[blocks block-rows=32 block-cols=16]"
[ "$(count_lines $R/results.jsonl)" = 8 ] || fail "expected 8 records (2 combinations x 2 variants x 2 repetitions)"
grep -q '"params":{"block-rows":32,"block-cols":16}' $R/results.jsonl || fail "records lack params"
grep -q '"reference":"mpi/serial"' $R/results.jsonl || fail "records lack the app's default reference"
grep -q '"label":"blocks"' $R/results.jsonl || fail "records lack the label"

expect_exit 0 "$MAPP" plot $R --format png,svg,pdf
for fig in fom-by-block speedup-by-block wall-by-size; do
  for ext in png svg pdf; do [ -s "$R/plots/heat-$fig.$ext" ] || fail "heat-$fig.$ext missing or empty"; done
done
[ "$(png_size $R/plots/heat-fom-by-block.png)" = 900x600 ] || fail "heat-fom-by-block.png is not 900x600"
grep -q 'set logscale x 10' $R/plots/heat-fom-by-block.gp || fail "logx was not applied"
grep -q "set xtics ('tiny' 0)" $R/plots/heat-wall-by-size.gp || fail "the size axis is not categorical"
grep -q "set label 999 'mapp | env local" $R/plots/heat-fom-by-block.gp || fail "the PDF has no footer"
# two series (mpi/serial/blocks, forkjoin/omp/blocks) of two points each
[ "$(grep -c '^"' $R/plots/heat-fom-by-block.dat)" = 2 ] || fail "expected 2 series"
grep -q '^"forkjoin/omp/blocks"' $R/plots/heat-fom-by-block.dat || fail "series label"
# speedup: the reference series is 1.0 at every block size
awk '/^"mpi\/serial"/ {on = 1; next} on && NF == 4 {if ($2 != 1) bad = 1} /^$/ {on = 0} END {exit bad}' \
  $R/plots/heat-speedup-by-block.dat || fail "the reference's speedup is not 1"
grep -q "speedup over mpi/serial" $R/plots/heat-speedup-by-block.gp || fail "the speedup names no reference"

# a report of two folders combined: both folders' records, PDF figures,
# and the table of failed runs naming the run whose verification failed
mkdir -p other && sed '1s/"status":"pass"/"status":"fail"/' $R/results.jsonl >other/results.jsonl
expect_exit 0 "$MAPP" report $R other --out combined
[ "$(count_lines combined/results.jsonl)" = 16 ] || fail "the combined report lacks records"
grep -q '"source":"other"' combined/results.jsonl || fail "combined records do not say their folder"
[ -s combined/plots/heat-fom.pdf ] || fail "the report drew no PDF"
grep -q '^## Failed runs' combined/report.md || fail "no table of failed runs"
grep -Eq '^\| heat \| mpi/serial .*\| verification \| `.*\.log` \|$' combined/report.md || {
  cat combined/report.md; fail "the failed run is not listed with its log"; }
expect_one_error_line "$MAPP" report $R other
grep -q 'None: every run exited 0' $R/report.md 2>/dev/null || { expect_exit 0 "$MAPP" report $R; }
grep -q 'None: every run exited 0' $R/report.md || fail "a clean folder's report lists failures"

# plots: tables: in the app's section after its main table and before its
# figures, medians with min-max over the two repetitions, and as CSV
md=$R/report.md
grep -qx '### heat by block height' $md || { cat $md; fail "the report lacks the spec's table"; }
grep -qx '| variant | backend | block-rows | ranks | fom.value | wall_s |' $md || fail "table header"
[ "$(grep -cE '^\| (mpi \| serial|forkjoin \| omp) \| (8|32) \| 1 \| [0-9.e+]+ \([0-9.e+]+–[0-9.e+]+\) \| [0-9.e+-]+ \([0-9.e+-]+–[0-9.e+-]+\) \|$' $md)" = 4 ] \
  || { cat $md; fail "expected 4 table rows of median (min–max)"; }
table_line=$(grep -nx '### heat by block height' $md | cut -d: -f1)
main_line=$(grep -n '^| variant | backend | ranks |' $md | head -1 | cut -d: -f1)
figure_line=$(grep -n '^!\[heat' $md | head -1 | cut -d: -f1)
[ "$main_line" -lt "$table_line" ] && [ "$table_line" -lt "$figure_line" ] || fail "the table is not between the main table and the figures"
grep -qx '!\[heat: fom-by-block\](plots/heat-fom-by-block.png)' $md || fail "the report does not show the spec's figure"
grep -q 'No records match (app `heat`, exit code 0, where `variant` = `nope` or `none`)' $md || fail "an empty table has no note"
csv=$R/plots/heat-by-block.csv
[ "$(head -1 $csv)" = "variant,backend,block-rows,ranks,fom.value,fom.value_min,fom.value_max,wall_s,wall_s_min,wall_s_max,runs" ] \
  || fail "CSV header: $(head -1 $csv)"
[ "$(count_lines $csv)" = 5 ] && [ "$(tail -n +2 $csv | cut -d, -f11 | sort -u)" = 2 ] || { cat $csv; fail "CSV rows"; }

# a figure of an x no record has
sed 's/x: size/x: width/' "$SPEC" >bad.yaml
cp bad.yaml $R/spec.yaml
expect_exit 2 "$MAPP" plot $R
expect_output "figure 'wall-by-size': no heat record has x 'width'"
echo "matrix: ok"
