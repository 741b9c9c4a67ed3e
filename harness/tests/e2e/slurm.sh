#!/bin/bash
# mapp submit and collect against a real Slurm: ci/slurm/start.sh brings up
# a private cluster (munged, slurmctld, two emulated nodes n1 and n2 of one
# CPU each), `mapp submit --env envs/slurm-local.yaml` sends heat and crm jobs
# of 1 and 2 ranks (the 2-rank ones span both nodes, started by srun through
# PMIx), and collect must record every run with its verification and baseline
# passed; a second sweep whose jobs fail (bad flag, wrong answer) and a job
# cancelled before it ran must be reported as failed. The cluster is stopped on exit, whatever happened.
# Skips (77) where Slurm or munge is not installed, or not as root; once they
# are, every failure is a failure.
. "$(dirname "$0")/lib.sh"
require_app heat
require_app crm
H5TOOL=${1:?usage: slurm.sh MAPP_H5_TOOL}
for tool in slurmctld slurmd munged sbatch squeue sinfo scontrol srun unshare flock; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install slurm-wlm munge): skipping"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "a private Slurm cluster needs root (slurmd): skipping"; exit 77; }

CI="$MAPP_SOURCE_DIR/ci/slurm"
# A folder and ports of its own, apart from a cluster started by hand with
# the defaults; fixed (not under $SCRATCH) so that start.sh ends what a run
# killed by ctest's timeout left behind.
export MAPP_SLURM_DIR=/tmp/mapp-slurm-ctest MAPP_SLURM_PORT=16917 MAPP_SLURM_NODE_PORT=17101
export SLURM_CONF=$MAPP_SLURM_DIR/slurm.conf
ENV_FILE="$MAPP_SOURCE_DIR/envs/slurm-local.yaml"
# One at a time on this machine: RUN_SERIAL orders one ctest, not ctests of
# several build folders, and they would share the folder and ports. The
# daemons must not inherit the lock (start.sh runs with fd 9 closed).
have_lock=false
exec 9>/tmp/mapp-slurm-ctest.lock
flock -w 120 9 || fail "another harness.slurm has held /tmp/mapp-slurm-ctest.lock for 120 s"
have_lock=true
WAIT_S=40   # for all jobs of one submission to end

on_exit() {
  local rc=$?
  set +e
  if ! $have_lock; then  # the cluster is another run's
    rm -rf "$SCRATCH"
    exit "$rc"
  fi
  if [ "$rc" != 0 ] && [ -d "$MAPP_SLURM_DIR" ]; then
    echo "---- slurm.sh failed (exit $rc): the cluster's view" >&2
    squeue -t all 2>&1 | head -20 >&2
    for f in "$SCRATCH"/results/*/jobs/*.out "$SCRATCH"/results/*/runs/*.log "$MAPP_SLURM_DIR/slurmctld.log" \
             "$MAPP_SLURM_DIR"/n*/slurmd.log; do
      [ -s "$f" ] && { echo "---- tail $f" >&2; tail -n 12 "$f" >&2; }
    done
  fi
  "$CI/stop.sh" --quiet
  rm -rf "$SCRATCH"
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# submitted_ids RESULTS: the job ids in RESULTS/jobs.json, comma-separated.
submitted_ids() { grep -o '"job_id": "[0-9]*"' "$1/jobs.json" | grep -o '[0-9]\+' | paste -sd, -; }

# wait_jobs IDS: until Slurm reports every job of IDS ended (bounded).
wait_jobs() {
  local deadline=$((SECONDS + WAIT_S)) states
  while :; do
    states=$(squeue -h -t all -j "$1" -o '%i %T') || fail "squeue -j $1 failed"
    grep -qvE ' (COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$' \
      <<<"$states" || return 0
    [ $SECONDS -lt $deadline ] || fail "jobs still not ended after ${WAIT_S}s: $(tr '\n' ';' <<<"$states")"
    sleep 0.25
  done
}

t0=$SECONDS
expect_exit 0 "$CI/start.sh" 9>&-
expect_output "slurm up: 2 node(s) idle"

# ---- a sweep that must pass: heat at 1 and 2 ranks, crm at 2 (two nodes each)
cat >ok.yaml <<'YAML'
name: slurm-ok
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1, 2]
    sizes: [tiny]
    scaling: weak
  - app: crm
    variants: [batched]
    backends: [serial]
    ranks: [2]
    sizes: [tiny]
    scaling: weak
YAML
R=results/slurm-ok
expect_exit 0 "$MAPP" submit ok.yaml --env "$ENV_FILE" --out results
expect_output "3 batch scripts for slurm-ok"
grep -q '^#SBATCH --partition=debug$' $R/jobs/crm-batched-serial-tiny-weak-n2-t1.sbatch || fail "no partition directive"
grep -q '^#SBATCH --nodes=2$' $R/jobs/crm-batched-serial-tiny-weak-n2-t1.sbatch || fail "2 ranks of 1 core should take 2 nodes"
ids=$(submitted_ids $R)
[ "$(tr ',' '\n' <<<"$ids" | wc -l)" = 3 ] || fail "expected 3 job ids in jobs.json, got '$ids'"
wait_jobs "$ids"
states=$(squeue -h -t all -j "$ids" -o '%T %D %N')
[ "$(grep -c '^COMPLETED ' <<<"$states")" = 3 ] || fail "Slurm says: $(tr '\n' ';' <<<"$states")"
[ "$(grep -c '^COMPLETED 2 n\[1-2\]$' <<<"$states")" = 2 ] || fail "the 2-rank jobs did not span n1 and n2: $states"

expect_exit 0 "$MAPP" collect $R
expect_output "collected 3 records (0 failed), 0 still pending"
[ "$(count_lines $R/results.jsonl)" = 3 ] || fail "expected 3 records"
for key in '"verification":{"status":"pass"' '"baseline":{"status":"pass"' '"exit_code":0,' '"launch":"srun -n [12] --mpi=pmix '; do
  [ "$(grep -c "$key" $R/results.jsonl)" = 3 ] || { cat $R/results.jsonl >&2; fail "not every record has $key"; }
done
for stem in heat-mpi-serial-tiny-weak-n1-t1 heat-mpi-serial-tiny-weak-n2-t1 crm-batched-serial-tiny-weak-n2-t1; do
  [ -f $R/runs/$stem-r0.json ] || fail "no record file for $stem"
done
# the ranks ran on the emulated nodes (their own host names), not on this host
grep -q '"host":"n[12]"' $R/results.jsonl || fail "records do not name an emulated node as host"
expect_exit 0 "$MAPP" collect $R
expect_output "collected 0 records (0 failed), 0 still pending, 3 collected before"
expect_exit 0 "$MAPP" report $R
grep -q '^## heat' $R/report.md || fail "report has no heat section"
grep -q '^## crm' $R/report.md || fail "report has no crm section"
grep -Eq '^\| batched \| serial \| 2 \| 1 \| tiny \| weak \| [0-9.e+]+ \|.*\| pass \| pass \| 1 \|$' $R/report.md ||
  fail "report lacks the crm row with verify and baseline pass"

# ---- a results path with a space: #SBATCH --output= is quoted, so sbatch
# keeps the path whole (unquoted, it cut it at the space and the job failed)
heat_spec spaced.yaml slurm-spaced 1
S="spaced results/slurm-spaced"
expect_exit 0 "$MAPP" submit spaced.yaml --env "$ENV_FILE" --out "spaced results"
wait_jobs "$(submitted_ids "$S")"
[ -f "$S/jobs/heat-mpi-serial-tiny-strong-n1-t1.out" ] || fail "the job's output is not at the quoted path: $(ls -R "spaced results")"
expect_exit 0 "$MAPP" collect "$S"
expect_output "collected 1 record (0 failed)"

# ---- a sweep that must fail: bad flags (the app exits 2), in two entries of
# one configuration set apart by args and by a label, and 2 ranks collected
# against a baseline one element of which is perturbed
cat >bad.yaml <<'YAML'
name: slurm-bad
runs:
  - app: heat
    variants: [mpi]
    ranks: [1]
    sizes: [tiny]
    scaling: weak
    args: ["--no-such-flag"]
  - app: heat           # the same configuration, set apart by its label
    label: bogus
    variants: [mpi]
    ranks: [1]
    sizes: [tiny]
    scaling: weak
    args: ["--bogus"]
  - app: heat
    variants: [mpi]
    ranks: [2]
    sizes: [tiny]
    scaling: weak
YAML
mkdir baselines
cp -r "$MAPP_SOURCE_DIR/baselines/heat" baselines/
"$H5TOOL" perturb baselines/heat/tiny-weak2.h5 temperature 500 1e-6 >/dev/null
B=results/slurm-bad
expect_exit 0 "$MAPP" submit bad.yaml --env "$ENV_FILE" --out results
wait_jobs "$(submitted_ids $B)"
expect_exit 1 env MAPP_BASELINE_DIR="$SCRATCH/baselines" "$MAPP" collect $B
expect_output "collected 3 records (3 failed), 0 still pending"
[ "$(grep -c '"ranks":1,.*"exit_code":2,' $B/results.jsonl)" = 2 ] ||
  { cat $B/results.jsonl >&2; fail "the bad flags' exit code 2 was not recorded"; }
grep -q '"setting":"bogus",.*"exit_code":2,' $B/results.jsonl || fail "the labelled entry's record lacks its setting"
[ -f $B/jobs/heat-mpi-serial-tiny-weak-n1-t1-bogus.sbatch ] || fail "the labelled entry has no script of its own"
grep -q "unknown option '--bogus'" $B/runs/heat-mpi-serial-tiny-weak-n1-t1-bogus-r0.log || fail "the run log lacks the app's error"
grep -q '"ranks":2,.*"exit_code":0,.*"baseline":{"status":"fail"' $B/results.jsonl ||
  { cat $B/results.jsonl >&2; fail "the perturbed baseline did not fail"; }
grep -q "unknown option '--no-such-flag'" $B/runs/heat-mpi-serial-tiny-weak-n1-t1-a*-r0.log || fail "the run log lacks the app's error"

# ---- a job Slurm ends before it runs (held back by --begin, then cancelled):
# collect asks Slurm, and records the repetition as failed, not pending forever
sed -e 's/^name: slurm-local$/name: slurm-later/' -e 's/^time: .*/time: "00:05:00"\ndirectives: ["--begin=now+120"]/' \
  "$ENV_FILE" >later.yaml
grep -q -- '--begin=now+120' later.yaml || fail "could not derive later.yaml"
cat >cancel.yaml <<'YAML'
name: slurm-cancel
runs:
  - {app: heat, variants: [mpi], ranks: [1], sizes: [tiny], scaling: weak}
YAML
C=results/slurm-cancel
expect_exit 0 "$MAPP" submit cancel.yaml --env later.yaml --out results
expect_output "1 batch script for slurm-cancel"
id=$(submitted_ids $C)
expect_exit 0 "$MAPP" collect $C
expect_output "collected 0 records (0 failed), 1 still pending"
scancel "$id"
wait_jobs "$id"
expect_exit 1 "$MAPP" collect $C
expect_output "job $id ended CANCELLED without running it to the end"
expect_output "collected 1 record (1 failed), 0 still pending"
grep -q '"exit_code":-1,.*"scheduler_state":"CANCELLED"' $C/results.jsonl || { cat $C/results.jsonl >&2; fail "no CANCELLED record"; }

expect_exit 0 "$CI/stop.sh"
expect_output "slurm: stopped"
pgrep -f "$MAPP_SLURM_DIR/" >/dev/null && fail "daemons left after stop.sh"
echo "slurm: ok ($((SECONDS - t0)) s)"
