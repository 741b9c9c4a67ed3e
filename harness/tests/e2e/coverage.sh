#!/bin/bash
# Answer coverage of a sweep: under check: required a missing baseline fails
# the sweep (exit 1) naming the file and the `mapp bless` command that makes
# it, and that command makes it; check: optional lets it pass as unchecked;
# n-rank answers of a strong-scaling job are compared bit for bit with the
# same sweep's 1-rank answer, and a perturbed one fails the sweep; with
# weak_reference: true a weak answer is compared with its problem solved on
# 1 rank (--weak-ranks), a perturbed one fails, a reference that cannot run
# leaves it unchecked; the
# report opens with the coverage of each app.
# usage: coverage.sh MAPP_H5_TOOL
. "$(dirname "$0")/lib.sh"
TOOL=$1
require_app heat
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Baselines the test may delete and bless: a copy of heat's.
mkdir -p baselines/heat
cp "$MAPP_SOURCE_DIR"/baselines/heat/tiny.h5 "$MAPP_SOURCE_DIR"/baselines/heat/tiny-weak2.h5 baselines/heat/
export MAPP_BASELINE_DIR=$SCRATCH/baselines

# coverage_spec FILE CHECK: heat weak on 1 and 2 ranks, and strong on 1 and 2.
coverage_spec() {
  cat >"$1" <<YAML
name: coverage
repetitions: 1
check: $2
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1, 2]
    sizes: [tiny]
    scaling: weak
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1, 2]
    sizes: [tiny]
    scaling: strong
YAML
}
coverage_spec required.yaml required
coverage_spec optional.yaml optional
coverage_spec none.yaml none

# Every answer checked: 4 configurations against baselines, 2 for
# consistency (the 2-rank strong answer compared with the 1-rank one checks both).
expect_exit 0 "$MAPP" sweep required.yaml --out out
expect_exit 0 "$MAPP" report out/coverage
grep -qF "| heat | 4 | 4 | 2 | 0 |" out/coverage/report.md || { cat out/coverage/report.md; fail "coverage row"; }
# The report opens with what each technique buys (when both of a technique's
# configurations ran), then the coverage.
first_sections=$(grep -m2 '^## ' out/coverage/report.md | tr '\n' '|')
case "$first_sections" in
"## Coverage|"* | "## What each technique buys here|## Coverage|") ;;
*) fail "the report does not open with its coverage (first sections: $first_sections)" ;;
esac
python3 - out/coverage/results.jsonl <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
strong = {r["ranks"]: r for r in recs if r["scaling"] == "strong"}
assert strong[1]["consistency"]["status"] == "reference", strong[1]["consistency"]
assert strong[2]["consistency"]["status"] == "pass", strong[2]["consistency"]
assert strong[2]["consistency"]["file"].endswith("heat-mpi-serial-tiny-strong-n1-t1-r0.h5")
assert strong[2]["consistency"]["reference_key"] == strong[1]["key"], strong[2]["consistency"]
assert all("consistency" not in r for r in recs if r["scaling"] == "weak"), "weak runs take no part"
assert all(r["check"] == "required" for r in recs)
PY
ls out/coverage/runs/*.h5 >/dev/null 2>&1 && fail "answers of passing runs were kept (the 1-rank reference too)"

# A required baseline deleted: the sweep fails, naming the file and the command.
rm baselines/heat/tiny-weak2.h5
expect_exit 1 "$MAPP" sweep required.yaml --out out
expect_output "FAIL (no baseline)"
expect_output "$SCRATCH/baselines/heat/tiny-weak2.h5 is missing (check: required); make it with: mapp bless heat --size tiny --scaling weak -n 2 --variant mpi --backend serial --threads 1 --case tiny-weak2"
expect_output "1 failed"
bless_command=$(grep -o 'make it with: mapp bless .*' <<<"$OUT" | sed 's/^make it with: //')
expect_exit 0 "$MAPP" report out/coverage
grep -qF "## Baselines to bless" out/coverage/report.md || fail "the report does not list the baseline to bless"
grep -qF "$bless_command" out/coverage/report.md || fail "the report lacks the bless command"
grep -qF "no baseline (required)" out/coverage/report.md || fail "the failed-runs table does not say what failed"

# Optional: the same sweep passes and the configuration is counted unchecked.
expect_exit 0 "$MAPP" sweep optional.yaml --out out
expect_exit 0 "$MAPP" report out/coverage
grep -qF "| heat | 4 | 3 | 2 | **1** |" out/coverage/report.md || { cat out/coverage/report.md; fail "unchecked count"; }
grep -qF 'Unchecked: `heat|mpi|serial|n2|t1|tiny|weak`' out/coverage/report.md || fail "unchecked configuration not named"

# The printed command makes the baseline, and the required sweep passes again.
expect_exit 0 bash -c "cd '$SCRATCH' && PATH='$MAPP_BIN_DIR':\$PATH $bless_command"
[ -f baselines/heat/tiny-weak2.h5 ] || fail "the bless command did not write the baseline"
expect_exit 0 "$MAPP" sweep required.yaml --out out

# A 2-rank answer perturbed by 1e-13 fails the consistency check (the
# wrapper perturbs what the real app wrote, on rank 0, after it ends); with
# check: none no baseline would catch it.
mkdir bin
ln -s "$MAPP_BIN_DIR/mapp" bin/mapp
cat >bin/mapp-heat <<SH
#!/bin/bash
"$MAPP_BIN_DIR/mapp-heat" "\$@" || exit \$?
output=""
while [ \$# -gt 0 ]; do [ "\$1" = --output ] && output=\$2; shift; done
if [ -n "\$output" ] && [ "\${OMPI_COMM_WORLD_SIZE:-1}" -gt 1 ] && [ "\${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then
  "$TOOL" perturb "\$output" temperature 7 1e-13
fi
SH
chmod +x bin/mapp-heat
expect_exit 1 env MAPP_BIN_DIR="$SCRATCH/bin" "$SCRATCH/bin/mapp" sweep none.yaml --out perturbed
expect_output "heat mpi/serial n=2 t=1 tiny strong ... FAIL (consistency)"
expect_output "differs from the 1-rank answer"
expect_output "4 ran (3 ok, 1 failed)"
python3 - perturbed/coverage/results.jsonl <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
bad = [r for r in recs if r["scaling"] == "strong" and r["ranks"] == 2][0]
assert bad["consistency"]["status"] == "fail", bad["consistency"]
assert bad["consistency"]["fields"][0]["violations"] == 1, bad["consistency"]
assert bad["output"], "a failed run keeps its answer"
assert all(r["baseline"]["status"] == "none" for r in recs), "check: none compares no baseline"
import os
assert os.path.exists(bad["consistency"]["file"]), "the 1-rank answer a failure names is kept"
PY
# The same perturbed answers pass without the app's rank invariance to check:
# the sweep's consistency is what caught them.

# weak_reference: a weak answer on 2 and 3 ranks, with no baseline to check
# it (check: none), is compared with its problem solved on 1 rank
# (--weak-ranks N, launched by the harness); the wrapper's perturbed
# 2-rank answer fails it, the real one passes and counts as checked.
cat >weak.yaml <<YAML
name: weak
repetitions: 1
check: none
weak_reference: true
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [2, 3]
    sizes: [tiny]
    scaling: weak
YAML
expect_exit 0 "$MAPP" sweep weak.yaml --out weak
expect_exit 0 "$MAPP" report weak/weak
grep -qF "| heat | 2 | 0 | 2 | 0 |" weak/weak/report.md || { cat weak/weak/report.md; fail "weak coverage row"; }
python3 - weak/weak/results.jsonl <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
for r in recs:
    c = r["consistency"]
    assert c["status"] == "pass", c
    assert c["reference"]["ranks"] == 1 and c["reference"]["weak_ranks"] == r["ranks"], c
    assert c["file"].endswith("-n%d-t1-r0.weakref.h5" % r["ranks"]), c
PY
ls weak/weak/runs/*weakref* >/dev/null 2>&1 && fail "the passing references' files were kept"
expect_exit 1 env MAPP_BIN_DIR="$SCRATCH/bin" "$SCRATCH/bin/mapp" sweep weak.yaml --out weak-perturbed
expect_output "heat mpi/serial n=2 t=1 tiny ... FAIL (consistency)"
expect_output "heat mpi/serial n=3 t=1 tiny ... FAIL (consistency)"
expect_output "differs from the 1-rank answer weak-perturbed/weak/runs/heat-mpi-serial-tiny-weak-n2-t1-r0.weakref.h5"
[ -f weak-perturbed/weak/runs/heat-mpi-serial-tiny-weak-n2-t1-r0.weakref.h5 ] || fail "the reference a failure names was removed"
# A reference that cannot run leaves the answer unchecked, and says why.
cat >bin/mapp-heat <<SH
#!/bin/bash
case " \$* " in *" --weak-ranks "*) echo "mapp-heat: error: planted refusal" >&2; exit 2 ;; esac
exec "$MAPP_BIN_DIR/mapp-heat" "\$@"
SH
expect_exit 0 env MAPP_BIN_DIR="$SCRATCH/bin" "$SCRATCH/bin/mapp" sweep weak.yaml --out weak-refused
expect_output "no consistency check: the 1-rank reference (--weak-ranks 2) failed: FAIL (exit 2)"
expect_exit 0 "$MAPP" report weak-refused/weak
grep -qF "| heat | 2 | 0 | 0 | **2** |" weak-refused/weak/report.md || { cat weak-refused/weak/report.md; fail "refused references leave the answers unchecked"; }
sed 's/^weak_reference: true/weak_reference: yes/' weak.yaml >bad-weak.yaml
expect_exit 2 "$MAPP" sweep bad-weak.yaml --out out
expect_output "'weak_reference' must be true or false, got 'yes'"

# A spec's check: must be one of three words.
sed 's/^check: required/check: maybe/' required.yaml >bad.yaml
expect_exit 2 "$MAPP" sweep bad.yaml --out out
expect_output "'check' must be required, optional or none, got 'maybe'"
expect_one_error_line "$MAPP" sweep bad.yaml --out out
echo "coverage: ok"
