#!/bin/bash
# A sweep on a simulated cluster (envs/sim-fattree.yaml: SimGrid SMPI over a
# 1,024-node fat tree) from the normal build's harness: the apps' --list
# goes through the launcher, heat runs to 64 simulated ranks with answers
# checked, records say "simulated": true with the platform and the real
# seconds, their series are a setting of their own, figures draw them
# dashed, and the report calls them predictions. Bad input: more ranks than the platform's hosts, a
# platform without simulated: true. crm with --sampled-ranks: its weak
# reference is the sampled ranks' problem. Skips (77) without the simgrid
# build.
. "$(dirname "$0")/lib.sh"
SIM_BIN=$MAPP_SOURCE_DIR/build-sim/bin
[ -x "$SIM_BIN/mapp-heat" ] || { echo "no simulated build ($SIM_BIN/mapp-heat; cmake --preset simgrid): skipping"; exit 77; }
command -v smpirun >/dev/null || { echo "smpirun not found (libsimgrid-dev): skipping"; exit 77; }
ENV=$MAPP_SOURCE_DIR/envs/sim-fattree.yaml

cat >sim.yaml <<'YAML'
name: sim
check: optional
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1, 4, 16, 64]
    sizes: [tiny]
    scaling: weak
YAML
expect_exit 0 "$MAPP" sweep sim.yaml --env "$ENV" --out res
expect_output "heat mpi/serial n=64 t=1 tiny [simulated:sim-fattree] ... ok"
python3 - res/sim/results.jsonl <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["ranks"] for r in recs] == [1, 4, 16, 64], [r["ranks"] for r in recs]
for r in recs:
    assert r["simulated"] is True, r.get("simulated")
    assert r["simulation"]["platform"] == "envs/platforms/fattree-edr-1024.xml", r["simulation"]
    assert r["simulation"]["real_s"] > 0 and r["setting"] == "simulated:sim-fattree", (r["simulation"], r["setting"])
    assert r["key"].endswith("|simulated:sim-fattree"), r["key"]
    assert r["oversubscribed"] is False, "a simulated rank has a node of its own"
# the 4-rank answer was checked against its baseline (tiny-weak4)
assert recs[1]["baseline"]["status"] == "pass", recs[1]["baseline"]
PY
expect_exit 0 "$MAPP" report res/sim
grep -q "^| predictions | 4 of 4 runs simulated by SimGrid SMPI on envs/platforms/fattree-edr-1024.xml" res/sim/report.md ||
  fail "the report does not call the simulated runs predictions"
grep -q "^| mpi \[simulated:sim-fattree\] | serial | 64 |" res/sim/report.md || fail "no simulated series in the heat table"
# Figures draw a simulated series dashed, with a note saying it is a prediction.
script=res/sim/plots/heat-weak-efficiency.gp
[ -f "$script" ] || fail "no weak-efficiency script ($script)"
grep -q '^array DASH\[1\] = \[2\]$' "$script" || fail "the simulated series is not dashed in $script"
grep -q 'dt DASH\[i+1\]' "$script" || fail "$script draws no series with its dash type"
grep -q "dashed: simulated (SimGrid SMPI): a prediction" "$script" || fail "$script lacks the note on dashed series"
[ -s res/sim/plots/heat-weak-efficiency.svg ] || [ -s res/sim/plots/heat-weak-efficiency.png ] || fail "no weak-efficiency figure drawn"

# crm with --sampled-ranks 2 on 16 simulated ranks: its record says the
# answer holds 2 ranks' weak problem (answer_ranks), and the sweep's weak
# reference solves that problem on 1 rank (--weak-ranks 2, not 16) and
# finds it bit for bit; a reference of the wrong rank count would not.
cat >sampled.yaml <<'YAML'
name: sampled
weak_reference: true
runs:
  - app: crm
    variants: [batched]
    backends: [serial]
    ranks: [16]
    sizes: [tiny]
    scaling: weak
    args: ["--cycle-group", "task", "--sampled-ranks", "2"]
YAML
expect_exit 0 "$MAPP" sweep sampled.yaml --env "$ENV" --out res
python3 - res/sampled/results.jsonl <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][-1]
assert r["answer_ranks"] == 2 and r["case"] == "tiny-weak2", (r.get("answer_ranks"), r["case"])
c = r["consistency"]
assert c["status"] == "pass" and c["reference"]["weak_ranks"] == 2, c
PY

# Bad input: one line, exit 2.
expect_one_error_line "$MAPP" run heat -n 2048 --env "$ENV"
sed 's/^simulated: true$/simulated: false/' "$ENV" >not-simulated.yaml
expect_one_error_line "$MAPP" run heat --env not-simulated.yaml
sed 's/^simulated: true$/simulated: maybe/' "$ENV" >maybe.yaml
expect_one_error_line "$MAPP" run heat --env maybe.yaml
echo "simulated: ok"
