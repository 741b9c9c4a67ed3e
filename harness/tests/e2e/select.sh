#!/bin/bash
# Seeing and choosing what a sweep runs: --dry-run prints the quick sweep's
# jobs and totals and writes nothing; --only/--exclude select jobs (sweep,
# submit) and records (report, plot, compare); --resume with --only runs the
# selected jobs still missing; a filter that selects nothing is exit 2
# naming it. A run with more ranks x threads than the environment's cores is
# recorded oversubscribed and drawn hollow.
#
# Cost: every mapp call asks each app of the spec for its variants
# (mapp-APP --list, an MPI start-up of about 0.4 s each), so a call that runs
# nothing still takes about 2 s. The checks that run nothing and depend on
# no sweep of this test start together first (they mostly wait; each keeps
# its own output) and are judged one by one; one heat sweep gives the
# estimates, the history and the figures drawn without an oversubscribed
# point.
. "$(dirname "$0")/lib.sh"
require_app heat
require_app stencil
require_app subgraph
require_app crm
require_app snapshots   # the quick spec names every app
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
QUICK=$MAPP_SOURCE_DIR/harness/sweeps/quick.yaml

# bg NAME CMD...: starts CMD in the background, its stdout and stderr in
# NAME.out (as expect_exit keeps them). bg_stderr NAME CMD...: the same with
# stderr alone in NAME.out (as expect_one_error_line reads it).
# expect_bg NAME CODE: waits for NAME, keeps its output in $OUT, checks the
# exit code. expect_bg_one_error_line NAME: waits for NAME, which must have
# failed with exactly one line, an 'error:' one, on stderr.
declare -A BG_PID BG_CMD
bg() { local name=$1; shift; BG_CMD[$name]="$*"; "$@" >"bg-$name.out" 2>&1 & BG_PID[$name]=$!; }
bg_stderr() { local name=$1; shift; BG_CMD[$name]="$*"; "$@" 2>"bg-$name.out" >/dev/null & BG_PID[$name]=$!; }
expect_bg() {
  local name=$1 want=$2 got=0
  wait "${BG_PID[$name]}" || got=$?
  OUT=$(cat "bg-$name.out")
  if [ "$got" != "$want" ]; then
    printf '%s\n' "$OUT" >&2
    fail "'${BG_CMD[$name]}' exited $got, expected $want"
  fi
}
expect_bg_one_error_line() {
  local name=$1 got=0 err
  wait "${BG_PID[$name]}" || got=$?
  err=$(cat "bg-$name.out")
  [ "$got" != 0 ] || fail "'${BG_CMD[$name]}' succeeded"
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { printf '%s\n' "$err" >&2; fail "'${BG_CMD[$name]}' printed more than one error line"; }
  grep -q 'error:' <<<"$err" || fail "'${BG_CMD[$name]}': no 'error:' in '$err'"
}

mkdir -p baselines/heat && cp "$MAPP_SOURCE_DIR"/baselines/heat/tiny.h5 baselines/heat/
bg dry "$MAPP" sweep "$QUICK" --dry-run --out dry
bg missing env MAPP_BASELINE_DIR="$SCRATCH/baselines" "$MAPP" sweep "$QUICK" --dry-run --only app=heat --only variant=mpi
bg nope "$MAPP" sweep "$QUICK" --only app=nope --out none
bg_stderr nope_line "$MAPP" sweep "$QUICK" --only app=nope
bg ranks8 "$MAPP" sweep "$QUICK" --only app=heat --only ranks=8 --dry-run
bg none_left "$MAPP" sweep "$QUICK" --only app=heat --exclude app=heat --dry-run
bg colour "$MAPP" sweep "$QUICK" --only colour=red --dry-run
bg no_value "$MAPP" sweep "$QUICK" --only app --dry-run
bg submit_nope "$MAPP" submit "$QUICK" --env "$MAPP_SOURCE_DIR/envs/slurm-example.yaml" --dry-run --only app=nope
bg submit_heat "$MAPP" submit "$QUICK" --env "$MAPP_SOURCE_DIR/envs/slurm-example.yaml" --dry-run --only app=heat --only ranks=4

# The whole quick sweep, seen and not run.
expect_bg dry 0
expect_output "198 jobs (198 runnable here"
expect_output "dry run: nothing was run or written"
expect_output "   1  heat      mpi"
expect_output "heat|mpi|serial|n1|t1|tiny|weak|r0"
[ "$(grep -c '^ *[0-9]\+  ' <<<"$OUT")" = 198 ] || fail "the job table does not list 198 rows"
[ ! -e dry ] || fail "--dry-run wrote $(find dry | head -3)"
# A baseline that a required check would miss is shown before the run.
expect_bg missing 0
expect_output "tiny-weak2 MISSING"
expect_output "baselines: 2 exist, 10 missing (10 of them required: the run would fail)"

# Filters that select nothing, or name no field, are input errors naming them.
expect_bg nope 2
expect_output "--only app=nope matches no job"
[ ! -e none ] || fail "a refused sweep wrote its folder"
expect_bg ranks8 2
expect_output "--only ranks=8 matches no job"
expect_bg none_left 2
expect_output "select no job of 198"
expect_bg colour 2
expect_output "no job has a field 'colour'"
expect_bg no_value 2
expect_bg_one_error_line nope_line
expect_bg submit_nope 2
expect_output "--only app=nope matches no job"
expect_bg submit_heat 0
expect_output "8 jobs"
expect_output "dry run: 4 batch scripts"

# Estimates come from earlier records of the same configuration: in the
# results folder, or in the history beside it once the folder is gone. The
# sweep that makes them (heat mpi/serial, weak, on 1, 2 and 4 ranks) runs on
# an environment of 8 cores: none of its runs is oversubscribed, and its
# figures have no hollow layer (checked below).
sed 's/^cores_per_node: .*/cores_per_node: 8/' "$MAPP_SOURCE_DIR/envs/local.yaml" >eight-cores.yaml
expect_exit 0 "$MAPP" sweep "$QUICK" --env eight-cores.yaml --only app=heat --only variant=mpi --exclude scaling=strong --out est --history
# (heat mpi/serial on 1 rank: tiny, weak, 2 repetitions)
expect_exit 0 "$MAPP" sweep "$QUICK" --dry-run --only app=heat --only ranks=1 --only variant=mpi --out est
expect_output "2 jobs (2 runnable here"
expect_output "estimated core-seconds:"
expect_output "for 2 jobs with earlier records; 0 jobs without an estimate"
# Not oversubscribed, no hollow layer.
python3 - est/quick/results.jsonl <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert {r["ranks"] for r in recs} == {1, 2, 4}, sorted({r["ranks"] for r in recs})
assert not any(r["oversubscribed"] for r in recs), [(r["ranks"], r["oversubscribed"]) for r in recs]
PY
expect_exit 0 "$MAPP" plot est/quick
[ -f est/quick/plots/heat-weak-efficiency.gp ] || fail "no weak-efficiency script"
grep -q "title 'oversubscribed'" est/quick/plots/heat-weak-efficiency.gp && fail "hollow layer without an oversubscribed point"
rm -r est/quick
# From the history: heat mpi's 6 weak jobs (1, 2 and 4 ranks: 2 each) have
# records; its 6 headline jobs (2 ranks, strong, blocks64: repetitions auto)
# and forkjoin's 6 have none.
expect_exit 0 "$MAPP" sweep "$QUICK" --dry-run --only app=heat --only variant=mpi --only variant=forkjoin --out est
expect_output "for 6 jobs with earlier records; 12 jobs without an estimate"
# The history takes the same filters.
expect_exit 0 "$MAPP" history show --db est/history.sqlite --only app=heat --exclude ranks=2
expect_output "heat mpi/serial tiny weak n1 t1"
! grep -qF "tiny weak n2 t1" <<<"$OUT" || { printf '%s\n' "$OUT" >&2; fail "history show --exclude ranks=2 shows the 2-rank configuration"; }
expect_exit 2 "$MAPP" history check --db est/history.sqlite --only ranks=9
expect_output "--only ranks=9 matches no configuration"

# Exactly the 4-rank eager stencil jobs run (three fields combined).
expect_exit 0 "$MAPP" sweep "$QUICK" --only app=stencil --only ranks=4 --only variant=eager --out sel
python3 - sel/quick/results.jsonl <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 8, len(recs)
assert all(r["app"] == "stencil" and r["ranks"] == 4 and r["variant"] == "eager" for r in recs), \
    [(r["app"], r["ranks"], r["variant"]) for r in recs]
PY

# --resume with --only: the selected jobs still missing, nothing else (of
# subgraph's subgraph variant on 2 ranks: serial weak, then threads weak and
# strong, 2 repetitions each).
expect_exit 0 "$MAPP" sweep "$QUICK" --only app=subgraph --only variant=subgraph --only ranks=2 --exclude backend=threads --out res
[ "$(count_lines res/quick/results.jsonl)" = 2 ] || fail "first subgraph selection ran $(count_lines res/quick/results.jsonl)"
expect_exit 0 "$MAPP" sweep "$QUICK" --only app=subgraph --only variant=subgraph --only ranks=2 --resume --out res
expect_output "skip (done)"
python3 - res/quick/results.jsonl <<'PY'
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1])]
keys = collections.Counter(r["key"] for r in recs)
assert all(r["app"] == "subgraph" and r["variant"] == "subgraph" for r in recs)
assert len(recs) == 6 and all(r["ranks"] == 2 for r in recs), len(recs)
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
expect_exit 2 "$MAPP" report sel/quick --only app=heat
expect_output "--only app=heat matches no record"

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
# (heat mpi/serial weak: 2 runs each on 1, 2 and 4 ranks)
grep -qE "^\| oversubscribed runs \| 2 of 6 " over/quick/report.md || fail "report machine table lacks the oversubscribed runs"
data=over/quick/plots/heat-weak-efficiency.dat
awk '$1 == 4 && $5 != 1 { exit 1 } $1 == 1 && $5 != 0 { exit 1 }' "$data" || fail "$data does not mark the 4-rank point"
grep -q "title 'oversubscribed'" over/quick/plots/heat-weak-efficiency.gp || fail "no hollow layer in the script"
grep -q "hollow: oversubscribed" over/quick/plots/heat-fom.gp || fail "no footnote in the FOM figure"
[ "$(png_size over/quick/plots/heat-weak-efficiency.png)" != "" ] || fail "no PNG"
echo "select: ok"
