#!/bin/bash
# A sweep end to end: records, plots of the right size, the
# report, and --resume rerunning only what is missing.
. "$(dirname "$0")/lib.sh"
require_app heat
SPEC="$(dirname "$0")/../data/sweep-heat.yaml"
R=results/heat-quick

expect_exit 0 "$MAPP" sweep "$SPEC" --out results
expect_output "[1/6] heat mpi/serial n=1 t=1 tiny ... ok"
expect_output "[6/6] heat mpi/serial n=4 t=1 tiny ... ok"
expect_output "6 ran (6 ok, 0 failed)"
[ "$(count_lines $R/results.jsonl)" = 6 ] || fail "expected 6 records"
grep -q '"sweep":"heat-quick"' $R/results.jsonl || fail "records lack the sweep field"
grep -q '"repetition":1' $R/results.jsonl || fail "records lack repetition 1"
grep -q '"baseline":{"status":"' $R/results.jsonl || fail "records lack the baseline status"
grep -q '"launch":"mpirun -np 4 ' $R/results.jsonl || fail "records lack the launch command"
cmp -s "$SPEC" $R/spec.yaml || fail "spec.yaml not copied"

expect_exit 0 "$MAPP" plot $R
for fig in weak-efficiency speedup fom; do
  for ext in png svg; do
    f=$R/plots/heat-$fig.$ext
    [ -s "$f" ] || fail "$f missing or empty"
  done
  [ "$(png_size $R/plots/heat-$fig.png)" = 900x600 ] || fail "heat-$fig.png is $(png_size $R/plots/heat-$fig.png)"
  grep -q '<svg' $R/plots/heat-$fig.svg || fail "heat-$fig.svg is not SVG"
done
expect_output "$R/plots/heat-weak-efficiency.png"
# the efficiency data: three rank counts, 1.0 at one rank
grep -Eq '^1 1 ' $R/plots/heat-weak-efficiency.dat || fail "efficiency at 1 rank is not 1"
[ "$(grep -Ec '^[124] ' $R/plots/heat-weak-efficiency.dat)" = 3 ] || fail "efficiency lacks rank counts"

expect_exit 0 "$MAPP" report $R
grep -q '^## heat' $R/report.md || fail "report has no heat section"
grep -q '](plots/heat-weak-efficiency.png)' $R/report.md || fail "report does not link the efficiency plot"
grep -Eq '^\| mpi \| serial \| 4 \| 1 \| tiny \| weak \| [0-9.e+]+ \|' $R/report.md || fail "report lacks the n=4 row"
[ "$(count_lines $R/results.csv)" = 7 ] || fail "results.csv should have a header and 6 rows"
head -1 $R/results.csv | grep -q '^sweep,app,variant,backend' || fail "results.csv header"
grep -q '^Speedup reference: mpi/serial\.' $R/report.md || fail "report does not name heat's speedup reference"
grep -q "title 'heat: speedup over mpi/serial" $R/plots/heat-speedup.gp || fail "speedup title lacks the reference"
# a list of references: each app takes the first its results contain (heat has no percrm)
expect_exit 0 "$MAPP" report $R --reference percrm/serial,mpi/serial
grep -q '^Speedup reference: mpi/serial\.' $R/report.md || fail "heat did not fall through to mpi/serial"
grep -q 'speedup vs mpi/serial' $R/report.md || fail "the speedup column does not name its reference"
expect_exit 2 "$MAPP" plot $R --reference mpi
expect_output "--reference must be VARIANT/BACKEND[,VARIANT/BACKEND...]"

# resume: drop the last record, only that job runs again
sed -i '$d' $R/results.jsonl
expect_exit 0 "$MAPP" sweep "$SPEC" --out results --resume
expect_output "1 ran (1 ok, 0 failed)"
expect_output "5 already done"
expect_output "[6/6] heat mpi/serial n=4 t=1 tiny ... ok"
[ "$(count_lines $R/results.jsonl)" = 6 ] || fail "resume did not restore 6 records"
expect_exit 0 "$MAPP" sweep "$SPEC" --out results --resume
expect_output "0 ran"
# a fresh sweep keeps the earlier records aside instead of mixing them
expect_exit 0 "$MAPP" sweep "$SPEC" --out results
expect_output "earlier results moved to"
ls $R/results-*.jsonl >/dev/null || fail "earlier results not kept"
echo "sweep: ok"
