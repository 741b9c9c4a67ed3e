#!/bin/bash
# Seeing and choosing what a sweep runs: --dry-run prints the quick sweep's
# jobs and totals and writes nothing; --only/--exclude select jobs (sweep,
# submit) and records (report, plot, compare); --resume with --only runs the
# selected jobs still missing; a filter that selects nothing is exit 2
# naming it. A run with more ranks x threads than the environment's cores is
# recorded oversubscribed and drawn hollow.
. "$(dirname "$0")/lib.sh"
require_app heat
require_app stencil
require_app subgraph
require_app crm
require_app snapshots   # the quick spec names every app
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
QUICK=$MAPP_SOURCE_DIR/harness/sweeps/quick.yaml

# The whole quick sweep, seen and not run.
expect_exit 0 "$MAPP" sweep "$QUICK" --dry-run --out dry
expect_output "194 jobs (194 runnable here"
expect_output "dry run: nothing was run or written"
expect_output "   1  heat      mpi"
expect_output "heat|mpi|serial|n1|t1|tiny|weak|r0"
[ "$(grep -c '^ *[0-9]\+  ' <<<"$OUT")" = 194 ] || fail "the job table does not list 194 rows"
[ ! -e dry ] || fail "--dry-run wrote $(find dry | head -3)"
# Estimates come from earlier records of the same configuration: in the
# results folder, or in the history beside it once the folder is gone.
expect_exit 0 "$MAPP" sweep "$QUICK" --only app=heat --only ranks=1 --only variant=mpi --out est --history
# (heat mpi/serial on 1 rank is a headline configuration: repetitions: auto,
# whose first round is 6 runs)
expect_exit 0 "$MAPP" sweep "$QUICK" --dry-run --only app=heat --only ranks=1 --only variant=mpi --out est
expect_output "6 jobs (6 runnable here"
expect_output "estimated core-seconds:"
expect_output "for 6 jobs with earlier records; 0 jobs without an estimate"
rm -r est/quick
expect_exit 0 "$MAPP" sweep "$QUICK" --dry-run --only app=heat --only variant=mpi --out est
expect_output "for 6 jobs with earlier records; 4 jobs without an estimate"
# The history takes the same filters.
expect_exit 0 "$MAPP" history show --db est/history.sqlite --only app=heat --exclude ranks=2
expect_output "heat mpi/serial tiny weak n1 t1"
expect_exit 2 "$MAPP" history check --db est/history.sqlite --only ranks=9
expect_output "--only ranks=9 matches no configuration"
# A baseline that a required check would miss is shown before the run.
mkdir -p baselines/heat && cp "$MAPP_SOURCE_DIR"/baselines/heat/tiny.h5 baselines/heat/
expect_exit 0 env MAPP_BASELINE_DIR="$SCRATCH/baselines" "$MAPP" sweep "$QUICK" --dry-run --only app=heat --only variant=mpi
expect_output "tiny-weak2 MISSING"
expect_output "baselines: 6 exist, 4 missing (4 of them required: the run would fail)"

# Exactly the 4-rank eager stencil jobs run (three fields combined).
expect_exit 0 "$MAPP" sweep "$QUICK" --only app=stencil --only ranks=4 --only variant=eager --out sel
python3 - sel/quick/results.jsonl <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 8, len(recs)
assert all(r["app"] == "stencil" and r["ranks"] == 4 and r["variant"] == "eager" for r in recs), \
    [(r["app"], r["ranks"], r["variant"]) for r in recs]
PY

# --resume with --only: the selected jobs still missing, nothing else.
expect_exit 0 "$MAPP" sweep "$QUICK" --only app=subgraph --only ranks=2 --exclude backend=threads --out res
[ "$(count_lines res/quick/results.jsonl)" = 4 ] || fail "first subgraph selection ran $(count_lines res/quick/results.jsonl)"
expect_exit 0 "$MAPP" sweep "$QUICK" --only app=subgraph --only ranks=2 --resume --out res
expect_output "skip (done)"
python3 - res/quick/results.jsonl <<'PY'
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1])]
keys = collections.Counter(r["key"] for r in recs)
assert all(r["app"] == "subgraph" for r in recs)
assert len(recs) == 10 and all(r["ranks"] == 2 for r in recs), len(recs)
assert max(keys.values()) == 1, keys.most_common(2)
PY

# Records: report, plot and compare of a part.
expect_exit 0 "$MAPP" report sel/quick --only backend=omp
grep -q "^| eager | omp |" sel/quick/report.md || fail "report lacks the selected rows"
grep -q "^| eager | serial |" sel/quick/report.md && fail "report shows a row --only backend=omp drops"
expect_exit 0 "$MAPP" plot sel/quick --only variant=eager
expect_exit 0 "$MAPP" compare sel/quick sel/quick --only variant=eager
expect_output "0 slower"
[ "$(grep -c '^stencil' <<<"$OUT")" = 4 ] || fail "compare of eager should show 4 configurations"

# Filters that select nothing, or name no field, are input errors naming them.
expect_exit 2 "$MAPP" sweep "$QUICK" --only app=nope --out none
expect_output "--only app=nope matches no job"
[ ! -e none ] || fail "a refused sweep wrote its folder"
expect_exit 2 "$MAPP" sweep "$QUICK" --only app=heat --only ranks=8 --dry-run
expect_output "--only ranks=8 matches no job"
expect_exit 2 "$MAPP" sweep "$QUICK" --only app=heat --exclude app=heat --dry-run
expect_output "select no job of 194"
expect_exit 2 "$MAPP" sweep "$QUICK" --only colour=red --dry-run
expect_output "no job has a field 'colour'"
expect_exit 2 "$MAPP" sweep "$QUICK" --only app --dry-run
expect_one_error_line "$MAPP" sweep "$QUICK" --only app=nope
expect_exit 2 "$MAPP" report sel/quick --only app=heat
expect_output "--only app=heat matches no record"
expect_exit 2 "$MAPP" submit "$QUICK" --env "$MAPP_SOURCE_DIR/envs/slurm-example.yaml" --dry-run --only app=nope
expect_output "--only app=nope matches no job"
expect_exit 0 "$MAPP" submit "$QUICK" --env "$MAPP_SOURCE_DIR/envs/slurm-example.yaml" --dry-run --only app=heat --only ranks=4
expect_output "8 jobs"
expect_output "dry run: 4 batch scripts"

# Oversubscribed: 4 ranks on an environment of 2 cores, hollow in every figure.
sed 's/^cores_per_node: .*/cores_per_node: 2/' "$MAPP_SOURCE_DIR/envs/local.yaml" >two-cores.yaml
expect_exit 0 "$MAPP" sweep "$QUICK" --env two-cores.yaml --only app=heat --only variant=mpi --exclude scaling=strong --out over
python3 - over/quick/results.jsonl <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
for r in recs:
    assert r["oversubscribed"] == (r["ranks"] > 2), (r["ranks"], r["oversubscribed"])
    assert r["placement"]["cores_per_node"] == 2
PY
expect_exit 0 "$MAPP" report over/quick
# (heat mpi/serial on 1 rank repeats until precise: 6 to 8 runs)
grep -qE "^\| oversubscribed runs \| 2 of (10|11|12) " over/quick/report.md || fail "report machine table lacks the oversubscribed runs"
data=over/quick/plots/heat-weak-efficiency.dat
awk '$1 == 4 && $5 != 1 { exit 1 } $1 == 1 && $5 != 0 { exit 1 }' "$data" || fail "$data does not mark the 4-rank point"
grep -q "title 'oversubscribed'" over/quick/plots/heat-weak-efficiency.gp || fail "no hollow layer in the script"
grep -q "hollow: oversubscribed" over/quick/plots/heat-fom.gp || fail "no footnote in the FOM figure"
[ "$(png_size over/quick/plots/heat-weak-efficiency.png)" != "" ] || fail "no PNG"
# Not oversubscribed, no hollow layer.
sed 's/^cores_per_node: .*/cores_per_node: 8/' "$MAPP_SOURCE_DIR/envs/local.yaml" >eight-cores.yaml
expect_exit 0 "$MAPP" sweep "$QUICK" --env eight-cores.yaml --only app=heat --only variant=mpi --exclude scaling=strong --out fits
expect_exit 0 "$MAPP" plot fits/quick
grep -q "title 'oversubscribed'" fits/quick/plots/heat-weak-efficiency.gp && fail "hollow layer without an oversubscribed point"
echo "select: ok"
