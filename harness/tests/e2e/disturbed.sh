#!/bin/bash
# A run whose core a CPU hog shares is judged `disturbed`; the same run
# alone is not. A run whose own helper thread (heat tasks with --poller
# thread, its request poller) shares its one core is judged
# `oversubscribed` where the environment says it has one core (it asked
# two: 1 rank x (1 thread + 1 poller)), and
# `disturbed` where the environment claims two, which is what tells the two
# verdicts apart. Both pin the sweep (mpirun and its rank inherit the
# affinity) to one CPU; the hog spins on that CPU for the whole second run.
# The verdict is the report's, from the records' disturbance (run delay:
# the rank waited for its CPU about half the time).
. "$(dirname "$0")/lib.sh"
require_app heat
command -v taskset >/dev/null || { echo "taskset is not installed: skipping"; exit 77; }
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')

cat >spec.yaml <<YAML
name: pinned
repetitions: 1
min_time: 0.3
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1]
    sizes: [small]
YAML
verdict_of() { # the verdict column of the report's one heat row
  "$MAPP" report "out/$1" >/dev/null
  awk -F'|' '/^\| mpi +\| serial/ {split($10, w, " "); print w[1]}' "out/$1/report.md"
}

taskset -c "$cpu" "$MAPP" sweep spec.yaml --out out >/dev/null
mv out/pinned out/alone
alone=$(verdict_of alone)

taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null || true; rm -rf "$SCRATCH"' EXIT
sleep 0.2
taskset -c "$cpu" "$MAPP" sweep spec.yaml --out out >/dev/null
kill $hog
mv out/pinned out/shared
shared=$(verdict_of shared)

delay() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['disturbance']['run_delay_fraction'])" "out/$1/results.jsonl"; }
echo "alone: $alone (run delay $(delay alone)); sharing its CPU with a hog: $shared (run delay $(delay shared))"
[ "$shared" = disturbed ] || fail "a run sharing its CPU with a hog is judged '$shared', not disturbed"
[ -n "$alone" ] && [ "$alone" != disturbed ] || fail "the run alone is judged '$alone'"

# heat tasks: 1 compute thread + its poller thread on one CPU
cat >own.yaml <<YAML
name: own
repetitions: 1
min_time: 0.3
runs:
  - app: heat
    variants: [tasks]
    backends: [omp]
    threads: [1]
    ranks: [1]
    sizes: [small]
    args: ["--poller", "thread"]
YAML
own_verdict() { # cores the environment claims -> the report's verdict of the tasks row
  sed "s/^cores_per_node: auto.*/cores_per_node: $1/; s/^name: local/name: cores$1/" "$MAPP_SOURCE_DIR/envs/local.yaml" >"cores$1.yaml"
  taskset -c "$cpu" "$MAPP" sweep own.yaml --env "cores$1.yaml" --out out >/dev/null
  mv out/own "out/own$1"
  "$MAPP" report "out/own$1" >/dev/null
  awk -F'|' '/^\| tasks [[]--poller thread[]] +\| omp/ {split($10, w, " "); print w[1]}' "out/own$1/report.md"
}
one=$(own_verdict 1)
two=$(own_verdict 2)
over() { python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r['oversubscribed'], r['placement']['cores_asked'], r['disturbance']['run_delay_fraction'])" "out/own$1/results.jsonl"; }
echo "tasks with its poller on one CPU: '$one' on one core (oversubscribed, cores asked, run delay: $(over 1)), '$two' on a claimed two ($(over 2))"
[ "$one" = oversubscribed ] || fail "a run oversubscribing its one core with its own poller is judged '$one', not oversubscribed"
[ "$two" = disturbed ] || fail "the same run where the environment claims two cores is judged '$two', not disturbed"
